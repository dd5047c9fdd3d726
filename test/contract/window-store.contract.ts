/**
 * The behaviour every WindowStore must have, as one suite parameterised by a
 * store factory. stores.spec.ts runs it against the memory store, the Redis
 * store, and the Redis store grouping its calls by Cluster slot, so that
 * none can drift from the others: the seed's cases, the order of a reset
 * among the pings around it (issue 9), and every fleet rule (issue 11).
 */
import assert from 'node:assert/strict';
import { eventFingerprint } from '../../src/core/window/event-fingerprint';
import { distanceMetres } from '../../src/core/window/geo';
import { readPing, type PingReadRule, type RawPing } from '../../src/core/window/ping';
import type { Ping } from '../../src/core/window/sliding-window';
import { WINDOW_REASONS } from '../../src/core/window/window-reasons';
import type { WindowOutcome, WindowSettings, WindowStore } from '../../src/stores/types';
import { decide, resetWindow } from '../support/ask';

export interface WindowStoreHarness {
  store: WindowStore;
  /** Lets `ms` pass on the host clock the store reads and on the clock that expires its records. */
  elapse: (ms: number) => Promise<void>;
  /** The host clock the store reads (the clock guard's "now"). */
  now: () => number;
  /** Fills the store's backing state with `count` records of assets no test pings (`other-<n>`). */
  unrelated: (count: number) => Promise<void>;
}

export interface WindowStoreSubject {
  name: string;
  /** A fresh store with no records, its host clock at START_MS. */
  create(settings: WindowSettings): Promise<WindowStoreHarness>;
  /** Runs after each test: close what create() opened. */
  cleanup(): Promise<void>;
}

/** The seed design's verification constants. */
export const BASE_SECONDS = 1_780_000_000;
export const LAT = 52.5200087;
export const LON = 13.4049547;
/** The host clock at the start of every test: an hour after BASE, so that no ping of the seed's cases is ahead of it. */
export const START_MS = (BASE_SECONDS + 3600) * 1000;

const SETTINGS: WindowSettings = { minSeconds: 60, minMetres: 25, ttlSeconds: 6 * 3600 };

/** A ping `seconds` after BASE, at the seed's position unless told otherwise. */
export function ping(assetId: string, seconds: number, lat = LAT, lon = LON): Ping {
  return { assetId, t: (BASE_SECONDS + seconds) * 1000, lat, lon };
}

/** Metres north, as degrees of latitude (a meridian degree of the haversine sphere). */
export function north(metres: number): number {
  return metres / ((6_371_008.8 * Math.PI) / 180);
}

type Expected = Partial<WindowOutcome> & Pick<WindowOutcome, 'reason'>;

export function check(outcome: WindowOutcome, expected: Expected, what: string): void {
  const picked: Record<string, unknown> = {};
  for (const key of Object.keys(expected)) picked[key] = outcome[key as keyof WindowOutcome];
  assert.deepEqual(picked, expected, `${what}: got ${JSON.stringify(outcome)}`);
  assert.equal(outcome.admit, WINDOW_REASONS[outcome.reason].admit, `${what}: admit vs reason`);
}

const reasons = (outcomes: readonly WindowOutcome[]): string[] => outcomes.map((o) => o.reason);

export function windowStoreContract(subject: WindowStoreSubject): void {
  describe(`WindowStore contract: ${subject.name}`, function () {
    afterEach(() => subject.cleanup());

    async function storeWith(settings: Partial<WindowSettings> = {}): Promise<WindowStoreHarness> {
      return subject.create({ ...SETTINGS, ...settings });
    }

    describe('the seed rule', () => {
      it('admits the first ping of an asset and starts its counts', async () => {
        const { store } = await storeWith();
        check(await decide(store, ping('veh-0', 0)), { reason: 'first', admit: true, dtSeconds: null, distanceMetres: null, headingChange: null, accepted: 1, suppressed: 0 }, 'first');
      });

      it('collapses the boundary pair, four seconds apart', async () => {
        const { store } = await storeWith();
        check(await decide(store, ping('veh-1', 0)), { reason: 'first', admit: true }, 'first');
        check(await decide(store, ping('veh-1', 4)), { reason: 'window', admit: false, dtSeconds: 4, distanceMetres: 0 }, '+4 s');
      });

      it('admits movement inside the window (distance is an OR)', async () => {
        const { store } = await storeWith();
        await decide(store, ping('veh-2', 0));
        const moved = await decide(store, ping('veh-2', 5, LAT + 0.002));
        check(moved, { reason: 'moved', admit: true, dtSeconds: 5 }, '+5 s, +0.002 deg');
        assert.ok(moved.distanceMetres !== null && Math.abs(moved.distanceMetres - 222.39) < 0.01, String(moved.distanceMetres));
      });

      it('lets a parked vehicle heartbeat (time is an OR too)', async () => {
        const { store } = await storeWith();
        await decide(store, ping('veh-3', 0));
        check(await decide(store, ping('veh-3', 30)), { reason: 'window', admit: false, dtSeconds: 30 }, '+30 s');
        // Measured from the last ACCEPTED ping: 61 s, not 31 s.
        check(await decide(store, ping('veh-3', 61)), { reason: 'elapsed', admit: true, dtSeconds: 61 }, '+61 s');
      });

      it('does not let a late ping rewind the baseline', async () => {
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

      it('keeps the baseline to 1e-7 degrees, as both stores store it', async () => {
        const { store } = await storeWith({ minMetres: 0.01 });
        // 4e-8 degrees (4 mm) off the stored grid: the baseline is rounded to it.
        await decide(store, ping('veh-p', 0, LAT + 4e-8, LON));
        const back = await decide(store, ping('veh-p', 1, LAT, LON));
        check(back, { reason: 'window', distanceMetres: 0 }, 'the rounded baseline is the grid point');
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

      it('keeps assets with look-alike or awkward ids apart', async () => {
        const { store } = await storeWith();
        const ids = ['veh{1}', 'veh%7B1%7D', 'veh1', 'veh*', 'veh?', 'veh-1', 'site:7:veh', 'site:7', '}x', '{', 'ünï'];
        for (const id of ids) check(await decide(store, ping(id, 0)), { reason: 'first' }, id);
        for (const id of ids) check(await decide(store, ping(id, 4)), { reason: 'window' }, id);
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

      it('decides many pings of one asset submitted in the same turn in submission order', async () => {
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
        const outcomes = await Promise.all(pings.map((p) => decide(store, p)));
        assert.deepEqual(reasons(outcomes), ['first', 'first', 'window', 'elapsed', 'window', 'late', 'window', 'moved', 'late']);
        assert.deepEqual(outcomes.map((o) => [o.accepted, o.suppressed]).at(-1), [3, 4]);
      });
    });

    describe('resets', () => {
      it('forgets one asset on reset(assetId) and keeps the others', async () => {
        const { store } = await storeWith();
        for (const id of ['veh-r1', 'veh-r2']) await decide(store, ping(id, 0));
        await resetWindow(store, 'veh-r1');
        check(await decide(store, ping('veh-r1', 4)), { reason: 'first', accepted: 1, suppressed: 0 }, 'reset asset');
        check(await decide(store, ping('veh-r2', 4)), { reason: 'window' }, 'other asset');
        await resetWindow(store, 'never-seen');
      });

      it('forgets every asset on reset()', async () => {
        const { store } = await storeWith();
        for (const id of ['veh-r1', 'veh-r2', 'veh-r3']) await decide(store, ping(id, 0));
        await resetWindow(store);
        for (const id of ['veh-r1', 'veh-r2', 'veh-r3']) {
          check(await decide(store, ping(id, 4)), { reason: 'first', accepted: 1, suppressed: 0 }, id);
        }
        // Records written after the reset are kept, and a second reset forgets them too.
        check(await decide(store, ping('veh-r1', 8)), { reason: 'window', accepted: 1, suppressed: 1 }, 'after the reset');
        await resetWindow(store);
        check(await decide(store, ping('veh-r1', 12)), { reason: 'first' }, 'after a second reset');
      });

      it('resets exactly the asset named, however awkward its id', async () => {
        const { store } = await storeWith();
        const ids = ['veh{1}', 'veh%7B1%7D', 'veh1', 'veh*', 'veh?', 'site:7:veh', 'site:7', '}x', 'ünï'];
        for (const id of ids) await decide(store, ping(id, 0));
        await resetWindow(store, 'veh*');
        await resetWindow(store, 'site:7');
        await resetWindow(store, 'veh{1}');
        for (const id of ids) {
          const expected = ['veh*', 'site:7', 'veh{1}'].includes(id) ? 'first' : 'window';
          check(await decide(store, ping(id, 8)), { reason: expected }, `after reset, ${id}`);
        }
      });

      it('puts a reset exactly between the pings before and after it in one turn (issue 9)', async () => {
        const { store } = await storeWith();
        check(await decide(store, ping('veh-x', 0)), { reason: 'first' }, 'ping(t)');
        // [ping(t+1), {reset: "veh-x"}, ping(t+2)] from one function node: one turn.
        const before = decide(store, ping('veh-x', 1));
        const reset = resetWindow(store, 'veh-x');
        const after = decide(store, ping('veh-x', 2));
        await reset;
        check(await before, { reason: 'window', accepted: 1, suppressed: 1 }, 'ping(t+1), before the reset');
        check(await after, { reason: 'first', accepted: 1, suppressed: 0 }, 'ping(t+2), after the reset');
      });

      it('puts resets of one asset and of every asset in their places among many pings of one turn', async () => {
        const { store } = await storeWith();
        await Promise.all([decide(store, ping('A', 0)), decide(store, ping('B', 0)), decide(store, ping('C', 0))]);
        const pending: Promise<WindowOutcome | void>[] = [
          decide(store, ping('A', 1)),
          decide(store, ping('B', 1)),
          resetWindow(store, 'C'), // another asset: A and B keep their baselines
          decide(store, ping('A', 2)),
          decide(store, ping('C', 2)),
          resetWindow(store),
          decide(store, ping('A', 3)),
          decide(store, ping('B', 3)),
          decide(store, ping('C', 3)),
          resetWindow(store, 'A'),
          decide(store, ping('A', 4)),
          decide(store, ping('B', 4)),
        ];
        const answers = await Promise.all(pending);
        assert.deepEqual(
          answers.map((a) => (a === undefined ? 'reset' : `${a.reason} ${a.accepted}/${a.suppressed}`)),
          ['window 1/1', 'window 1/1', 'reset', 'window 1/2', 'first 1/0', 'reset', 'first 1/0', 'first 1/0', 'first 1/0', 'reset', 'first 1/0', 'window 1/1'],
        );
      });

      it('keeps a reset in its place in a burst longer than one script call', async () => {
        const { store } = await storeWith();
        const pending: Promise<WindowOutcome | void>[] = [];
        const expected: string[] = [];
        let baseline: number | undefined;
        for (let i = 0; i < 1300; i++) {
          if (i === 700 || i === 1111) {
            pending.push(resetWindow(store, i === 700 ? 'veh-long' : undefined));
            expected.push('reset');
            baseline = undefined;
          }
          pending.push(decide(store, ping('veh-long', i)));
          if (baseline === undefined) {
            expected.push('first');
            baseline = i;
          } else if (i - baseline >= 60) {
            expected.push('elapsed');
            baseline = i;
          } else {
            expected.push('window');
          }
        }
        const answers = await Promise.all(pending);
        assert.deepEqual(answers.map((a) => (a === undefined ? 'reset' : a.reason)), expected);
      });

      it('never admits a ping twice after a reset, with 200,000 unrelated records present (issue 9)', async function () {
        this.slow(5000);
        this.timeout(60_000);
        const { store, unrelated } = await storeWith();
        await unrelated(200_000);
        const ids = Array.from({ length: 400 }, (_, i) => `veh-s${i}`);
        await Promise.all(ids.map((id) => decide(store, ping(id, 0))));
        // The reset, and the stream after it, without waiting for the reset's answer.
        const reset = resetWindow(store);
        const stream: Promise<WindowOutcome>[] = [];
        for (let turn = 0; turn < 40; turn++) {
          for (const id of ids.slice(turn * 10, turn * 10 + 10)) stream.push(decide(store, ping(id, 1)));
          await new Promise((resolve) => setImmediate(resolve));
        }
        await reset;
        assert.deepEqual(new Set(reasons(await Promise.all(stream))), new Set(['first']));
        const again = await Promise.all(ids.map((id) => decide(store, ping(id, 1))));
        assert.deepEqual(new Set(reasons(again)), new Set(['late']), 'a ping of the stream admitted twice');
      });
    });

    describe('fleet rules (issue 11)', () => {
      it('clock guard: suppresses a ping more than maxAheadSeconds ahead of the host clock as ahead, never as a baseline', async () => {
        const { store, now, elapse } = await storeWith({ maxAheadSeconds: 300 });
        const at = (ms: number): Ping => ({ assetId: 'trk', t: ms, lat: LAT, lon: LON });
        const start = now();
        // A first ping from a clock a year ahead sets no baseline.
        check(await decide(store, at(start + 365 * 86_400_000)), { reason: 'ahead', admit: false, dtSeconds: null, distanceMetres: null, accepted: 0, suppressed: 0 }, 'first ping, a year ahead');
        check(await decide(store, at(start - 10_000)), { reason: 'first', accepted: 1 }, 'a real ping after it');
        // With a baseline, one ping dated 2099 is suppressed and counted...
        const ahead = await decide(store, at(Date.UTC(2099, 0, 1)));
        check(ahead, { reason: 'ahead', distanceMetres: null, accepted: 1, suppressed: 1 }, '2099');
        assert.ok(ahead.dtSeconds !== null && ahead.dtSeconds > 0, 'dtSeconds against the baseline');
        // ...and the next real ping is judged against the real baseline, not late.
        check(await decide(store, at(start)), { reason: 'window', dtSeconds: 10 }, 'real ping after 2099');
        // Exactly maxAheadSeconds ahead is not ahead; a millisecond more is.
        check(await decide(store, at(start + 300_000)), { reason: 'elapsed', dtSeconds: 310 }, 'exactly 300 s ahead');
        check(await decide(store, at(start + 300_001)), { reason: 'ahead', dtSeconds: 0.001 }, '300.001 s ahead');
        // The store reads the host clock at each decision: 50 ms later the same ping is within the limit.
        await elapse(50);
        check(await decide(store, at(start + 300_001)), { reason: 'window', dtSeconds: 0.001 }, 'the same ping, 50 ms later');
      });

      it('clock guard off: a ping from 2099 becomes the baseline', async () => {
        const { store } = await storeWith();
        check(await decide(store, { assetId: 'trk', t: Date.UTC(2099, 0, 1), lat: LAT, lon: LON }), { reason: 'first' }, '2099');
        check(await decide(store, ping('trk', 0)), { reason: 'late' }, 'every real ping is late');
      });

      it('event: admits a ping whose watched values changed since the last admitted one', async () => {
        const { store } = await storeWith();
        const on = eventFingerprint([true, undefined]);
        const off = eventFingerprint([false, undefined]);
        const alarm = eventFingerprint([false, 'door']);
        const nullAlarm = eventFingerprint([false, null]);
        const at = (seconds: number, events: number, lat = LAT): Ping => ({ ...ping('veh-e', seconds, lat), events });
        check(await decide(store, at(0, on)), { reason: 'first' }, 'ignition on');
        check(await decide(store, at(5, on)), { reason: 'window' }, 'same values');
        check(await decide(store, at(10, off)), { reason: 'event', dtSeconds: 10, distanceMetres: 0 }, 'ignition off, 10 s and 0 m later');
        check(await decide(store, at(12, alarm)), { reason: 'event' }, 'an alarm appears');
        check(await decide(store, at(14, nullAlarm)), { reason: 'event' }, 'the alarm becomes null');
        check(await decide(store, at(16, off)), { reason: 'event' }, 'the alarm disappears');
        check(await decide(store, at(18, off)), { reason: 'window' }, 'unchanged again');
        check(await decide(store, at(19, 0)), { reason: 'event' }, 'a ping with no watched values after one with');
      });

      it('turn: admits a heading change of at least minHeadingDegrees, the short way round', async () => {
        const { store } = await storeWith({ minHeadingDegrees: 10 });
        const at = (seconds: number, heading?: number): Ping => ({ ...ping('veh-t', seconds), ...(heading === undefined ? {} : { heading }) });
        check(await decide(store, at(0, 350)), { reason: 'first', headingChange: null }, '350');
        check(await decide(store, at(2, 359)), { reason: 'window', headingChange: 9 }, '9 degrees');
        check(await decide(store, at(4, 0.5)), { reason: 'turned', headingChange: 10.5 }, '350 to 0.5 across north');
        check(await decide(store, at(6, 359)), { reason: 'window', headingChange: 1.5 }, '0.5 to 359');
        check(await decide(store, at(8)), { reason: 'window', headingChange: null }, 'a ping without a heading');
        check(await decide(store, at(10, 180.5)), { reason: 'turned', headingChange: 180 }, 'a U-turn');
        check(await decide(store, at(12, 360)), { reason: 'turned', headingChange: 179.5 }, '360 is north');
        check(await decide(store, at(14, 1)), { reason: 'window', headingChange: 1 }, 'one degree from north');
      });

      it('turn: a baseline without a heading never turns; rule off: the change is still reported', async () => {
        const { store } = await storeWith();
        await decide(store, ping('veh-u', 0));
        check(await decide(store, { ...ping('veh-u', 2), heading: 90 }), { reason: 'window', headingChange: null }, 'no baseline heading');
        await decide(store, { ...ping('veh-u', 61), heading: 0 });
        check(await decide(store, { ...ping('veh-u', 63), heading: 90 }), { reason: 'window', headingChange: 90 }, 'rule off');
      });

      it('accuracy: a move counts only when longer than both fixes\' accuracies together', async () => {
        const { store } = await storeWith();
        const at = (seconds: number, metresNorth: number, accuracy?: number): Ping => ({
          ...ping('veh-g', seconds, LAT + north(metresNorth)),
          ...(accuracy === undefined ? {} : { accuracy }),
        });
        check(await decide(store, at(0, 0, 10)), { reason: 'first' }, 'parked, 10 m accuracy');
        check(await decide(store, at(2, 30, 25)), { reason: 'window' }, '30 m is within 10 + 25 m');
        check(await decide(store, at(4, 30, 15)), { reason: 'moved' }, '30 m beyond 10 + 15 m');
        check(await decide(store, at(6, 60)), { reason: 'moved' }, 'accuracy missing on the new fix counts as 0 (30 m > 15 m)');
        check(await decide(store, at(8, 88, 30)), { reason: 'window' }, 'accuracy missing on the baseline counts as 0 (28 m, not > 30 m)');
        check(await decide(store, at(10, 95, 30)), { reason: 'moved' }, '35 m > 0 + 30 m');
        check(await decide(store, at(12, 123)), { reason: 'window' }, 'the baseline keeps its accuracy (28 m, not > 30 m)');
        check(await decide(store, at(14, 126)), { reason: 'moved' }, '31 m > 30 m');
      });

      it('accuracy: the baseline\'s accuracy is kept to 0.1 m and at most 6553.4 m', async () => {
        const { store } = await storeWith({ minMetres: 1 });
        check(await decide(store, { ...ping('veh-h', 0), accuracy: 1e6 }), { reason: 'first' }, 'a wild accuracy');
        const far = distanceMetres(LAT, LON, LAT + north(6553.5), LON);
        assert.ok(far > 6553.4 && far < 6553.6);
        check(await decide(store, ping('veh-h', 2, LAT + north(6553.3))), { reason: 'window' }, 'within the capped accuracy');
        check(await decide(store, ping('veh-h', 4, LAT + north(6553.5))), { reason: 'moved' }, 'beyond the capped accuracy');
      });

      it('retry: a retried message that is the stored baseline is replayed, uncounted; anything else is decided as usual', async () => {
        const { store } = await storeWith();
        const p = { ...ping('veh-r', 0, LAT + 0.00000004), events: 7 };
        check(await decide(store, p), { reason: 'first', accepted: 1, suppressed: 0 }, 'the first attempt');
        check(await decide(store, { ...p, retry: true }), { reason: 'replayed', admit: true, dtSeconds: null, distanceMetres: null, accepted: 1, suppressed: 0 }, 'its retry');
        check(await decide(store, p), { reason: 'late', suppressed: 1 }, 'the same ping, not a retry');
        check(await decide(store, { ...p, events: 8, retry: true }), { reason: 'late' }, 'a retry with other values');
        check(await decide(store, { ...p, t: p.t + 4000, retry: true }), { reason: 'window', suppressed: 3 }, 'a retry of a ping never admitted');
        check(await decide(store, { ...ping('veh-r2', 4), retry: true }), { reason: 'first' }, 'a retry with no baseline');
      });

      it('the first reason that applies wins: ahead, first, late, elapsed, event, moved, turned, window', async () => {
        const { store, now } = await storeWith({ minHeadingDegrees: 10, maxAheadSeconds: 300 });
        const at = (seconds: number, more: Partial<Ping> = {}): Ping => ({ ...ping('veh-o', seconds), heading: 0, events: 1, ...more });
        const everything = { lat: LAT + 0.01, heading: 90, events: 2 };
        check(await decide(store, { ...at(0, everything), t: now() + 301_000 }), { reason: 'ahead' }, 'ahead before first');
        check(await decide(store, at(100)), { reason: 'first' }, 'first');
        check(await decide(store, at(50, everything)), { reason: 'late' }, 'late before elapsed, event, moved, turned');
        check(await decide(store, at(200, everything)), { reason: 'elapsed', headingChange: 90 }, 'elapsed before event, moved, turned');
        check(await decide(store, at(201, { ...everything, lat: LAT + 0.02, heading: 180, events: 3 })), { reason: 'event', headingChange: 90 }, 'event before moved, turned');
        check(await decide(store, at(202, { lat: LAT + 0.03, heading: 270, events: 3 })), { reason: 'moved', headingChange: 90 }, 'moved before turned');
        check(await decide(store, at(203, { lat: LAT + 0.03, heading: 0, events: 3 })), { reason: 'turned', headingChange: 90 }, 'turned');
        check(await decide(store, at(204, { lat: LAT + 0.03, heading: 5, events: 3 })), { reason: 'window', headingChange: 5 }, 'window');
      });
    });

    describe('fix quality, jumps and readings (issue 29)', () => {
      /** A ping read from a message's fields with the node's rule, as the node reads it (the fix's quality decided there). */
      const read = (raw: Partial<RawPing> & { seconds: number; assetId: string }, rule: PingReadRule): Ping => {
        const result = readPing({ time: BASE_SECONDS + raw.seconds, lat: LAT, lon: LON, ...raw }, rule);
        assert.ok(result.ok, JSON.stringify(result));
        return result.ping;
      };

      it('no-fix: a fix, then 0,0, then the same fix 20 s later give first, no-fix (suppressed), window (judged against the real baseline)', async () => {
        const rule = { noFix: true };
        const { store } = await storeWith(rule);
        check(await decide(store, read({ assetId: 'gps-1', seconds: 0 }, rule)), { reason: 'first', admit: true, accepted: 1, suppressed: 0 }, 'the fix');
        check(
          await decide(store, read({ assetId: 'gps-1', seconds: 10, lat: 0, lon: 0 }, rule)),
          { reason: 'no-fix', admit: false, dtSeconds: 10, distanceMetres: null, accepted: 1, suppressed: 1 },
          '0,0',
        );
        check(await decide(store, read({ assetId: 'gps-1', seconds: 20 }, rule)), { reason: 'window', dtSeconds: 20, distanceMetres: 0, accepted: 1, suppressed: 2 }, 'the same fix again');
        // Without the guard, 0,0 was a position: first, moved, moved.
        const { store: unguarded } = await storeWith();
        const off = {};
        const reasonsOff = [];
        for (const p of [read({ assetId: 'gps-2', seconds: 0 }, off), read({ assetId: 'gps-2', seconds: 10, lat: 0, lon: 0 }, off), read({ assetId: 'gps-2', seconds: 20 }, off)]) reasonsOff.push((await decide(unguarded, p)).reason);
        assert.deepEqual(reasonsOff, ['first', 'moved', 'moved']);
      });

      it('no-fix: the validity field says so (NMEA "V"); before the first fix nothing is written, as for ahead', async () => {
        const rule = { noFix: true };
        const { store } = await storeWith(rule);
        check(await decide(store, read({ assetId: 'gps-v', seconds: 0, valid: 'V' }, rule)), { reason: 'no-fix', admit: false, dtSeconds: null, accepted: 0, suppressed: 0 }, 'void, no record');
        check(await decide(store, read({ assetId: 'gps-v', seconds: 5, lat: 0, lon: 0 }, rule)), { reason: 'no-fix', accepted: 0, suppressed: 0 }, '0,0, no record');
        check(await decide(store, read({ assetId: 'gps-v', seconds: 10, valid: 'A' }, rule)), { reason: 'first', accepted: 1, suppressed: 0 }, 'the first fix is first');
        check(await decide(store, read({ assetId: 'gps-v', seconds: 15, valid: false }, rule)), { reason: 'no-fix', accepted: 1, suppressed: 1 }, 'valid: false');
        check(await decide(store, read({ assetId: 'gps-v', seconds: 71, valid: 1 }, rule)), { reason: 'elapsed', dtSeconds: 61 }, 'the baseline is the first fix');
      });

      it('poor-fix: fewer satellites than minSatellites or an HDOP over maxHdop is suppressed and never the baseline; unknown passes', async () => {
        const rule = { minSatellites: 4, maxHdop: 2 };
        const { store } = await storeWith(rule);
        check(await decide(store, read({ assetId: 'gps-q', seconds: 0, satellites: 3 }, rule)), { reason: 'poor-fix', accepted: 0, suppressed: 0 }, '3 satellites, no record');
        check(await decide(store, read({ assetId: 'gps-q', seconds: 1, satellites: 7, hdop: 0.9 }, rule)), { reason: 'first' }, 'a good fix');
        check(await decide(store, read({ assetId: 'gps-q', seconds: 62, lat: LAT + 0.01, satellites: 7, hdop: 2.5 }, rule)), { reason: 'poor-fix', admit: false, dtSeconds: 61, distanceMetres: null, suppressed: 1 }, 'HDOP 2.5');
        check(await decide(store, read({ assetId: 'gps-q', seconds: 63, satellites: 4, hdop: 2 }, rule)), { reason: 'elapsed', dtSeconds: 62, distanceMetres: 0 }, 'at the limits, against the good fix');
        check(await decide(store, read({ assetId: 'gps-q', seconds: 64, lat: LAT + 0.01 }, rule)), { reason: 'moved' }, 'unknown satellites and HDOP pass');
      });

      describe('the jump guard', () => {
        const JUMP = { maxSpeedKmh: 150 };
        const at = (id: string, seconds: number, metresNorth: number): Ping => ping(id, seconds, LAT + north(metresNorth));

        it('suppresses a jump as `jump` (counted, never the baseline) and relocates after three that agree', async () => {
          const { store } = await storeWith(JUMP);
          const answers = [];
          for (const p of [at('j-1', 0, 0), at('j-1', 10, 5000), at('j-1', 20, 5150), at('j-1', 30, 5300), at('j-1', 40, 5450)]) answers.push(await decide(store, p));
          assert.deepEqual(
            answers.map((a) => `${a.reason} ${a.accepted}/${a.suppressed}`),
            ['first 1/0', 'jump 1/1', 'jump 1/2', 'relocated 2/2', 'moved 3/2'],
          );
          check(answers[1] as WindowOutcome, { reason: 'jump', admit: false, dtSeconds: 10 }, 'the jump');
          assert.ok(Math.abs(((answers[3] as WindowOutcome).distanceMetres as number) - 5300) < 0.01, 'relocated: measured from the old baseline');
          assert.ok(Math.abs(((answers[4] as WindowOutcome).distanceMetres as number) - 150) < 0.01, 'then from the new one');
        });

        it('the Traccar lock-out case: silent 2 h, back 50 km away: the first ping back is `relocated`, what follows is decided from there', async () => {
          const { store } = await storeWith(JUMP);
          const back = 2 * 3600;
          const answers = [];
          for (const p of [at('j-t', 0, 0), at('j-t', back, 50_000), at('j-t', back + 10, 50_020), at('j-t', back + 20, 50_100), at('j-t', back + 30, 51_100)]) answers.push((await decide(store, p)).reason);
          assert.deepEqual(answers, ['first', 'relocated', 'window', 'moved', 'jump']);
        });

        it('relocates after a silence even at an impossible speed, and never judges a late ping by speed', async () => {
          const { store } = await storeWith(JUMP);
          check(await decide(store, at('j-s', 0, 0)), { reason: 'first' }, 'first');
          check(await decide(store, at('j-s', 1200, 500_000)), { reason: 'relocated', admit: true, dtSeconds: 1200 }, '500 km after 20 min of silence');
          check(await decide(store, at('j-s', 1000, 0)), { reason: 'late', distanceMetres: null }, 'late, far away');
          check(await decide(store, at('j-s', 1210, 500_010)), { reason: 'window' }, 'decided from the new position');
        });

        it('counts only agreeing jumps; a ping that is no jump starts the count over; late, no-fix and poor-fix leave it', async () => {
          const rule = { ...JUMP, noFix: true };
          const { store } = await storeWith(rule);
          const zero = read({ assetId: 'j-c', seconds: 25, lat: 0, lon: 0 }, rule);
          const pings = [
            at('j-c', 0, 0),
            at('j-c', 10, 5000),
            at('j-c', 20, -5000), // disagrees with the candidate: a count of its own
            zero,
            at('j-c', -5, 9000), // late
            at('j-c', 30, -4900), // agrees: 2
            at('j-c', 40, 10), // no jump: the candidate is gone
            at('j-c', 50, -4800), // 1 again
            at('j-c', 60, -4700), // 2
            at('j-c', 70, -4600), // 3: relocated
          ];
          const answers = [];
          for (const p of pings) answers.push((await decide(store, p)).reason);
          assert.deepEqual(answers, ['first', 'jump', 'jump', 'no-fix', 'late', 'jump', 'window', 'jump', 'jump', 'relocated']);
        });

        it('moves the candidate to a jump dated as the candidate but elsewhere (as the rule does), so what follows counts from there', async () => {
          const { store } = await storeWith(JUMP);
          const pings = [
            at('j-e', 0, 0),
            at('j-e', 10, 5000), // a jump: the candidate
            at('j-e', 10, 20_000), // dated the same, 15 km further: not newer, so a count of its own, and the candidate
            at('j-e', 20, 20_100), // agrees with the second (the first is 15 km behind in 10 s): 2
            at('j-e', 30, 20_200), // 3: relocated
          ];
          const answers = [];
          for (const p of pings) answers.push((await decide(store, p)).reason);
          assert.deepEqual(answers, ['first', 'jump', 'jump', 'jump', 'relocated']);
        });

        it('keeps the candidate through pings of one asset submitted in the same turn', async () => {
          const { store } = await storeWith(JUMP);
          await decide(store, at('j-b', 0, 0));
          const burst = [at('j-b', 10, 5000), at('j-b', 11, 20), at('j-b', 20, 5000), at('j-b', 30, 5100), at('j-b', 40, 5200), at('j-b', 41, 5210)];
          const answers = await Promise.all(burst.map((p) => decide(store, p)));
          assert.deepEqual(reasons(answers), ['jump', 'window', 'jump', 'jump', 'relocated', 'window']);
          assert.deepEqual(answers.map((a) => [a.accepted, a.suppressed]).at(-1), [2, 5]);
        });

        it('forgets the candidate with the asset on reset', async () => {
          const { store } = await storeWith({ ...JUMP, relocateAfterPings: 2 });
          await decide(store, at('j-r', 0, 0));
          check(await decide(store, at('j-r', 10, 5000)), { reason: 'jump' }, 'a jump');
          await resetWindow(store, 'j-r');
          check(await decide(store, at('j-r', 20, 5100)), { reason: 'first', accepted: 1, suppressed: 0 }, 'after the reset');
          check(await decide(store, at('j-r', 30, 10_000)), { reason: 'jump' }, 'a jump from the new baseline');
          check(await decide(store, at('j-r', 40, 10_100)), { reason: 'relocated' }, 'its second');
        });
      });

      describe('value mode', () => {
        const QUARTER = 15 * 60;
        const VALUE = { mode: 'value' as const, minSeconds: 6 * 3600, deadband: 5 };
        const reading = (id: string, seconds: number, value: number): Ping => read({ assetId: id, seconds, lat: undefined, lon: undefined, value }, { mode: 'value' });

        it('the deadband test: 40, 41, 42, 46, 46 every 15 min, deadband 5, Heartbeat 6 h: admitted, suppressed, suppressed, changed (6 from 40), suppressed', async () => {
          const { store } = await storeWith(VALUE);
          const answers = [];
          for (const [i, v] of [40, 41, 42, 46, 46].entries()) answers.push(await decide(store, reading('bin-A17', i * QUARTER, v)));
          assert.deepEqual(
            answers.map((a) => `${a.reason} ${a.accepted}/${a.suppressed}`),
            ['first 1/0', 'unchanged 1/1', 'unchanged 1/2', 'changed 2/2', 'unchanged 2/3'],
          );
          check(answers[3] as WindowOutcome, { reason: 'changed', admit: true, dtSeconds: 3 * QUARTER, distanceMetres: null, headingChange: null, valueChange: 6 }, 'changed by 6');
        });

        it('the same reading for 6 h 15 min is admitted at 0 and once more at 6 h (elapsed)', async () => {
          const { store } = await storeWith(VALUE);
          const admitted = [];
          for (let i = 0; i <= 25; i++) {
            const outcome = await decide(store, reading('bin-B04', i * QUARTER, 40));
            if (outcome.admit) admitted.push(`${outcome.reason} at ${(i * QUARTER) / 3600} h`);
          }
          assert.deepEqual(admitted, ['first at 0 h', 'elapsed at 6 h']);
        });

        it('a percent deadband, an exact double, late readings and a retried reading', async () => {
          const { store } = await storeWith({ ...VALUE, deadband: 10, deadbandPercent: true });
          check(await decide(store, reading('bin-p', 0, 40)), { reason: 'first' }, '40');
          check(await decide(store, reading('bin-p', 60, 43.9)), { reason: 'unchanged' }, '3.9 < 10 % of 40');
          check(await decide(store, reading('bin-p', 120, 36)), { reason: 'changed', valueChange: -4 }, '4 down');
          check(await decide(store, reading('bin-p', 100, 90)), { reason: 'late', valueChange: null }, 'late');
          check(await decide(store, { ...reading('bin-p', 120, 36), retry: true }), { reason: 'replayed', accepted: 2 }, 'the retried baseline');
          check(await decide(store, { ...reading('bin-p', 120, 36.5), retry: true }), { reason: 'late' }, 'a retry of another reading');
          const { store: exact } = await storeWith({ ...VALUE, deadband: 0 });
          check(await decide(exact, reading('bin-x', 0, 0.1 + 0.2)), { reason: 'first' }, '0.1 + 0.2');
          check(await decide(exact, reading('bin-x', 60, 0.30000000000000004)), { reason: 'unchanged', valueChange: 0 }, 'the very double');
          check(await decide(exact, reading('bin-x', 120, 0.3)), { reason: 'changed' }, '0.3 is another double');
          check(await decide(exact, reading('bin-y', 0, 0)), { reason: 'first' }, '0');
          check(await decide(exact, reading('bin-y', 60, 0)), { reason: 'unchanged', valueChange: 0 }, '0 to 0 is no change');
        });
      });
    });
  });
}
