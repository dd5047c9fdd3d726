/**
 * Two Node-RED runtimes in two OS processes, each with its own flow and its
 * own Redis connection, handed the same stream at the same time: 10,000
 * pings and 2,000 sensor bursts, every message to both (the redelivery storm
 * of a shared MQTT subscription after a broker failover).
 *
 * The stream goes out in chunks; both runtimes get chunk k together and the
 * next chunk leaves only when both have called done() for every message of
 * chunk k, so that the two really work on the same messages at the same
 * moment, chunk after chunk, instead of one running ahead.
 *
 * The same runtimes also run the control: a function node doing what one
 * would write by hand (GET the last record, decide in JavaScript, SET it),
 * fed the same messages. It admits duplicates across the two runtimes, which
 * shows that this test can fail, and why the decision is one Lua script.
 */
import type { Counts } from '../../src/core/sensor/burst';
import assert from 'node:assert/strict';
import { flushRedis, sharedRedis, useRedis } from '../support/global-hooks';
import type { FlowNode } from '../support/node-red-helper';
import { RuntimeProcess, type Injection, type Recorded, type RuntimeResults } from '../support/runtime-process';
import { burstStream, chunked, pingStream, type BurstCase, type PingCase } from './streams';

const PINGS_PER_CHUNK = 100;
const BURSTS_PER_CHUNK = 20;

const NAIVE_WINDOW = `
// What one might write without the dedup node: read the last record, decide
// here, write it back. Two commands, so two runtimes both read before either
// writes, and both admit.
const redis = global.get('naiveRedis');
const p = msg.payload;
const key = 'race-naive:sw:' + p.assetId;
const raw = await redis.get(key);
let admit = true;
if (raw !== null) {
    const last = JSON.parse(raw);
    const dt = p.ts - last.ts;
    const north = (p.lat - last.lat) * 111195;
    const east = (p.lon - last.lon) * 111195 * Math.cos(p.lat * Math.PI / 180);
    admit = dt > 0 && (dt >= 60 || Math.hypot(north, east) >= 25);
}
if (admit) {
    await redis.set(key, JSON.stringify(p), 'EX', 21600);
}
return admit ? [msg, null] : [null, msg];
`;

const NAIVE_SENSOR = `
const redis = global.get('naiveRedis');
const fresh = [];
for (const r of msg.payload) {
    const key = 'race-naive:rc:' + [r.device_id, r.seq, r.ts, r.fill_pct].join(':');
    if ((await redis.get(key)) === null) {
        await redis.set(key, '1', 'EX', 21600);
        fresh.push(key);
    }
}
msg.naive = fresh;
return msg;
`;

const SINKS = [
  'win-admitted',
  'win-suppressed',
  'win-caught',
  'sensor-admitted',
  'sensor-audit',
  'sensor-caught',
  'naive-win-admitted',
  'naive-win-suppressed',
  'naive-sensor-out',
] as const;
type Sink = (typeof SINKS)[number];

function runtimeFlow(keyPrefix: string): FlowNode[] {
  let y = 40;
  const at = (): { x: number; y: number } => ({ x: 200, y: (y += 60) });
  const junction = (id: Sink): FlowNode => ({ id, type: 'junction', z: 'race-tab', ...at(), wires: [] });
  return [
    { id: 'race-tab', type: 'tab', label: 'race' },
    { id: 'race-conn', type: 'dedup-redis', mode: 'standalone', url: sharedRedis().url, keyPrefix, timeoutMs: '10000' },
    {
      id: 'win', type: 'sliding-window-dedup', z: 'race-tab', ...at(), store: 'redis', redis: 'race-conn',
      minSeconds: '60', minMetres: '25', ttlSeconds: '21600',
      // A store failure would otherwise be an admission, indistinguishable here from a decision.
      onStoreError: 'error',
      wires: [['win-admitted'], ['win-suppressed']],
    },
    { id: 'win-catch', type: 'catch', z: 'race-tab', ...at(), scope: ['win'], uncaught: false, wires: [['win-caught']] },
    {
      id: 'sensor', type: 'sensor-reconnect-dedup', z: 'race-tab', ...at(), store: 'redis', redis: 'race-conn',
      ttlSeconds: '21600', deviceField: 'device_id', seqField: 'seq', tsField: 'ts',
      outputMode: 'burst', onStoreError: 'error',
      wires: [['sensor-admitted'], ['sensor-audit']],
    },
    { id: 'sensor-catch', type: 'catch', z: 'race-tab', ...at(), scope: ['sensor'], uncaught: false, wires: [['sensor-caught']] },
    {
      id: 'naive-win', type: 'function', z: 'race-tab', ...at(), name: 'GET then SET', func: NAIVE_WINDOW, outputs: 2,
      timeout: 0, noerr: 0, initialize: '', finalize: '', libs: [], wires: [['naive-win-admitted'], ['naive-win-suppressed']],
    },
    {
      id: 'naive-sensor', type: 'function', z: 'race-tab', ...at(), name: 'GET then SET', func: NAIVE_SENSOR, outputs: 1,
      timeout: 0, noerr: 0, initialize: '', finalize: '', libs: [], wires: [['naive-sensor-out']],
    },
    ...SINKS.map(junction),
  ];
}

function ids(records: readonly Recorded[]): string[] {
  return records.map((r) => r.id);
}

/** Each id once, and the set. */
function uniqueIds(records: readonly Recorded[], what: string): Set<string> {
  const set = new Set(ids(records));
  assert.equal(set.size, records.length, `${what}: a message arrived twice`);
  return set;
}

describe('scale: two Node-RED runtimes in two processes race through one Redis', function () {
  useRedis();
  this.timeout(180_000);
  const runtimes: RuntimeProcess[] = [];

  after(async function () {
    this.timeout(60_000);
    await Promise.all(runtimes.splice(0).map((runtime) => runtime.stop()));
  });

  it('admits every (asset, t) at most once and every sensor key exactly once across both; the GET-then-SET control does not', async function () {
    await flushRedis();
    const pings = pingStream({ assets: 500, steps: 20, stepsPerVisit: 4, seed: 4242 });
    const sensor = burstStream({ devices: 200, rounds: 10, seed: 777 });
    assert.equal(pings.length, 10_000);
    assert.equal(sensor.bursts.length, 2_000);

    const keyPrefix = `race-${process.pid}:`;
    const started = Date.now();
    for (const name of ['A', 'B']) {
      runtimes.push(
        await RuntimeProcess.start({
          name,
          flow: runtimeFlow(keyPrefix),
          credentials: { 'race-conn': {} },
          sinks: SINKS,
          watch: ['win', 'sensor', 'naive-win', 'naive-sensor'],
          naiveRedisUrl: sharedRedis().url,
        }),
      );
    }
    const [a, b] = runtimes as [RuntimeProcess, RuntimeProcess];
    const startMs = Date.now() - started;

    // The same chunk to both, at once; the next when both are done with it.
    const pingChunks = chunked(pings, PINGS_PER_CHUNK);
    const burstChunks = chunked(sensor.bursts, BURSTS_PER_CHUNK);
    const raceStarted = Date.now();
    for (let k = 0; k < Math.max(pingChunks.length, burstChunks.length); k++) {
      const items: Injection[] = [];
      for (const p of pingChunks[k] ?? []) {
        items.push(['win', { _msgid: p.msgid, payload: p.payload }], ['naive-win', { _msgid: p.msgid, payload: p.payload }]);
      }
      for (const burst of burstChunks[k] ?? []) {
        items.push(['sensor', { _msgid: burst.msgid, payload: burst.payload }], ['naive-sensor', { _msgid: burst.msgid, payload: burst.payload }]);
      }
      await Promise.all([a.inject(items), b.inject(items)]);
    }
    const raceMs = Date.now() - raceStarted;
    // Outputs travel after done(); give the last sends a moment to land.
    await new Promise((resolve) => setTimeout(resolve, 300));
    const [ra, rb] = await Promise.all([a.results(), b.results()]);

    for (const [name, r] of [['A', ra], ['B', rb]] as const) checkOneRuntime(name, r, pings, sensor.bursts, sensor.bad);
    const report = checkAcross(ra, rb, pings, sensor);
    console.log(
      `      runtimes started in ${startMs} ms; ${pings.length} pings + ${sensor.bursts.length} bursts ` +
        `(${sensor.valid + sensor.bad} readings) to both in ${raceMs} ms\n` +
        `      dedup nodes: ${report.pingsAdmitted} pings admitted (A ${report.pingsAdmittedA} / B ${report.pingsAdmittedB}), ` +
        `0 admitted twice; ${report.keys} sensor keys admitted once each\n` +
        `      GET-then-SET control: ${report.naivePingDuplicates} pings and ${report.naiveKeyDuplicates} sensor readings admitted by BOTH runtimes`,
    );
  });
});

function sink(r: RuntimeResults, id: Sink): Recorded[] {
  return r.sinks[id] ?? [];
}

function checkOneRuntime(name: string, r: RuntimeResults, pings: PingCase[], bursts: BurstCase[], bad: number): void {
  assert.deepEqual(r.crashes, [], `runtime ${name} crashed`);
  assert.deepEqual(r.logged.filter((l) => l.level <= 20), [], `runtime ${name} logged errors`);
  for (const node of ['win', 'naive-win']) {
    const done = r.completions[node] ?? {};
    assert.equal(Object.keys(done).length, pings.length, `${name}: done() for every ping at ${node}`);
    assert.ok(Object.values(done).every((n) => n === 1), `${name}: done() once per ping at ${node}`);
  }
  for (const node of ['sensor', 'naive-sensor']) {
    const done = r.completions[node] ?? {};
    assert.equal(Object.keys(done).length, bursts.length, `${name}: done() for every burst at ${node}`);
    assert.ok(Object.values(done).every((n) => n === 1), `${name}: done() once per burst at ${node}`);
  }
  // Every ping leaves through exactly one door.
  assert.deepEqual(sink(r, 'win-caught'), [], `${name}: no ping may fail`);
  const decided = [...ids(sink(r, 'win-admitted')), ...ids(sink(r, 'win-suppressed'))];
  assert.equal(decided.length, pings.length, `${name}: one output message per ping`);
  assert.equal(new Set(decided).size, pings.length, `${name}: no ping on both outputs`);
  // One audit per burst; the only errors are the unreadable readings, one each.
  const audits = uniqueIds(sink(r, 'sensor-audit'), `${name} audits`);
  assert.equal(audits.size, bursts.length, `${name}: one audit per burst`);
  const caught = sink(r, 'sensor-caught');
  assert.equal(caught.length, bad, `${name}: one Catch message per unreadable reading`);
  for (const c of caught) assert.match(c.error ?? '', /fill_pct = 150/);
  const admittedBursts = uniqueIds(sink(r, 'sensor-admitted'), `${name} admitted bursts`);
  for (const id of admittedBursts) assert.ok(audits.has(id));
}

function sumOf(records: readonly Recorded[], field: string): number {
  return records.reduce((sum, rec) => sum + Number(rec.dedup?.[field] ?? Number.NaN), 0);
}

function checkAcross(
  ra: RuntimeResults,
  rb: RuntimeResults,
  pings: PingCase[],
  sensor: { bursts: BurstCase[]; distinct: Set<string>; valid: number; bad: number },
): Record<string, number> {
  // Pings: the union of both runtimes' admissions is exactly what one
  // worker would admit, and no (asset, t) is admitted twice.
  const byId = new Map(pings.map((p) => [p.msgid, p]));
  const admittedA = uniqueIds(sink(ra, 'win-admitted'), 'A admitted pings');
  const admittedB = uniqueIds(sink(rb, 'win-admitted'), 'B admitted pings');
  const both = [...admittedA].filter((id) => admittedB.has(id));
  assert.deepEqual(both, [], 'pings admitted by both runtimes');
  const perKey = new Map<string, number>();
  for (const id of [...admittedA, ...admittedB]) {
    const key = (byId.get(id) as PingCase).key;
    perKey.set(key, (perKey.get(key) ?? 0) + 1);
  }
  assert.deepEqual([...perKey].filter(([, n]) => n > 1), [], '(asset, t) admitted more than once');
  const expected = pings.filter((p) => p.admit).map((p) => p.msgid).sort();
  assert.deepEqual([...admittedA, ...admittedB].sort(), expected, 'the admitted pings are those one worker alone would admit');
  for (const rec of [...sink(ra, 'win-admitted'), ...sink(rb, 'win-admitted')]) {
    assert.notEqual(rec.dedup?.reason, 'store-unavailable');
  }

  // Sensor keys: each distinct reading admitted exactly once across both.
  const keys = [...sink(ra, 'sensor-admitted'), ...sink(rb, 'sensor-admitted')].flatMap((rec) => rec.dedup?.keys as string[]);
  const keySet = new Set(keys);
  assert.equal(keySet.size, keys.length, 'a sensor key was admitted twice');
  assert.equal(keySet.size, sensor.distinct.size, 'every distinct reading admitted');
  for (const key of keys) assert.match(key, /^bin-\d+:\d+:[0-9a-f]{16}$/);

  // Audits add up, burst by burst and in total.
  for (const rec of [...sink(ra, 'sensor-audit'), ...sink(rb, 'sensor-audit')]) {
    const d = rec.dedup as unknown as Counts;
    assert.equal(d.received, d.unique + d.duplicates_suppressed + d.rejected, `audit ${rec.id} does not add up`);
  }
  for (const r of [ra, rb]) {
    assert.equal(sumOf(sink(r, 'sensor-audit'), 'received'), sensor.valid + sensor.bad);
    assert.equal(sumOf(sink(r, 'sensor-audit'), 'rejected'), sensor.bad);
  }
  const audits = [...sink(ra, 'sensor-audit'), ...sink(rb, 'sensor-audit')];
  assert.equal(sumOf(audits, 'unique'), sensor.distinct.size, 'unique, summed over both runtimes');
  assert.equal(sumOf(audits, 'duplicates_suppressed'), 2 * sensor.valid - sensor.distinct.size, 'duplicates, summed over both');

  // The control: the same load through GET-then-SET.
  const naiveA = new Set(ids(sink(ra, 'naive-win-admitted')));
  const naivePingDuplicates = ids(sink(rb, 'naive-win-admitted')).filter((id) => naiveA.has(id)).length;
  const naiveKeysA = new Set(sink(ra, 'naive-sensor-out').flatMap((rec) => rec.naive as string[]));
  const naiveKeyDuplicates = sink(rb, 'naive-sensor-out')
    .flatMap((rec) => rec.naive as string[])
    .filter((key) => naiveKeysA.has(key)).length;
  assert.ok(naivePingDuplicates > 0, 'the GET-then-SET control should have admitted some ping in both runtimes');
  assert.ok(naiveKeyDuplicates > 0, 'the GET-then-SET control should have admitted some reading in both runtimes');

  return {
    pingsAdmitted: admittedA.size + admittedB.size,
    pingsAdmittedA: admittedA.size,
    pingsAdmittedB: admittedB.size,
    keys: keySet.size,
    naivePingDuplicates,
    naiveKeyDuplicates,
  };
}
