/**
 * The connection a dedup-redis config node shares between its users:
 * connects on the first user, tells every user its state, closes once after
 * the last user leaves, and comes back after a server restart.
 */
import assert from 'node:assert/strict';
import type { Cluster, Redis } from 'ioredis';
import type { RedisConnectionSettings } from '../../src/redis/connection-options';
import { SharedConnection, type ConnectionEvent } from '../../src/redis/shared-connection';
import { RedisWindowStore } from '../../src/stores/redis-window-store';
import { ping } from '../contract/window-store.contract';
import { flushRedis, sharedRedis } from '../support/global-hooks';
import { redisServerAvailable, startRedisServer, type RedisServer } from '../support/redis-server';

function settingsFor(url: string): RedisConnectionSettings {
  return {
    mode: 'standalone', url, host: '', port: 0, db: 0, tls: false, username: '', password: '',
    sentinels: '', masterName: '', sentinelPassword: '', clusterNodes: '', keyPrefix: 'shared:', timeoutMs: 2000,
  };
}

/** Resolves when `events` gets an event with `state`, or fails after 5 s. */
function waitFor(events: ConnectionEvent[], state: ConnectionEvent['state'], from = 0): Promise<void> {
  return new Promise((resolve, reject) => {
    const started = Date.now();
    const poll = (): void => {
      if (events.slice(from).some((e) => e.state === state)) resolve();
      else if (Date.now() - started > 5000) reject(new Error(`no "${state}" in ${JSON.stringify(events.map((e) => e.state))}`));
      else setTimeout(poll, 10);
    };
    poll();
  });
}

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
  beforeEach(() => flushRedis());

  it('connects on the first user, shares one client, and closes after the last user', async () => {
    const connection = new SharedConnection(settingsFor(sharedRedis().url));
    const first: ConnectionEvent[] = [];
    const second: ConnectionEvent[] = [];
    const client = connection.register('node-1', (e) => first.push(e));
    assert.equal(first[0]?.state, 'closed', 'a new user is told the current state at once');
    assert.equal(connection.register('node-2', (e) => second.push(e)), client, 'one client for all users');
    await waitFor(first, 'ready');
    await waitFor(second, 'ready');
    assert.equal(connection.userCount, 2);

    // The scripts are defined on the shared client.
    const store = new RedisWindowStore(client, { minSeconds: 60, minMetres: 25, ttlSeconds: 60 }, {
      keyPrefix: connection.keyPrefix, cluster: connection.isCluster, timeoutMs: 2000,
    });
    assert.equal((await store.decide(ping('veh-1', 0))).reason, 'first');

    await connection.deregister('node-1');
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
        assert.equal((await store.decide(ping('veh-2', 0))).reason, 'first');
      } finally {
        await connection.deregister('n');
      }
    });
  });
});
