/**
 * Between two messages, Redis forgets its scripts (SCRIPT FLUSH), and later
 * restarts (scripts and data gone, every connection dropped). The very next
 * message after each is still decided by the store, not admitted as a
 * store failure: ioredis' EVALSHA falls back to EVAL on NOSCRIPT, and the
 * shared connection reconnects by itself. Both nodes, in a real runtime.
 */
import assert from 'node:assert/strict';
import type Redis from 'ioredis';
import {
  collect,
  coreNodes,
  helper,
  node,
  packNodes,
  startServer,
  stopServer,
  until,
  type FlowNode,
  type Msg,
} from '../support/node-red-helper';
import { adminClient, ManagedRedis, skipLoudlyWithoutRedisServer } from '../support/redis-sentinel';

const BASE = 1_780_000_000;

function flow(port: number): FlowNode[] {
  return [
    { id: 'sc-tab', type: 'tab' },
    { id: 'sc-conn', type: 'dedup-redis', host: '127.0.0.1', port: String(port), keyPrefix: 'scripts:', timeoutMs: '3000' },
    // The error policy: a store failure shows up at the Catch node, never as a decision.
    { id: 'sc-win', type: 'sliding-window-dedup', z: 'sc-tab', store: 'redis', redis: 'sc-conn', onStoreError: 'error', wires: [['sc-out'], ['sc-out']] },
    { id: 'sc-sensor', type: 'sensor-reconnect-dedup', z: 'sc-tab', store: 'redis', redis: 'sc-conn', onStoreError: 'error', wires: [[], ['sc-out']] },
    { id: 'sc-out', type: 'helper', z: 'sc-tab' },
    { id: 'sc-catch', type: 'catch', z: 'sc-tab', scope: null, uncaught: false, wires: [['sc-caught']] },
    { id: 'sc-caught', type: 'helper', z: 'sc-tab' },
  ];
}

describe('faults: SCRIPT FLUSH and a Redis restart between messages', function () {
  this.timeout(30_000);
  let runtimeStarted = false;
  let redis: ManagedRedis | undefined;
  let admin: Redis | undefined;

  before(async function () {
    skipLoudlyWithoutRedisServer(this, 'the script-cache fault test');
    redis = await ManagedRedis.start();
    admin = adminClient(redis.port);
    await startServer();
    runtimeStarted = true;
  });

  after(async function () {
    // Not started when the suite was skipped (or its servers failed to start).
    if (runtimeStarted) {
      await helper.unload();
      await stopServer();
    }
    admin?.disconnect();
    await redis?.stop();
  });

  it('decides the very next ping and burst after each', async function () {
    const server = redis as ManagedRedis;
    await helper.load([...packNodes(), ...coreNodes()], flow(server.port), { 'sc-conn': {} });
    const out = collect('sc-out');
    const caught = collect('sc-caught');

    /** One ping and one burst; returns "reason" and "unique/duplicates". */
    async function step(ts: number, seqs: number[]): Promise<[string, string]> {
      const before = out.length;
      node('sc-win').receive({ payload: { assetId: 'veh-1', ts, lat: 52.5, lon: 13.4 } });
      node('sc-sensor').receive({
        payload: seqs.map((seq) => ({ device_id: 'bin-1', seq, ts: '2026-07-16T09:00:00Z', fill_pct: 40 + seq })),
      });
      await until(() => out.length >= before + 2 || caught.length > 0, 'both decisions', 10_000);
      assert.deepEqual(caught.map((m) => m.error?.message), [], 'no store failure');
      const mine = out.slice(before);
      const ping = mine.find((m) => m.dedup?.decision !== 'audit') as Msg;
      const audit = mine.find((m) => m.dedup?.decision === 'audit') as Msg;
      return [String(ping.dedup?.reason), `${String(audit.dedup?.unique)}/${String(audit.dedup?.duplicates_suppressed)}`];
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
