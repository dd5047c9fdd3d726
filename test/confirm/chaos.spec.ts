/**
 * The chaos test of issue 10: 10,000 readings from 100 sensors that replay
 * what they sent, through a sensor reconnect dedup node with Confirm
 * delivery on, into a downstream that fails 20 % of its writes at random
 * (seeded). Confirm is wired after a successful write, release from the
 * Catch node of a failed one. The sensors keep replaying their buffers
 * until the sink holds every reading; at the end, every reading is at the
 * sink exactly once: none lost to a failed write (first write wins would
 * lose them), none written twice (a replay while a write is in flight is
 * suppressed as in-flight, after the confirm as duplicate).
 *
 * The control run wires the same flow without Confirm delivery: it loses
 * the readings whose first write failed, which shows the test can fail.
 */
import type { Counts } from '../../src/core/sensor/burst';
import assert from 'node:assert/strict';
import { useRedis } from '../support/global-hooks';
import { collect, coreNodes, helper, node, packNodes, startServer, stopServer, until, type FlowNode, type Msg, type StoreKind } from '../support/node-red-helper';
import { confirmFlow, loadFlow, PACK, reading, type Reading } from './confirm-harness';

const DEVICES = 100;
const PER_DEVICE = 100;
const READINGS = DEVICES * PER_DEVICE;
const CHUNK = 10;
const FAILURE_RATE = 0.2;
const MAX_ROUNDS = 12;

/**
 * The downstream write: answers after 0 to 2 ms, and fails 20 % of writes,
 * chosen by a seeded generator (mulberry32) so that a run can be repeated.
 */
const DOWNSTREAM = `
let s = context.get('seed');
if (s === undefined) s = 20260716;
s = (s + 0x6D2B79F5) | 0;
context.set('seed', s);
let t = Math.imul(s ^ (s >>> 15), 1 | s);
t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
const r = ((t ^ (t >>> 14)) >>> 0) / 4294967296;
const fail = r < ${FAILURE_RATE};
setTimeout(() => {
    if (fail) {
        node.error(new Error('downstream: 503 Service Unavailable'), msg);
    } else {
        node.send(msg);
    }
    node.done();
}, Math.floor(r * 1000) % 3);
`;

function chaosFlow(store: StoreKind, confirm: boolean): FlowNode[] {
  const base = confirmFlow(store, { confirm: confirm ? 'on' : 'off', outputMode: 'each', onStoreError: 'error' });
  const flow = base.filter((n) => !['on-status', 'out-status', 'on-catch'].includes(n.id));
  const dedup = flow.find((n) => n.id === 'dedup') as FlowNode;
  dedup.wires = [['downstream'], ['out-audit']];
  flow.push(
    {
      id: 'downstream', type: 'function', z: 'tab', name: 'write (fails 20 %)', func: DOWNSTREAM, outputs: 1,
      timeout: 0, noerr: 0, initialize: '', finalize: '', libs: [], wires: [confirm ? ['out-sink', 'do-confirm'] : ['out-sink']],
    },
    { id: 'out-sink', type: 'helper', z: 'tab' },
    { id: 'on-failed', type: 'catch', z: 'tab', scope: ['downstream'], uncaught: false, wires: [confirm ? ['do-release', 'out-failed'] : ['out-failed']] },
    { id: 'out-failed', type: 'helper', z: 'tab' },
    { id: 'on-unmatched', type: 'catch', z: 'tab', scope: ['do-confirm', 'do-release', 'dedup'], uncaught: false, wires: [['out-caught']] },
  );
  return flow;
}

/** Each sensor's readings, in bursts of CHUNK that also carry the previous burst again (it never saw an acknowledgement). */
function firstRound(readings: Reading[][]): Reading[][] {
  const bursts: Reading[][] = [];
  for (const own of readings) {
    for (let at = 0; at < own.length; at += CHUNK) {
      bursts.push([...own.slice(Math.max(0, at - CHUNK), at), ...own.slice(at, at + CHUNK)].map((r) => ({ ...r })));
    }
  }
  return bursts;
}

/** A reconnect: each sensor replays its whole buffer, 25 readings a burst. */
function replayRound(readings: Reading[][]): Reading[][] {
  const bursts: Reading[][] = [];
  for (const own of readings) {
    for (let at = 0; at < own.length; at += 25) bursts.push(own.slice(at, at + 25).map((r) => ({ ...r })));
  }
  return bursts;
}

interface Run {
  sink: Map<string, number>;
  rounds: number;
  writes: number;
  failures: number;
  inFlight: number;
  duplicates: number;
  unmatched: Msg[];
  lastRoundUnique: number;
  ms: number;
}

async function runChaos(store: StoreKind, confirm: boolean): Promise<Run> {
  await loadFlow([...packNodes(PACK), ...coreNodes()], chaosFlow(store, confirm), store === 'redis' ? { conn: {} } : {});
  const audits = collect('out-audit');
  const sinkMsgs = collect('out-sink');
  const failed = collect('out-failed');
  const confirmed = collect('out-confirmed');
  const released = collect('out-released');
  const unmatched = collect('out-caught');
  const readings: Reading[][] = [];
  for (let d = 0; d < DEVICES; d++) {
    const device = `bin-${String(d).padStart(3, '0')}`;
    readings.push(Array.from({ length: PER_DEVICE }, (_, i) => reading(device, 1000 + i, (d * 7 + i * 3) % 100)));
  }
  const admittedSoFar = (): number => audits.reduce((sum, a) => sum + ((a.payload as { unique: number }).unique ?? 0), 0);

  const started = Date.now();
  let sent = 0;
  let rounds = 0;
  let lastRoundUnique = -1;
  // Round 1, then reconnect replays until the sink holds everything, then
  // one more: it must admit nothing.
  for (let round = 1; round <= MAX_ROUNDS; round++) {
    rounds = round;
    const uniqueBefore = admittedSoFar();
    const bursts = round === 1 ? firstRound(readings) : replayRound(readings);
    // In slices, so that replays meet writes still in flight as well as settled ones.
    for (let at = 0; at < bursts.length; at += 50) {
      for (const burst of bursts.slice(at, at + 50)) node('dedup').receive({ payload: burst });
      sent += Math.min(50, bursts.length - at);
      await new Promise((resolve) => setImmediate(resolve));
    }
    await until(() => audits.length === sent, `the audits of round ${round}`, 15_000);
    // Every admitted reading is written or failed, and (with confirm) settled.
    await until(
      () => {
        const admitted = admittedSoFar();
        const outcomes = sinkMsgs.length + failed.length;
        return outcomes === admitted && (!confirm || confirmed.length + released.length + unmatched.length === admitted);
      },
      `the writes of round ${round} to be settled`,
      15_000,
    );
    lastRoundUnique = admittedSoFar() - uniqueBefore;
    if (process.env.CHAOS_DEBUG) console.log(`round ${round}: ${Date.now() - started} ms, unique ${lastRoundUnique}`);
    if (round > 1 && lastRoundUnique === 0) break;
    if (!confirm && round === 3) break;
  }
  const sink = new Map<string, number>();
  for (const m of sinkMsgs) {
    const id = idOf(m.payload as Reading);
    sink.set(id, (sink.get(id) ?? 0) + 1);
  }
  let inFlight = 0;
  let duplicates = 0;
  for (const a of audits) {
    const p = a.payload as Counts;
    assert.equal(p.received, p.unique + p.duplicates_suppressed + p.rejected, 'every audit adds up');
    assert.equal(p.lease_expired, 0, 'no lease runs out in this test');
    inFlight += p.in_flight;
    duplicates += p.duplicates_suppressed;
  }
  return {
    sink,
    rounds,
    writes: sinkMsgs.length + failed.length,
    failures: failed.length,
    inFlight,
    duplicates,
    unmatched,
    lastRoundUnique,
    ms: Date.now() - started,
  };
}

function idOf(r: Reading): string {
  return `${r.device_id}:${r.seq}`;
}

function chaosSuite(store: StoreKind): void {
  describe(`chaos: 10,000 readings, replays, a downstream failing 20 % at random, ${store} store`, function () {
    if (store === 'redis') useRedis();
    this.timeout(60_000);
    before(startServer);
    after(stopServer);
    afterEach(async function () {
      await helper.unload();
    });

    it('with confirm and release wired, the sink holds each reading exactly once', async function () {
      const run = await runChaos(store, true);
      assert.deepEqual(run.unmatched.map((m) => m.error?.message), [], 'every confirm and release matched its claim');
      const twice = [...run.sink].filter(([, n]) => n > 1);
      assert.deepEqual(twice.slice(0, 5), [], `${twice.length} readings written more than once`);
      assert.equal(run.sink.size, READINGS, 'every reading reached the sink');
      assert.equal(run.lastRoundUnique, 0, 'the last full replay admitted nothing');
      const rate = run.failures / run.writes;
      assert.ok(rate > 0.15 && rate < 0.25, `about 20 % of writes failed: ${(rate * 100).toFixed(1)} %`);
      assert.equal(run.writes - run.failures, READINGS, 'one successful write per reading');
      assert.ok(run.inFlight > 1000, `replays met writes still in flight: ${run.inFlight}`);
      console.log(
        `      ${READINGS} readings in ${run.rounds} rounds of replays, ${run.ms} ms: ${run.writes} writes, ${run.failures} failed ` +
          `(${((run.failures / run.writes) * 100).toFixed(1)} %), released and admitted again; ${run.duplicates} copies suppressed, ` +
          `${run.inFlight} of them in-flight; the sink holds ${run.sink.size} readings, each once`,
      );
    });

    it('control: without confirm delivery, the readings whose first write failed are lost', async function () {
      const run = await runChaos(store, false);
      assert.equal(run.writes, READINGS, 'each reading written at most once: replays are duplicates');
      assert.equal(run.sink.size, READINGS - run.failures, 'a failed write is never retried');
      assert.ok(run.failures > 1500, `readings lost: ${run.failures}`);
      console.log(`      without confirm: ${run.failures} of ${READINGS} readings lost for good after a failed write`);
    });
  });
}

chaosSuite('memory');
chaosSuite('redis');
