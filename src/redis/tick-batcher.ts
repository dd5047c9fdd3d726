import { observeRedisCall } from '../metrics/redis-calls';

/**
 * Gathers the requests that arrive in one turn of the event loop and sends
 * them as a few large script calls instead of one call each: Node-RED
 * delivers a burst of messages in one turn, and the client time saved per
 * message is most of the cost of a Redis-backed decision.
 *
 * Order. Requests are grouped (by Cluster slot, or all together on one
 * server) and kept in arrival order within a group; the calls of a group
 * are sent in order, and the scripts run in the order they arrive on the
 * connection. Resets travel through the same queue as decisions, which is
 * what puts a msg.reset exactly between the messages before and after it.
 *
 * The give-up clock. At most maxInFlight calls are out at Redis at once;
 * the rest wait here, unsent, with no clock running. Of the calls out, only
 * the oldest one's clock runs, from when it was sent or from Redis' last
 * answer, whichever is later: the calls behind it wait in Redis' queue for
 * it, not on Redis. So the clock measures Redis not answering, not the
 * length of a burst nor the calls ahead in Redis' own queue: a message
 * queued behind a healthy, busy Redis is decided however long the burst.
 * When the deadline passes, the call is checked once more after the event
 * loop has read its sockets (a long synchronous turn delays the timer and
 * the reply alike; the reply may be waiting unread), and a timer that fired
 * long after its deadline starts the clock again (such a turn held up the
 * call's own writes too). Only then is the call failed with a TimeoutError,
 * together with every call still waiting here, which would only wait behind
 * a server that does not answer; the calls out after it fail as their own
 * clocks, from when they were sent, run out.
 *
 * Per request nothing is allocated but the slot in the arrays of its call:
 * items, callbacks and contexts wait in parallel arrays, and the callbacks
 * are made once per node. With a burst of 200,000 messages in flight, every
 * object per message is garbage the collector walks while the burst is
 * still alive (profiled with npm run bench).
 *
 * A callback that throws never stops the others, nor the process: the
 * error goes to onCallbackError (a node reports it through itself), and
 * is not raised again. Raised as an uncaught exception, as it once was, a
 * message Node-RED could not copy in a send stopped Node-RED.
 */
export class TimeoutError extends Error {
  constructor(ms: number, cause?: string) {
    super(`Redis did not answer within ${ms} ms${cause === undefined ? '' : ` (${cause})`}`);
    this.name = 'TimeoutError';
  }
}

export type OnResult<Result, C> = (result: Result, context: C) => void;
export type OnError<C> = (error: unknown, context: C) => void;

// The callbacks of different requests have different context types; the
// queue holds them type-erased and hands each its own context back.
type AnyResult = (result: unknown, context: unknown) => void;
type AnyError = (error: unknown, context: unknown) => void;

export interface BatcherOptions<Item, Result> {
  /** Sends one call for items of one group; resolves with one result per item, in order. */
  send: (items: Item[]) => Promise<Result[]>;
  /** Items of different groups never share a call. */
  groupOf: (item: Item) => number;
  maxBatch: number;
  timeoutMs: number;
  /** Calls out at Redis at once; more wait here, unsent, with no clock running. */
  maxInFlight?: number;
  /** The connection's latest error, named in a TimeoutError ("connect ECONNREFUSED ..."). */
  cause?: () => string | undefined;
  /**
   * Told of a callback that threw, with the request's context; the other
   * requests of the call still get their answers. Without it, the error
   * becomes a process warning (process.emitWarning): never an uncaught
   * exception.
   */
  onCallbackError?: (error: unknown, context: unknown) => void;
}

const DEFAULT_MAX_IN_FLIGHT = 8;

/** ioredis' errors for a command that never reached a working connection. */
const CONNECTION_LEVEL = /MaxRetriesPerRequestError|max retries per request|Connection is closed|Stream isn't writeable|NOAUTH/i;

/** One call: its items and their callbacks, index for index. */
class Call<Item> {
  items: Item[] = [];
  readonly onResults: AnyResult[] = [];
  readonly onErrors: AnyError[] = [];
  readonly contexts: unknown[] = [];
  settled = false;
  sentAt = 0;
  /** Its clock was started again once, after a long turn here (never twice: a busy process must not keep a call waiting forever). */
  restarted = false;
}

export class TickBatcher<Item, Result> {
  /** This turn's calls, one per group, still taking items. */
  private open = new Map<number, Call<Item>>();
  /** Closed calls, oldest first, waiting for a place in flight. */
  private ready: Call<Item>[] = [];
  private readyHead = 0;
  private inFlight = 0;
  /** The calls out at Redis, so that abandon() can answer them. */
  private readonly sent = new Set<Call<Item>>();
  /** The oldest call out at Redis, the one whose clock runs, and its timer. */
  private head: Call<Item> | undefined;
  private headTimer: NodeJS.Timeout | undefined;
  /** When Redis last answered a call. */
  private lastAnswer = 0;
  private scheduled = false;
  private readonly maxInFlight: number;
  private readonly flushNow = (): void => this.flush();
  private readonly onCallbackError: (error: unknown, context: unknown) => void;

  constructor(private readonly options: BatcherOptions<Item, Result>) {
    this.maxInFlight = options.maxInFlight ?? DEFAULT_MAX_IN_FLIGHT;
    this.onCallbackError = options.onCallbackError ?? warnOfCallback;
  }

  /** Calls waiting or out at Redis; for tests and the close of a node. */
  get pending(): number {
    return this.inFlight + this.ready.length - this.readyHead + this.open.size;
  }

  /**
   * Queues one request. onResult or onError is called exactly once, never
   * before submit() has returned, with the context given.
   */
  submit<C>(item: Item, onResult: OnResult<Result, C>, onError: OnError<C>, context: C): void {
    const group = this.options.groupOf(item);
    let call = this.open.get(group);
    if (call === undefined) {
      call = new Call<Item>();
      this.open.set(group, call);
    }
    call.items.push(item);
    call.onResults.push(onResult as AnyResult);
    call.onErrors.push(onError as AnyError);
    call.contexts.push(context);
    if (call.items.length >= this.options.maxBatch) {
      // A full call goes out now rather than at the end of the turn, so that
      // Redis (on another core) works on it while the rest of a burst is
      // still being read here. Later items of the group open a new call,
      // queued after this one, so the order within the group holds.
      this.open.delete(group);
      this.ready.push(call);
      this.pump();
      return;
    }
    if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(this.flushNow);
    }
  }

  /**
   * Answers every request still waiting or out at Redis with the error (the
   * node is closing); an answer that arrives later is ignored.
   */
  abandon(error: unknown): void {
    this.failEverything(error, true);
  }

  /** Fails every call out at Redis, then every call waiting here (and this turn's, with `open`), oldest first. */
  private failEverything(error: unknown, open: boolean): void {
    const calls = [...this.sent, ...this.ready.slice(this.readyHead), ...(open ? this.open.values() : [])];
    this.sent.clear();
    this.stopClock();
    this.ready = [];
    this.readyHead = 0;
    if (open) this.open = new Map();
    this.inFlight = 0;
    for (const call of calls) {
      if (call.settled) continue;
      call.settled = true;
      this.answerAll(call, error);
    }
  }

  private flush(): void {
    this.scheduled = false;
    for (const call of this.open.values()) this.ready.push(call);
    this.open = new Map();
    this.pump();
  }

  private pump(): void {
    while (this.inFlight < this.maxInFlight && this.readyHead < this.ready.length) {
      const call = this.ready[this.readyHead] as Call<Item>;
      this.ready[this.readyHead++] = undefined as unknown as Call<Item>;
      this.dispatch(call);
    }
    if (this.readyHead === this.ready.length) {
      this.ready = [];
      this.readyHead = 0;
    }
  }

  private dispatch(call: Call<Item>): void {
    this.inFlight++;
    this.sent.add(call);
    call.sentAt = Date.now();
    this.startClock();
    let sent: Promise<Result[]>;
    const started = performance.now();
    try {
      sent = this.options.send(call.items);
    } catch (error) {
      sent = Promise.reject(error);
    }
    // Only the count is kept: the items themselves are not needed here once
    // sent (the array itself may still be read by send's own reply handler).
    const count = call.items.length;
    call.items = [];
    sent.then(
      (results) => {
        this.lastAnswer = Date.now();
        if (results.length !== count) {
          this.finish(call, undefined, new Error(`expected ${count} results from Redis, got ${results.length}`));
        } else {
          observeRedisCall(count, performance.now() - started);
          this.finish(call, results, undefined);
        }
      },
      (error: unknown) => {
        this.finish(call, undefined, error);
      },
    );
  }

  private finish(call: Call<Item>, results: Result[] | undefined, error: unknown): void {
    if (call.settled) return;
    call.settled = true;
    this.inFlight--;
    this.sent.delete(call);
    if (call === this.head) this.stopClock();
    if (results === undefined) this.answerAll(call, this.explain(error));
    else for (let i = 0; i < call.onResults.length; i++) this.answer(call.onResults[i] as AnyResult, results[i], call.contexts[i]);
    this.pump();
    this.startClock();
  }

  /** Runs the clock of the oldest call out at Redis, unless it runs already. */
  private startClock(): void {
    if (this.head !== undefined) return;
    const head = this.sent.values().next().value as Call<Item> | undefined;
    if (head === undefined) return;
    const timeoutMs = this.options.timeoutMs;
    const deadline = Math.max(head.sentAt, this.lastAnswer) + timeoutMs;
    this.head = head;
    this.headTimer = setTimeout(() => {
      if (!head.restarted && Date.now() - deadline > timeoutMs / 2) {
        // The timer fired long after its deadline: this process was busy, which
        // held up the call's writes and the reading of its reply alike.
        head.restarted = true;
        head.sentAt = Date.now();
        this.stopClock();
        this.startClock();
        return;
      }
      // Look again once the event loop has read its sockets: a timer that
      // fired late after a long turn must not fail a reply waiting unread.
      setImmediate(() => {
        if (head.settled || head !== this.head) return;
        // Redis is not answering: every call out at it or waiting here fails
        // now, oldest first, so the messages reach their Catch in the order
        // they came.
        // (This turn's new requests keep their own chance: they are not sent yet.)
        this.failEverything(new TimeoutError(timeoutMs, this.options.cause?.()), false);
      });
    }, Math.max(0, deadline - Date.now()));
  }

  private stopClock(): void {
    if (this.headTimer !== undefined) clearTimeout(this.headTimer);
    this.headTimer = undefined;
    this.head = undefined;
  }

  /**
   * ioredis fails a command it could not send with its own words ("Reached
   * the max retries per request limit", "Connection is closed"); the cause
   * a user can act on is the connection's last error (ECONNREFUSED with the
   * address, WRONGPASS, ENOTFOUND), so that is what the error says.
   */
  private explain(error: unknown): unknown {
    const cause = this.options.cause?.();
    if (cause === undefined || !(error instanceof Error) || !CONNECTION_LEVEL.test(`${error.name} ${error.message}`)) return error;
    return new Error(`Redis is unreachable: ${cause}`, { cause: error });
  }

  private answerAll(call: Call<unknown>, error: unknown): void {
    for (let i = 0; i < call.onErrors.length; i++) this.answer(call.onErrors[i] as AnyError, error, call.contexts[i]);
  }

  /**
   * Hands one request its answer. A callback that throws is reported to
   * onCallbackError, so that the other requests of the call still get
   * their answers and the process goes on.
   */
  private answer(callback: AnyResult | AnyError, value: unknown, context: unknown): void {
    try {
      callback(value, context);
    } catch (error) {
      try {
        this.onCallbackError(error, context);
      } catch (reportFailed) {
        warnOfCallback(error);
        warnOfCallback(reportFailed);
      }
    }
  }
}

/** Where a throwing callback goes when nobody asked to be told: a warning, not a crash. */
function warnOfCallback(error: unknown): void {
  process.emitWarning(error instanceof Error ? error : new Error(String(error)), 'TickBatcherCallbackError');
}
