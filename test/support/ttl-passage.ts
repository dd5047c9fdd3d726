/**
 * Lets a node-level test see a TTL run out without sleeping through it.
 *
 * Both stores expire entries by the host's clock (Date.now, taken when the
 * store is made): the memory store's, and the Redis store's, whose records
 * and entries hold when they expire. So the test moves that clock on. For
 * Redis it also checks that every key the node gave a TTL (its buckets, a
 * device's epoch) got one no longer than half a TTL past the node's
 * ttlSeconds (a bucket outlives its entries by up to that: redis/wire
 * PERIODS_PER_TTL): a bucket nobody writes goes away by itself. Keys
 * without a TTL (epochs, the layout mark) are left as they are.
 */
import assert from 'node:assert/strict';
import { closeRedisClient, newRedisClient } from './global-hooks';
import type { StoreKind } from './node-red-helper';

export interface TtlPassage {
  /** Makes ttlMs (and a little more) pass for the entries of the store under keyPrefix. */
  pass(ttlMs: number, keyPrefix: string): Promise<void>;
  /** Puts Date.now back: call it in a finally. */
  restore(): void;
}

/** Call before the node is loaded, so that the store takes the movable clock. */
export function ttlPassage(store: StoreKind): TtlPassage {
  const realNow = Date.now;
  let offset = 0;
  Date.now = () => realNow() + offset;
  return {
    pass: async (ttlMs, keyPrefix) => {
      if (store === 'redis') {
        const client = newRedisClient();
        try {
          const keys = await client.keys(`${keyPrefix.replace(/[*?[\]\\]/g, '\\$&')}*`);
          let withTtl = 0;
          for (const key of keys) {
            const pttl = await client.pttl(key);
            if (pttl === -1) continue;
            assert.ok(pttl > 0 && pttl <= ttlMs * 1.5, `${key} expires in ${pttl} ms: more than half a TTL past the node's ${ttlMs} ms`);
            withTtl++;
          }
          assert.ok(withTtl > 0, `no key with a TTL among ${keys.join(', ')}`);
        } finally {
          await closeRedisClient(client);
        }
      }
      offset += ttlMs + 100;
    },
    restore: () => {
      Date.now = realNow;
    },
  };
}
