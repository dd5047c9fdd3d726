/**
 * The memory store (TypeScript rule) and the Redis store (Lua rule) fed the
 * same long, messy stream with every rule on: every outcome must match,
 * field for field. The contract suite pins the named cases; this catches
 * drift anywhere else (rounding of dt, the stored precision of a baseline,
 * the distance formula, heading wrap, accuracy caps, event fingerprints,
 * the clock guard's edge, retries, counters, resets among the pings).
 */
import assert from 'node:assert/strict';
import type { Ping } from '../../src/core/window/sliding-window';
import { MemoryWindowStore } from '../../src/stores/memory-window-store';
import { RedisWindowStore } from '../../src/stores/redis-window-store';
import type { WindowOutcome, WindowSettings } from '../../src/stores/types';
import { decide, resetWindow } from '../support/ask';
import { useRedis } from '../support/global-hooks';
import { scriptedClientPerTest, storeOptions } from '../support/scripted-redis';
import { BASE_SECONDS } from '../contract/window-store.contract';

const RULE: WindowSettings = {
  minSeconds: 60,
  minMetres: 25,
  minHeadingDegrees: 15,
  maxAheadSeconds: 300,
  // Longer than the stream spans, so that neither store expires a record on its own clock.
  ttlSeconds: 90 * 86_400,
};

/** Small deterministic PRNG, so every run sees the same stream. */
function lcg(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
}

type Op = { ping: Ping } | { reset: string | undefined };

/** One chunk of the stream: the host clock while it is decided, and its operations. */
interface Chunk {
  now: number;
  ops: Op[];
}

/**
 * Assets in awkward places (the antimeridian, near a pole, the equator),
 * stepping forward by 0..90 s with quarter-millisecond fractions, moving by
 * 0..60 m, turning, with and without headings and accuracies, changing
 * their watched events now and then, sometimes late, sometimes dated at or
 * past the clock guard's edge, and sometimes retried; resets of one asset
 * and of every asset mixed in.
 */
function stream(count: number, seed: number, chunkSize: number): Chunk[] {
  const random = lcg(seed);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)] as T;
  const starts = [
    { lat: 52.5200087, lon: 13.4049547 },
    { lat: -16.5, lon: 179.9998 },
    { lat: 89.4, lon: -45 },
    { lat: 0, lon: 0 },
    { lat: -77.85, lon: 166.67 },
    { lat: 40.7128, lon: -74.006 },
    { lat: -33.8688, lon: 151.2093 },
    { lat: 64.1466, lon: -21.9426 },
  ];
  const assets = starts.map((start, i) => ({
    id: `asset-${i}`,
    t: BASE_SECONDS * 1000,
    heading: random() * 360,
    events: [0, 1 + i * 7, 2 + i * 7, 2 ** 48 - 1 - i],
    event: 0,
    last: undefined as Ping | undefined,
    ...start,
  }));
  const chunks: Chunk[] = [];
  let now = BASE_SECONDS * 1000;
  for (let n = 0; n < count; ) {
    const ops: Op[] = [];
    // Pings dated against the host clock, which is known once the chunk is: offsets from it, filled in below.
    const aheadOf: [Ping, number][] = [];
    const retries: [number, Ping][] = [];
    for (let i = 0; i < chunkSize && n < count; i++, n++) {
      const roll = random();
      if (roll < 0.015) {
        ops.push({ reset: pick(assets).id });
        continue;
      }
      if (roll < 0.017) {
        ops.push({ reset: undefined });
        continue;
      }
      const asset = pick(assets);
      if (roll < 0.07 && asset.last !== undefined) {
        // A retried message: the asset's previous ping again (copied once its time is known, below).
        retries.push([ops.length, asset.last]);
        ops.push({ reset: undefined });
        continue;
      }
      let t: number;
      const kind = random();
      let offset: number | undefined;
      if (kind < 0.08) {
        t = Math.round((asset.t - random() * 120_000) * 4) / 4; // late
      } else if (kind < 0.11) {
        // At the clock guard's edge: exactly on it, a hair either side, or far past it.
        t = 0;
        offset = pick([300_000, 299_999.75, 300_000.25, 300_001, 86_400_000 * 365]);
      } else {
        t = Math.round((asset.t + random() * 90_000) * 4) / 4;
        asset.t = t;
      }
      // Up to ~60 m in a random direction; longitudes wrap at 180.
      const metres = random() * 60;
      const bearing = random() * 2 * Math.PI;
      const dLat = (metres * Math.cos(bearing)) / 111_195;
      const dLon = (metres * Math.sin(bearing)) / (111_195 * Math.max(Math.cos((asset.lat * Math.PI) / 180), 0.01));
      asset.lat = Math.max(-89.9, Math.min(89.9, asset.lat + dLat));
      asset.lon = asset.lon + dLon;
      if (asset.lon > 180) asset.lon -= 360;
      if (asset.lon < -180) asset.lon += 360;
      asset.heading = (asset.heading + (random() - 0.5) * 50 + 360) % 360;
      if (random() < 0.1) asset.event = Math.floor(random() * asset.events.length);
      const p: Ping = { assetId: asset.id, t, lat: asset.lat, lon: asset.lon, events: asset.events[asset.event] };
      const headingRoll = random();
      if (headingRoll < 0.6) p.heading = asset.heading;
      else if (headingRoll < 0.7) p.heading = pick([0, 360, 359.996, 359.994, 180, 0.004]);
      const accuracyRoll = random();
      if (accuracyRoll < 0.5) p.accuracy = random() * 40;
      else if (accuracyRoll < 0.55) p.accuracy = pick([0, 6553.4, 6553.46, 1e6, 0.04, 0.05]);
      if (offset !== undefined) aheadOf.push([p, offset]);
      asset.last = p;
      ops.push({ ping: p });
    }
    // The host clock a little after the newest ping so far.
    now = Math.max(now, ...assets.map((a) => a.t)) + Math.floor(random() * 20_000);
    for (const [p, offset] of aheadOf) p.t = now + offset;
    for (const [at, p] of retries) ops[at] = { ping: { ...p, retry: true } };
    chunks.push({ now, ops });
  }
  return chunks;
}

describe('redis parity: the Lua rule and the TypeScript rule agree', function () {
  useRedis();
  const client = scriptedClientPerTest();

  it('on 20,000 pings with every rule on and resets mixed in, outcome for outcome', async function () {
    this.slow(5000);
    const chunks = stream(20_000, 7, 250);
    let now = 0;
    const memory = new MemoryWindowStore({ ...RULE, maxAssets: 100 }, () => now);
    const redis = new RedisWindowStore(client(), RULE, storeOptions('parity:'), () => now);

    const counts = new Map<string, number>();
    let maxDistanceDiff = 0;
    let compared = 0;
    for (const chunk of chunks) {
      now = chunk.now;
      // The Redis decisions of a chunk in one turn (batched), the memory ones one by one.
      const fromRedis = await Promise.all(chunk.ops.map((op) => ('ping' in op ? decide(redis, op.ping) : resetWindow(redis, op.reset))));
      chunk.ops.forEach((op, i) => {
        if (!('ping' in op)) {
          memory.reset(op.reset, { value: () => undefined, error: (e) => assert.fail(String(e)) }, undefined);
          assert.equal(fromRedis[i], undefined);
          return;
        }
        const expected = memory.decideNow(op.ping);
        const got = fromRedis[i] as WindowOutcome;
        const what = `op ${compared} ${JSON.stringify(op.ping)} at ${now}`;
        assert.deepEqual(
          [got.reason, got.admit, got.dtSeconds, got.headingChange, got.accepted, got.suppressed],
          [expected.reason, expected.admit, expected.dtSeconds, expected.headingChange, expected.accepted, expected.suppressed],
          what,
        );
        if (expected.distanceMetres === null) {
          assert.equal(got.distanceMetres, null, what);
        } else {
          assert.ok(got.distanceMetres !== null, what);
          maxDistanceDiff = Math.max(maxDistanceDiff, Math.abs(got.distanceMetres - expected.distanceMetres) / Math.max(expected.distanceMetres, 1e-9));
        }
        counts.set(expected.reason, (counts.get(expected.reason) ?? 0) + 1);
        compared++;
      });
    }
    // Two libms may differ in the last bit of a sine, never more.
    assert.ok(maxDistanceDiff < 1e-12, `distances differ by up to ${maxDistanceDiff}`);
    // The stream really exercised every branch.
    for (const reason of ['ahead', 'first', 'replayed', 'late', 'elapsed', 'event', 'moved', 'turned', 'window']) {
      assert.ok((counts.get(reason) ?? 0) >= 20, `only ${counts.get(reason) ?? 0} "${reason}" outcomes in ${JSON.stringify([...counts])}`);
    }
    assert.ok(compared > 19_000, `${compared} pings compared`);
  });
});
