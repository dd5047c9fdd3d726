/**
 * What a client made by the shared connection really has, whichever ioredis
 * major is installed (scripts/ioredis-matrix.js runs this suite on the
 * other one): the options the pack's behaviour rests on are its own, not
 * the major's defaults (issue 30, item 1). ioredis 6 would speak RESP3,
 * reconnect on its own back-off and keep TCP alive by default; 5 differs.
 */
import assert from 'node:assert/strict';
import type { Redis } from 'ioredis';
import { SharedConnection } from '../../src/redis/shared-connection';
import { sharedRedis, useRedis } from '../support/global-hooks';

describe('redis: the client options the pack sets itself', function () {
  useRedis();

  it('speaks RESP2, has no command timeout, fails a command after one retry, queues while connecting, and backs off on its own curve', async function () {
    const connection = new SharedConnection({
      mode: 'standalone', url: sharedRedis().url, host: '', port: 0, db: 0, tls: false, username: '', password: '',
      sentinels: '', masterName: '', sentinelPassword: '', clusterNodes: '', keyPrefix: 'options:', timeoutMs: 2000,
    });
    const client = connection.register('options-test', () => undefined) as Redis;
    try {
      // Asked of the server, not of the client: the protocol this connection speaks.
      const info = String(await client.call('CLIENT', 'INFO'));
      assert.match(info, /\bresp=2\b/, info);
      assert.match(info, /\bname=node-red-dedup\b/, info);
      const options = client.options;
      assert.equal(options.commandTimeout, undefined, 'no command timeout: the batcher keeps the clock');
      assert.equal(options.maxRetriesPerRequest, 1);
      assert.equal(options.enableOfflineQueue, true);
      assert.equal(options.autoResendUnfulfilledCommands, true);
      assert.equal(options.keepAlive, 30_000);
      // The pack's curve, without jitter: 200, 400, ... capped at 2 s.
      assert.deepEqual([1, 2, 3, 10].map((n) => options.retryStrategy?.(n)), [200, 400, 800, 2000]);
    } finally {
      await connection.deregister('options-test');
    }
  });
});
