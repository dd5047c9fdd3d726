/**
 * Lets a node-level test see a TTL run out without sleeping through it.
 *
 * The memory store reads the host's clock (Date.now, taken when the store is
 * made), so the test moves that clock on. Redis expires keys by its own
 * clock, which no client can move: the test checks that every key the node
 * gave a TTL got one no longer than the node's ttlSeconds, then shortens
 * those TTLs to a millisecond and waits for Redis to drop the keys. Keys
 * without a TTL (epochs) are left as they are, as real time would leave them.
 */
import assert from 'node:assert/strict';
import { closeRedisClient, newRedisClient } from './global-hooks';
import { sleep, type StoreKind } from './node-red-helper';

export interface TtlPassage {
  /** Makes ttlMs (and a little more) pass for the entries of the store under keyPrefix (Redis). */
  pass(ttlMs: number, keyPrefix: string): Promise<void>;
  /** Puts Date.now back: call it in a finally. */
  restore(): void;
}

/** Call before the node is loaded, so that a memory store takes the movable clock. */
export function ttlPassage(store: StoreKind): TtlPassage {
  if (store === 'memory') {
    const realNow = Date.now;
    let offset = 0;
    Date.now = () => realNow() + offset;
    return {
      pass: (ttlMs) => {
        offset += ttlMs + 100;
        return Promise.resolve();
      },
      restore: () => {
        Date.now = realNow;
      },
    };
  }
  return {
    pass: async (ttlMs, keyPrefix) => {
      const client = newRedisClient();
      try {
        const keys = await client.keys(`${keyPrefix.replace(/[*?[\]\\]/g, '\\$&')}*`);
        const withTtl: string[] = [];
        for (const key of keys) {
          const pttl = await client.pttl(key);
          if (pttl === -1) continue;
          assert.ok(pttl > 0 && pttl <= ttlMs, `${key} expires in ${pttl} ms: more than the node's ${ttlMs} ms`);
          withTtl.push(key);
        }
        assert.ok(withTtl.length > 0, `no key with a TTL among ${keys.join(', ')}`);
        for (const key of withTtl) await client.pexpire(key, 1);
        // Redis drops an expired key when it is next touched: EXISTS touches them.
        for (let tries = 0; (await client.exists(...withTtl)) > 0; tries++) {
          assert.ok(tries < 500, 'Redis kept keys whose TTL ran out');
          await sleep(2);
        }
      } finally {
        await closeRedisClient(client);
      }
    },
    restore: () => undefined,
  };
}
