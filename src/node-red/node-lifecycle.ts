/**
 * What both dedup nodes do the same way around their own decisions: message
 * texts from the node's catalog, the status line, the requests still out at
 * the store, msg.reset in order with the messages around it, a
 * configuration that cannot start, and closing so that every message
 * leaves.
 */
import type { RedisClient } from '../redis/scripts';
import type { RedisStoreOptions, Replies } from '../stores/types';
import type { DoneFunction, Node, NodeAPI, NodeMessage, SendFunction } from './api';
import { closeDrainLimit } from './close-times';
import { errorMessage, toError } from '../core/parse/errors';
import { Outlet, type Leaving } from './guarded-send';
import { InFlight } from './in-flight';
import { trackNode, type InsightSubject, type NodeInsight } from './insight';
import { upgradeConfig, type DedupNodeType } from './migrations';
import { forgetNode } from './node-registry';
import { resetTarget } from './reset';
import { StatusBoard } from './status-board';
import { bindStore, type BoundStore, type MemoryBuild, type MemoryStoreShape, type StoreKind } from './store-binding';
import { StoreFailurePolicy, type OnStoreError } from './store-failure';

export type Translate = (key: string, subs?: Record<string, string | number>) => string;

/** What every dedup node's configuration holds that starting it needs. */
export interface StartingConfig {
  store: StoreKind;
  redis: string | undefined;
  persistSeconds: number;
  onStoreError: OnStoreError;
  /** Catalog keys of what the node warns about at start (options that work, but not as one may think). */
  warnings?: readonly { key: string; subs: Record<string, string | number> }[];
}

/** What differs between the dedup nodes' starts; the steps around them are start()'s. */
export interface StartPlan<D, C extends StartingConfig, S, M extends S & MemoryStoreShape<E>, E, R extends S & { abandon(error: Error): void }> {
  /** Reads the (upgraded) definition; throws the reason a configuration cannot start. */
  read(def: D): C;
  /** How the node's memory store is made or taken over, and its Redis store made. */
  stores(config: C): { memory: Omit<MemoryBuild<M, E>, 'persistSeconds'>; redis: (client: RedisClient, options: RedisStoreOptions) => R };
  /** What the sidebar shows of the node beyond its id, type, name and store. */
  subject(config: C): Pick<InsightSubject, 'settings' | 'sampleSize'>;
  /** The node has all it needs: runs before its status is drawn and its first message comes. */
  ready(started: Started<C, S>): void;
  input(msg: NodeMessage, send: SendFunction, done: DoneFunction): void;
}

export interface Started<C, S> {
  config: C;
  bound: BoundStore<S>;
  failure: StoreFailurePolicy;
  insight: NodeInsight;
}

export class NodeLifecycle {
  readonly t: Translate;
  readonly board: StatusBoard;
  /** Every send, done() and Catch of the node's messages goes through it (see guarded-send). */
  readonly out: Outlet;
  private readonly inFlight = new InFlight();
  private bound: BoundStore<unknown> | undefined;
  /** The node asks other nodes' stores, not one of its own (see storeless()). */
  private ownsNoStore = false;
  private readonly closers: ((removed: boolean) => void)[] = [];
  private closing = false;
  /** Answers msg.reset once the store has applied it, in order with the decisions around it. */
  private readonly resetReplies: Replies<void, Leaving>;

  constructor(
    private readonly RED: NodeAPI,
    private readonly node: Node,
    private readonly type: DedupNodeType,
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

  /**
   * Starts a dedup node: upgrades its definition (warning of one saved by a
   * newer release), reads it and warns what it says to, binds its store
   * with its failure policy, tracks it for the sidebar, closes both with
   * the node, draws the status and takes messages. A configuration that
   * cannot start answers every message with the reason; undefined then.
   */
  start<D extends object, C extends StartingConfig, S, M extends S & MemoryStoreShape<E>, E, R extends S & { abandon(error: Error): void }>(
    def: D,
    plan: StartPlan<D, C, S, M, E, R>,
  ): Started<C, S> | undefined {
    const { RED, node, type, t } = this;
    let config: C;
    let bound: BoundStore<S>;
    let failure: StoreFailurePolicy;
    try {
      const upgraded = upgradeConfig(type, def, (version, supported) => node.warn(t('warnings.newerConfig', { version, supported })));
      config = plan.read(upgraded);
      for (const warning of config.warnings ?? []) node.warn(t(warning.key, warning.subs));
      failure = new StoreFailurePolicy(node, config.onStoreError, this.board, t);
      bound = bindStore<S, M, E, R>(RED, node, this, config, plan.stores(config));
    } catch (error) {
      this.refuseMessages(error);
      return undefined;
    }
    const insight = trackNode({ id: node.id, type, name: node.name ?? '', info: () => bound.info(), ...plan.subject(config) });
    const started: Started<C, S> = { config, bound, failure, insight };
    this.onClose((removed) => insight.close(removed));
    this.use(bound);
    plan.ready(started);
    this.board.changed();
    node.on('input', (msg, send, done) => plan.input(msg, send, done));
    return started;
  }

  /** The node's store, once bound: closed with the node. */
  use(bound: BoundStore<unknown>): void {
    this.bound = bound;
  }

  /**
   * The node has no store of its own: it asks other nodes' stores (the
   * confirm node asks the sensor nodes'), any of which may be Redis, so on
   * close its requests get the whole drain (DRAIN_MS, see close-times),
   * where a node whose store failed to bind has nothing out and waits for
   * nothing; what still waits then is not failed here, as those stores
   * are not this node's to abandon.
   */
  storeless(): void {
    this.ownsNoStore = true;
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
   * shared connection. A deleted node is then forgotten (node-registry).
   */
  private async close(removed: boolean): Promise<void> {
    this.closing = true;
    const bound = this.bound;
    try {
      for (const closer of this.closers) closer(removed);
      await this.inFlight.drained(closeDrainLimit(bound?.timeoutMs, this.ownsNoStore));
      if (this.inFlight.count > 0 && !this.ownsNoStore) {
        bound?.abandon(new Error(this.t('errors.closedWaiting')));
        await this.inFlight.drained(1000);
      }
      await bound?.close(removed);
    } catch (error) {
      this.node.warn(errorMessage(error));
    } finally {
      this.board.stop();
      // The one place a deleted node is forgotten: its kept store, sidebar record, claims and counts.
      if (removed) forgetNode(this.node.id);
    }
  }
}
