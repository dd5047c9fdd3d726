/**
 * The nodes' telemetry records and the structures they keep: what the
 * nodes write on every decision, kept bounded, and what the sidebar reads
 * back (insight/sidebar-view).
 */
import assert from 'node:assert/strict';
import { prepareReadings, settleReadings } from '../../../src/core/sensor/burst';
import { CLAIM } from '../../../src/core/sensor/seen-codes';
import type { Ping } from '../../../src/core/window/sliding-window';
import { insightDetails, insightSummaries, keyGaps, runningSubject, windowSample } from '../../../src/insight/sidebar-view';
import type { WindowOutcome } from '../../../src/stores/types';
import { AssetBoard, UNKNOWN_COUNTS } from '../../../src/telemetry/asset-board';
import { KeyArrivals, keyHash } from '../../../src/telemetry/key-arrivals';
import { PingRing } from '../../../src/telemetry/ping-ring';
import { ADMITTED, BUCKET_MS, BUCKETS, RateSeries, REJECTED, SUPPRESSED } from '../../../src/telemetry/rate-series';
import { closeRun, sensorTelemetry, windowTelemetry } from '../../../src/telemetry/records';
import type { SensorSubject, StoreInfo, WindowSubject } from '../../../src/telemetry/subjects';
import type { WindowTelemetry } from '../../../src/telemetry/window-telemetry';

const T0 = Date.parse('2026-07-16T09:00:00Z');

function ping(assetId: string, i: number): Ping {
  return { assetId, t: T0 + i * 1000, lat: 50 + i / 1000, lon: 10, heading: NaN, accuracy: 0, events: 0, retry: false };
}

function outcome(admit: boolean, accepted: number, suppressed: number): WindowOutcome {
  return { admit, reason: admit ? 'elapsed' : 'window', dtSeconds: 1, distanceMetres: 0, headingChange: null, valueChange: null, accepted, suppressed };
}

function windowSubject(id: string, sampleSize: number): WindowSubject {
  return {
    id,
    type: 'sliding-window-dedup',
    name: `node ${id}`,
    store: 'memory',
    settings: { minSeconds: 60, minMetres: 25, ttlSeconds: 600, maxAssets: 100, eventFields: [], accuracyProperty: '' },
    sampleSize,
  };
}

const MEMORY_INFO = (): StoreInfo => ({ kind: 'memory', entries: 0, maxEntries: 100, saving: false });

/** A node object starting to run its record, as a controller does; returns the record and its close. */
function running(subject: WindowSubject): { record: WindowTelemetry; close: (removed: boolean) => void } {
  const record = windowTelemetry(subject);
  const run = record.start(MEMORY_INFO);
  return { record, close: (removed) => closeRun(record, run, removed) };
}

describe('insight/rate-series', function () {
  it('counts into ten-second buckets over ten minutes, forgetting older ones', function () {
    const rates = new RateSeries();
    const start = Math.floor(T0 / BUCKET_MS) * BUCKET_MS;
    rates.add(start, ADMITTED, 1);
    rates.add(start + 9_999, ADMITTED, 2);
    rates.add(start + 10_000, SUPPRESSED, 5);
    rates.add(start + 25_000, REJECTED, 1);
    let snap = rates.snapshot(start + 25_000);
    assert.equal(snap.admitted.length, BUCKETS);
    assert.equal(snap.end, start + 30_000);
    assert.deepEqual(snap.admitted.slice(-3), [3, 0, 0]);
    assert.deepEqual(snap.suppressed.slice(-3), [0, 5, 0]);
    assert.deepEqual(snap.rejected.slice(-3), [0, 0, 1]);
    // Nine minutes later the first counts are still there; past ten minutes they are gone.
    snap = rates.snapshot(start + 9 * 60_000);
    assert.equal(snap.admitted.reduce((a, b) => a + b, 0), 3);
    snap = rates.snapshot(start + 10 * 60_000 + 1);
    assert.equal(snap.admitted.reduce((a, b) => a + b, 0), 0);
    assert.equal(snap.rejected.reduce((a, b) => a + b, 0), 1, 'the reject 25 s in is not ten minutes old yet');
    snap = rates.snapshot(start + 11 * 60_000);
    assert.equal(snap.rejected.reduce((a, b) => a + b, 0), 0);
    // A clock that steps back counts into the newest bucket.
    rates.add(start, ADMITTED, 4);
    assert.equal(rates.snapshot(start + 11 * 60_000).admitted.at(-1), 4);
  });
});

describe('insight/ping-ring', function () {
  it('keeps the last `capacity` pings, oldest first, with their arrival times and no payload', function () {
    const ring = new PingRing(5);
    for (let i = 0; i < 12; i++) ring.push({ ...ping(`a${i % 3}`, i), heading: i, accuracy: i / 2, events: i * 10, value: i / 4, fix: (i % 3) as 0 | 1 | 2 }, T0 + i);
    const columns = ring.columns();
    assert.equal(columns.size, 5);
    assert.deepEqual(Array.from(columns.arrival), [7, 8, 9, 10, 11].map((i) => T0 + i));
    assert.deepEqual(Array.from(columns.t), [7, 8, 9, 10, 11].map((i) => T0 + i * 1000));
    assert.deepEqual(Array.from(columns.heading), [7, 8, 9, 10, 11]);
    assert.deepEqual(Array.from(columns.events), [70, 80, 90, 100, 110]);
    assert.deepEqual(columns.names, ['a1', 'a2', 'a0']);
    assert.equal(ring.oldestArrival, T0 + 7);
    assert.deepEqual(Array.from(columns.value), [7, 8, 9, 10, 11].map((i) => i / 4));
    assert.deepEqual(Array.from(columns.fix), [7, 8, 9, 10, 11].map((i) => i % 3), 'the fix quality each ping was read with');
    assert.deepEqual(Object.keys(columns).sort(), ['accuracy', 'arrival', 'asset', 'events', 'fix', 'heading', 'lat', 'lon', 'names', 'size', 't', 'value']);
  });

  it('holds nothing at capacity 0, and fewer than capacity in order before it wraps', function () {
    const off = new PingRing(0);
    off.push(ping('a', 1), T0);
    assert.equal(off.size, 0);
    const ring = new PingRing(1000);
    for (let i = 0; i < 300; i++) ring.push(ping('a', i), T0 + i);
    assert.equal(ring.size, 300);
    assert.equal(ring.columns().arrival[0], T0);
    assert.equal(ring.columns().arrival[299], T0 + 299);
  });
});

describe('insight/asset-board', function () {
  it('lists the highest suppressed/accepted ratios, and the assets silent longest, bounded', function () {
    const board = new AssetBoard(4);
    board.seen('cached-fix', T0, { accepted: 1, suppressed: 40 }, true);
    board.seen('parked', T0 + 1, { accepted: 5, suppressed: 10 }, true);
    board.seen('driving', T0 + 2, { accepted: 30, suppressed: 0 }, true);
    board.seen('quiet', T0 + 3, { accepted: 2, suppressed: 2 }, true);
    assert.deepEqual(board.stuck(2).map((r) => [r.assetId, r.ratio]), [['cached-fix', 40], ['parked', 2]]);
    assert.deepEqual(board.silent(2).map((r) => r.assetId), ['cached-fix', 'parked']);
    // A ping moves an asset to the end of the silent list; a store that failed leaves its counts.
    board.seen('cached-fix', T0 + 4, UNKNOWN_COUNTS, true);
    assert.deepEqual(board.silent(1).map((r) => r.assetId), ['parked']);
    assert.equal(board.stuck(1)[0]?.suppressed, 40);
    // Past the cap the asset heard from longest ago is forgotten.
    board.seen('new', T0 + 5, { accepted: 1, suppressed: 0 }, true);
    assert.equal(board.size, 4);
    assert.deepEqual(board.silent(4).map((r) => r.assetId), ['driving', 'quiet', 'cached-fix', 'new']);
  });

  it('lists the assets with the most suppressed (dedup-stats), ties by ratio, none with nothing suppressed', function () {
    const board = new AssetBoard(10);
    board.seen('busy', T0, { accepted: 100, suppressed: 12 }, true);
    board.seen('cached-fix', T0 + 1, { accepted: 1, suppressed: 40 }, true);
    board.seen('echo', T0 + 2, { accepted: 4, suppressed: 12 }, true);
    board.seen('driving', T0 + 3, { accepted: 30, suppressed: 0 }, true);
    board.seen('once', T0 + 4, { accepted: 9, suppressed: 1 }, true);
    assert.deepEqual(board.mostSuppressed(3).map((r) => [r.assetId, r.suppressed, r.accepted]), [['cached-fix', 40, 1], ['echo', 12, 4], ['busy', 12, 100]]);
    assert.deepEqual(board.mostSuppressed(10).map((r) => r.assetId), ['cached-fix', 'echo', 'busy', 'once']);
    assert.deepEqual(board.mostSuppressed(0), []);
    assert.deepEqual(board.stuck(0), [], 'stuck(0) shares the one top-n pass, and asks for no row');
  });

  it('lists the assets whose pings have had no fix for at least a while, longest first, from the first ping of the run', function () {
    const board = new AssetBoard(10);
    const counts = { accepted: 1, suppressed: 0 };
    board.seen('lost', T0, counts, false);
    board.seen('lost', T0 + 30_000, counts, false);
    board.seen('tunnel', T0 + 10_000, counts, true);
    board.seen('tunnel', T0 + 20_000, counts, false);
    board.seen('back', T0 + 5_000, counts, false);
    board.seen('back', T0 + 25_000, counts, true);
    board.seen('fresh', T0 + 50_000, counts, false);
    board.seen('fine', T0 + 1_000, counts, true);
    const now = T0 + 60_000;
    assert.deepEqual(board.withoutFix(10, now, 30_000).map((r) => [r.assetId, r.noFixSince]), [['lost', T0], ['tunnel', T0 + 20_000]]);
    assert.deepEqual(board.withoutFix(1, now, 0).map((r) => r.assetId), ['lost'], 'the longest first, n rows');
    assert.deepEqual(board.withoutFix(10, now, 0).map((r) => r.assetId), ['lost', 'tunnel', 'fresh'], 'a fix ends the run');
    assert.deepEqual(board.withoutFix(0, now, 0), []);
  });
});

describe('insight/key-arrivals', function () {
  it('measures the gap between a key\'s admission and its replays', function () {
    const arrivals = new KeyArrivals(3_600_000, 100, 10, T0);
    arrivals.admitted('bin-1:1:aa', T0);
    arrivals.replayed('bin-1:1:aa', T0 + 5_000);
    arrivals.replayed('bin-1:1:aa', T0 + 65_000);
    arrivals.replayed('bin-9:9:ff', T0 + 1);
    assert.deepEqual(Array.from(arrivals.measuredGaps()).sort((a, b) => a - b), [5_000, 65_000]);
    assert.equal(arrivals.stats().unmeasured, 1, 'a replay of a key admitted before the sample began');
  });

  it('stays bounded at any traffic by keeping a hash-chosen share of the keys, consistently', function () {
    const arrivals = new KeyArrivals(86_400_000, 1000, 100_000, T0);
    for (let i = 0; i < 20_000; i++) arrivals.admitted(`dev-${i % 50}:${i}:x`, T0 + i);
    const stats = arrivals.stats();
    assert.ok(stats.keys <= 1000, `${stats.keys} keys`);
    assert.ok(stats.level >= 4, `level ${stats.level}`);
    // Every replay of a kept key is measured; no replay of a dropped key is mistaken for an unmeasured one.
    for (let i = 0; i < 20_000; i++) arrivals.replayed(`dev-${i % 50}:${i}:x`, T0 + 30_000);
    const mask = (1 << arrivals.stats().level) - 1;
    let chosen = 0;
    for (let i = 0; i < 20_000; i++) if ((keyHash(`dev-${i % 50}:${i}:x`) & mask) === 0) chosen++;
    assert.equal(arrivals.stats().measured, chosen);
    assert.equal(arrivals.stats().unmeasured, 0);
    assert.ok(arrivals.stats().measured > 0);
  });

  it('drops keys older than the TTL: a copy after them is admitted anew, not replayed', function () {
    const arrivals = new KeyArrivals(60_000, 2, 10, T0);
    arrivals.admitted('a', T0);
    arrivals.admitted('b', T0 + 1);
    arrivals.admitted('c', T0 + 61_000);
    arrivals.replayed('c', T0 + 62_000);
    assert.equal(arrivals.stats().level, 0, 'expiry made room: no need to sample');
    assert.deepEqual(Array.from(arrivals.measuredGaps()), [1000]);
  });
});

describe('telemetry records, read by the sidebar', function () {
  it('keeps a node\'s rates, lists and sample, and answers the sidebar from them', function () {
    const { record: insight, close } = running(windowSubject('sw-1', 100));
    for (let i = 0; i < 150; i++) insight.decided(ping(i % 10 === 0 ? 'stuck' : `a${i % 3}`, i), outcome(i % 2 === 0, 1 + i, i % 10 === 0 ? i : 0));
    insight.admittedWithoutStore(ping('down', 200), new Error('down'));
    insight.rejectedOne();
    insight.rejectedOne();
    const summary = insightSummaries().find((s) => s.id === 'sw-1');
    assert.ok(summary);
    assert.deepEqual(summary.totals, { admitted: 76, suppressed: 75, rejected: 2 });
    assert.equal(summary.rates.admitted.reduce((a, b) => a + b, 0), 76);
    assert.deepEqual(summary.sample, { size: 100, capacity: 100, oldest: summary.sample?.oldest });
    const details = insightDetails('sw-1');
    assert.equal(details?.stuck?.[0]?.assetId, 'stuck');
    assert.equal(details?.silent?.at(-1)?.assetId, 'down');
    const sample = windowSample('sw-1');
    assert.equal(sample?.columns.size, 100);
    assert.equal(sample?.columns.names.includes('down'), true, 'a ping admitted without the store is input too');
    close(true);
    assert.equal(insightDetails('sw-1'), undefined);
  });

  it('finds its data again after a redeploy, fitting the sample to a new size; a removed node loses it', function () {
    let node = running(windowSubject('sw-2', 50));
    for (let i = 0; i < 80; i++) node.record.decided(ping('a', i), outcome(true, i + 1, 0));
    node.close(false);
    assert.equal(runningSubject('sw-2'), undefined, 'a closed node is not listed');
    node = running(windowSubject('sw-2', 20));
    assert.equal(insightSummaries().find((s) => s.id === 'sw-2')?.totals.admitted, 80);
    const sample = windowSample('sw-2');
    assert.equal(sample?.columns.size, 20);
    assert.equal(sample?.columns.t[19], T0 + 79_000, 'the newest pings were kept');
    // The old node object closing late must not take the new one down.
    const stale = node;
    node = running(windowSubject('sw-2', 20));
    stale.close(false);
    assert.ok(runningSubject('sw-2') !== undefined);
    node.close(true);
    assert.equal(insightSummaries().find((s) => s.id === 'sw-2'), undefined);
  });

  it('counts a sensor node\'s readings, its devices\' replays and their gaps', function () {
    const subject: SensorSubject = {
      id: 'sr-1',
      type: 'sensor-reconnect-dedup',
      name: '',
      store: 'memory',
      settings: { ttlSeconds: 3600, maxKeys: 10, confirm: false, leaseSeconds: 60, keyMode: 'reading', outputMode: 'burst' },
    };
    const insight = sensorTelemetry(subject);
    const run = insight.start(() => ({ kind: 'memory', entries: 0, maxEntries: 10, saving: false }));
    const readings = ['bin-1:1:a', 'bin-1:2:b', 'bin-2:1:c', 'bin-1:1:a', 'bad'];
    const prepared = prepareReadings(readings, true, (raw) =>
      raw === 'bad' ? { ok: false, path: null, value: '"bad"', problem: 'no key' } : { ok: true, key: raw as string, group: (raw as string).split(':')[0] as string },
    );
    // The store: bin-2's key was seen before.
    const codes = prepared.claims.map((c) => (c.key === 'bin-2:1:c' ? CLAIM.duplicate : CLAIM.admitted));
    insight.decided(prepared, settleReadings(prepared, codes));
    const summary = insightSummaries().find((s) => s.id === 'sr-1');
    assert.deepEqual(summary?.totals, { admitted: 2, suppressed: 2, rejected: 1 });
    const details = insightDetails('sr-1');
    assert.deepEqual(details?.replays?.map((r) => [r.device, r.replays]).sort(), [['bin-1', 1], ['bin-2', 1]]);
    const gaps = keyGaps('sr-1');
    assert.deepEqual(Array.from(gaps?.gaps ?? []), [0], 'the copy inside the burst, 0 ms after its first');
    assert.equal(gaps?.stats.unmeasured, 1, 'bin-2\'s first copy came before the sample');
    closeRun(insight, run, true);
  });
});
