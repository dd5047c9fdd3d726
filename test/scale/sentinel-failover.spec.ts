/**
 * Sentinel failover under a live stream: a primary, its replica and three
 * sentinels (which require a password, given to the config node as the
 * sentinelPassword credential). The primary is SIGKILLed while both nodes
 * are deciding; the sentinels promote the replica; the nodes find it through
 * the sentinels and keep deciding, with no redeploy. Throughout, every
 * message leaves through exactly one door: an output, or the Catch node.
 *
 * The sliding-window node runs the default policy (admit when the store
 * fails), the sensor node the other one (error to the Catch node), so both
 * paths are seen during the outage.
 */
import assert from 'node:assert/strict';
import { LiveStream, runtimeWithRedis, streamFlow, type NodeUnderTest } from '../support/live-stream';
import { loadPackFlow, sleep, until, type FlowNode } from '../support/node-red-helper';
import type { ManagedRedis } from '../support/redis-server';
import { startSentinelSet, type SentinelSet } from '../support/redis-sentinel';
import { BASE_SECONDS } from './streams';

const TIMEOUT_MS = 1000;
const TICK_MS = 20;
const UNDER_TEST: NodeUnderTest[] = [
  { id: 'sn-win', type: 'sliding-window-dedup', minSeconds: '60', minMetres: '25', onStoreError: 'admit' },
  { id: 'sn-sensor', type: 'sensor-reconnect-dedup', ttlSeconds: '3600', onStoreError: 'error' },
];

function flow(set: SentinelSet): FlowNode[] {
  const connection = { mode: 'sentinel', sentinels: set.sentinelList, masterName: set.masterName, keyPrefix: 'sn-test:', timeoutMs: String(TIMEOUT_MS) };
  return streamFlow('sn', connection, UNDER_TEST);
}

describe('scale: Sentinel failover mid-stream', function () {
  this.timeout(120_000);
  const sentinelSet = runtimeWithRedis('the Redis Sentinel tests', () => startSentinelSet());

  it('keeps deciding after the primary is killed, and every message leaves exactly once', async function () {
    const s = sentinelSet();
    await loadPackFlow(flow(s), { 'sn-conn': { sentinelPassword: s.sentinelPassword } });
    const [primary, replica] = s.servers as [ManagedRedis, ManagedRedis];
    const stream = new LiveStream('sn', UNDER_TEST);

    let i = 0;
    const sendOne = (): void => {
      const ts = BASE_SECONDS + i * 7;
      stream.send('sn-win', `p${i}`, { assetId: `veh-${i % 25}`, ts, lat: 52.5, lon: 13.4 });
      const reading = (seq: number): Record<string, unknown> => ({
        device_id: `bin-${seq % 10}`, seq, ts: new Date((BASE_SECONDS + seq * 7) * 1000).toISOString(), fill_pct: seq % 100,
      });
      // Each burst repeats the previous one's reading exactly: a replay.
      stream.send('sn-sensor', `b${i}`, i > 0 ? [reading(i - 1), reading(i)] : [reading(i)]);
      i++;
    };

    let killedAt = 0;
    let promotedAt = 0;
    let resumedAt = 0;
    await stream.whileSending(TICK_MS, sendOne, async () => {
      await sleep(1500);
      assert.ok(stream.decidedAfter('sn-win', 0) > 10, 'deciding before the failover');
      killedAt = Date.now();
      await primary.kill('SIGKILL');
      await until(() => false === primary.running, 'the primary to die');
      // Promotion as the sentinels report it, to tell their part of the delay from the client's.
      for (;;) {
        if ((await s.primaryPort().catch(() => 0)) === replica.port) break;
        if (Date.now() - killedAt > 30_000) throw new Error('the sentinels did not promote the replica within 30 s');
        await sleep(100);
      }
      promotedAt = Date.now();
      await until(
        () => stream.decidedAfter('sn-win', promotedAt) > 10 && stream.decidedAfter('sn-sensor', promotedAt) > 10,
        'decisions to resume on the promoted replica',
        30_000,
      );
      // The first decision from the new primary, as the nodes saw it: a
      // normal answer to a message sent after the kill.
      resumedAt = stream.firstDecisionSentAfter(killedAt);
      await sleep(300);
    });
    await stream.expectDoneOnce(15_000, 200);

    // Exactly one door per message (a burst's admitted readings ride along with its audit).
    let worstMs = 0;
    let outageAdmitted = 0;
    let outageErrors = 0;
    for (const [id, info] of stream.sent) {
      const exit = stream.onlyExit(id);
      worstMs = Math.max(worstMs, exit.at - info.at);
      if (info.node === 'sn-win') {
        assert.notEqual(exit.door, stream.caught, 'the admit policy never raises');
        if (exit.msg.dedup?.reason === 'store-unavailable') outageAdmitted++;
      } else if (exit.door === stream.caught) {
        assert.match(exit.msg.error?.message ?? '', /store could not decide/);
        outageErrors++;
      }
    }
    assert.ok(outageAdmitted > 0, 'some pings were admitted unchecked during the failover');
    assert.ok(outageErrors > 0, 'some bursts went to the Catch node during the failover');
    assert.ok(worstMs < TIMEOUT_MS + 2000, `a message waited ${worstMs} ms`);
    const texts = stream.statusesOf().map((status) => `${String(status.fill)}:${String(status.text)}`);
    assert.ok(texts.some((t) => t.startsWith('red:')), `a red status during the outage: ${texts.join(' | ')}`);
    assert.ok(texts.at(-1)?.startsWith('green:'), `green again at the end: ${texts.slice(-3).join(' | ')}`);
    console.log(
      `      primary killed; sentinels promoted the replica after ${promotedAt - killedAt} ms; nodes decided on it ` +
        `${resumedAt - killedAt} ms after the kill\n` +
        `      ${stream.sent.size} messages: ${outageAdmitted} pings admitted unchecked, ${outageErrors} bursts to Catch; ` +
        `slowest answer ${worstMs} ms (timeout ${TIMEOUT_MS} ms)`,
    );
  });
});
