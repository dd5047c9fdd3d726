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
 *
 * Per request the batcher allocates only the promise it hands out, and
 * with submitWith() not even that: items, their callbacks and contexts wait
 * in parallel arrays rather than in an object each, and the promise
 * executor is one shared function rather than a closure per request. With a
 * burst of 200,000 messages in flight, every object per message is garbage
 * the collector has to walk while the burst is still alive (profiled with
 * npm run bench).
 */
export class TimeoutError extends Error {
  constructor(ms: number) {
    super(`Redis did not answer within ${ms} ms`);
    this.name = 'TimeoutError';
  }
}

/** A promise's resolve or reject, or a submitWith() callback: called with the answer and the request's context. */
type Settle = (value: never, context: never) => void;

export interface BatcherOptions<Item, Result> {
  /** Sends one call for items of one group; resolves with one result per item, in order. */
  send: (items: Item[]) => Promise<Result[]>;
  /** Items of different groups never share a call. */
  groupOf: (item: Item) => number;
  maxBatch: number;
  timeoutMs: number;
}

/** The requests of one group waiting for the next flush, index for index. */
class Waiting<Item> {
  readonly items: Item[] = [];
  readonly resolves: Settle[] = [];
  readonly rejects: Settle[] = [];
  readonly contexts: unknown[] = [];
}

// The settle functions of the promise being created: `new Promise` runs its
// executor synchronously, so submit() reads them straight after.
let capturedResolve: Settle | undefined;
let capturedReject: Settle | undefined;
function capture(resolve: Settle, reject: Settle): void {
  capturedResolve = resolve;
  capturedReject = reject;
}

export class TickBatcher<Item, Result> {
  private queue = new Map<number, Waiting<Item>>();
  private scheduled = false;
  private readonly flushNow = (): void => this.flush();

  constructor(private readonly options: BatcherOptions<Item, Result>) {}

  submit(item: Item): Promise<Result> {
    const promise = new Promise<Result>(capture as (resolve: (value: Result) => void, reject: (reason?: unknown) => void) => void);
    // A promise's settle functions ignore the second argument they are given.
    this.enqueue(item, capturedResolve as Settle, capturedReject as Settle, undefined);
    return promise;
  }

  /**
   * submit() without a promise: calls onResult or onError, exactly once and
   * never before submitWith() has returned, with the request's context, so
   * that a caller needs no closure per request either.
   */
  submitWith<C>(item: Item, onResult: (result: Result, context: C) => void, onError: (error: unknown, context: C) => void, context: C): void {
    this.enqueue(item, onResult as Settle, onError as Settle, context);
  }

  private enqueue(item: Item, resolve: Settle, reject: Settle, context: unknown): void {
    const group = this.options.groupOf(item);
    let waiting = this.queue.get(group);
    if (waiting === undefined) {
      waiting = new Waiting<Item>();
      this.queue.set(group, waiting);
    }
    waiting.items.push(item);
    waiting.resolves.push(resolve);
    waiting.rejects.push(reject);
    waiting.contexts.push(context);
    if (waiting.items.length >= this.options.maxBatch) {
      // A full call goes out now rather than at the end of the tick, so that
      // Redis (on another core) works on it while the rest of a burst is
      // still being read here. Later items of the group start a new call,
      // sent after this one, so the order within the group holds.
      this.queue.delete(group);
      this.call(waiting.items, waiting.resolves, waiting.rejects, waiting.contexts);
      return;
    }
    if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(this.flushNow);
    }
  }

  private flush(): void {
    this.scheduled = false;
    const queue = this.queue;
    this.queue = new Map();
    const max = this.options.maxBatch;
    for (const waiting of queue.values()) {
      const { items, resolves, rejects, contexts } = waiting;
      if (items.length <= max) {
        this.call(items, resolves, rejects, contexts);
        continue;
      }
      for (let start = 0; start < items.length; start += max) {
        const end = start + max;
        this.call(items.slice(start, end), resolves.slice(start, end), rejects.slice(start, end), contexts.slice(start, end));
      }
    }
  }

  private call(items: Item[], resolves: Settle[], rejects: Settle[], contexts: unknown[]): void {
    let settled = false;
    const rejectAll = (error: unknown): void => {
      for (let i = 0; i < rejects.length; i++) answer(rejects[i] as Settle, error, contexts[i]);
    };
    const timer = setTimeout(() => {
      settled = true;
      rejectAll(new TimeoutError(this.options.timeoutMs));
    }, this.options.timeoutMs);
    let sent: Promise<Result[]>;
    try {
      sent = this.options.send(items);
    } catch (error) {
      sent = Promise.reject(error);
    }
    // Only the count is kept: the items themselves are not needed once sent.
    const count = items.length;
    sent.then(
      (results) => {
        clearTimeout(timer);
        if (settled) return;
        settled = true;
        if (results.length !== count) {
          rejectAll(new Error(`expected ${count} results from Redis, got ${results.length}`));
          return;
        }
        for (let i = 0; i < resolves.length; i++) answer(resolves[i] as Settle, results[i], contexts[i]);
      },
      (error: unknown) => {
        clearTimeout(timer);
        if (settled) return;
        settled = true;
        rejectAll(error);
      },
    );
  }
}

/**
 * Hands one request its answer. A promise's settle function never throws,
 * but a submitWith() callback may: the error is raised again on its own
 * (as an uncaught exception, much as a throwing promise reaction becomes an
 * unhandled rejection) so that the other requests of the call still get
 * their answers.
 */
function answer(settle: Settle, value: unknown, context: unknown): void {
  try {
    (settle as (value: unknown, context: unknown) => void)(value, context);
  } catch (error) {
    queueMicrotask(() => {
      throw error;
    });
  }
}
