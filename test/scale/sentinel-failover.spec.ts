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
import {
  collect,
  coreNodes,
  helper,
  node,
  packNodes,
  sleep,
  startServer,
  stopServer,
  until,
  watchCompletions,
  type FlowNode,
  type Msg,
} from '../support/node-red-helper';
import { skipLoudlyWithoutRedisServer, startSentinelSet, type ManagedRedis, type SentinelSet } from '../support/redis-sentinel';
import { BASE_SECONDS } from './streams';

const TIMEOUT_MS = 1000;
const TICK_MS = 20;

function flow(set: SentinelSet): FlowNode[] {
  return [
    { id: 'sn-tab', type: 'tab' },
    {
      id: 'sn-conn', type: 'dedup-redis', mode: 'sentinel', sentinels: set.sentinelList, masterName: set.masterName,
      keyPrefix: 'sn-test:', timeoutMs: String(TIMEOUT_MS),
    },
    {
      id: 'sn-win', type: 'sliding-window-dedup', z: 'sn-tab', store: 'redis', redis: 'sn-conn', minSeconds: '60', minMetres: '25',
      onStoreError: 'admit', wires: [['sn-win-admitted'], ['sn-win-suppressed']],
    },
    { id: 'sn-win-admitted', type: 'helper', z: 'sn-tab' },
    { id: 'sn-win-suppressed', type: 'helper', z: 'sn-tab' },
    {
      id: 'sn-sensor', type: 'sensor-reconnect-dedup', z: 'sn-tab', store: 'redis', redis: 'sn-conn', ttlSeconds: '3600',
      onStoreError: 'error', wires: [['sn-sensor-admitted'], ['sn-sensor-audit']],
    },
    { id: 'sn-sensor-admitted', type: 'helper', z: 'sn-tab' },
    { id: 'sn-sensor-audit', type: 'helper', z: 'sn-tab' },
    { id: 'sn-catch', type: 'catch', z: 'sn-tab', scope: ['sn-win', 'sn-sensor'], uncaught: false, wires: [['sn-caught']] },
    { id: 'sn-caught', type: 'helper', z: 'sn-tab' },
    { id: 'sn-status', type: 'status', z: 'sn-tab', scope: ['sn-win', 'sn-sensor'], wires: [['sn-statuses']] },
    { id: 'sn-statuses', type: 'helper', z: 'sn-tab' },
  ];
}

interface Sent {
  at: number;
  kind: 'ping' | 'burst';
}

/** Where a message came out, and when. */
interface Exit {
  at: number;
  door: string;
  msg: Msg;
}

describe('scale: Sentinel failover mid-stream', function () {
  this.timeout(120_000);
  let runtimeStarted = false;
  let set: SentinelSet | undefined;

  before(async function () {
    skipLoudlyWithoutRedisServer(this, 'the Redis Sentinel tests');
    set = await startSentinelSet();
    await startServer();
    runtimeStarted = true;
  });

  after(async function () {
    // Not started when the suite was skipped (or its servers failed to start).
    if (runtimeStarted) {
      await helper.unload();
      await stopServer();
    }
    await set?.stop();
  });

  it('keeps deciding after the primary is killed, and every message leaves exactly once', async function () {
    const s = set as SentinelSet;
    await helper.load([...packNodes(), ...coreNodes()], flow(s), { 'sn-conn': { sentinelPassword: s.sentinelPassword } });
    const [primary, replica] = s.servers as [ManagedRedis, ManagedRedis];
    const sent = new Map<string, Sent>();
    const exits = new Map<string, Exit[]>();
    const note = (door: string) => (msg: Msg) => {
      const id = String(msg._msgid);
      const list = exits.get(id) ?? [];
      list.push({ at: Date.now(), door, msg });
      exits.set(id, list);
    };
    for (const door of ['sn-win-admitted', 'sn-win-suppressed', 'sn-sensor-admitted', 'sn-sensor-audit', 'sn-caught']) {
      node(door).on('input', note(door));
    }
    const statuses = collect('sn-statuses');
    const completions = [watchCompletions('sn-win'), watchCompletions('sn-sensor')];

    let i = 0;
    const sendOne = (): void => {
      const ts = BASE_SECONDS + i * 7;
      const ping = `p${i}`;
      sent.set(ping, { at: Date.now(), kind: 'ping' });
      node('sn-win').receive({ _msgid: ping, payload: { assetId: `veh-${i % 25}`, ts, lat: 52.5, lon: 13.4 } });
      const burst = `b${i}`;
      sent.set(burst, { at: Date.now(), kind: 'burst' });
      const reading = (seq: number): Record<string, unknown> => ({
        device_id: `bin-${seq % 10}`, seq, ts: new Date((BASE_SECONDS + seq * 7) * 1000).toISOString(), fill_pct: seq % 100,
      });
      // Each burst repeats the previous one's reading exactly: a replay.
      node('sn-sensor').receive({ _msgid: burst, payload: i > 0 ? [reading(i - 1), reading(i)] : [reading(i)] });
      i++;
    };
    /** Normal decisions (not the outage paths) that came out after `since`. */
    const normalAfter = (since: number): { pings: number; bursts: number } => {
      let pings = 0;
      let bursts = 0;
      for (const list of exits.values()) {
        for (const e of list) {
          if (e.at <= since) continue;
          if (e.door.startsWith('sn-win') && e.msg.dedup?.reason !== 'store-unavailable') pings++;
          if (e.door === 'sn-sensor-audit') bursts++;
        }
      }
      return { pings, bursts };
    };

    const ticker = setInterval(sendOne, TICK_MS);
    let killedAt = 0;
    let promotedAt = 0;
    let resumedAt = 0;
    try {
      await sleep(1500);
      assert.ok(normalAfter(0).pings > 10, 'deciding before the failover');
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
      await until(() => {
        const n = normalAfter(promotedAt);
        return n.pings > 10 && n.bursts > 10;
      }, 'decisions to resume on the promoted replica', 30_000);
      // The first decision from the new primary, as the nodes saw it: a
      // normal answer to a message sent after the kill.
      const normal = (e: Exit): boolean =>
        e.door === 'sn-sensor-audit' || (e.door.startsWith('sn-win') && e.msg.dedup?.reason !== 'store-unavailable');
      resumedAt = Math.min(
        ...[...exits]
          .filter(([id]) => (sent.get(id)?.at ?? 0) > killedAt)
          .flatMap(([, list]) => list.filter(normal).map((e) => e.at)),
      );
      await sleep(300);
    } finally {
      clearInterval(ticker);
    }
    try {
      await until(() => completions.reduce((n, c) => n + c.total(), 0) >= sent.size, 'done() for every message', 15_000);
      await sleep(200);
      for (const c of completions) assert.ok([...c.perMessage.values()].every((n) => n === 1), 'done() once per message');
    } finally {
      for (const c of completions) c.dispose();
    }

    // Exactly one door per message (a burst's admitted readings ride along with its audit).
    let worstMs = 0;
    let outageAdmitted = 0;
    let outageErrors = 0;
    for (const [id, info] of sent) {
      const out = (exits.get(id) ?? []).filter((e) => e.door !== 'sn-sensor-admitted');
      assert.equal(out.length, 1, `${id} left through ${out.map((e) => e.door).join(', ') || 'nothing'}`);
      const exit = out[0] as Exit;
      worstMs = Math.max(worstMs, exit.at - info.at);
      if (info.kind === 'ping') {
        assert.notEqual(exit.door, 'sn-caught', 'the admit policy never raises');
        if (exit.msg.dedup?.reason === 'store-unavailable') outageAdmitted++;
      } else if (exit.door === 'sn-caught') {
        assert.match(exit.msg.error?.message ?? '', /store could not decide/);
        outageErrors++;
      }
    }
    assert.ok(outageAdmitted > 0, 'some pings were admitted unchecked during the failover');
    assert.ok(outageErrors > 0, 'some bursts went to the Catch node during the failover');
    assert.ok(worstMs < TIMEOUT_MS + 2000, `a message waited ${worstMs} ms`);
    const texts = statuses.map((m) => `${String((m.status as { fill?: string }).fill)}:${String((m.status as { text?: string }).text)}`);
    assert.ok(texts.some((t) => t.startsWith('red:')), `a red status during the outage: ${texts.join(' | ')}`);
    assert.ok(texts.at(-1)?.startsWith('green:'), `green again at the end: ${texts.slice(-3).join(' | ')}`);
    console.log(
      `      primary killed; sentinels promoted the replica after ${promotedAt - killedAt} ms; nodes decided on it ` +
        `${resumedAt - killedAt} ms after the kill\n` +
        `      ${sent.size} messages: ${outageAdmitted} pings admitted unchecked, ${outageErrors} bursts to Catch; ` +
        `slowest answer ${worstMs} ms (timeout ${TIMEOUT_MS} ms)`,
    );
  });
});
