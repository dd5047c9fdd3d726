import assert from 'node:assert/strict';
import type { RedisOptions } from 'ioredis';
import { parseHostList, planClient, type RedisConnectionSettings } from '../../../src/redis/connection-options';

const DEFAULTS: RedisConnectionSettings = {
  mode: 'standalone',
  url: '',
  host: '',
  port: 0,
  db: 0,
  tls: false,
  username: '',
  password: '',
  sentinels: '',
  masterName: '',
  sentinelPassword: '',
  clusterNodes: '',
  keyPrefix: 'dedup:',
  timeoutMs: 2000,
};

const settings = (overrides: Partial<RedisConnectionSettings>): RedisConnectionSettings => ({ ...DEFAULTS, ...overrides });

describe('redis/connection-options parseHostList', () => {
  it('reads host:port, bare hosts and bracketed IPv6, comma or space separated', () => {
    assert.deepEqual(parseHostList('a:1, b:2  c\n[::1]:6380,[fe80::1] ::1', 26379), [
      { host: 'a', port: 1 },
      { host: 'b', port: 2 },
      { host: 'c', port: 26379 },
      { host: '::1', port: 6380 },
      { host: 'fe80::1', port: 26379 },
      { host: '::1', port: 26379 },
    ]);
  });

  it('reads [::1]:6379 as host ::1, port 6379', () => {
    assert.deepEqual(parseHostList('[::1]:6379', 1), [{ host: '::1', port: 6379 }]);
  });

  it('gives an empty list for blank text', () => {
    assert.deepEqual(parseHostList('', 6379), []);
    assert.deepEqual(parseHostList(' ,  ', 6379), []);
  });

  it('refuses ports that are not 1..65535', () => {
    for (const bad of ['a:0', 'a:65536', 'a:http', '[::1]:99999', 'a:-1']) {
      assert.throws(() => parseHostList(bad, 6379), /invalid port/, bad);
    }
    assert.deepEqual(parseHostList('a:', 7), [{ host: 'a', port: 7 }]);
  });
});

describe('redis/connection-options planClient', () => {
  it('standalone, no URL: host and port default to 127.0.0.1:6379, keeps db', () => {
    const plan = planClient(settings({ db: 3 }));
    assert.equal(plan.kind, 'standalone');
    if (plan.kind !== 'standalone') return;
    assert.equal(plan.url, undefined);
    assert.equal(plan.options.host, '127.0.0.1');
    assert.equal(plan.options.port, 6379);
    assert.equal(plan.options.db, 3);
    assert.equal(plan.options.password, undefined);
    assert.equal(plan.options.tls, undefined);
  });

  it('standalone with a URL uses it, trimmed, and ignores host/port', () => {
    const plan = planClient(settings({ url: '  rediss://u:p@cache:6380/2 ', host: 'ignored', port: 1 }));
    assert.equal(plan.kind, 'standalone');
    if (plan.kind !== 'standalone') return;
    assert.equal(plan.url, 'rediss://u:p@cache:6380/2');
    assert.equal(plan.options.host, undefined);
  });

  it('refuses a URL with another scheme', () => {
    assert.throws(() => planClient(settings({ url: 'http://cache:6379' })), /redis:\/\//);
  });

  it('passes credentials and TLS only when set', () => {
    const plan = planClient(settings({ host: 'h', port: 7000, username: 'nr', password: 's3cret', tls: true }));
    assert.equal(plan.kind, 'standalone');
    const options = plan.options;
    assert.equal(options.username, 'nr');
    assert.equal(options.password, 's3cret');
    assert.deepEqual(options.tls, {});
    assert.equal(options.port, 7000);
  });

  it('bounds connecting by the timeout, leaves commands to the batcher’s clock, and retries with a capped back-off', () => {
    const plan = planClient(settings({ timeoutMs: 750 }));
    const options = plan.options as RedisOptions;
    // No commandTimeout: its clock would start while a command still waits
    // behind others on the socket (src/redis/tick-batcher keeps the clock).
    assert.equal(options.commandTimeout, undefined);
    assert.equal(options.connectTimeout, 1000, 'never below one second');
    assert.equal(options.maxRetriesPerRequest, 1);
    const retry = options.retryStrategy;
    assert.ok(retry);
    const delays = [1, 2, 3, 10, 1000].map((attempt) => retry(attempt));
    assert.deepEqual(delays, [200, 400, 800, 2000, 2000]);
    assert.equal((planClient(settings({ timeoutMs: 5000 })).options as RedisOptions).connectTimeout, 5000);
  });

  it('sentinel: parses the sentinel list (default port 26379) and needs a master name', () => {
    const plan = planClient(settings({
      mode: 'sentinel',
      sentinels: 's1, s2:26380 [::1]',
      masterName: 'mymaster',
      sentinelPassword: 'sp',
      password: 'p',
      db: 1,
    }));
    assert.equal(plan.kind, 'standalone');
    const options = plan.options;
    assert.deepEqual(options.sentinels, [
      { host: 's1', port: 26379 },
      { host: 's2', port: 26380 },
      { host: '::1', port: 26379 },
    ]);
    assert.equal(options.name, 'mymaster');
    assert.equal(options.sentinelPassword, 'sp');
    assert.equal(options.password, 'p');
    assert.equal(options.db, 1);
    assert.equal(typeof options.sentinelRetryStrategy, 'function');

    assert.throws(() => planClient(settings({ mode: 'sentinel', sentinels: '', masterName: 'm' })), /at least one sentinel/);
    assert.throws(() => planClient(settings({ mode: 'sentinel', sentinels: 's1' })), /master name/);
  });

  it('cluster: seed nodes (default port 6379), per-node options without a per-node retry strategy', () => {
    const plan = planClient(settings({ mode: 'cluster', clusterNodes: 'n1:7000,n2 [::1]:7002', password: 'p', tls: true }));
    assert.equal(plan.kind, 'cluster');
    if (plan.kind !== 'cluster') return;
    assert.deepEqual(plan.nodes, [
      { host: 'n1', port: 7000 },
      { host: 'n2', port: 6379 },
      { host: '::1', port: 7002 },
    ]);
    const perNode = plan.options.redisOptions ?? {};
    assert.equal(perNode.password, 'p');
    assert.deepEqual(perNode.tls, {});
    assert.equal('retryStrategy' in perNode, false, 'the cluster client owns reconnection');
    assert.equal(typeof plan.options.clusterRetryStrategy, 'function');
    assert.throws(() => planClient(settings({ mode: 'cluster', clusterNodes: ' ' })), /at least one seed/);
  });

  it('refuses an unknown mode', () => {
    assert.throws(
      () => planClient(settings({ mode: 'replica' as unknown as RedisConnectionSettings['mode'] })),
      /unknown Redis mode "replica"/,
    );
  });
});
