/**
 * The behaviour every WindowStore must have, as one suite parameterised by a
 * store factory. stores.spec.ts runs it against the memory store and the
 * Redis store, so the two cannot drift apart.
 */
import assert from 'node:assert/strict';
import { distanceMetres } from '../../src/core/geo';
import type { Ping } from '../../src/core/sliding-window';
import type { WindowOutcome, WindowSettings, WindowStore } from '../../src/stores/types';

export interface WindowStoreHarness {
  store: WindowStore;
  /** Lets `ms` milliseconds pass on the clock the store expires records by. */
  elapse(ms: number): Promise<void>;
}

export interface WindowStoreSubject {
  name: string;
  /** A fresh store with no records. */
  create(settings: WindowSettings): Promise<WindowStoreHarness>;
  /** Runs after each test: close what create() opened. */
  cleanup(): Promise<void>;
}

/** The seed design's verification constants. */
export const BASE_SECONDS = 1_780_000_000;
export const LAT = 52.5200087;
export const LON = 13.4049547;

const SETTINGS: WindowSettings = { minSeconds: 60, minMetres: 25, ttlSeconds: 6 * 3600 };

/** A ping `seconds` after BASE, at the seed's position unless told otherwise. */
export function ping(assetId: string, seconds: number, lat = LAT, lon = LON): Ping {
  return { assetId, t: (BASE_SECONDS + seconds) * 1000, lat, lon };
}

type Expected = Partial<WindowOutcome> & Pick<WindowOutcome, 'reason'>;

function check(outcome: WindowOutcome, expected: Expected, what: string): void {
  const picked: Record<string, unknown> = {};
  for (const key of Object.keys(expected)) picked[key] = outcome[key as keyof WindowOutcome];
  assert.deepEqual(picked, expected, `${what}: got ${JSON.stringify(outcome)}`);
  assert.equal(outcome.admit, ['first', 'elapsed', 'moved', 'replayed'].includes(outcome.reason), `${what}: admit vs reason`);
}

export function windowStoreContract(subject: WindowStoreSubject): void {
  describe(`WindowStore contract: ${subject.name}`, function () {
    afterEach(() => subject.cleanup());

    async function storeWith(settings: Partial<WindowSettings> = {}): Promise<WindowStoreHarness> {
      return subject.create({ ...SETTINGS, ...settings });
    }

    const decide = async (store: WindowStore, p: Ping): Promise<WindowOutcome> => store.decide(p);

    it('admits the first ping of an asset and starts its counts', async () => {
      const { store } = await storeWith();
      check(await decide(store, ping('veh-0', 0)), { reason: 'first', admit: true, dtSeconds: null, distanceMetres: null, accepted: 1, suppressed: 0 }, 'first');
    });

    it('seed: collapses the boundary pair, four seconds apart', async () => {
      const { store } = await storeWith();
      check(await decide(store, ping('veh-1', 0)), { reason: 'first', admit: true }, 'first');
      check(await decide(store, ping('veh-1', 4)), { reason: 'window', admit: false, dtSeconds: 4, distanceMetres: 0 }, '+4 s');
    });

    it('seed: admits movement inside the window (distance is an OR)', async () => {
      const { store } = await storeWith();
      await decide(store, ping('veh-2', 0));
      const moved = await decide(store, ping('veh-2', 5, LAT + 0.002));
      check(moved, { reason: 'moved', admit: true, dtSeconds: 5 }, '+5 s, +0.002 deg');
      assert.ok(moved.distanceMetres !== null && Math.abs(moved.distanceMetres - 222.39) < 0.01, String(moved.distanceMetres));
    });

    it('seed: lets a parked vehicle heartbeat (time is an OR too)', async () => {
      const { store } = await storeWith();
      await decide(store, ping('veh-3', 0));
      check(await decide(store, ping('veh-3', 30)), { reason: 'window', admit: false, dtSeconds: 30 }, '+30 s');
      // Measured from the last ACCEPTED ping: 61 s, not 31 s.
      check(await decide(store, ping('veh-3', 61)), { reason: 'elapsed', admit: true, dtSeconds: 61 }, '+61 s');
    });

    it('seed: does not let a late ping rewind the baseline', async () => {
      const { store } = await storeWith();
      await decide(store, ping('veh-4', 100));
      check(await decide(store, ping('veh-4', 0)), { reason: 'late', admit: false, dtSeconds: -100, distanceMetres: null }, 'late');
      // Had the late ping been written, this would be 130 s after it: admitted.
      check(await decide(store, ping('veh-4', 130)), { reason: 'window', admit: false, dtSeconds: 30 }, '+130 s');
    });

    it('admits exactly at the time threshold; a ping at the same instant is late', async () => {
      const { store } = await storeWith();
      await decide(store, ping('veh-5', 0));
      check(await decide(store, ping('veh-5', 0)), { reason: 'late', admit: false, dtSeconds: 0 }, 'same t');
      check(await decide(store, { ...ping('veh-5', 0), t: BASE_SECONDS * 1000 + 59_999 }), { reason: 'window', admit: false, dtSeconds: 59.999 }, '59.999 s');
      check(await decide(store, ping('veh-5', 60)), { reason: 'elapsed', admit: true, dtSeconds: 60 }, '60 s');
      check(await decide(store, ping('veh-5', 60)), { reason: 'late', admit: false, dtSeconds: 0 }, 'same t again');
    });

    it('admits exactly at the distance threshold', async () => {
      const to = { lat: LAT + 0.0002, lon: LON + 0.0001 };
      const metres = distanceMetres(LAT, LON, to.lat, to.lon);
      const { store } = await storeWith({ minMetres: metres });
      await decide(store, ping('veh-6', 0));
      check(await decide(store, ping('veh-6', 1, to.lat, to.lon)), { reason: 'moved', admit: true, distanceMetres: metres }, 'at threshold');
      // And a hair short of it is suppressed (back towards the start).
      const back = { lat: to.lat - 0.0002 * 0.999, lon: to.lon - 0.0001 * 0.999 };
      check(await decide(store, ping('veh-6', 2, back.lat, back.lon)), { reason: 'window', admit: false }, 'just short');
    });

    it('keeps fractions of a millisecond', async () => {
      const { store } = await storeWith();
      const t = BASE_SECONDS * 1000;
      await decide(store, { ...ping('veh-7', 0), t: t + 0.25 });
      check(await decide(store, { ...ping('veh-7', 0), t }), { reason: 'late', admit: false, dtSeconds: -0.00025 }, 'older by 0.25 ms');
      check(await decide(store, { ...ping('veh-7', 0), t: t + 0.5 }), { reason: 'window', admit: false, dtSeconds: 0.00025 }, 'newer by 0.25 ms');
    });

    it('measures across the antimeridian the short way', async () => {
      const { store } = await storeWith();
      await decide(store, ping('ship-1', 0, 0, 179.9999));
      const across = await decide(store, ping('ship-1', 5, 0, -179.9999));
      check(across, { reason: 'window', admit: false }, '22 m across 180');
      assert.ok(across.distanceMetres !== null && Math.abs(across.distanceMetres - 22.239) < 0.001, String(across.distanceMetres));
      check(await decide(store, ping('ship-1', 6, 0, -179.9995)), { reason: 'moved', admit: true }, '66 m across 180');
    });

    it('measures correctly near the pole', async () => {
      const { store } = await storeWith();
      // At 89.5N, 0.02 deg of longitude is only 19.4 m: not enough to move.
      await decide(store, ping('sled', 0, 89.5, 10));
      const eastward = await decide(store, ping('sled', 5, 89.5, 10.02));
      check(eastward, { reason: 'window', admit: false }, '19 m east');
      assert.ok(eastward.distanceMetres !== null && Math.abs(eastward.distanceMetres - 19.405) < 0.01, String(eastward.distanceMetres));
      // 0.0003 deg of latitude is 33 m anywhere.
      check(await decide(store, ping('sled', 10, 89.5003, 10)), { reason: 'moved', admit: true }, '33 m north');
      // Over the pole: 89.9999N to the opposite meridian is 22 m, not half a world.
      await decide(store, ping('sled', 100, 89.9999, 0));
      check(await decide(store, ping('sled', 105, 89.9999, 180)), { reason: 'window', admit: false }, 'over the pole');
    });

    it('reports the same distance the core computes', async () => {
      const { store } = await storeWith({ minMetres: 1e9 });
      const points = [
        [LAT, LON],
        [LAT + 0.01, LON - 0.02],
        [-33.8688, 151.2093],
        [-33.87, 151.21],
      ] as const;
      let previous: readonly [number, number] = points[0];
      await decide(store, ping('veh-8', 0, previous[0], previous[1]));
      for (let i = 1; i < points.length; i++) {
        const next = points[i] as readonly [number, number];
        // Each ping comes 61 s after the last, so each is admitted and becomes the baseline.
        const outcome = await decide(store, ping('veh-8', 61 * i, next[0], next[1]));
        const expected = distanceMetres(previous[0], previous[1], next[0], next[1]);
        assert.ok(outcome.distanceMetres !== null);
        assert.ok(Math.abs(outcome.distanceMetres - expected) <= expected * 1e-12, `${outcome.distanceMetres} vs ${expected}`);
        previous = next;
      }
    });

    it('keeps accepted and suppressed counts per asset', async () => {
      const { store } = await storeWith();
      const a = [0, 4, 8, 61, 62, 30, 200].map((s) => ping('veh-a', s));
      const b = [0, 1].map((s) => ping('veh-b', s));
      const outcomes: WindowOutcome[] = [];
      for (const p of [...a.slice(0, 3), ...b, ...a.slice(3)]) outcomes.push(await decide(store, p));
      assert.deepEqual(
        outcomes.map((o) => [o.reason, o.accepted, o.suppressed]),
        [
          ['first', 1, 0],
          ['window', 1, 1],
          ['window', 1, 2],
          ['first', 1, 0],
          ['window', 1, 1],
          ['elapsed', 2, 2],
          ['window', 2, 3],
          ['late', 2, 4],
          ['elapsed', 3, 4],
        ],
      );
    });

    it('forgets one asset on reset(assetId) and keeps the others', async () => {
      const { store } = await storeWith();
      for (const id of ['veh-r1', 'veh-r2']) await decide(store, ping(id, 0));
      await store.reset('veh-r1');
      check(await decide(store, ping('veh-r1', 4)), { reason: 'first', accepted: 1, suppressed: 0 }, 'reset asset');
      check(await decide(store, ping('veh-r2', 4)), { reason: 'window' }, 'other asset');
      await store.reset('never-seen');
    });

    it('forgets every asset on reset()', async () => {
      const { store } = await storeWith();
      for (const id of ['veh-r1', 'veh-r2', 'veh-r3']) await decide(store, ping(id, 0));
      await store.reset();
      for (const id of ['veh-r1', 'veh-r2', 'veh-r3']) {
        check(await decide(store, ping(id, 4)), { reason: 'first', accepted: 1, suppressed: 0 }, id);
      }
    });

    it('keeps assets with look-alike or awkward ids apart, and resets exactly one', async () => {
      const { store } = await storeWith();
      const ids = ['veh{1}', 'veh%7B1%7D', 'veh1', 'veh*', 'veh?', 'veh-1', 'site:7:veh', 'site:7', '}x', 'ünï'];
      for (const id of ids) check(await decide(store, ping(id, 0)), { reason: 'first' }, id);
      for (const id of ids) check(await decide(store, ping(id, 4)), { reason: 'window' }, id);
      await store.reset('veh*');
      await store.reset('site:7');
      for (const id of ids) {
        const expected = id === 'veh*' || id === 'site:7' ? 'first' : 'window';
        check(await decide(store, ping(id, 8)), { reason: expected }, `after reset, ${id}`);
      }
    });

    it('forgets an asset ttlSeconds after its last admission; a suppression does not extend it', async function () {
      this.slow(3000);
      const { store, elapse } = await storeWith({ ttlSeconds: 1 });
      await decide(store, ping('veh-ttl', 0));
      await elapse(300);
      check(await decide(store, ping('veh-ttl', 4)), { reason: 'window', suppressed: 1 }, 'within the TTL');
      await elapse(900);
      check(await decide(store, ping('veh-ttl', 8)), { reason: 'first', accepted: 1, suppressed: 0 }, 'after the TTL');
    });

    it('decides many pings of one asset submitted in the same tick in submission order', async () => {
      const { store } = await storeWith();
      const pings = [
        ping('veh-burst', 0),
        ping('veh-other', 0),
        ping('veh-burst', 4),
        ping('veh-burst', 61),
        ping('veh-other', 2),
        ping('veh-burst', 30),
        ping('veh-burst', 65),
        ping('veh-burst', 66, LAT + 0.002),
        ping('veh-burst', 66, LAT + 0.002),
      ];
      // No await between submissions: a batching store sees them all at once.
      const pending = pings.map((p) => store.decide(p));
      const outcomes = await Promise.all(pending);
      assert.deepEqual(
        outcomes.map((o) => o.reason),
        ['first', 'first', 'window', 'elapsed', 'window', 'late', 'window', 'moved', 'late'],
      );
      assert.deepEqual(outcomes.map((o) => [o.accepted, o.suppressed]).at(-1), [3, 4]);
    });
  });
}
