/**
 * tune/jitter: the parked jitter, its 95th percentile and the suggested
 * Movement; driving does not count as jitter.
 */
import assert from 'node:assert/strict';
import { distanceMetres } from '../../../src/core/window/geo';
import type { Ping } from '../../../src/core/window/sliding-window';
import { niceStep, parkedJitter } from '../../../src/tune/jitter';
import { PingColumnsBuilder, type PingColumns } from '../../../src/core/window/ping-columns';

const T0 = Date.parse('2026-07-16T09:00:00Z');
const METRE = 1 / 111_195;

function columnsOf(pings: Ping[]): PingColumns {
  const builder = new PingColumnsBuilder();
  for (const p of pings) builder.add({ heading: NaN, accuracy: 0, events: 0, ...p }, NaN);
  return builder.build();
}

describe('tune/jitter', function () {
  it('measures the wander of parked assets only, not the steps of driving ones', function () {
    const pings: Ping[] = [];
    for (let k = 0; k < 100; k++) {
      // Parked: away from its spot by 1, 3, 5, 7 or 9 m and back, every 10 s.
      pings.push({ assetId: 'parked', t: T0 + k * 10_000, lat: 52.5 + ((k % 10) + 1) * (k % 2 === 0 ? 1 : 0) * METRE, lon: 13.4 });
      // Driving: 150 m every 10 s, straight north.
      pings.push({ assetId: 'driving', t: T0 + k * 10_000, lat: 52.6 + k * 150 * METRE, lon: 13.4 });
      // Driving in town, reporting every second: 14 m steps, within 100 m of where it was for 7 s at a time.
      pings.push({ assetId: 'town', t: T0 + k * 1000, lat: 52.7 + k * 14 * METRE, lon: 13.4 });
    }
    const jitter = parkedJitter(columnsOf(pings), { heartbeatSeconds: 60 });
    assert.equal(jitter.pairs, 297, 'every consecutive pair less than a heartbeat apart');
    assert.equal(jitter.parkedPairs, 99, 'of which the parked one\'s: short stays are driving');
    assert.ok(jitter.p95Metres !== null && Math.abs(jitter.p95Metres - 9) < 0.01, String(jitter.p95Metres));
    assert.equal(jitter.suggestedMetres, Math.ceil(2 * jitter.p95Metres), 'twice the percentile, rounded up');
    assert.equal(jitter.counts.reduce((a, b) => a + b, 0) + jitter.beyond, 99);
    assert.ok(jitter.binMetres * jitter.counts.length >= jitter.suggestedMetres, 'the bars reach past the suggestion');
  });

  it('takes the nearest-rank 95th percentile and reads pings out of order', function () {
    const pings: Ping[] = [];
    // 20 pairs: distances 1..20 m from one spot, alternating with the spot itself, shuffled in the file.
    for (let k = 0; k < 40; k++) pings.push({ assetId: 'p', t: T0 + k * 5_000, lat: 1 + (k % 2 === 1 ? ((k + 1) / 2) * METRE : 0), lon: 1 });
    const shuffled = pings.map((p, i) => ({ p, key: (i * 7919) % 40 })).sort((a, b) => a.key - b.key).map((x) => x.p);
    const ordered = parkedJitter(columnsOf(pings), { heartbeatSeconds: 30 });
    const fromShuffled = parkedJitter(columnsOf(shuffled), { heartbeatSeconds: 30 });
    assert.deepEqual(fromShuffled, ordered);
    const distances: number[] = [];
    for (let k = 1; k < 40; k++) distances.push(distanceMetres((pings[k - 1] as Ping).lat, 1, (pings[k] as Ping).lat, 1));
    distances.sort((a, b) => a - b);
    assert.equal(ordered.parkedPairs, 39);
    assert.equal(ordered.p95Metres, distances[Math.ceil(0.95 * 39) - 1]);
  });

  it('counts a pair as driving when its asset is far from it within a minute, and has nothing to say without parked pairs', function () {
    const pings: Ping[] = [
      { assetId: 'd', t: T0, lat: 1, lon: 1 },
      { assetId: 'd', t: T0 + 5_000, lat: 1 + 5 * METRE, lon: 1 },
      { assetId: 'd', t: T0 + 10_000, lat: 1 + 500 * METRE, lon: 1 },
    ];
    const jitter = parkedJitter(columnsOf(pings), { heartbeatSeconds: 60 });
    assert.equal(jitter.pairs, 2);
    assert.equal(jitter.parkedPairs, 0);
    assert.equal(jitter.p95Metres, null);
    assert.equal(jitter.suggestedMetres, null);
  });

  it('suggests 8 to 30 m for a tracker parked within ±4 m beside a car at 10 m/s and one in stop-and-go traffic, at Heartbeat 5, 10, 30 and 60 s', function () {
    // An hour, a ping every 5 s from each. Seeded, so that the test is the same every run.
    let seed = 1_234_567;
    const random = (): number => (seed = (seed * 48_271) % 2_147_483_647) / 2_147_483_647;
    const wobble = (): number => (random() * 2 - 1) * 4 * METRE;
    const pings: Ping[] = [];
    let stopGo = 0;
    for (let k = 0; k < 720; k++) {
      const t = T0 + k * 5_000;
      pings.push({ assetId: 'parked', t, lat: 52.5 + wobble(), lon: 13.4 + wobble() / Math.cos((52.5 * Math.PI) / 180) });
      // Every fix wanders, moving or not.
      pings.push({ assetId: 'cruising', t, lat: 52.6 + k * 50 * METRE + wobble(), lon: 13.4 + wobble() });
      // Stop and go: a cycle of 4 minutes, 1 minute driving at 10 m/s, then 30 s crawling at 1 m/s, then 2.5 minutes
      // stopped, so that every stop has driving on both sides of it.
      const phase = (k * 5) % 240;
      const speed = phase < 60 ? 10 : phase < 90 ? 1 : 0;
      stopGo += speed * 5;
      pings.push({ assetId: 'stop-and-go', t, lat: 52.7 + stopGo * METRE + wobble(), lon: 13.4 + wobble() });
    }
    for (const heartbeatSeconds of [5, 10, 30, 60]) {
      const jitter = parkedJitter(columnsOf(pings), { heartbeatSeconds });
      const suggested = jitter.suggestedMetres ?? 0;
      assert.ok(suggested >= 8 && suggested <= 30, `Heartbeat ${heartbeatSeconds} s: suggested ${jitter.suggestedMetres} m (95th percentile ${jitter.p95Metres} m of ${jitter.parkedPairs} parked pairs)`);
    }
  });

  it('steps the bars by 1, 2 or 5 times a power of ten', function () {
    assert.deepEqual([0.7, 1, 1.2, 3, 7, 12, 0.03].map(niceStep), [1, 1, 2, 5, 10, 20, 0.05]);
  });
});
