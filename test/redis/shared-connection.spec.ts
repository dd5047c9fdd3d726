/**
 * The connection a dedup-redis config node shares between its users:
 * connects on the first user, tells every user its state, closes once after
 * the last user leaves, comes back after a server restart, names the cause
 * of a failure in the network's own words (issue 9), and refuses at once a
 * configuration no client can be made from.
 */
import assert from 'node:assert/strict';
import type { Cluster, Redis } from 'ioredis';
import type { RedisConnectionSettings } from '../../src/redis/connection-options';
import { SharedConnection, type ConnectionEvent } from '../../src/redis/shared-connection';
import { RedisWindowStore } from '../../src/stores/redis-window-store';
import { ping } from '../contract/window-store.contract';
import { decide } from '../support/ask';
import { flushRedis, sharedRedis, useRedis } from '../support/global-hooks';
import { freePort, redisServerAvailable, startRedisServer, type RedisServer } from '../support/redis-server';

function settingsFor(url: string, more: Partial<RedisConnectionSettings> = {}): RedisConnectionSettings {
  return {
    mode: 'standalone', url, host: '', port: 0, db: 0, tls: false, username: '', password: '',
    sentinels: '', masterName: '', sentinelPassword: '', clusterNodes: '', keyPrefix: 'shared:', timeoutMs: 2000,
    ...more,
  };
}

/** Resolves when `events` gets an event that `matches`, or fails after 5 s. */
function waitUntil(events: ConnectionEvent[], matches: (event: ConnectionEvent) => boolean, what: string, from = 0): Promise<void> {
  return new Promise((resolve, reject) => {
    const started = Date.now();
    const poll = (): void => {
      if (events.slice(from).some(matches)) resolve();
      else if (Date.now() - started > 5000) reject(new Error(`no ${what} in ${JSON.stringify(events.map((e) => [e.state, e.error?.message]))}`));
      else setTimeout(poll, 10);
    };
    poll();
  });
}

const waitFor = (events: ConnectionEvent[], state: ConnectionEvent['state'], from = 0): Promise<void> =>
  waitUntil(events, (e) => e.state === state, `"${state}"`, from);

/** Resolves when the client has closed its socket, or fails after 2 s. */
function ended(client: Redis | Cluster): Promise<void> {
  if (client.status === 'end') return Promise.resolve();
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`client still ${client.status} 2 s after the last user left`)), 2000);
    client.once('end', () => {
      clearTimeout(timer);
      resolve();
    });
  });
}

describe('redis SharedConnection', () => {
  useRedis();
  beforeEach(() => flushRedis());

  it('connects on the first user, shares one client, and closes after the last user', async () => {
    const connection = new SharedConnection(settingsFor(sharedRedis().url));
    assert.equal(connection.state.state, 'closed', 'nothing connects before a user registers');
    const first: ConnectionEvent[] = [];
    const second: ConnectionEvent[] = [];
    const client = connection.register('node-1', (e) => first.push(e));
    assert.equal(first[0]?.state, 'connecting', 'a new user is told the current state at once');
    assert.equal(connection.register('node-2', (e) => second.push(e)), client, 'one client for all users');
    await waitFor(first, 'ready');
    await waitFor(second, 'ready');
    assert.equal(connection.userCount, 2);
    assert.equal(connection.cause(), undefined, 'no cause while ready');

    // The scripts are defined on the shared client.
    const store = new RedisWindowStore(client, { minSeconds: 60, minMetres: 25, ttlSeconds: 60 }, {
      keyPrefix: connection.keyPrefix, cluster: connection.isCluster, timeoutMs: 2000,
    });
    assert.equal((await decide(store, ping('veh-1', 0))).reason, 'first');

    await connection.deregister('node-1');
    await connection.deregister('never-registered');
    assert.equal(client.status, 'ready', 'still in use by node-2');
    await connection.deregister('node-2');
    await ended(client);
    await connection.close(); // a second close is harmless
  });

  it('reconnects a fresh client when a user registers after the last one left', async () => {
    const connection = new SharedConnection(settingsFor(sharedRedis().url));
    const events: ConnectionEvent[] = [];
    const first = connection.register('n', (e) => events.push(e));
    await waitFor(events, 'ready');
    await connection.deregister('n');
    const second = connection.register('n', (e) => events.push(e));
    assert.notEqual(second, first);
    await waitFor(events, 'ready', events.length);
    await connection.deregister('n');
    await ended(first);
    await ended(second);
  });

  it('closes when idle: at once when the last user leaves, or at the limit', async () => {
    const connection = new SharedConnection(settingsFor(sharedRedis().url));
    const events: ConnectionEvent[] = [];
    const client = connection.register('a', (e) => events.push(e));
    await waitFor(events, 'ready');
    const started = Date.now();
    const closing = connection.closeWhenIdle(5000);
    setTimeout(() => void connection.deregister('a'), 50);
    await closing;
    assert.ok(Date.now() - started < 1500, `waited ${Date.now() - started} ms for an idle connection`);
    await ended(client);

    const again = connection.register('b', (e) => events.push(e));
    const limited = Date.now();
    await connection.closeWhenIdle(200);
    assert.ok(Date.now() - limited >= 190, 'waited for the user until the limit');
    await ended(again);
    await connection.deregister('b');
  });

  it('names the cause while it cannot connect: ECONNREFUSED and the address', async function () {
    this.slow(2000);
    const port = await freePort(); // nothing listens here
    const connection = new SharedConnection(settingsFor('', { host: '127.0.0.1', port }));
    const events: ConnectionEvent[] = [];
    connection.register('n', (e) => events.push(e));
    try {
      await waitUntil(events, (e) => e.error !== undefined, 'an error');
      assert.notEqual(connection.state.state, 'ready');
      assert.match(connection.cause() ?? '', new RegExp(`ECONNREFUSED 127\\.0\\.0\\.1:${port}`));
      await waitFor(events, 'reconnecting');
      assert.match(connection.cause() ?? '', /ECONNREFUSED/, 'the cause is kept while reconnecting');
    } finally {
      await connection.deregister('n');
    }
  });

  it('refuses at construction a configuration no client can be made from', () => {
    const cases: [Partial<RedisConnectionSettings>, RegExp][] = [
      [{ url: 'http://x' }, /redis:\/\/ or rediss:\/\//],
      [{ mode: 'sentinel', sentinels: '', masterName: 'mymaster' }, /at least one sentinel/],
      [{ mode: 'sentinel', sentinels: '127.0.0.1:26379', masterName: '' }, /master name/],
      [{ mode: 'sentinel', sentinels: '127.0.0.1:abc', masterName: 'mymaster' }, /invalid port/],
      [{ mode: 'cluster', clusterNodes: '' }, /at least one seed node/],
      [{ mode: 'cluster', clusterNodes: '127.0.0.1:70000' }, /invalid port/],
    ];
    for (const [more, message] of cases) {
      assert.throws(() => new SharedConnection(settingsFor('', more)), message, JSON.stringify(more));
    }
  });

  describe('across a server restart', function () {
    let server: RedisServer | undefined;

    before(async function () {
      if (!redisServerAvailable()) this.skip(); // only reachable with REDIS_URL and no local binary
      server = await startRedisServer();
    });

    after(() => server?.stop());

    it('reports reconnecting, then ready, and decides again', async function () {
      this.slow(3000);
      assert.ok(server);
      const connection = new SharedConnection(settingsFor(server.url));
      const events: ConnectionEvent[] = [];
      const client = connection.register('n', (e) => events.push(e));
      try {
        await waitFor(events, 'ready');
        const mark = events.length;
        await server.restart();
        await waitFor(events, 'reconnecting', mark);
        await waitFor(events, 'ready', mark);
        const store = new RedisWindowStore(client, { minSeconds: 60, minMetres: 25, ttlSeconds: 60 }, {
          keyPrefix: 'shared:', cluster: false, timeoutMs: 2000,
        });
        assert.equal((await decide(store, ping('veh-2', 0))).reason, 'first');
      } finally {
        await connection.deregister('n');
      }
    });
  });
});
