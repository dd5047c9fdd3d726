/**
 * Runs the store contracts against every store: memory, Redis, and Redis
 * with Cluster-style grouping (calls split per hash slot, with an epoch key
 * per slot; on one server the split is visible only to the client, which is
 * the code it exercises).
 *
 * Every store reads a host clock that moves only when a test says so
 * (elapse); the Redis subjects also sleep for real, since Redis expires
 * keys by its own clock.
 */
import type Redis from 'ioredis';
import { seenKey, windowRecordKey } from '../../src/redis/key-names';
import { MemorySeenStore } from '../../src/stores/memory-seen-store';
import { MemoryWindowStore } from '../../src/stores/memory-window-store';
import { RedisSeenStore } from '../../src/stores/redis-seen-store';
import { RedisWindowStore } from '../../src/stores/redis-window-store';
import type { Replies, SeenSettings, WindowSettings } from '../../src/stores/types';
import { useRedis } from '../support/global-hooks';
import { fillKeys, scriptedClients, storeOptions } from '../support/scripted-redis';
import { seenStoreContract } from './seen-store.contract';
import { LAT, LON, START_MS, windowStoreContract } from './window-store.contract';

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** A host clock that only moves when a test says so. */
function manualClock(): { now: () => number; advance: (ms: number) => void } {
  let now = START_MS;
  return {
    now: () => now,
    advance: (ms) => {
      now += ms;
    },
  };
}

/** Answers nobody waits for (filling a memory store). */
const IGNORED: Replies<unknown, undefined> = {
  value: () => undefined,
  error: (error) => {
    throw error;
  },
};

// Caps far above what any contract case writes: the caps have their own tests (memory-bounds.spec.ts).
const MAX_ENTRIES = 1_000_000;

windowStoreContract({
  name: 'memory',
  create(settings: WindowSettings) {
    const clock = manualClock();
    const store = new MemoryWindowStore({ ...settings, maxAssets: MAX_ENTRIES }, clock.now);
    // The memory store answers at once: the harness's promises are resolved ones.
    return Promise.resolve({
      store,
      now: clock.now,
      elapse: (ms: number) => Promise.resolve(clock.advance(ms)),
      unrelated: (count: number) => {
        for (let i = 0; i < count; i++) store.decide({ assetId: `other-${i}`, t: START_MS - 60_000, lat: LAT, lon: LON }, IGNORED, undefined);
        return Promise.resolve();
      },
    });
  },
  async cleanup() {
    // Nothing to close.
  },
});

seenStoreContract({
  name: 'memory',
  create(settings: SeenSettings) {
    const clock = manualClock();
    const store = new MemorySeenStore({ ...settings, maxKeys: MAX_ENTRIES, keyMode: 'reading' }, clock.now);
    return Promise.resolve({
      store,
      elapse: (ms: number) => Promise.resolve(clock.advance(ms)),
      unrelated: (count: number) => {
        for (let start = 0; start < count; start += 1000) {
          const claims = [];
          for (let i = start; i < Math.min(count, start + 1000); i++) {
            const group = `other-${i % 1000}`;
            claims.push({ key: `${group}:${i}:0123456789abcdef`, group });
          }
          store.claim({ claims, token: 1 }, IGNORED, undefined);
        }
        return Promise.resolve();
      },
    });
  },
  async cleanup() {
    // Nothing to close.
  },
});

/** A 44-byte window record (lua/sliding-window.lua) of epoch 0: what another asset's record looks like. */
function otherRecord(): Buffer {
  const record = Buffer.alloc(44);
  record.writeDoubleLE(START_MS - 60_000, 0);
  record.writeUInt32LE(1, 16);
  record.writeUInt16LE(65_535, 38);
  return record;
}

/** An 11-byte seen entry (lua/seen-set.lua): seen, epochs 0, token 1. */
function otherEntry(): Buffer {
  const entry = Buffer.alloc(11);
  entry.writeUIntLE(1, 5, 6);
  return entry;
}

for (const cluster of [false, true]) {
  const name = cluster ? 'redis, grouped by cluster slot' : 'redis';
  const prefix = 'contract:';
  const options = storeOptions(prefix, { cluster });

  describe(name, () => {
    useRedis();
    const clients = scriptedClients();

    /** A store on a new scripted client, its clock, and what fills the database around it. */
    async function harness<Store>(make: (client: Redis, now: () => number) => Store) {
      const client = await clients.open();
      const clock = manualClock();
      return {
        client,
        store: make(client, clock.now),
        now: clock.now,
        elapse: async (ms: number) => {
          clock.advance(ms);
          await sleep(ms);
        },
      };
    }

    windowStoreContract({
      name,
      async create(settings: WindowSettings) {
        const { client, ...rest } = await harness((c, now) => new RedisWindowStore(c, settings, options, now));
        const record = otherRecord();
        return { ...rest, unrelated: (count) => fillKeys(client, count, (i) => windowRecordKey(prefix, `other-${i}`), () => record) };
      },
      cleanup: () => clients.closeAll(),
    });

    seenStoreContract({
      name,
      async create(settings: SeenSettings) {
        const { client, ...rest } = await harness((c, now) => new RedisSeenStore(c, settings, options, now));
        const entry = otherEntry();
        return {
          ...rest,
          unrelated: (count) =>
            fillKeys(
              client,
              count,
              (i) => seenKey(prefix, `other-${i % 1000}`, `other-${i % 1000}:${i}:0123456789abcdef`),
              () => entry,
            ),
        };
      },
      cleanup: () => clients.closeAll(),
    });
  });
}
