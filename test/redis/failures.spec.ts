/**
 * No decision waits on Redis forever: a stalled server fails the call with a
 * TimeoutError within timeoutMs, and an unreachable one fails it too.
 */
import assert from 'node:assert/strict';
import type Redis from 'ioredis';
import { planClient } from '../../src/redis/connection-options';
import { defineDedupScripts } from '../../src/redis/scripts';
import { TimeoutError } from '../../src/redis/tick-batcher';
import { RedisSeenStore } from '../../src/stores/redis-seen-store';
import { RedisWindowStore } from '../../src/stores/redis-window-store';
import { ping } from '../contract/window-store.contract';
import { reading } from '../contract/seen-store.contract';
import { closeRedisClient, newRedisClient } from '../support/global-hooks';
import { freePort } from '../support/redis-server';
import { scriptedClientPerTest, SETTINGS, storeOptions } from '../support/scripted-redis';

describe('redis failures: nothing waits forever', () => {
  let admin: Redis;

  beforeEach(() => {
    admin = newRedisClient();
  });

  // Before the fixture's hooks, so the server is unpaused before its client closes.
  afterEach(async () => {
    await admin.call('CLIENT', 'UNPAUSE').catch(() => undefined);
    await closeRedisClient(admin);
  });

  const client = scriptedClientPerTest();

  it('rejects with TimeoutError when the server stalls, then recovers', async function () {
    this.slow(2000);
    const options = storeOptions('fail:', { timeoutMs: 150 });
    const windows = new RedisWindowStore(client(), SETTINGS, options);
    const seen = new RedisSeenStore(client(), SETTINGS, options);
    await windows.decide(ping('veh-1', 0)); // connected and scripts loaded
    await admin.call('CLIENT', 'PAUSE', '600', 'ALL');
    const started = Date.now();
    const results = await Promise.allSettled([windows.decide(ping('veh-1', 61)), seen.claim([reading(1, 1)])]);
    const waited = Date.now() - started;
    for (const result of results) {
      assert.equal(result.status, 'rejected');
      assert.ok((result as PromiseRejectedResult).reason instanceof TimeoutError);
    }
    assert.ok(waited >= 140 && waited < 550, `waited ${waited} ms`);
    // Once the pause ends the stalled call runs; later calls answer normally.
    await new Promise((resolve) => setTimeout(resolve, 600));
    assert.equal((await windows.decide(ping('veh-1', 62))).reason, 'window');
  });

  it('fails a decision promptly when no server listens, with the production client options', async function () {
    this.slow(3000);
    const port = await freePort(); // nothing listens here
    const plan = planClient({
      mode: 'standalone', url: '', host: '127.0.0.1', port, db: 0, tls: false, username: '', password: '',
      sentinels: '', masterName: '', sentinelPassword: '', clusterNodes: '', keyPrefix: 'fail:', timeoutMs: 300,
    });
    assert.equal(plan.kind, 'standalone');
    const offline = newRedisClient(plan.options, `redis://127.0.0.1:${port}`);
    try {
      defineDedupScripts(offline);
      const windows = new RedisWindowStore(offline, SETTINGS, storeOptions('fail:', { timeoutMs: 300 }));
      const started = Date.now();
      await assert.rejects(Promise.resolve(windows.decide(ping('veh-2', 0))));
      assert.ok(Date.now() - started < 2000, `took ${Date.now() - started} ms`);
    } finally {
      await closeRedisClient(offline);
    }
  });
});
