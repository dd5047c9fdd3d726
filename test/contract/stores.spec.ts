/**
 * Runs the store contracts against every store: memory, Redis, and Redis
 * with Cluster-style grouping (calls split per hash slot; on one server the
 * split is visible only to the client, which is the code it exercises).
 */
import type Redis from 'ioredis';
import { defineDedupScripts } from '../../src/redis/scripts';
import { MemorySeenStore } from '../../src/stores/memory-seen-store';
import { MemoryWindowStore } from '../../src/stores/memory-window-store';
import { RedisSeenStore } from '../../src/stores/redis-seen-store';
import { RedisWindowStore } from '../../src/stores/redis-window-store';
import { closeRedisClient, flushRedis, newRedisClient } from '../support/global-hooks';
import { seenStoreContract } from './seen-store.contract';
import { windowStoreContract } from './window-store.contract';

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** A clock for the memory stores that only moves when a test says so. */
function manualClock(): { now: () => number; elapse: (ms: number) => Promise<void> } {
  let now = 1_700_000_000_000;
  return {
    now: () => now,
    elapse: async (ms) => {
      now += ms;
    },
  };
}

windowStoreContract({
  name: 'memory',
  async create(settings) {
    const clock = manualClock();
    return { store: new MemoryWindowStore({ ...settings, maxAssets: 10_000 }, clock.now), elapse: clock.elapse };
  },
  async cleanup() {
    // Nothing to close.
  },
});

seenStoreContract({
  name: 'memory',
  async create(settings) {
    const clock = manualClock();
    return { store: new MemorySeenStore({ ...settings, maxKeys: 10_000 }, clock.now), elapse: clock.elapse };
  },
  async cleanup() {
    // Nothing to close.
  },
});

/** Opens a scripted client per store; closes them all after each test. */
function redisClients(): { open: () => Promise<Redis>; closeAll: () => Promise<void> } {
  const open: Redis[] = [];
  return {
    async open() {
      // Every test starts from an empty database.
      if (open.length === 0) await flushRedis();
      const client = newRedisClient();
      defineDedupScripts(client);
      open.push(client);
      return client;
    },
    async closeAll() {
      await Promise.all(open.splice(0).map(closeRedisClient));
    },
  };
}

for (const cluster of [false, true]) {
  const name = cluster ? 'redis, grouped by cluster slot' : 'redis';
  const options = { keyPrefix: 'contract:', cluster, timeoutMs: 5000 };

  const windowClients = redisClients();
  windowStoreContract({
    name,
    async create(settings) {
      return { store: new RedisWindowStore(await windowClients.open(), settings, options), elapse: sleep };
    },
    cleanup: windowClients.closeAll,
  });

  const seenClients = redisClients();
  seenStoreContract({
    name,
    async create(settings) {
      return { store: new RedisSeenStore(await seenClients.open(), settings, options), elapse: sleep };
    },
    cleanup: seenClients.closeAll,
  });
}
