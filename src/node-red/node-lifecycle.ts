import type { DoneFunction, Node, NodeAPI, NodeMessage } from './api';
import { InFlight } from './in-flight';
import { resetTarget } from './reset';
import { StatusBoard } from './status-board';
import type { BoundStore } from './store-binding';
import { errorMessage, toError } from './store-failure';
import { isPromise, type MaybePromise } from '../stores/types';

/**
 * What both dedup nodes do the same way around their own decisions: message
 * texts from the node's catalog, the status line, decisions still out at the
 * store, msg.reset, a configuration that cannot start, and closing.
 */
export type Translate = (key: string, subs?: Record<string, string | number>) => string;

/** The callbacks settleThen() hands a store, made once per node by answers(). */
export interface Answers<T, C> {
  value: (value: T, context: C) => void;
  error: (error: unknown, context: C) => void;
}

/** Longest a redeploy waits for decisions still out at Redis (Node-RED gives up at 15 s). */
const CLOSE_DRAIN_LIMIT_MS = 10_000;

export class NodeLifecycle {
  readonly t: Translate;
  readonly board: StatusBoard;
  private readonly inFlight = new InFlight();

  constructor(
    RED: NodeAPI,
    private readonly node: Node,
    type: string,
    describeCounts: (t: Translate) => string,
  ) {
    this.t = (key, subs) => RED._(`${type}.${key}`, subs);
    this.board = new StatusBoard(node, () => describeCounts(this.t), this.t);
  }

  /**
   * A node whose configuration cannot start still answers every message, with
   * the reason, so that nothing sent to it disappears without a word.
   */
  refuseMessages(error: unknown): void {
    const text = this.t('errors.badConfig', { error: errorMessage(error) });
    this.node.error(text);
    this.board.fixed('red', this.t('status.badConfig'));
    this.node.on('input', (_msg, _send, done) => done(new Error(text)));
  }

  /**
   * Calls onValue with a store's answer, at once when the store answered
   * synchronously (the memory store), or when its promise settles, counting
   * it as in flight meanwhile. A store that throws or rejects goes to onError.
   */
  settle<T>(answer: () => MaybePromise<T>, onValue: (value: T) => void, onError: (error: unknown) => void): void {
    let result: MaybePromise<T>;
    try {
      result = answer();
    } catch (error) {
      onError(error);
      return;
    }
    if (!isPromise(result)) {
      onValue(result);
      return;
    }
    const inFlight = this.inFlight;
    inFlight.begin();
    result.then(
      (value) => {
        inFlight.end();
        this.board.storeWorked();
        onValue(value);
      },
      (error: unknown) => {
        inFlight.end();
        onError(error);
      },
    );
  }

  /**
   * The callbacks for settleThen(), made once per node rather than once per
   * message: they count the decision out of flight and pass the store's
   * answer on to onValue or onError, with the context of its message.
   */
  answers<T, C>(onValue: (value: T, context: C) => void, onError: (error: unknown, context: C) => void): Answers<T, C> {
    const inFlight = this.inFlight;
    const board = this.board;
    return {
      value: (value, context) => {
        inFlight.end();
        board.storeWorked();
        onValue(value, context);
      },
      error: (error, context) => {
        inFlight.end();
        onError(error, context);
      },
    };
  }

  /**
   * settle() for a store that answers through callbacks (the Redis window
   * store's decideThen): the same in-flight count and error handling, but
   * no promise and no closure per message, only the context the caller
   * passes, which is what the garbage collector has to walk while 200,000
   * messages are in flight (npm run bench).
   */
  settleThen<I, T, C>(
    ask: (item: I, onValue: Answers<T, C>['value'], onError: Answers<T, C>['error'], context: C) => void,
    item: I,
    answers: Answers<T, C>,
    context: C,
  ): void {
    this.inFlight.begin();
    try {
      ask(item, answers.value, answers.error, context);
    } catch (error) {
      answers.error(error, context);
    }
  }

  /** Handles msg.reset, if the message is one; true when it was. */
  reset(msg: NodeMessage, store: { reset(id?: string): MaybePromise<void> }, done: DoneFunction): boolean {
    const target = resetTarget(msg);
    if (target === undefined) return false;
    this.settle(
      () => store.reset(target.all ? undefined : target.id),
      () => done(),
      (error) => done(toError(error)),
    );
    return true;
  }

  /**
   * On close (redeploy, shutdown): lets decisions still out at the store
   * finish and call done(), then leaves the shared connection.
   */
  closeWith(bound: () => BoundStore<unknown> | undefined): void {
    this.node.on('close', (_removed, done) => {
      const store = bound();
      const limit = Math.min(CLOSE_DRAIN_LIMIT_MS, (store?.timeoutMs ?? 0) + 1000);
      this.inFlight
        .drained(limit)
        .then(() => store?.release())
        .catch((error: unknown) => this.node.warn(errorMessage(error)))
        .finally(() => {
          this.board.stop();
          done();
        });
    });
  }
}
