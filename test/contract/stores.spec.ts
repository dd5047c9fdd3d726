/**
 * Runs the store contracts against every store: memory, Redis, and Redis
 * with Cluster-style grouping (calls split per hash slot; on one server the
 * split is visible only to the client, which is the code it exercises).
 */
import type Redis from 'ioredis';
import { MemorySeenStore } from '../../src/stores/memory-seen-store';
import { MemoryWindowStore } from '../../src/stores/memory-window-store';
import { RedisSeenStore } from '../../src/stores/redis-seen-store';
import { RedisWindowStore } from '../../src/stores/redis-window-store';
import type { WindowSettings } from '../../src/stores/types';
import { scriptedClients, storeOptions } from '../support/scripted-redis';
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

/** A contract subject: a fresh store and a clock that only moves when a test says so; nothing to close. */
function memorySubject<Settings, Store>(make: (settings: Settings, now: () => number) => Store) {
  return {
    name: 'memory',
    async create(settings: Settings) {
      const clock = manualClock();
      return { store: make(settings, clock.now), elapse: clock.elapse };
    },
    async cleanup() {
      // Nothing to close.
    },
  };
}

windowStoreContract(memorySubject((settings: WindowSettings, now) => new MemoryWindowStore({ ...settings, maxAssets: 10_000 }, now)));
seenStoreContract(memorySubject((settings: { ttlSeconds: number }, now) => new MemorySeenStore({ ...settings, maxKeys: 10_000 }, now)));

/** A contract subject on the shared server: a scripted client per store, real time, the clients closed after each test. */
function redisSubject<Settings, Store>(name: string, make: (client: Redis, settings: Settings) => Store) {
  const clients = scriptedClients();
  return {
    name,
    async create(settings: Settings) {
      return { store: make(await clients.open(), settings), elapse: sleep };
    },
    cleanup: clients.closeAll,
  };
}

for (const cluster of [false, true]) {
  const name = cluster ? 'redis, grouped by cluster slot' : 'redis';
  const options = storeOptions('contract:', { cluster });
  windowStoreContract(redisSubject(name, (client, settings: WindowSettings) => new RedisWindowStore(client, settings, options)));
  seenStoreContract(redisSubject(name, (client, settings: { ttlSeconds: number }) => new RedisSeenStore(client, settings, options)));
}
