import { toError } from '../core/parse/errors';
import type { Replies } from '../stores/types';
import type { NodeMessage, SendFunction, DoneFunction } from './api';
import { leaving, type Leaving, type Outlet } from './outlet';
import { resetTarget } from './reset';
import type { StoreHealth } from './store-health';

/** A store request: `request` with the replies that answer it, and the message it is for. */
export type StoreCall<R, T, C> = (request: R, replies: Replies<T, C>, context: C) => void;

/** A store that forgets one asset or device (or every one, `undefined`) in order with its other requests. */
export interface Resettable {
  reset<C>(id: string | undefined, replies: Replies<void, C>, context: C): void;
}

/**
 * A node's requests to its store, in one place: the guard around each call,
 * the replies that answer them, and how many are still out (so that a
 * closing node lets them finish and call done() before the Redis
 * connection goes away).
 *
 * Every request answers exactly once, through replies made by answers():
 * they count it out, tell the store's health it worked, and pass the answer
 * on with its message. A call that throws before the store answered fails
 * its message as the store's error would; one that throws after (a fault
 * of this pack) is reported through the node, never thrown back at the
 * store, where it would stop Node-RED.
 */
export class StoreCalls {
  private waiting = 0;
  private waiters: (() => void)[] = [];
  /** Answers msg.reset once the store has applied it, in order with the decisions around it. */
  private readonly resetReplies: Replies<void, Leaving>;

  constructor(
    private readonly out: Outlet,
    private readonly health: StoreHealth,
  ) {
    // finish() never throws: the guard of answers() is not needed here.
    this.resetReplies = {
      value: (_nothing, w) => {
        this.counted();
        this.out.finish(w);
      },
      error: (error, w) => {
        this.counted();
        this.out.finish(w, toError(error));
      },
    };
  }

  /** Requests still out at the store. */
  get count(): number {
    return this.waiting;
  }

  /**
   * Asks the store: call(request, replies, w), counted until it answers. A
   * pair of counts rather than a wrapper around a promise, which would add
   * a promise and a reaction to every message (measurable with thousands
   * of messages in flight); `call` is made once per node, not per message.
   */
  ask<R, T, C extends Leaving>(call: StoreCall<R, T, C>, request: R, replies: Replies<T, C>, w: C): void {
    this.waiting++;
    try {
      call(request, replies, w);
    } catch (error) {
      // Thrown before the store answered (an answer ends the message, and never throws).
      if (!w.ended) replies.error(error, w);
      else this.out.callbackFailed(error);
    }
  }

  /**
   * The replies a node hands its store with every request, made once per
   * node rather than once per message: each answer counts its request out,
   * a value tells the store's health that it worked, and both pass on with
   * the context of their message. An answer whose handling throws (a fault
   * of this pack, never of a message: sends are guarded) is reported
   * through the node, and its message still leaves and ends.
   */
  answers<T, C extends Leaving>(onValue: (value: T, context: C) => void, onError: (error: unknown, context: C) => void): Replies<T, C> {
    return {
      value: (value, context) => {
        this.counted();
        try {
          this.health.storeWorked();
          onValue(value, context);
        } catch (thrown) {
          this.out.rescue(context, thrown);
        }
      },
      error: (error, context) => {
        this.counted();
        try {
          onError(error, context);
        } catch (thrown) {
          this.out.rescue(context, thrown);
        }
      },
    };
  }

  /** Handles msg.reset, if the message is one, through the store's queue; true when it was. */
  reset(msg: NodeMessage, send: SendFunction, done: DoneFunction, store: Resettable): boolean {
    const target = resetTarget(msg);
    if (target === undefined) return false;
    this.ask((id: string | undefined, replies: Replies<void, Leaving>, w: Leaving) => store.reset(id, replies, w), target.all ? undefined : target.id, this.resetReplies, leaving(msg, send, done));
    return true;
  }

  /** Resolves when nothing is out at the store, or after limitMs, whichever is first. */
  drained(limitMs: number): Promise<void> {
    if (this.waiting === 0) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, limitMs);
      this.waiters.push(() => {
        clearTimeout(timer);
        resolve();
      });
    });
  }

  private counted(): void {
    this.waiting--;
    if (this.waiting === 0) for (const wake of this.waiters.splice(0)) wake();
  }
}
