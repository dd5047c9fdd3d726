/**
 * What both dedup nodes do the same way around their own decisions: message
 * texts from the node's catalog, the status line, the requests still out at
 * the store, msg.reset in order with the messages around it, a
 * configuration that cannot start, and closing so that every message
 * leaves.
 */
import type { DoneFunction, Node, NodeAPI, NodeMessage } from './api';
import { drainLimit } from './close-times';
import { errorMessage, toError } from './errors';
import { Outlet, type Leaving } from './guarded-send';
import { InFlight } from './in-flight';
import { resetTarget } from './reset';
import { StatusBoard } from './status-board';
import type { BoundStore } from './store-binding';
import type { Replies } from '../stores/types';

export type Translate = (key: string, subs?: Record<string, string | number>) => string;

export class NodeLifecycle {
  readonly t: Translate;
  readonly board: StatusBoard;
  /** Every send, done() and Catch of the node's messages goes through it (see guarded-send). */
  readonly out: Outlet;
  private readonly inFlight = new InFlight();
  private bound: BoundStore<unknown> | undefined;
  private readonly closers: ((removed: boolean) => void)[] = [];
  private closing = false;
  /** Answers msg.reset once the store has applied it, in order with the decisions around it. */
  private readonly resetReplies: Replies<void, Leaving>;

  constructor(
    RED: NodeAPI,
    private readonly node: Node,
    type: string,
    describeCounts: (t: Translate) => string,
  ) {
    this.t = (key, subs) => RED._(`${type}.${key}`, subs);
    this.board = new StatusBoard(node, () => describeCounts(this.t), this.t);
    this.out = new Outlet(RED, node, this.t);
    // finish() never throws: the guard of answers() is not needed here.
    this.resetReplies = {
      value: (_nothing, w) => {
        this.inFlight.end();
        this.out.finish(w);
      },
      error: (error, w) => {
        this.inFlight.end();
        this.out.finish(w, toError(error));
      },
    };
    node.on('close', (removed, done) => {
      // A close that fails (a store that cannot let go) is logged; the node still ends.
      this.close(removed).then(done, (error: unknown) => {
        this.node.error(errorMessage(error));
        done();
      });
    });
  }

  /** The node's store, once bound: closed with the node. */
  use(bound: BoundStore<unknown>): void {
    this.bound = bound;
  }

  /** Runs when the node starts closing, before its requests drain; `removed` when it was deleted. */
  onClose(closer: (removed: boolean) => void): void {
    this.closers.push(closer);
  }

  /** A request goes out to the store; every request answers through end(). */
  begin(): void {
    this.inFlight.begin();
  }

  end(): void {
    this.inFlight.end();
  }

  /**
   * The replies a node hands its store with every request, made once per
   * node rather than once per message: each answer counts its request out
   * of flight, a value tells the status the store worked, and both pass on
   * with the context of their message. An answer whose handling throws
   * (a fault of this pack, never of a message: sends are guarded) is
   * reported through the node, and its message still leaves and ends: it
   * is never thrown back at the store, where it would stop Node-RED.
   */
  answers<T, C extends Leaving>(onValue: (value: T, context: C) => void, onError: (error: unknown, context: C) => void): Replies<T, C> {
    return {
      value: (value, context) => {
        this.inFlight.end();
        try {
          this.board.storeWorked();
          onValue(value, context);
        } catch (thrown) {
          this.out.rescue(context, thrown);
        }
      },
      error: (error, context) => {
        this.inFlight.end();
        try {
          onError(error, context);
        } catch (thrown) {
          this.out.rescue(context, thrown);
        }
      },
    };
  }

  /** For the store's batcher: a callback that threw, reported through the node rather than raised. */
  readonly callbackFailed = (thrown: unknown): void => this.out.callbackFailed(thrown);

  /**
   * A node whose configuration cannot start still answers every message, with
   * the reason, so that nothing sent to it disappears without a word.
   */
  refuseMessages(error: unknown): void {
    const reason = errorMessage(error);
    const text = this.t('errors.badConfig', { error: reason });
    const status = this.t('status.badConfig', { error: reason });
    this.node.error(text);
    this.board.fixed('red', status);
    this.node.on('input', (msg, _send, done) => {
      // Drawn again, for a Status node that started after this one.
      this.board.fixed('red', status);
      this.out.end(msg, done, new Error(text));
    });
  }

  /** Handles msg.reset, if the message is one, through the store's queue; true when it was. */
  reset(msg: NodeMessage, store: { reset<C>(id: string | undefined, replies: Replies<void, C>, context: C): void }, done: DoneFunction): boolean {
    const target = resetTarget(msg);
    if (target === undefined) return false;
    const w: Leaving = { msg, done, left: false, ended: false };
    this.inFlight.begin();
    try {
      store.reset(target.all ? undefined : target.id, this.resetReplies, w);
    } catch (error) {
      // Thrown before the store answered (an answer ends the message, and never throws).
      if (!w.ended) this.resetReplies.error(error, w);
      else this.out.callbackFailed(error);
    }
    return true;
  }

  /**
   * Ends a message with an error. Once the node is closing, Node-RED may
   * already have stopped the Catch node that would have received it, so
   * the message's id and the reason go to the log as well.
   */
  failed(w: Leaving, error: Error): void {
    if (this.closing) {
      this.node.error(this.t('errors.undelivered', { msgid: typeof w.msg._msgid === 'string' ? w.msg._msgid : '?', error: error.message }));
    }
    this.out.finish(w, error);
  }

  /**
   * On close (redeploy, shutdown): lets the requests still out at the store
   * finish, fails what is still waiting after the drain limit (through the
   * node's failure policy, so that every message leaves), then leaves the
   * store: a memory store is kept for the next start of this node (saving
   * its changes) unless the node was deleted; a Redis store leaves the
   * shared connection.
   */
  private async close(removed: boolean): Promise<void> {
    this.closing = true;
    const bound = this.bound;
    try {
      for (const closer of this.closers) closer(removed);
      await this.inFlight.drained(drainLimit(bound?.timeoutMs ?? 0));
      if (this.inFlight.count > 0) {
        bound?.abandon(new Error(this.t('errors.closedWaiting')));
        await this.inFlight.drained(1000);
      }
      await bound?.close(removed);
    } catch (error) {
      this.node.warn(errorMessage(error));
    } finally {
      this.board.stop();
    }
  }
}
