/**
 * The sliding-window rule for one asset: time OR distance at its heart, and
 * around it the fleet rules (clock guard, events, accuracy, turns) in their
 * fixed order, against the baseline as both stores keep it.
 */
import assert from 'node:assert/strict';
import { eventFingerprint } from '../../../../src/core/window/event-fingerprint';
import { distanceMetres } from '../../../../src/core/window/geo';
import {
  baselineOf,
  decideWindow,
  headingChange,
  MAX_ACCURACY_STEP,
  storedAccuracy,
  storedDegrees,
  storedHeading,
  type Ping,
  type WindowBaseline,
  type WindowRule,
} from '../../../../src/core/window/sliding-window';
import { WINDOW_REASON_BY_CODE, WINDOW_REASONS, type WindowReason } from '../../../../src/core/window/window-reasons';
import { MemoryWindowStore } from '../../../../src/stores/memory-window-store';

const RULE: WindowRule = { minSeconds: 60, minMetres: 25 };
/** The seed's verification constants. */
const BASE_MS = 1_780_000_000 * 1000;
const LAT = 52.5200087;
const LON = 13.4049547;
/** About 1.11 m of latitude per 1e-5 degree. */
const METRE = 1 / 111_195;

const baseline: WindowBaseline = baselineOf({ assetId: 'veh-1', t: BASE_MS, lat: LAT, lon: LON });
const ping = (seconds: number, more: Partial<Ping> = {}): Ping => ({ assetId: 'veh-1', t: BASE_MS + seconds * 1000, lat: LAT, lon: LON, ...more });
/** The host's clock, when it does not matter: the pings' own time. */
const NOW = BASE_MS + 3_600_000;

describe('core/window/window-reasons', () => {
  it('lists the reasons in the order the rule checks them, each with its own one-byte code', () => {
    assert.deepEqual(Object.keys(WINDOW_REASONS), ['ahead', 'first', 'replayed', 'late', 'elapsed', 'event', 'moved', 'turned', 'window']);
    const codes = Object.values(WINDOW_REASONS).map((r) => r.code);
    assert.equal(new Set(codes).size, codes.length);
    for (const code of codes) assert.ok(Number.isInteger(code) && code > 0 && code < 256);
  });

  it('admits on first, replayed, elapsed, event, moved and turned only', () => {
    const admitting = (Object.keys(WINDOW_REASONS) as WindowReason[]).filter((r) => WINDOW_REASONS[r].admit);
    assert.deepEqual(admitting, ['first', 'replayed', 'elapsed', 'event', 'moved', 'turned']);
  });

  it('decodes every code back to its reason, and nothing else', () => {
    for (const reason of Object.keys(WINDOW_REASONS) as WindowReason[]) assert.equal(WINDOW_REASON_BY_CODE[WINDOW_REASONS[reason].code], reason);
    assert.equal(WINDOW_REASON_BY_CODE[0], undefined);
    assert.equal(WINDOW_REASON_BY_CODE.filter((r) => r !== undefined).length, Object.keys(WINDOW_REASONS).length);
  });
});

describe('core/window/sliding-window decideWindow', () => {
  describe('time OR distance', () => {
    it('admits the first ping of an asset', () => {
      assert.deepEqual(decideWindow(undefined, ping(0), RULE, NOW), {
        admit: true,
        reason: 'first',
        dtSeconds: null,
        distanceMetres: null,
        headingChange: null,
      });
    });

    it('suppresses a ping that neither waited nor moved (the boundary pair, 4 s apart)', () => {
      assert.deepEqual(decideWindow(baseline, ping(4), RULE, NOW), {
        admit: false,
        reason: 'window',
        dtSeconds: 4,
        distanceMetres: 0,
        headingChange: null,
      });
    });

    it('admits movement inside the window (distance is an OR)', () => {
      const verdict = decideWindow(baseline, ping(5, { lat: LAT + 0.002 }), RULE, NOW);
      assert.equal(verdict.reason, 'moved');
      assert.equal(verdict.admit, true);
      assert.ok(verdict.distanceMetres !== null && Math.abs(verdict.distanceMetres - 222.39) < 0.01);
    });

    it('admits a parked heartbeat once the time has passed (time is an OR), exactly at the threshold', () => {
      assert.equal(decideWindow(baseline, ping(30), RULE, NOW).reason, 'window');
      assert.equal(decideWindow(baseline, ping(60), RULE, NOW).reason, 'elapsed');
      assert.equal(decideWindow(baseline, { ...ping(0), t: BASE_MS + 59_999 }, RULE, NOW).reason, 'window');
      assert.deepEqual(decideWindow(baseline, ping(61), RULE, NOW), {
        admit: true,
        reason: 'elapsed',
        dtSeconds: 61,
        distanceMetres: 0,
        headingChange: null,
      });
    });

    it('treats a ping at the same instant, or older, as late, and does not measure it', () => {
      assert.deepEqual(decideWindow(baseline, ping(0), RULE, NOW), { admit: false, reason: 'late', dtSeconds: 0, distanceMetres: null, headingChange: null });
      // Late even when far away: an older fix never becomes the baseline.
      assert.deepEqual(decideWindow(baseline, ping(-100, { lat: LAT + 1 }), RULE, NOW), {
        admit: false,
        reason: 'late',
        dtSeconds: -100,
        distanceMetres: null,
        headingChange: null,
      });
    });

    it('admits exactly at the distance threshold and suppresses just below it', () => {
      const to = { lat: LAT + 0.0003, lon: LON + 0.0001 };
      const metres = distanceMetres(LAT, LON, to.lat, to.lon);
      assert.equal(decideWindow(baseline, ping(1, to), { minSeconds: 60, minMetres: metres }, NOW).reason, 'moved');
      assert.equal(decideWindow(baseline, ping(1, to), { minSeconds: 60, minMetres: metres * (1 + 1e-12) }, NOW).reason, 'window');
    });

    it('honours a fraction of a millisecond', () => {
      assert.equal(decideWindow(baseline, { ...ping(0), t: BASE_MS + 0.5 }, RULE, NOW).reason, 'window');
      assert.equal(decideWindow(baseline, { ...ping(0), t: BASE_MS - 0.5 }, RULE, NOW).reason, 'late');
    });

    it('measures across the antimeridian the short way', () => {
      const east = baselineOf({ assetId: 'ship', t: BASE_MS, lat: 0, lon: 179.9999 });
      const verdict = decideWindow(east, { assetId: 'ship', t: BASE_MS + 5000, lat: 0, lon: -179.9999 }, RULE, NOW);
      assert.equal(verdict.reason, 'window', 'a 22 m step must not look like 40 000 km');
      assert.ok(verdict.distanceMetres !== null && Math.abs(verdict.distanceMetres - 22.239) < 0.001);
    });

    it('with zero thresholds admits every newer ping and still refuses late ones', () => {
      const rule = { minSeconds: 0, minMetres: 0 };
      assert.equal(decideWindow(baseline, { ...ping(0), t: BASE_MS + 1 }, rule, NOW).admit, true);
      assert.equal(decideWindow(baseline, ping(0), rule, NOW).reason, 'late');
    });
  });

  describe('turn (minHeadingDegrees)', () => {
    const TURN: WindowRule = { ...RULE, minHeadingDegrees: 2 };

    it('measures the shortest angle: 359 deg to 1 deg is 2 deg, either way round', () => {
      assert.equal(headingChange(359, 1), 2);
      assert.equal(headingChange(1, 359), 2);
      assert.equal(headingChange(0, 360), 0);
      assert.equal(headingChange(90, 270), 180);
      assert.equal(headingChange(10, 200), 170);
      const from359 = baselineOf({ ...ping(0), heading: 359 });
      const verdict = decideWindow(from359, ping(5, { heading: 1 }), TURN, NOW);
      assert.deepEqual(verdict, { admit: true, reason: 'turned', dtSeconds: 5, distanceMetres: 0, headingChange: 2 });
      assert.equal(decideWindow(from359, ping(5, { heading: 1 }), { ...RULE, minHeadingDegrees: 2.01 }, NOW).reason, 'window');
    });

    it('compares only when both pings carry a heading, and is off at 0 or absent', () => {
      const withHeading = baselineOf({ ...ping(0), heading: 0 });
      const without = baselineOf(ping(0));
      assert.deepEqual(
        [decideWindow(without, ping(5, { heading: 90 }), TURN, NOW), decideWindow(withHeading, ping(5), TURN, NOW), decideWindow(withHeading, ping(5, { heading: Number.NaN }), TURN, NOW)].map((v) => [v.reason, v.headingChange]),
        [['window', null], ['window', null], ['window', null]],
      );
      assert.equal(decideWindow(withHeading, ping(5, { heading: 90 }), RULE, NOW).reason, 'window', 'no minHeadingDegrees: off');
      assert.equal(decideWindow(withHeading, ping(5, { heading: 90 }), { ...RULE, minHeadingDegrees: 0 }, NOW).reason, 'window');
      // The change is still reported where both exist, whatever decided.
      assert.equal(decideWindow(withHeading, ping(5, { heading: 90 }), RULE, NOW).headingChange, 90);
    });
  });

  describe('accuracy', () => {
    const MOVE_15 = { lat: LAT + 15 * METRE };
    const ACC_RULE: WindowRule = { minSeconds: 60, minMetres: 10 };

    it('counts a move only beyond both fixes’ accuracies together', () => {
      const accurate = baselineOf({ ...ping(0), accuracy: 5 });
      assert.equal(decideWindow(accurate, ping(5, { ...MOVE_15, accuracy: 5 }), ACC_RULE, NOW).reason, 'moved', '15 m > 5 + 5');
      assert.equal(decideWindow(accurate, ping(5, { ...MOVE_15, accuracy: 11 }), ACC_RULE, NOW).reason, 'window', '15 m is within 5 + 11');
    });

    it('takes a missing accuracy as 0, on either side', () => {
      const unknown = baselineOf(ping(0));
      assert.equal(unknown.accuracy, 0);
      assert.equal(decideWindow(unknown, ping(5, { ...MOVE_15, accuracy: 14 }), ACC_RULE, NOW).reason, 'moved', 'baseline without accuracy');
      assert.equal(decideWindow(unknown, ping(5, { ...MOVE_15, accuracy: 16 }), ACC_RULE, NOW).reason, 'window');
      const known = baselineOf({ ...ping(0), accuracy: 16 });
      assert.equal(decideWindow(known, ping(5, MOVE_15), ACC_RULE, NOW).reason, 'window', 'ping without accuracy');
      assert.equal(decideWindow(known, ping(5, { lat: LAT + 17 * METRE }), ACC_RULE, NOW).reason, 'moved');
      assert.equal(decideWindow(unknown, ping(5, MOVE_15), ACC_RULE, NOW).reason, 'moved', 'neither has one');
    });

    it('still needs minMetres when the accuracies are small', () => {
      const accurate = baselineOf({ ...ping(0), accuracy: 1 });
      assert.equal(decideWindow(accurate, ping(5, { lat: LAT + 8 * METRE, accuracy: 1 }), ACC_RULE, NOW).reason, 'window');
    });
  });

  describe('events', () => {
    it('admits a ping whose watched values changed, as `event`', () => {
      const idle = baselineOf({ ...ping(0), events: eventFingerprint([true]) });
      assert.equal(decideWindow(idle, ping(5, { events: eventFingerprint([true]) }), RULE, NOW).reason, 'window');
      assert.deepEqual(decideWindow(idle, ping(5, { events: eventFingerprint([false]) }), RULE, NOW), {
        admit: true,
        reason: 'event',
        dtSeconds: 5,
        distanceMetres: 0,
        headingChange: null,
      });
    });

    it('admits a property that appears, and one that disappears', () => {
      const without = baselineOf({ ...ping(0), events: eventFingerprint([undefined]) });
      const withAlarm = baselineOf({ ...ping(0), events: eventFingerprint(['alarm']) });
      assert.equal(decideWindow(without, ping(5, { events: eventFingerprint(['alarm']) }), RULE, NOW).reason, 'event', 'appeared');
      assert.equal(decideWindow(withAlarm, ping(5, { events: eventFingerprint([undefined]) }), RULE, NOW).reason, 'event', 'disappeared');
      assert.equal(decideWindow(without, ping(5, { events: eventFingerprint([undefined]) }), RULE, NOW).reason, 'window', 'still absent');
    });

    it('reads no events (nothing watched) as 0, so an unwatched ping never reads as an event', () => {
      assert.equal(baselineOf(ping(0)).events, 0);
      assert.equal(decideWindow(baselineOf(ping(0)), ping(5, { events: 0 }), RULE, NOW).reason, 'window');
    });
  });

  describe('clock guard (maxAheadSeconds)', () => {
    const GUARD: WindowRule = { ...RULE, maxAheadSeconds: 300 };
    const now = BASE_MS;

    it('suppresses a ping more than maxAheadSeconds ahead of the host’s clock, and not one exactly at it', () => {
      const atLimit = { ...ping(0), t: now + 300_000 };
      const justOver = { ...ping(0), t: now + 300_001 };
      assert.equal(decideWindow(undefined, atLimit, GUARD, now).reason, 'first');
      assert.deepEqual(decideWindow(undefined, justOver, GUARD, now), { admit: false, reason: 'ahead', dtSeconds: null, distanceMetres: null, headingChange: null });
      const earlier = baselineOf({ ...ping(0), t: now - 120_000 });
      assert.equal(decideWindow(earlier, atLimit, GUARD, now).reason, 'elapsed');
      const ahead = decideWindow(earlier, justOver, GUARD, now);
      assert.equal(ahead.reason, 'ahead');
      assert.equal(ahead.dtSeconds, 420.001);
    });

    it('never sets a first baseline: the next genuine ping is still the first', () => {
      const store = new MemoryWindowStore({ ...GUARD, ttlSeconds: 3600, maxAssets: 10 }, () => now);
      assert.equal(store.decideNow({ ...ping(0), t: Date.UTC(2099, 0, 1) }).reason, 'ahead');
      assert.equal(store.size, 0);
      assert.equal(store.decideNow({ ...ping(0), t: now - 1000 }).reason, 'first');
      assert.equal(store.decideNow({ ...ping(0), t: Date.UTC(2099, 0, 1) }).reason, 'ahead', 'nor replaces one');
      assert.equal(store.decideNow({ ...ping(0), t: now }).reason, 'window');
    });

    it('is off when maxAheadSeconds is absent', () => {
      assert.equal(decideWindow(undefined, { ...ping(0), t: Date.UTC(2099, 0, 1) }, RULE, now).reason, 'first');
    });
  });

  describe('the order of the reasons (the first that applies wins)', () => {
    const ALL: WindowRule = { minSeconds: 60, minMetres: 25, minHeadingDegrees: 10, maxAheadSeconds: 300 };
    const start = baselineOf({ ...ping(0), heading: 0, events: eventFingerprint(['idle']) });
    const everything = (seconds: number): Ping => ping(seconds, { lat: LAT + 0.01, heading: 90, events: eventFingerprint(['alarm']) });

    it('ahead before first, late and everything else', () => {
      assert.equal(decideWindow(undefined, everything(10_000), ALL, BASE_MS).reason, 'ahead');
      assert.equal(decideWindow(start, everything(10_000), ALL, BASE_MS).reason, 'ahead');
      assert.equal(decideWindow(start, { ...everything(10_000), retry: true }, ALL, BASE_MS).reason, 'ahead');
    });

    it('first before replayed', () => {
      assert.equal(decideWindow(undefined, { ...ping(0), retry: true }, ALL, NOW).reason, 'first');
    });

    it('replayed before late (a retried baseline has dt 0)', () => {
      assert.equal(decideWindow(start, { ...ping(0), heading: 0, events: eventFingerprint(['idle']), retry: true }, ALL, NOW).reason, 'replayed');
    });

    it('late before elapsed, event, moved and turned', () => {
      assert.equal(decideWindow(start, everything(-1), ALL, NOW).reason, 'late');
    });

    it('then elapsed, event, moved, turned, each before the next', () => {
      assert.equal(decideWindow(start, everything(61), ALL, NOW).reason, 'elapsed');
      assert.equal(decideWindow(start, everything(5), ALL, NOW).reason, 'event');
      assert.equal(decideWindow(start, ping(5, { lat: LAT + 0.01, heading: 90, events: start.events }), ALL, NOW).reason, 'moved');
      assert.equal(decideWindow(start, ping(5, { heading: 90, events: start.events }), ALL, NOW).reason, 'turned');
      assert.equal(decideWindow(start, ping(5, { heading: 5, events: start.events }), ALL, NOW).reason, 'window');
    });

    it('reports the distance and the turn with every reason that measured them', () => {
      const verdict = decideWindow(start, everything(5), ALL, NOW);
      assert.ok((verdict.distanceMetres as number) > 1000);
      assert.equal(verdict.headingChange, 90);
    });
  });

  describe('a retried message (`retry`) and `replayed`', () => {
    it('admits a retry again when the baseline is exactly what it wrote, at the stored precision', () => {
      const precise = { lat: 52.520008749, lon: 13.404954749 };
      const written = baselineOf(ping(0, precise));
      assert.deepEqual(decideWindow(written, { ...ping(0, precise), retry: true }, RULE, NOW), {
        admit: true,
        reason: 'replayed',
        dtSeconds: null,
        distanceMetres: null,
        headingChange: null,
      });
    });

    it('decides a retry as any other ping when the baseline is another ping', () => {
      const written = baselineOf(ping(0));
      assert.equal(decideWindow(written, { ...ping(4), retry: true }, RULE, NOW).reason, 'window');
      assert.equal(decideWindow(written, { ...ping(0, { lat: LAT + 1e-6 }), retry: true }, RULE, NOW).reason, 'late');
      const withEvents = baselineOf({ ...ping(0), events: 7 });
      assert.equal(decideWindow(withEvents, { ...ping(0), events: 8, retry: true }, RULE, NOW).reason, 'late');
    });

    it('never admits the same ping twice without the retry mark', () => {
      assert.equal(decideWindow(baselineOf(ping(0)), ping(0), RULE, NOW).reason, 'late');
      assert.equal(decideWindow(baselineOf(ping(0)), { ...ping(0), retry: false }, RULE, NOW).reason, 'late');
    });
  });
});

describe('core/window/sliding-window baselineOf (the precision both stores keep)', () => {
  it('keeps the time exactly and the position to 1e-7 degrees, rounded half up', () => {
    const b = baselineOf({ assetId: 'a', t: BASE_MS + 0.25, lat: 52.52000874999, lon: -13.40495475 });
    assert.equal(b.t, BASE_MS + 0.25);
    assert.equal(b.lat, 52.5200087);
    assert.equal(b.lon, -13.4049547);
    assert.equal(storedDegrees(0.00000005), 0.0000001);
    assert.equal(storedDegrees(-0.00000005), 0);
    assert.equal(storedDegrees(90), 90);
    assert.equal(storedDegrees(-180), -180);
  });

  it('keeps a heading to 0.01 degrees, 360 as 0, and none as NaN', () => {
    assert.equal(storedHeading(123.456), 123.46);
    assert.equal(storedHeading(360), 0);
    assert.equal(storedHeading(359.996), 0);
    assert.equal(storedHeading(359.994), 359.99);
    assert.ok(Number.isNaN(storedHeading(undefined)));
    assert.ok(Number.isNaN(storedHeading(Number.NaN)));
    assert.ok(Number.isNaN(baselineOf(ping(0)).heading));
  });

  it('keeps an accuracy to 0.1 m, unknown or negative as 0, capped at what a record holds', () => {
    assert.equal(storedAccuracy(4.26), 4.3);
    assert.equal(storedAccuracy(undefined), 0);
    assert.equal(storedAccuracy(0), 0);
    assert.equal(storedAccuracy(-3), 0);
    assert.equal(storedAccuracy(Number.NaN), 0);
    assert.equal(storedAccuracy(1e9), MAX_ACCURACY_STEP / 10);
  });

  it('keeps the events fingerprint as it is, 0 when none', () => {
    assert.equal(baselineOf({ ...ping(0), events: 2 ** 48 - 1 }).events, 2 ** 48 - 1);
    assert.equal(baselineOf(ping(0)).events, 0);
  });

  it('is idempotent: a stored baseline stored again is unchanged', () => {
    const once = baselineOf({ assetId: 'a', t: BASE_MS, lat: 52.123456789, lon: 13.987654321, heading: 271.239, accuracy: 7.77, events: 99 });
    const twice = baselineOf({ assetId: 'a', ...once });
    assert.deepEqual(twice, once);
  });
});
