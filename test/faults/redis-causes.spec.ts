/**
 * A Redis connection that cannot work says why (issue 9, items 3 and 4):
 * - a dedup-redis config that cannot build a client (a URL that is not
 *   redis://, Sentinel mode with no sentinels, a port of "abc" or 70000)
 *   names its reason in every user's status and errors, and costs a
 *   deploy or a shutdown no wait;
 * - a connection that fails names the cause as the network or Redis gave
 *   it (ECONNREFUSED 127.0.0.1:<port>, WRONGPASS, ENOTFOUND), in the status
 *   and in msg.dedup.error / the Catch, never "Reached the max retries per
 *   request limit".
 */
import assert from 'node:assert/strict';
import { closeRedisClient, newRedisClient, sharedRedis, useRedis } from '../support/global-hooks';
import { collect, coreNodes, dedupFlow, helper, loadDedup, node, packNodes, startServer, stopServer, until, type Msg } from '../support/node-red-helper';
import { freePort } from '../support/redis-server';

const PING = { assetId: 'veh-1', ts: 1_780_000_000, lat: 52.5, lon: 13.4 };

function statusTexts(statuses: Msg[]): string[] {
  return statuses.map((m) => String((m.status as { text?: string }).text));
}

describe('faults: a Redis connection that cannot work says why', function () {
  this.timeout(30_000);
  useRedis();
  before(startServer);
  after(stopServer);
  afterEach(async function () {
    await helper.unload();
  });

  const BAD_CONFIGS: [string, Record<string, unknown>, RegExp][] = [
    ['a URL that is not redis://', { url: 'http://x' }, /dedup-redis 'broken': the URL must start with redis:\/\/ or rediss:\/\//],
    ['Sentinel mode with no sentinels', { mode: 'sentinel', sentinels: '' }, /dedup-redis 'broken': sentinel mode needs at least one sentinel address/],
    ['port "abc"', { port: 'abc' }, /dedup-redis 'broken': port must be 1 to 65535, not "abc"/],
    ['port 70000', { port: '70000' }, /dedup-redis 'broken': port must be 1 to 65535, not "70000"/],
    ['mode "Cluster"', { mode: 'Cluster' }, /dedup-redis 'broken': mode must be "standalone" or "sentinel" or "cluster", not "Cluster"/],
  ];

  for (const [what, settings, reason] of BAD_CONFIGS) {
    it(`names the config node and its reason for ${what}, and unloads at once`, async function () {
      const h = await loadDedup('sliding-window-dedup', 'redis', { onStoreError: 'error' }, { name: 'broken', ...settings });
      h.send({ ...PING });
      await until(() => h.caught.length === 1, 'the error at the Catch node');
      assert.match(h.caught[0]?.error?.message ?? '', reason);
      assert.ok(statusTexts(h.statuses).some((text) => /configuration error/.test(text)), JSON.stringify(statusTexts(h.statuses)));
      const started = Date.now();
      await helper.unload();
      assert.ok(Date.now() - started < 2000, `unload took ${Date.now() - started} ms`);
    });
  }

  it('names ECONNREFUSED and the address when nothing listens on the port', async function () {
    const port = await freePort();
    const h = await loadDedup('sliding-window-dedup', 'redis', {}, { host: '127.0.0.1', port: String(port), timeoutMs: '300' });
    h.send({ ...PING });
    await until(() => h.admitted.length === 1, 'the ping admitted without the store');
    assert.equal(h.admitted[0]?.dedup?.reason, 'store-unavailable');
    const error = String(h.admitted[0]?.dedup?.error);
    assert.match(error, new RegExp(`ECONNREFUSED 127\\.0\\.0\\.1:${port}`));
    assert.doesNotMatch(error, /max retries per request/i);
    await until(() => statusTexts(h.statuses).some((text) => text.includes(`ECONNREFUSED 127.0.0.1:${port}`)), 'the cause in the status');
  });

  it('names WRONGPASS when the password is wrong', async function () {
    const admin = newRedisClient();
    await admin.call('ACL', 'SETUSER', 'causes-user', 'reset', 'on', '>right-password', '~*', '&*', '+@all');
    try {
      const flow = dedupFlow('sensor-reconnect-dedup', 'redis', { onStoreError: 'error' }, { host: '127.0.0.1', port: String(sharedRedis().port), timeoutMs: '300' });
      // Credentials come as the third argument of load(), keyed by node id.
      await helper.load([...packNodes(['dedup-redis', 'sensor-reconnect-dedup']), ...coreNodes()], flow, { conn: { username: 'causes-user', password: 'wrong-password' } });
      const caught = collect('out-caught');
      const statuses = collect('out-status');
      node('dedup').receive({ payload: { device_id: 'bin-1', seq: 1, ts: '2026-07-16T09:00:00Z', fill_pct: 10 } });
      await until(() => caught.length === 1, 'the error at the Catch node', 5000);
      assert.match(caught[0]?.error?.message ?? '', /WRONGPASS|NOAUTH/);
      assert.doesNotMatch(caught[0]?.error?.message ?? '', /max retries per request/i);
      await until(() => statusTexts(statuses).some((text) => /WRONGPASS|NOAUTH/.test(text)), 'the cause in the status');
    } finally {
      await admin.call('ACL', 'DELUSER', 'causes-user').catch(() => undefined);
      await closeRedisClient(admin);
    }
  });

  it('names ENOTFOUND when the host name does not resolve', async function () {
    const h = await loadDedup('sliding-window-dedup', 'redis', {}, { host: 'no-such-host.invalid', port: '6379', timeoutMs: '500' });
    h.send({ ...PING });
    await until(() => h.admitted.length === 1, 'the ping admitted without the store', 10_000);
    assert.match(String(h.admitted[0]?.dedup?.error), /ENOTFOUND no-such-host\.invalid|EAI_AGAIN no-such-host\.invalid/);
  });

  it('names the TLS failure when TLS meets a server that does not speak it', async function () {
    const h = await loadDedup('sliding-window-dedup', 'redis', {}, { host: '127.0.0.1', port: String(sharedRedis().port), tls: true, timeoutMs: '500' });
    h.send({ ...PING });
    await until(() => h.admitted.length === 1, 'the ping admitted without the store', 10_000);
    const error = String(h.admitted[0]?.dedup?.error);
    assert.match(error, /not connected yet \(connecting\)/, error);
    // The server never answers the TLS hello: the connect attempt times out, and the status says so.
    await until(() => statusTexts(h.statuses).some((text) => /ETIMEDOUT|TLS|SSL/i.test(text)), 'the cause in the status', 5000);
    console.log(`      status: ${statusTexts(h.statuses).at(-1) ?? ''}`);
  });
});
