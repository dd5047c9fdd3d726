/**
 * Mocha root hooks (loaded through .mocharc.json `require`): one redis-server
 * for the whole run, plus helpers to reach it.
 *
 * - REDIS_URL set: that server is used as is (it must be disposable: the
 *   tests flush its database).
 * - otherwise a private redis-server is started on a free loopback port, and
 *   the run fails with an install hint if there is no redis-server binary.
 *
 * Every client made by newRedisClient() that a test forgot to close is closed
 * in the root afterAll, so mocha can exit on its own (no `exit: true`).
 */
import Redis, { type RedisOptions } from 'ioredis';
import { externalRedisServer, startRedisServer, type RedisServer } from './redis-server';

let shared: RedisServer | undefined;
let admin: Redis | undefined;
const clients = new Set<Redis>();

export const mochaHooks = {
  async beforeAll(this: Mocha.Context): Promise<void> {
    this.timeout(30_000);
    const url = process.env.REDIS_URL;
    shared = url !== undefined && url !== '' ? externalRedisServer(url) : await startRedisServer();
  },

  async afterAll(this: Mocha.Context): Promise<void> {
    this.timeout(30_000);
    for (const client of clients) client.disconnect();
    clients.clear();
    admin?.disconnect();
    admin = undefined;
    await shared?.stop();
    shared = undefined;
  },
};

/** The server every test shares. */
export function sharedRedis(): RedisServer {
  if (shared === undefined) {
    throw new Error('the shared redis-server is not running: is test/support/global-hooks.ts in .mocharc.json "require"?');
  }
  return shared;
}

/**
 * A new ioredis client of the shared server (or of `url`). Close it with
 * closeRedisClient(); one left open is disconnected after the run.
 */
export function newRedisClient(options: RedisOptions = {}, url: string = sharedRedis().url): Redis {
  const client = new Redis(url, options);
  clients.add(client);
  client.once('end', () => clients.delete(client));
  // A test that kills the server expects connection errors; without a
  // listener ioredis would print each one.
  client.on('error', () => undefined);
  return client;
}

/** QUIT, or drop the socket if the server does not answer quickly. */
export async function closeRedisClient(client: Redis): Promise<void> {
  clients.delete(client);
  if (client.status === 'end') return;
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      client.quit().catch(() => undefined),
      new Promise<void>((resolve) => {
        timer = setTimeout(resolve, 500);
      }),
    ]);
  } finally {
    if (timer) clearTimeout(timer);
    client.disconnect();
  }
}

/** FLUSHDB on the shared server: call it in beforeEach of a Redis test. */
export async function flushRedis(): Promise<void> {
  if (admin === undefined || admin.status === 'end') {
    admin = new Redis(sharedRedis().url);
    admin.on('error', () => undefined);
  }
  await admin.flushdb();
}
