/**
 * Where a node keeps its state, as its config chose it: a store choice is
 * an object (memoryStore, redisStore, or claimStores for the confirm node,
 * which settles in other nodes' stores) that binds the store when the node
 * starts. What a node gets back is the store it asks and what its close
 * needs: how long to let requests drain, how to fail what still waits, how
 * to let go of the store.
 */
import type { StateCodec } from '../persist/codecs';
import { observeRedisCall } from '../metrics/redis-calls';
import type { RedisClient } from '../redis/scripts';
import type { RedisStoreOptions } from '../stores/types';
import type { StoreInfo, StoreKind } from '../telemetry/subjects';
import type { Node, NodeAPI } from './api';
import { claimHolder, type ClaimHolder } from './claim-registry';
import { dropMemoryStore, holdMemoryStore, persistenceOf, releaseMemoryStore, type Persistable } from './memory-state';
import { asRedisConfigNode } from './redis-config-node';
import type { Translate } from './status-board';
import type { StoreHealth } from './store-health';

/** What a node's close needs of its store. */
export interface StoreBinding {
  /** How long a request may wait for the store; Infinity when nothing limits it. */
  readonly timeoutMs: number;
  /** Fails every request still waiting at the store; undefined when they are not this node's to fail. */
  readonly abandon: ((error: Error) => void) | undefined;
  /** Closes with the node: keeps (and saves) a memory store unless the node was removed; leaves a shared connection. */
  close(removed: boolean): Promise<void>;
}

/** A store of the node's own (memory or Redis), bound. */
export interface OwnStore<S> extends StoreBinding {
  readonly store: S;
  readonly kind: StoreKind;
  /** What the sidebar, the stats node and Prometheus show of it. */
  info(): StoreInfo;
}

/** What binding a store may use of the node it is for. */
export interface BindContext {
  RED: NodeAPI;
  node: Pick<Node, 'id' | 'type' | 'warn'>;
  t: Translate;
  /** Told of the connection's events and the memory store's saving. */
  health: StoreHealth;
  /** A reply callback that threw, reported through the node (see TickBatcher). */
  callbackFailed: (error: unknown) => void;
}

/** A store as a node's config chose it, bound when the node starts; binding throws the reason it cannot be. */
export interface StoreChoice<B extends StoreBinding> {
  bind(context: BindContext): B;
}

/** A memory store as the binding keeps it: persistable, told its new limits on a redeploy, and measured for the sidebar. */
export interface MemoryStoreShape<E> extends Persistable<E> {
  readonly size: number;
  readonly maxEntries: number;
  /** The seen-set's keys pending a confirm; absent for a window store. */
  pendingKeys?(): number;
}

export interface MemoryBuild<M extends MemoryStoreShape<E>, E> {
  make: () => M;
  reuse: (store: M) => void;
  codec: StateCodec<E>;
  persistSeconds: number;
}

/**
 * A node's memory store: the one this node id held before a redeploy, or a
 * new one loaded from its saved state (node-red/memory-state).
 */
export function memoryStore<M extends MemoryStoreShape<E>, E>(build: MemoryBuild<M, E>): StoreChoice<OwnStore<M>> {
  return {
    bind({ RED, node, health }) {
      const held = holdMemoryStore(
        node.id,
        node.type,
        persistenceOf(RED, node.id, build.persistSeconds),
        build.codec,
        build.make,
        build.reuse,
        (text) => node.warn(text),
        (cause) => health.savingChanged(cause),
      );
      const store = held.store;
      return {
        store,
        kind: 'memory',
        timeoutMs: Infinity,
        abandon: () => undefined,
        close: (removed) => releaseMemoryStore(node.id, removed),
        info: () => ({
          kind: 'memory',
          entries: store.size,
          maxEntries: store.maxEntries,
          saving: held.journal !== undefined,
          ...(held.journal?.stats.lastSave !== undefined ? { lastSave: held.journal.stats.lastSave } : {}),
          ...(held.journal !== undefined ? { savedBytes: held.journal.savedBytes } : {}),
          ...(store.pendingKeys !== undefined ? { pendingKeys: store.pendingKeys() } : {}),
        }),
      };
    },
  };
}

/**
 * A node's Redis store, through the selected dedup-redis config node,
 * registering with it so the connection is opened on first use, shared, and
 * closed after the last user. A config node that could not make a
 * connection is named, with its reason, in the error.
 */
export function redisStore<R extends { abandon(error: Error): void }>(redisConfigId: string | undefined, make: (client: RedisClient, options: RedisStoreOptions) => R): StoreChoice<OwnStore<R>> {
  return {
    bind({ RED, node, t, health, callbackFailed }) {
      // The node keeps its state in Redis now: a memory store it held goes.
      void dropMemoryStore(node.id);
      const config = redisConfigId ? asRedisConfigNode(RED.nodes.getNode(redisConfigId)) : undefined;
      if (config === undefined) throw new Error(t('errors.noRedisConfig'));
      if (config.connection === undefined) {
        throw new Error(t('errors.badRedisConfig', { label: config.label, problem: config.problem ?? '?' }));
      }
      const connection = config.connection;
      const client = connection.register(node.id, (event) => health.connectionChanged(event));
      const store = make(client, {
        keyPrefix: connection.keyPrefix,
        cluster: connection.isCluster,
        timeoutMs: connection.settings.timeoutMs,
        cause: () => connection.cause(),
        refused: () => connection.refusal(),
        classify: (error) => connection.scriptingError(error),
        onCallbackError: callbackFailed,
        onAnswer: observeRedisCall,
      });
      return {
        store,
        kind: 'redis',
        timeoutMs: connection.settings.timeoutMs,
        abandon: (error) => store.abandon(error),
        close: () => connection.deregister(node.id),
        info: () => {
          const cause = connection.cause();
          return { kind: 'redis', connection: connection.state.state, ...(cause !== undefined ? { cause } : {}) };
        },
      };
    },
  };
}

/**
 * The confirm node's stores: the seen-sets of the running sensor nodes,
 * found by the node id a message names (node-red/claim-registry), any of
 * which may be Redis. So on close its requests get the whole drain
 * (DRAIN_MS, see close-times), and what still waits then is not failed
 * here: those stores are not this node's to abandon.
 */
export interface ClaimStores extends StoreBinding {
  holder(nodeId: string): ClaimHolder | undefined;
}

export const claimStores: StoreChoice<ClaimStores> = {
  bind: () => ({ timeoutMs: Infinity, abandon: undefined, close: () => Promise.resolve(), holder: claimHolder }),
};
