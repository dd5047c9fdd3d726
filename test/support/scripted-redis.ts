/**
 * The fixture of the tests that drive the Redis stores directly on the
 * shared server: every test starts from an empty database, with clients on
 * which the dedup scripts are defined, and its clients are closed after it.
 */
import type Redis from 'ioredis';
import { defineDedupScripts } from '../../src/redis/scripts';
import type { RedisStoreOptions } from '../../src/stores/redis-window-store';
import type { WindowSettings } from '../../src/stores/types';
import { closeRedisClient, flushRedis, newRedisClient } from './global-hooks';

/** The rule most store tests decide by: 60 s, 25 m, records kept an hour. */
export const SETTINGS: WindowSettings = { minSeconds: 60, minMetres: 25, ttlSeconds: 3600 };

/** Options of a store on one server (no Cluster grouping), with a timeout no healthy call reaches. */
export function storeOptions(keyPrefix: string, more: Partial<RedisStoreOptions> = {}): RedisStoreOptions {
  return { keyPrefix, cluster: false, timeoutMs: 5000, ...more };
}

export interface ScriptedClients {
  /** A new scripted client; the first one of a test empties the database. */
  open(): Promise<Redis>;
  /** Closes every client opened since the last call. */
  closeAll(): Promise<void>;
}

/** Scripted clients for one test at a time, for suites whose hooks are someone else's (the contracts). */
export function scriptedClients(): ScriptedClients {
  const open: Redis[] = [];
  return {
    async open() {
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

/**
 * Mocha hooks for the enclosing suite: before each test an empty database
 * and a new scripted client, closed after the test. Returns the current
 * test's client; call it once per client a test needs (two workers, two
 * calls).
 */
export function scriptedClientPerTest(): () => Redis {
  const clients = scriptedClients();
  let current: Redis | undefined;
  beforeEach(async () => {
    current = await clients.open();
  });
  afterEach(async () => {
    current = undefined;
    await clients.closeAll();
  });
  return () => {
    if (current === undefined) throw new Error('the scripted client exists only while a test runs');
    return current;
  };
}
