import { observeRedisCall } from '../metrics/redis-calls';
import type { RedisClient } from '../redis/scripts';
import type { StateCodec } from '../persist/codecs';
import type { RedisStoreOptions } from '../stores/types';
import type { NodeAPI } from './api';
import { dropMemoryStore, holdMemoryStore, persistenceOf, releaseMemoryStore, type Persistable } from './memory-state';
import { asRedisConfigNode } from './redis-config-node';
import type { StatusBoard } from './status-board';

export type StoreKind = 'memory' | 'redis';

/** What the sidebar and the status show of a node's store. */
export interface StoreInfo {
  kind: StoreKind;
  /** Memory: entries held and the cap. */
  entries?: number;
  maxEntries?: number;
  /** Memory: epoch ms of the last save, when saving is on. */
  lastSave?: number;
  saving?: boolean;
  /** Memory: bytes of saved state on disk, when saving is on. */
  savedBytes?: number;
  /** Memory, sensor node: keys pending a confirm. */
  pendingKeys?: number;
  /** Redis: the connection's state, and what is wrong with it. */
  connection?: string;
  cause?: string;
}

export interface BoundStore<S> {
  store: S;
  kind: StoreKind;
  /** How long a request may wait for the store; Infinity for memory. */
  timeoutMs: number;
  /** Fails every request still waiting at the store (the node is closing). */
  abandon(error: Error): void;
  /** Closes with the node: keeps (and saves) a memory store unless the node was removed; leaves a shared connection. */
  close(removed: boolean): Promise<void>;
  info(): StoreInfo;
}

/** A memory store as the binding keeps it: persistable, told its new limits on a redeploy, and measured for the sidebar. */
export interface MemoryStoreShape<E> extends Persistable<E> {
  readonly size: number;
  readonly maxEntries: number;
  /** The seen-set's keys pending a confirm; absent for a window store. */
  pendingKeys?(): number;
}

export interface MemoryBuild<S extends MemoryStoreShape<E>, E> {
  make: () => S;
  reuse: (store: S) => void;
  codec: StateCodec<E>;
  persistSeconds: number;
}

/**
 * A node's store as its config chose it: memory (built or taken over by
 * `memory`) or Redis (made by `redis` on the selected connection). S is
 * what the node uses; each store kind is one of it.
 */
export function bindStore<S, M extends S & MemoryStoreShape<E>, E, R extends S & { abandon(error: Error): void }>(
  RED: NodeAPI,
  node: { id: string; type: string; warn(text: string): void },
  life: { board: StatusBoard; t: (key: string, subs?: Record<string, string | number>) => string },
  config: { store: StoreKind; redis: string | undefined; persistSeconds: number },
  build: { memory: Omit<MemoryBuild<M, E>, 'persistSeconds'>; redis: (client: RedisClient, options: RedisStoreOptions) => R },
): BoundStore<S> {
  return config.store === 'memory'
    ? bindMemoryStore(RED, node, { ...build.memory, persistSeconds: config.persistSeconds }, life.board)
    : bindRedisStore(RED, node, config.redis, life.board, life.t, build.redis);
}

/**
 * A node's memory store: the one this node id held before a redeploy, or a
 * new one loaded from its saved state (node-red/memory-state).
 */
export function bindMemoryStore<S extends MemoryStoreShape<E>, E>(
  RED: NodeAPI,
  node: { id: string; type: string; warn(text: string): void },
  build: MemoryBuild<S, E>,
  board?: StatusBoard,
): BoundStore<S> {
  const held = holdMemoryStore(
    node.id,
    node.type,
    persistenceOf(RED, node.id, build.persistSeconds),
    build.codec,
    build.make,
    build.reuse,
    (text) => node.warn(text),
    board !== undefined ? (cause) => board.savingChanged(cause) : undefined,
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
}

/**
 * A node's Redis store, through the selected dedup-redis config node,
 * registering with it so the connection is opened on first use, shared, and
 * closed after the last user. A config node that could not make a
 * connection is named, with its reason, in the error.
 */
export function bindRedisStore<S extends { abandon(error: Error): void }>(
  RED: NodeAPI,
  node: { id: string },
  redisConfigId: string | undefined,
  board: StatusBoard,
  t: (key: string, subs?: Record<string, string | number>) => string,
  make: (client: RedisClient, options: RedisStoreOptions) => S,
): BoundStore<S> {
  // The node keeps its state in Redis now: a memory store it held goes.
  void dropMemoryStore(node.id);
  const config = redisConfigId ? asRedisConfigNode(RED.nodes.getNode(redisConfigId)) : undefined;
  if (config === undefined) throw new Error(t('errors.noRedisConfig'));
  if (config.connection === undefined) {
    throw new Error(t('errors.badRedisConfig', { label: config.label, problem: config.problem ?? '?' }));
  }
  const connection = config.connection;
  const client = connection.register(node.id, (event) => board.connectionChanged(event));
  const store = make(client, {
    keyPrefix: connection.keyPrefix,
    cluster: connection.isCluster,
    timeoutMs: connection.settings.timeoutMs,
    cause: () => connection.cause(),
    refused: () => connection.refusal(),
    classify: (error) => connection.scriptingError(error),
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
}
