/**
 * Mocha root hooks (loaded through .mocharc.json `require`) and the one
 * redis-server the Redis suites share, started only when a suite first needs
 * it: a run of pure tests (npm run test:unit, which does not load this file)
 * or of suites that never call useRedis() starts no server at all.
 *
 * - A suite that needs the shared server calls useRedis() at the top of its
 *   describe; sharedRedis() and newRedisClient() work from then on (in its
 *   hooks and tests, not while mocha is still collecting the suites).
 * - REDIS_URL set: that server is used as is (it must be disposable: the
 *   tests flush its database).
 * - otherwise a private redis-server is started on a free loopback port, and
 *   the suite fails with an install hint if there is no redis-server binary.
 *
 * The root afterAll stops whatever was started, and closes every client made
 * by newRedisClient() that a test forgot to close, so mocha can exit on its
 * own (no `exit: true`).
 */
import Redis, { type RedisOptions } from 'ioredis';
import { externalRedisServer, startRedisServer, type RedisServer } from './redis-server';

let shared: RedisServer | undefined;
// The start in progress or done; a failed start is forgotten so that the next
// suite tries again and fails with the same clear error instead of a stale one.
let starting: Promise<RedisServer> | undefined;
let admin: Redis | undefined;
const clients = new Set<Redis>();

/** The shared server, started on first call (or REDIS_URL's). */
async function startShared(): Promise<RedisServer> {
  if (starting === undefined) {
    const url = process.env.REDIS_URL;
    starting = url !== undefined && url !== '' ? Promise.resolve(externalRedisServer(url)) : startRedisServer();
    starting.catch(() => {
      starting = undefined;
    });
  }
  shared = await starting;
  return shared;
}

/**
 * Call at the top of a describe whose hooks or tests use the shared server:
 * registers a `before` hook that starts it on first use (or connects to
 * REDIS_URL). Later suites reuse it; the root afterAll stops it.
 */
export function useRedis(): void {
  before(async function (this: Mocha.Context) {
    this.timeout(30_000);
    await startShared();
  });
}

export const mochaHooks = {
  async afterAll(this: Mocha.Context): Promise<void> {
    this.timeout(30_000);
    for (const client of clients) client.disconnect();
    clients.clear();
    admin?.disconnect();
    admin = undefined;
    const server = await starting?.catch(() => undefined);
    starting = undefined;
    shared = undefined;
    await server?.stop();
  },
};

/** The server every Redis suite shares; its suite must have called useRedis(). */
export function sharedRedis(): RedisServer {
  if (shared === undefined) {
    throw new Error(
      'the shared redis-server is not running: call useRedis() at the top of the describe that needs it ' +
        '(and load test/support/global-hooks.ts through the mocha config "require", as .mocharc.json does)',
    );
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

/**
 * FLUSHDB on the shared server: call it in beforeEach of a Redis test. It
 * starts the server if no useRedis() has yet (a fixture may flush first).
 */
export async function flushRedis(): Promise<void> {
  const server = await startShared();
  if (admin === undefined || admin.status === 'end') {
    admin = new Redis(server.url);
    admin.on('error', () => undefined);
  }
  await admin.flushdb();
}
