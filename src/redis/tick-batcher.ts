/**
 * Gathers the requests that arrive in one turn of the event loop and sends
 * them as a few large script calls instead of one call each: Node-RED
 * delivers a burst of messages in one turn, and the client time saved per
 * message is most of the cost of a Redis-backed decision.
 *
 * Requests are grouped (by Cluster slot, or all together on one server) and
 * kept in arrival order within a group, so the pings of one asset are
 * decided in the order they came. Each call has a deadline: when it passes,
 * every request in the call fails with a TimeoutError, so no message waits
 * on Redis for longer than the deadline.
 */
export class TimeoutError extends Error {
  constructor(ms: number) {
    super(`Redis did not answer within ${ms} ms`);
    this.name = 'TimeoutError';
  }
}

interface Pending<Item, Result> {
  item: Item;
  resolve: (result: Result) => void;
  reject: (error: unknown) => void;
}

export interface BatcherOptions<Item, Result> {
  /** Sends one call for items of one group; resolves with one result per item, in order. */
  send: (items: Item[]) => Promise<Result[]>;
  /** Items of different groups never share a call. */
  groupOf: (item: Item) => number;
  maxBatch: number;
  timeoutMs: number;
}

export class TickBatcher<Item, Result> {
  private queue = new Map<number, Pending<Item, Result>[]>();
  private scheduled = false;

  constructor(private readonly options: BatcherOptions<Item, Result>) {}

  submit(item: Item): Promise<Result> {
    return new Promise<Result>((resolve, reject) => {
      const group = this.options.groupOf(item);
      let pending = this.queue.get(group);
      if (pending === undefined) {
        pending = [];
        this.queue.set(group, pending);
      }
      pending.push({ item, resolve, reject });
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => this.flush());
      }
    });
  }

  private flush(): void {
    this.scheduled = false;
    const queue = this.queue;
    this.queue = new Map();
    for (const pending of queue.values()) {
      for (let start = 0; start < pending.length; start += this.options.maxBatch) {
        this.call(pending.slice(start, start + this.options.maxBatch));
      }
    }
  }

  private call(batch: Pending<Item, Result>[]): void {
    let settled = false;
    const timer = setTimeout(() => {
      settled = true;
      const error = new TimeoutError(this.options.timeoutMs);
      for (const p of batch) p.reject(error);
    }, this.options.timeoutMs);
    this.options.send(batch.map((p) => p.item)).then(
      (results) => {
        clearTimeout(timer);
        if (settled) return;
        settled = true;
        if (results.length !== batch.length) {
          const error = new Error(`expected ${batch.length} results from Redis, got ${results.length}`);
          for (const p of batch) p.reject(error);
          return;
        }
        batch.forEach((p, i) => p.resolve(results[i] as Result));
      },
      (error: unknown) => {
        clearTimeout(timer);
        if (settled) return;
        settled = true;
        for (const p of batch) p.reject(error);
      },
    );
  }
}
