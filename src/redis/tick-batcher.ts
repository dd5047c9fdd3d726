import { toError } from '../core/parse/errors';
import { storeCallError, TimeoutError } from './store-errors';

export { TimeoutError };

/**
 * Gathers the requests that arrive in one turn of the event loop and sends
 * them as a few large script calls instead of one call each: Node-RED
 * delivers a burst of messages in one turn, and the client time saved per
 * message is most of the cost of a Redis-backed decision.
 *
 * Order. Requests are grouped (by Cluster bucket, or all together on one
 * server) and kept in arrival order within a group; the calls of a group
 * are sent in order, and the scripts run in the order they arrive on the
 * connection. Resets travel through the same queue as decisions, which is
 * what puts a msg.reset exactly between the messages before and after it.
 * On a Cluster a group has one call out at a time, so a call redirected
 * (MOVED, ASK) during a resharding cannot be overtaken by the group's next.
 *
 * Groups are independent: each has its own place in flight and its own
 * clock, so a slow group (a Cluster primary failing over) does not hold up
 * or fail the others.
 *
 * The give-up clock. At most maxInFlight calls of a group are out at Redis
 * at once; the rest wait here, unsent, with no clock running. Of the
 * group's calls out, only the oldest one's clock runs, from when it was
 * sent or from Redis' last answer to the group, whichever is later: the calls behind it wait in Redis' queue for
 * it, not on Redis. So the clock measures Redis not answering, not the
 * length of a burst nor the calls ahead in Redis' own queue: a message
 * queued behind a healthy, busy Redis is decided however long the burst.
 * When the deadline passes, the call is checked once more after the event
 * loop has read its sockets (a long synchronous turn delays the timer and
 * the reply alike; the reply may be waiting unread), and a timer that fired
 * long after its deadline starts the clock again (such a turn held up the
 * call's own writes too). Only then is the call failed with a TimeoutError,
 * together with every call of its group out after it or still waiting
 * here, which would only wait behind a server that does not answer.
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
 *
 * A call that fails fails with a typed error (redis/store-errors); each
 * call Redis answers is told to onAnswer (the node's metrics), as a
 * callback that threw is told to onCallbackError.
 */

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
  /**
   * Calls of one group out at Redis at once; more wait here, unsent, with no
   * clock running. On a Cluster 1: while a bucket's call is out, its next
   * pings gather into one call, and a slow bucket holds up only its own.
   */
  maxInFlight?: number;
  /** The connection's latest error, named in a TimeoutError ("connect ECONNREFUSED ..."). */
  cause?: () => string | undefined;
  /** When it gives an error, a call is failed with it instead of being sent (a server that runs no scripts). */
  refused?: () => Error | undefined;
  /** Names a call's error (a server that runs no scripts); undefined keeps the error as it is. */
  classify?: (error: unknown) => Error | undefined;
  /**
   * Told of a callback that threw, with the request's context; the other
   * requests of the call still get their answers. Without it, the error
   * becomes a process warning (process.emitWarning): never an uncaught
   * exception.
   */
  onCallbackError?: (error: unknown, context: unknown) => void;
  /** Told of each call Redis answered: the requests it carried, and the milliseconds from sending it to its answer. */
  onAnswer?: (items: number, ms: number) => void;
  /** The give-up clock's time and timers; the system's unless a test hands in its own. */
  clock?: BatcherClock;
}

/** What the give-up clock reads and sets. */
export interface BatcherClock {
  now: () => number;
  setTimer: (run: () => void, ms: number) => unknown;
  clearTimer: (timer: unknown) => void;
}

const SYSTEM_CLOCK: BatcherClock = {
  now: Date.now,
  setTimer: (run, ms) => setTimeout(run, ms),
  clearTimer: (timer) => clearTimeout(timer as NodeJS.Timeout),
};

const DEFAULT_MAX_IN_FLIGHT = 8;

/** One call: its items and their callbacks, index for index. */
class Call<Item> {
  constructor(readonly group: Group<Item>) {}
  items: Item[] = [];
  readonly onResults: AnyResult[] = [];
  readonly onErrors: AnyError[] = [];
  readonly contexts: unknown[] = [];
  settled = false;
  sentAt = 0;
  /** Its clock was started again once, after a long turn here (never twice: a busy process must not keep a call waiting forever). */
  restarted = false;
}

/** One group's calls: this turn's, those waiting to be sent, those out at Redis, and its give-up clock. */
class Group<Item> {
  /** This turn's call, still taking items. */
  open: Call<Item> | undefined;
  /** Listed in the batcher's groups with an open call (to be flushed at the end of the turn). */
  listed = false;
  /** Closed calls, oldest first, waiting for a place in flight. */
  ready: Call<Item>[] = [];
  readyHead = 0;
  inFlight = 0;
  /** The calls out at Redis, oldest first (a Set keeps insertion order). */
  readonly sent = new Set<Call<Item>>();
  /** The oldest call out at Redis, the one whose clock runs, and its timer. */
  head: Call<Item> | undefined;
  headTimer: unknown;
  /** When Redis last answered a call of this group. */
  lastAnswer = 0;
}

export class TickBatcher<Item, Result> {
  private readonly groups = new Map<number, Group<Item>>();
  /** The groups with a call open this turn, or a call to send at its end. */
  private openGroups: Group<Item>[] = [];
  private scheduled = false;
  private readonly maxInFlight: number;
  private readonly flushNow = (): void => this.flush();
  private readonly onCallbackError: (error: unknown, context: unknown) => void;
  private readonly clock: BatcherClock;

  constructor(private readonly options: BatcherOptions<Item, Result>) {
    this.maxInFlight = options.maxInFlight ?? DEFAULT_MAX_IN_FLIGHT;
    this.onCallbackError = options.onCallbackError ?? warnOfCallback;
    this.clock = options.clock ?? SYSTEM_CLOCK;
  }

  /** Calls waiting or out at Redis; for tests and the close of a node. */
  get pending(): number {
    let pending = 0;
    for (const group of this.groups.values()) pending += group.inFlight + group.ready.length - group.readyHead + (group.open === undefined ? 0 : 1);
    return pending;
  }

  /**
   * Queues one request. onResult or onError is called exactly once, never
   * before submit() has returned, with the context given.
   */
  submit<C>(item: Item, onResult: OnResult<Result, C>, onError: OnError<C>, context: C): void {
    const id = this.options.groupOf(item);
    let group = this.groups.get(id);
    if (group === undefined) {
      group = new Group<Item>();
      this.groups.set(id, group);
    }
    let call = group.open;
    if (call === undefined) {
      // The group's last call still waiting here, unsent, takes it (if not
      // full): while a group's calls are out, the requests of later turns
      // gather into one call rather than one call per turn.
      const last = group.readyHead < group.ready.length ? group.ready[group.ready.length - 1] : undefined;
      if (last !== undefined && last.items.length < this.options.maxBatch) {
        last.items.push(item);
        last.onResults.push(onResult as AnyResult);
        last.onErrors.push(onError as AnyError);
        last.contexts.push(context);
        return;
      }
      call = new Call<Item>(group);
      group.open = call;
      this.list(group);
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
      group.open = undefined;
      group.ready.push(call);
      this.pump(group);
      return;
    }
    this.schedule();
  }

  /**
   * Answers every request still waiting or out at Redis with the error (the
   * node is closing); an answer that arrives later is ignored.
   */
  abandon(error: unknown): void {
    for (const group of this.groups.values()) {
      this.failGroup(group, error, true);
      group.listed = false;
    }
    this.openGroups = [];
  }

  /** Fails every call of the group out at Redis, then every call waiting here (and this turn's, with `open`), oldest first. */
  private failGroup(group: Group<Item>, error: unknown, open: boolean): void {
    const calls = [...group.sent, ...group.ready.slice(group.readyHead)];
    if (open && group.open !== undefined) calls.push(group.open);
    group.sent.clear();
    this.stopClock(group);
    group.ready = [];
    group.readyHead = 0;
    if (open) group.open = undefined;
    group.inFlight = 0;
    for (const call of calls) {
      if (call.settled) continue;
      call.settled = true;
      this.answerAll(call, error);
    }
  }

  private flush(): void {
    this.scheduled = false;
    const groups = this.openGroups;
    this.openGroups = [];
    for (const group of groups) {
      group.listed = false;
      if (group.open !== undefined) {
        group.ready.push(group.open);
        group.open = undefined;
      }
      this.pump(group);
    }
  }

  private pump(group: Group<Item>): void {
    while (group.inFlight < this.maxInFlight && group.readyHead < group.ready.length) {
      const call = group.ready[group.readyHead] as Call<Item>;
      group.ready[group.readyHead++] = undefined as unknown as Call<Item>;
      this.dispatch(call);
    }
    if (group.readyHead === group.ready.length) {
      group.ready = [];
      group.readyHead = 0;
    }
  }

  private dispatch(call: Call<Item>): void {
    const group = call.group;
    group.inFlight++;
    group.sent.add(call);
    call.sentAt = this.clock.now();
    this.startClock(group);
    let sent: Promise<Result[]>;
    const started = performance.now();
    const refused = this.options.refused?.();
    // A send that throws is a fault of the store, not an answer of Redis: its error stays as it is.
    let threw = false;
    if (refused !== undefined) {
      sent = Promise.reject(refused);
    } else {
      try {
        sent = this.options.send(call.items);
      } catch (error) {
        threw = true;
        sent = Promise.reject(toError(error));
      }
    }
    // Only the count is kept: the items themselves are not needed here once
    // sent (the array itself may still be read by send's own reply handler).
    const count = call.items.length;
    call.items = [];
    sent.then(
      (results) => {
        group.lastAnswer = this.clock.now();
        if (results.length !== count) {
          this.finish(call, undefined, new Error(`expected ${count} results from Redis, got ${results.length}`));
        } else {
          this.options.onAnswer?.(count, performance.now() - started);
          this.finish(call, results, undefined);
        }
      },
      (error: unknown) => {
        this.finish(call, undefined, threw ? error : this.explain(error));
      },
    );
  }

  private finish(call: Call<Item>, results: Result[] | undefined, error: unknown): void {
    if (call.settled) return;
    call.settled = true;
    const group = call.group;
    group.inFlight--;
    group.sent.delete(call);
    if (call === group.head) this.stopClock(group);
    if (results === undefined) this.answerAll(call, error);
    else for (let i = 0; i < call.onResults.length; i++) this.answer(call.onResults[i] as AnyResult, results[i], call.contexts[i]);
    if (group.readyHead < group.ready.length) {
      // The group's next call goes out at the end of this turn, with those of
      // the other groups answered in it (and this turn's new requests, which
      // may still join it): on a Cluster the replies of several buckets are
      // read in one turn, and their next calls then share a write per primary
      // (redis/turn-writes) instead of a write each.
      this.list(group);
      this.schedule();
    }
    this.startClock(group);
  }

  private list(group: Group<Item>): void {
    if (group.listed) return;
    group.listed = true;
    this.openGroups.push(group);
  }

  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(this.flushNow);
  }

  /** Runs the clock of the group's oldest call out at Redis, unless it runs already. */
  private startClock(group: Group<Item>): void {
    if (group.head !== undefined) return;
    const head = group.sent.values().next().value;
    if (head === undefined) return;
    const timeoutMs = this.options.timeoutMs;
    const deadline = Math.max(head.sentAt, group.lastAnswer) + timeoutMs;
    group.head = head;
    group.headTimer = this.clock.setTimer(() => {
      if (!head.restarted && this.clock.now() - deadline > timeoutMs / 2) {
        // The timer fired long after its deadline: this process was busy, which
        // held up the call's writes and the reading of its reply alike.
        head.restarted = true;
        head.sentAt = this.clock.now();
        this.stopClock(group);
        this.startClock(group);
        return;
      }
      // Look again once the event loop has read its sockets: a timer that
      // fired late after a long turn must not fail a reply waiting unread.
      setImmediate(() => {
        if (head.settled || head !== group.head) return;
        // Redis is not answering this group's calls: every call of the group
        // out at it or waiting here fails now, oldest first, so the messages
        // reach their Catch in the order they came. Other groups (on a
        // Cluster, other buckets, perhaps on other primaries) keep their own
        // clocks. (This turn's new requests keep their own chance: they are
        // not sent yet.)
        this.failGroup(group, new TimeoutError(timeoutMs, this.options.cause?.()), false);
      });
    }, Math.max(0, deadline - this.clock.now()));
  }

  private stopClock(group: Group<Item>): void {
    if (group.headTimer !== undefined) this.clock.clearTimer(group.headTimer);
    group.headTimer = undefined;
    group.head = undefined;
  }

  /**
   * A call's failure as a typed store error. ioredis fails a command it
   * could not send with its own words ("Reached the max retries per request
   * limit", "Connection is closed"); the cause a user can act on is the
   * connection's last error (ECONNREFUSED with the address, WRONGPASS,
   * ENOTFOUND), so that is what the error says (redis/store-errors).
   */
  private explain(error: unknown): unknown {
    return this.options.classify?.(error) ?? storeCallError(error, this.options.cause?.());
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
