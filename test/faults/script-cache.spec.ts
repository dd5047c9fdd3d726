/**
 * Between two messages, Redis forgets its scripts (SCRIPT FLUSH), and later
 * restarts (scripts and data gone, every connection dropped). The very next
 * message after each is still decided by the store, not admitted as a
 * store failure: ioredis' EVALSHA falls back to EVAL on NOSCRIPT, and the
 * shared connection reconnects by itself. Both nodes, in a real runtime.
 */
import assert from 'node:assert/strict';
import type Redis from 'ioredis';
import { LiveStream, runtimeWithRedis, streamFlow, type NodeUnderTest } from '../support/live-stream';
import { loadPackFlow, until } from '../support/node-red-helper';
import { ManagedRedis } from '../support/redis-server';
import { adminClient } from '../support/redis-sentinel';

const BASE = 1_780_000_000;
// The error policy: a store failure shows up at the Catch node, never as a decision.
const UNDER_TEST: NodeUnderTest[] = [
  { id: 'sc-win', type: 'sliding-window-dedup', onStoreError: 'error' },
  { id: 'sc-sensor', type: 'sensor-reconnect-dedup', onStoreError: 'error' },
];

describe('faults: SCRIPT FLUSH and a Redis restart between messages', function () {
  this.timeout(30_000);
  const redis = runtimeWithRedis('the script-cache fault test', () => ManagedRedis.start());
  let admin: Redis | undefined;
  before(function () {
    admin = adminClient(redis().port);
  });
  after(function () {
    admin?.disconnect();
  });

  it('decides the very next ping and burst after each', async function () {
    const server = redis();
    const connection = { host: '127.0.0.1', port: String(server.port), keyPrefix: 'scripts:', timeoutMs: '3000' };
    await loadPackFlow(streamFlow('sc', connection, UNDER_TEST), { 'sc-conn': {} });
    const stream = new LiveStream('sc', UNDER_TEST);
    let n = 0;

    /** One ping and one burst; returns "reason" and "unique/duplicates". */
    async function step(ts: number, seqs: number[]): Promise<[string, string]> {
      n++;
      stream.send('sc-win', `ping-${n}`, { assetId: 'veh-1', ts, lat: 52.5, lon: 13.4 });
      stream.send('sc-sensor', `burst-${n}`, seqs.map((seq) => ({ device_id: 'bin-1', seq, ts: '2026-07-16T09:00:00Z', fill_pct: 40 + seq })));
      await until(() => stream.exitsOf(`ping-${n}`).length > 0 && stream.exitsOf(`burst-${n}`).length > 0, 'both decisions', 10_000);
      const [ping, audit] = [stream.onlyExit(`ping-${n}`), stream.onlyExit(`burst-${n}`)];
      assert.deepEqual([ping, audit].filter((e) => e.door === stream.caught).map((e) => e.msg.error?.message), [], 'no store failure');
      return [String(ping.msg.dedup?.reason), `${String(audit.msg.dedup?.unique)}/${String(audit.msg.dedup?.duplicates_suppressed)}`];
    }

    assert.deepEqual(await step(BASE, [1, 2]), ['first', '2/0']);

    await (admin as Redis).script('FLUSH');
    // State survives a script flush: the window and the seen keys still hold.
    assert.deepEqual(await step(BASE + 5, [2, 3]), ['window', '1/1']);
    assert.deepEqual(await step(BASE + 61, [3, 4]), ['elapsed', '1/1']);

    await server.kill('SIGKILL');
    await server.start();
    // No persistence: the restarted server knows nothing, so everything is new again.
    assert.deepEqual(await step(BASE + 66, [4, 5]), ['first', '2/0']);
    assert.deepEqual(await step(BASE + 70, [5]), ['window', '0/1']);
  });
});
