import type { RedisClient } from '../redis/scripts';
import type { RedisStoreOptions } from '../stores/redis-window-store';
import type { NodeAPI } from './api';
import { asRedisConfigNode } from './redis-config-node';
import type { StatusBoard } from './status-board';

export type StoreKind = 'memory' | 'redis';

export interface BoundStore<S> {
  store: S;
  kind: StoreKind;
  /** How long a decision may wait for the store; Infinity for memory. */
  timeoutMs: number;
  /** Leaves the shared connection (the last user closes it). */
  release(): Promise<void>;
}

/**
 * Builds a node's store: in memory, or in Redis through the selected
 * dedup-redis config node, registering with it so the connection is opened on
 * first use, shared, and closed after the last user.
 */
export function bindStore<S>(
  RED: NodeAPI,
  nodeId: string,
  kind: StoreKind,
  redisConfigId: string | undefined,
  board: StatusBoard,
  t: (key: string) => string,
  build: { memory: () => S; redis: (client: RedisClient, options: RedisStoreOptions) => S },
): BoundStore<S> {
  if (kind === 'memory') {
    return { store: build.memory(), kind, timeoutMs: Infinity, release: () => Promise.resolve() };
  }
  const config = redisConfigId ? asRedisConfigNode(RED.nodes.getNode(redisConfigId)) : undefined;
  if (config === undefined) throw new Error(t('errors.noRedisConfig'));
  const connection = config.connection;
  const client = connection.register(nodeId, (event) => board.connectionChanged(event));
  return {
    store: build.redis(client, {
      keyPrefix: connection.keyPrefix,
      cluster: connection.isCluster,
      timeoutMs: connection.settings.timeoutMs,
    }),
    kind,
    timeoutMs: connection.settings.timeoutMs,
    release: () => connection.deregister(nodeId),
  };
}
