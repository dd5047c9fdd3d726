/**
 * The memory store (TypeScript rule) and the Redis store (Lua rule) fed the
 * same long, messy stream: every outcome must match, field for field. The
 * contract suite pins the named cases; this catches drift anywhere else
 * (rounding of dt, the distance formula, counters, late handling).
 */
import assert from 'node:assert/strict';
import type { Ping } from '../../src/core/sliding-window';
import { MemoryWindowStore } from '../../src/stores/memory-window-store';
import { RedisWindowStore } from '../../src/stores/redis-window-store';
import type { WindowOutcome } from '../../src/stores/types';
import { BASE_SECONDS } from '../contract/window-store.contract';
import { scriptedClientPerTest, SETTINGS, storeOptions } from '../support/scripted-redis';

function lcg(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
}

/**
 * A stream of pings over a few assets in awkward places (the antimeridian,
 * near a pole, the equator), stepping forward by 0..90 s with sub-millisecond
 * fractions, moving by 0..60 m, and now and then arriving late.
 */
function stream(count: number, seed: number): Ping[] {
  const random = lcg(seed);
  const starts = [
    { lat: 52.5200087, lon: 13.4049547 },
    { lat: -16.5, lon: 179.9998 },
    { lat: 89.4, lon: -45 },
    { lat: 0, lon: 0 },
    { lat: -77.85, lon: 166.67 },
  ];
  const assets = starts.map((start, i) => ({ id: `asset-${i}`, t: BASE_SECONDS * 1000, ...start }));
  const pings: Ping[] = [];
  for (let n = 0; n < count; n++) {
    const asset = assets[Math.floor(random() * assets.length)] as (typeof assets)[number];
    const late = random() < 0.08;
    const step = late ? -random() * 120_000 : random() * 90_000;
    const t = Math.round((asset.t + step) * 4) / 4; // quarter milliseconds
    if (!late) asset.t = t;
    // Up to ~60 m in a random direction; longitudes wrap at 180.
    const metres = random() * 60;
    const bearing = random() * 2 * Math.PI;
    const dLat = (metres * Math.cos(bearing)) / 111_195;
    const dLon = (metres * Math.sin(bearing)) / (111_195 * Math.max(Math.cos((asset.lat * Math.PI) / 180), 0.01));
    asset.lat = Math.max(-89.9, Math.min(89.9, asset.lat + dLat));
    asset.lon = asset.lon + dLon;
    if (asset.lon > 180) asset.lon -= 360;
    if (asset.lon < -180) asset.lon += 360;
    pings.push({ assetId: asset.id, t, lat: asset.lat, lon: asset.lon });
  }
  return pings;
}

describe('redis parity: the Lua rule and the TypeScript rule agree', () => {
  const client = scriptedClientPerTest();

  it('on 2,000 pings, outcome for outcome', async () => {
    const memory = new MemoryWindowStore({ ...SETTINGS, maxAssets: 100 });
    const redis = new RedisWindowStore(client(), SETTINGS, storeOptions('parity:'));
    const pings = stream(2000, 7);
    // All Redis decisions in one go (batched), the memory ones one by one.
    const fromRedis = await Promise.all(pings.map((p) => redis.decide(p)));
    const fromMemory: WindowOutcome[] = pings.map((p) => memory.decide(p));

    const reasons = new Map<string, number>();
    let maxDistanceDiff = 0;
    fromMemory.forEach((expected, i) => {
      const got = fromRedis[i] as WindowOutcome;
      const what = `ping ${i} ${JSON.stringify(pings[i])}`;
      assert.equal(got.reason, expected.reason, what);
      assert.equal(got.admit, expected.admit, what);
      assert.equal(got.dtSeconds, expected.dtSeconds, what);
      assert.equal(got.accepted, expected.accepted, what);
      assert.equal(got.suppressed, expected.suppressed, what);
      if (expected.distanceMetres === null) {
        assert.equal(got.distanceMetres, null, what);
      } else {
        assert.ok(got.distanceMetres !== null, what);
        maxDistanceDiff = Math.max(maxDistanceDiff, Math.abs(got.distanceMetres - expected.distanceMetres) / Math.max(expected.distanceMetres, 1e-9));
      }
      reasons.set(expected.reason, (reasons.get(expected.reason) ?? 0) + 1);
    });
    // Two libms may differ in the last bit of a sine, never more.
    assert.ok(maxDistanceDiff < 1e-12, `distances differ by up to ${maxDistanceDiff}`);
    // The stream really exercised every branch.
    for (const reason of ['first', 'elapsed', 'moved', 'window', 'late']) {
      assert.ok((reasons.get(reason) ?? 0) > 0, `no "${reason}" outcome in ${JSON.stringify([...reasons])}`);
    }
  });
});
