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
  type JumpCandidate,
  type Ping,
  type WindowBaseline,
  type WindowRule,
  type WindowVerdict,
} from '../../../../src/core/window/sliding-window';
import { NO_FIX, POOR_FIX } from '../../../../src/core/window/fix-quality';
import { REASON_ORDER, WINDOW_REASON_BY_CODE, WINDOW_REASONS, type WindowReason } from '../../../../src/core/window/window-reasons';
import { MemoryWindowStore } from '../../../../src/stores/memory-window-store';

const RULE: WindowRule = { minSeconds: 60, minMetres: 25 };
/** The seed's verification constants. */
const BASE_MS = 1_780_000_000 * 1000;
const LAT = 52.5200087;
const LON = 13.4049547;
/** About 1.11 m of latitude per 1e-5 degree. */
const METRE = 1 / 111_195;
/** Metres north, as degrees of latitude (a meridian degree of the haversine sphere). */
const north = (metres: number): number => metres / ((6_371_008.8 * Math.PI) / 180);

const baseline: WindowBaseline = baselineOf({ assetId: 'veh-1', t: BASE_MS, lat: LAT, lon: LON });
const ping = (seconds: number, more: Partial<Ping> = {}): Ping => ({ assetId: 'veh-1', t: BASE_MS + seconds * 1000, lat: LAT, lon: LON, ...more });
/** The host's clock, when it does not matter: the pings' own time. */
const NOW = BASE_MS + 3_600_000;

describe('core/window/window-reasons', () => {
  it('keeps the codes it gave (they travel in Redis replies and index the metrics) and appends new ones, each its own byte', () => {
    assert.deepEqual(
      Object.entries(WINDOW_REASONS).map(([reason, { code }]) => [reason, code]),
      [
        ['ahead', 1],
        ['first', 2],
        ['replayed', 3],
        ['late', 4],
        ['elapsed', 5],
        ['event', 6],
        ['moved', 7],
        ['turned', 8],
        ['window', 9],
        ['no-fix', 10],
        ['poor-fix', 11],
        ['jump', 12],
        ['relocated', 13],
        ['changed', 14],
        ['unchanged', 15],
      ],
    );
    const codes = Object.values(WINDOW_REASONS).map((r) => r.code);
    assert.equal(new Set(codes).size, codes.length);
    for (const code of codes) assert.ok(Number.isInteger(code) && code > 0 && code < 256);
  });

  it('writes down the order of checking for each mode, every reason in one of them', () => {
    assert.deepEqual(REASON_ORDER.position, ['ahead', 'no-fix', 'poor-fix', 'first', 'replayed', 'late', 'jump', 'relocated', 'elapsed', 'event', 'moved', 'turned', 'window']);
    assert.deepEqual(REASON_ORDER.value, ['ahead', 'first', 'replayed', 'late', 'elapsed', 'event', 'changed', 'unchanged']);
    assert.deepEqual(new Set([...REASON_ORDER.position, ...REASON_ORDER.value]), new Set(Object.keys(WINDOW_REASONS)));
  });

  it('admits on first, replayed, elapsed, event, moved, turned, relocated and changed only', () => {
    const admitting = (Object.keys(WINDOW_REASONS) as WindowReason[]).filter((r) => WINDOW_REASONS[r].admit);
    assert.deepEqual(admitting, ['first', 'replayed', 'elapsed', 'event', 'moved', 'turned', 'relocated', 'changed']);
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
        valueChange: null,
      });
    });

    it('suppresses a ping that neither waited nor moved (the boundary pair, 4 s apart)', () => {
      assert.deepEqual(decideWindow(baseline, ping(4), RULE, NOW), {
        admit: false,
        reason: 'window',
        dtSeconds: 4,
        distanceMetres: 0,
        headingChange: null,
        valueChange: null,
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
        valueChange: null,
      });
    });

    it('treats a ping at the same instant, or older, as late, and does not measure it', () => {
      assert.deepEqual(decideWindow(baseline, ping(0), RULE, NOW), { admit: false, reason: 'late', dtSeconds: 0, distanceMetres: null, headingChange: null, valueChange: null });
      // Late even when far away: an older fix never becomes the baseline.
      assert.deepEqual(decideWindow(baseline, ping(-100, { lat: LAT + 1 }), RULE, NOW), {
        admit: false,
        reason: 'late',
        dtSeconds: -100,
        distanceMetres: null,
        headingChange: null,
        valueChange: null,
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
      assert.deepEqual(verdict, { admit: true, reason: 'turned', dtSeconds: 5, distanceMetres: 0, headingChange: 2, valueChange: null });
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
        valueChange: null,
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
      assert.deepEqual(decideWindow(undefined, justOver, GUARD, now), { admit: false, reason: 'ahead', dtSeconds: null, distanceMetres: null, headingChange: null, valueChange: null });
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
        valueChange: null,
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

/** A store's loop in a few lines: each ping decided against the last admitted one, with the asset's jump candidate. */
function chain(rule: WindowRule, pings: readonly Ping[], nowMs = NOW): { verdicts: WindowVerdict[]; candidate: JumpCandidate; baseline: WindowBaseline | undefined } {
  let last: WindowBaseline | undefined;
  const candidate: JumpCandidate = { t: 0, lat: 0, lon: 0, count: 0 };
  const verdicts = pings.map((p) => {
    const v = decideWindow(last, p, rule, nowMs, candidate);
    if (v.admit && v.reason !== 'replayed') last = baselineOf(p);
    return v;
  });
  return { verdicts, candidate, baseline: last };
}

const reasonsOf = (verdicts: readonly WindowVerdict[]): string[] => verdicts.map((v) => v.reason);

describe('core/window/sliding-window: the fix quality (issue 29)', () => {
  const noFix = (seconds: number, more: Partial<Ping> = {}): Ping => ping(seconds, { lat: 0, lon: 0, fix: NO_FIX, ...more });

  it('suppresses a ping read as no fix as `no-fix`, and it never becomes the baseline: fix, 0,0, the same fix 20 s later', () => {
    const { verdicts } = chain(RULE, [ping(0), noFix(10), ping(20)]);
    assert.deepEqual(reasonsOf(verdicts), ['first', 'no-fix', 'window']);
    assert.deepEqual(verdicts[1], { admit: false, reason: 'no-fix', dtSeconds: 10, distanceMetres: null, headingChange: null, valueChange: null });
    assert.equal(verdicts[2]?.distanceMetres, 0, 'judged against the real baseline');
  });

  it('sets no first baseline either: 0,0 before the first fix is no-fix, and the first fix is first', () => {
    assert.deepEqual(reasonsOf(chain(RULE, [noFix(0), noFix(5), ping(10), ping(15)]).verdicts), ['no-fix', 'no-fix', 'first', 'window']);
    assert.deepEqual(decideWindow(undefined, noFix(0), RULE, NOW), { admit: false, reason: 'no-fix', dtSeconds: null, distanceMetres: null, headingChange: null, valueChange: null });
  });

  it('suppresses a poor fix as `poor-fix`, never the baseline', () => {
    const poor = ping(70, { lat: LAT + 0.01, fix: POOR_FIX });
    assert.deepEqual(reasonsOf(chain(RULE, [ping(0), poor, ping(75)]).verdicts), ['first', 'poor-fix', 'elapsed']);
    assert.equal(decideWindow(undefined, poor, RULE, NOW).reason, 'poor-fix');
  });

  it('checks ahead, then no-fix and poor-fix, before first, replayed, late and everything else', () => {
    const guard: WindowRule = { ...RULE, maxAheadSeconds: 300 };
    assert.equal(decideWindow(undefined, { ...noFix(0), t: NOW + 301_000 }, guard, NOW).reason, 'ahead');
    assert.equal(decideWindow(baseline, noFix(-10), RULE, NOW).reason, 'no-fix', 'before late');
    assert.equal(decideWindow(baseline, { ...ping(0), fix: POOR_FIX, retry: true }, RULE, NOW).reason, 'poor-fix', 'before replayed');
    assert.equal(decideWindow(baseline, ping(61, { fix: POOR_FIX }), RULE, NOW).reason, 'poor-fix', 'before elapsed');
  });

  it('is not a rule of value mode: a reading has no fix', () => {
    const rule: WindowRule = { ...RULE, mode: 'value' };
    assert.equal(decideWindow(undefined, { ...noFix(0), value: 5 }, rule, NOW).reason, 'first');
  });
});

describe('core/window/sliding-window: the jump guard (issue 29)', () => {
  /** Max speed 150 km/h, Heartbeat 60 s (so a silence of more than 600 s relocates), Movement 25 m. */
  const JUMP: WindowRule = { minSeconds: 60, minMetres: 25, maxSpeedKmh: 150 };
  const at = (seconds: number, metresNorth: number, more: Partial<Ping> = {}): Ping => ping(seconds, { lat: LAT + metresNorth * METRE, ...more });

  it('is off unless maxSpeedKmh is more than 0: a move at any speed is `moved`', () => {
    for (const rule of [RULE, { ...RULE, maxSpeedKmh: 0 }]) assert.deepEqual(reasonsOf(chain(rule, [at(0, 0), at(10, 5000)]).verdicts), ['first', 'moved']);
  });

  it('suppresses a move faster than maxSpeedKmh as `jump`, never the baseline, and makes it the candidate', () => {
    // 5 km in 10 s: 1800 km/h.
    const { verdicts, candidate, baseline: kept } = chain(JUMP, [at(0, 0), at(10, 5000), at(20, 10)]);
    assert.deepEqual(reasonsOf(verdicts), ['first', 'jump', 'window']);
    const jump = verdicts[1] as WindowVerdict;
    assert.equal(jump.admit, false);
    assert.equal(jump.dtSeconds, 10);
    assert.ok(Math.abs((jump.distanceMetres as number) - 5000) < 1);
    assert.equal(kept?.t, BASE_MS, 'the baseline is still the first ping');
    assert.equal(candidate.count, 0, 'a ping judged and not a jump clears the candidate');
  });

  it('keeps the candidate at the stored precision, with its count', () => {
    const candidate: JumpCandidate = { t: 0, lat: 0, lon: 0, count: 0 };
    const far = at(10, 5000, { lon: LON + 0.000000049 });
    assert.equal(decideWindow(baseline, far, JUMP, NOW, candidate).reason, 'jump');
    assert.deepEqual(candidate, { t: far.t, lat: storedDegrees(far.lat), lon: storedDegrees(far.lon), count: 1 });
  });

  it('judges the speed strictly: exactly maxSpeedKmh is not a jump', () => {
    // 150 km/h for 12 s is 500 m.
    const exactly = ping(12, { lat: LAT + north(500) });
    const verdict = decideWindow(baseline, exactly, JUMP, NOW);
    const speed = ((verdict.distanceMetres as number) / 12) * 3.6;
    assert.equal(verdict.reason, speed > 150 ? 'jump' : 'moved', `${speed} km/h`);
    assert.equal(decideWindow(baseline, exactly, { ...JUMP, maxSpeedKmh: speed }, NOW).reason, 'moved', 'at the limit');
    assert.equal(decideWindow(baseline, exactly, { ...JUMP, maxSpeedKmh: speed * (1 - 1e-9) }, NOW).reason, 'jump', 'a hair over it');
  });

  it('never calls jitter a jump: a move under Movement, or within both fixes\' accuracies, locks nothing however fast', () => {
    // 20 m in 0.1 s is 720 km/h, but under Movement.
    assert.equal(decideWindow(baseline, { ...at(0, 20), t: BASE_MS + 100 }, JUMP, NOW).reason, 'window');
    // 40 m in 0.2 s, with 25 m and 20 m accuracies: inside the jitter.
    const accurate = baselineOf({ ...ping(0), accuracy: 25 });
    assert.equal(decideWindow(accurate, { ...at(0, 40, { accuracy: 20 }), t: BASE_MS + 200 }, JUMP, NOW).reason, 'window');
    assert.equal(decideWindow(accurate, { ...at(0, 50, { accuracy: 20 }), t: BASE_MS + 200 }, JUMP, NOW).reason, 'jump', 'beyond both accuracies');
  });

  it('relocates the asset after relocateAfterPings (3) jumps that agree with each other: jump, jump, relocated', () => {
    // Driven 5 km north while the first fixes were bad: each ping 10 s and 150 m after the last, 54 km/h.
    const pings = [at(0, 0), at(10, 5000), at(20, 5150), at(30, 5300), at(40, 5450), at(50, 5600)];
    const { verdicts, candidate, baseline: kept } = chain(JUMP, pings);
    assert.deepEqual(reasonsOf(verdicts), ['first', 'jump', 'jump', 'relocated', 'moved', 'moved']);
    const relocated = verdicts[3] as WindowVerdict;
    assert.equal(relocated.admit, true);
    assert.ok(Math.abs((relocated.distanceMetres as number) - 5300) < 1, 'measured from the old baseline');
    assert.equal(candidate.count, 0, 'cleared by the relocation');
    assert.equal(kept?.t, (pings[5] as Ping).t, 'what follows is decided against the new position');
  });

  it('counts only jumps that agree: one that disagrees with the candidate starts a count of its own', () => {
    // 5 km north, then 5 km south 10 s later (10 km from the candidate: 3600 km/h), then north again.
    const { verdicts, candidate } = chain(JUMP, [at(0, 0), at(10, 5000), at(20, -5000), at(30, 5000), at(40, 5100)]);
    assert.deepEqual(reasonsOf(verdicts), ['first', 'jump', 'jump', 'jump', 'jump']);
    assert.equal(candidate.count, 2, 'the last two agree');
  });

  it('starts over after a ping that is no jump, and takes a jump older than the candidate as a count of 1', () => {
    const again = chain(JUMP, [at(0, 0), at(10, 5000), at(20, 20), at(30, 5000), at(40, 5100)]);
    assert.deepEqual(reasonsOf(again.verdicts), ['first', 'jump', 'window', 'jump', 'jump']);
    assert.equal(again.candidate.count, 2);
    const older = chain(JUMP, [at(0, 0), at(20, 5000), at(15, 5010)]);
    assert.deepEqual(reasonsOf(older.verdicts), ['first', 'jump', 'jump']);
    assert.equal(older.candidate.count, 1, 'not newer than the candidate: no agreement');
    assert.equal(older.candidate.t, BASE_MS + 15_000);
  });

  it('never judges a late ping by speed, and a late ping leaves the candidate as it is; so do ahead, no-fix and poor-fix', () => {
    const rule: WindowRule = { ...JUMP, maxAheadSeconds: 300 };
    const pings: Ping[] = [at(100, 0), at(110, 5000), at(50, 90_000), at(115, 5000, { fix: NO_FIX }), at(116, 5000, { fix: POOR_FIX }), { ...at(117, 5000), t: NOW + 400_000 }, at(120, 5100), at(130, 5200)];
    const { verdicts } = chain(rule, pings);
    assert.deepEqual(reasonsOf(verdicts), ['first', 'jump', 'late', 'no-fix', 'poor-fix', 'ahead', 'jump', 'relocated']);
  });

  it('relocates without judging the speed after a silence of more than relocateAfterSeconds (default ten Heartbeats)', () => {
    // Silent for 20 min, back 500 km away: 1500 km/h, yet the asset was carried (a ferry, a lorry, a repair).
    assert.deepEqual(reasonsOf(chain(JUMP, [at(0, 0), at(1200, 500_000)]).verdicts), ['first', 'relocated']);
    // 600 s is not more than 600 s: judged, and 500 km in 10 min is a jump.
    assert.deepEqual(reasonsOf(chain(JUMP, [at(0, 0), at(600, 500_000)]).verdicts), ['first', 'jump']);
    assert.deepEqual(reasonsOf(chain({ ...JUMP, relocateAfterSeconds: 300 }, [at(0, 0), at(301, 500_000)]).verdicts), ['first', 'relocated']);
    // Back at the same place after the silence: the ordinary rules.
    assert.deepEqual(reasonsOf(chain(JUMP, [at(0, 0), at(1200, 10)]).verdicts), ['first', 'elapsed']);
  });

  it('the Traccar lock-out case: silent 2 h, back 50 km away at 150 km/h max: the first ping back is `relocated`, the rest decided from there', () => {
    const back = 2 * 3600;
    const { verdicts } = chain(JUMP, [at(0, 0), at(back, 50_000), at(back + 10, 50_020), at(back + 20, 50_100), at(back + 30, 51_100)]);
    assert.deepEqual(reasonsOf(verdicts), ['first', 'relocated', 'window', 'moved', 'jump']);
  });

  it('relocates on the first jump when relocateAfterPings is 1', () => {
    assert.deepEqual(reasonsOf(chain({ ...JUMP, relocateAfterPings: 1 }, [at(0, 0), at(10, 5000)]).verdicts), ['first', 'relocated']);
  });

  it('checks the jump before elapsed, event, moved and turned', () => {
    const start = baselineOf({ ...ping(0), heading: 0, events: eventFingerprint(['idle']) });
    // 61 s and 5 km: past the Heartbeat, but at 295 km/h.
    assert.equal(decideWindow(start, at(61, 5000, { heading: 90, events: eventFingerprint(['alarm']) }), { ...JUMP, minHeadingDegrees: 10 }, NOW).reason, 'jump');
  });

  it('works without a candidate to keep (a caller that keeps none): every jump is the first', () => {
    assert.equal(decideWindow(baseline, at(10, 5000), JUMP, NOW).reason, 'jump');
    assert.equal(decideWindow(baseline, at(10, 5000), JUMP, NOW).reason, 'jump');
  });
});

describe('core/window/sliding-window: value mode (issue 29)', () => {
  const QUARTER = 15 * 60;
  const HOURS_6 = 6 * 3600;
  const VALUE: WindowRule = { minSeconds: HOURS_6, minMetres: 25, mode: 'value', deadband: 5 };
  const reading = (seconds: number, value: number, more: Partial<Ping> = {}): Ping => ({ assetId: 'bin-A17', t: BASE_MS + seconds * 1000, lat: 0, lon: 0, value, ...more });

  it('the deadband test: 40, 41, 42, 46, 46 every 15 min, deadband 5, Heartbeat 6 h: first, unchanged, unchanged, changed (6 from 40), unchanged', () => {
    const { verdicts } = chain(VALUE, [40, 41, 42, 46, 46].map((v, i) => reading(i * QUARTER, v)));
    assert.deepEqual(reasonsOf(verdicts), ['first', 'unchanged', 'unchanged', 'changed', 'unchanged']);
    assert.deepEqual(verdicts.map((v) => v.admit), [true, false, false, true, false]);
    assert.deepEqual(verdicts[3], { admit: true, reason: 'changed', dtSeconds: 3 * QUARTER, distanceMetres: null, headingChange: null, valueChange: 6 });
    assert.equal(verdicts[4]?.valueChange, 0, 'measured from the new baseline, 46');
  });

  it('the same series with no change for 6 h 15 min is admitted at 0 and once more at 6 h (`elapsed`)', () => {
    const pings = Array.from({ length: 26 }, (_, i) => reading(i * QUARTER, 40));
    const { verdicts } = chain(VALUE, pings);
    const admitted = verdicts.flatMap((v, i) => (v.admit ? [[i * QUARTER, v.reason]] : []));
    assert.deepEqual(admitted, [
      [0, 'first'],
      [HOURS_6, 'elapsed'],
    ]);
  });

  it('counts a change either way, exactly at the deadband, and never 0 to 0, even with a deadband of 0', () => {
    assert.deepEqual(reasonsOf(chain(VALUE, [reading(0, 40), reading(60, 35), reading(120, 39.9)]).verdicts), ['first', 'changed', 'unchanged']);
    assert.equal(decideWindow(baselineOf(reading(0, 40)), reading(60, 34), VALUE, NOW).valueChange, -6);
    const any: WindowRule = { ...VALUE, deadband: 0 };
    assert.deepEqual(reasonsOf(chain(any, [reading(0, 0), reading(60, 0), reading(120, 0.001), reading(180, 0.001)]).verdicts), ['first', 'unchanged', 'changed', 'unchanged']);
    assert.equal(decideWindow(baselineOf(reading(0, 7)), reading(60, 7), { ...VALUE, deadband: undefined }, NOW).reason, 'unchanged', 'no deadband: any change, and this is none');
  });

  it('takes a percent deadband of the last admitted value: 10 % of 40 is 4', () => {
    const percent: WindowRule = { ...VALUE, deadband: 10, deadbandPercent: true };
    assert.deepEqual(reasonsOf(chain(percent, [reading(0, 40), reading(60, 43.9), reading(120, 44), reading(180, 48)]).verdicts), ['first', 'unchanged', 'changed', 'unchanged']);
    assert.equal(decideWindow(baselineOf(reading(0, -40)), reading(60, -44), percent, NOW).reason, 'changed', 'of the absolute value');
    // From 0, every change that is one counts (10 % of 0 is 0), and 0 to 0 still does not.
    assert.deepEqual(reasonsOf(chain(percent, [reading(0, 0), reading(60, 0), reading(120, 0.5)]).verdicts), ['first', 'unchanged', 'changed']);
  });

  it('keeps the value exactly, as the baseline', () => {
    const b = baselineOf(reading(0, 0.1 + 0.2));
    assert.equal(b.value, 0.1 + 0.2);
    assert.equal(decideWindow(b, reading(60, 0.3), { ...VALUE, deadband: 0 }, NOW).reason, 'changed', '0.3 is not 0.1 + 0.2');
  });

  it('checks ahead, first, replayed, late, elapsed, event, changed, unchanged in that order', () => {
    const rule: WindowRule = { ...VALUE, maxAheadSeconds: 300 };
    const idle = baselineOf(reading(0, 40, { events: 1 }));
    // The host's clock 7 h after the baseline, so that 6 h after it is not ahead.
    const NOW = BASE_MS + 7 * 3_600_000;
    assert.equal(decideWindow(undefined, reading(0, 40, { t: NOW + 301_000 }), rule, NOW).reason, 'ahead');
    assert.equal(decideWindow(undefined, reading(0, 40, { retry: true }), rule, NOW).reason, 'first');
    assert.equal(decideWindow(idle, reading(0, 40, { events: 1, retry: true }), rule, NOW).reason, 'replayed');
    assert.equal(decideWindow(idle, reading(0, 41, { events: 1, retry: true }), rule, NOW).reason, 'late', 'another value: not the baseline');
    assert.equal(decideWindow(idle, reading(-60, 90, { events: 2 }), rule, NOW).reason, 'late');
    assert.equal(decideWindow(idle, reading(HOURS_6, 90, { events: 2 }), rule, NOW).reason, 'elapsed');
    assert.equal(decideWindow(idle, reading(60, 90, { events: 2 }), rule, NOW).reason, 'event');
    assert.equal(decideWindow(idle, reading(60, 90, { events: 1 }), rule, NOW).reason, 'changed');
    assert.equal(decideWindow(idle, reading(60, 41, { events: 1 }), rule, NOW).reason, 'unchanged');
  });

  it('has no jump guard and no fix: a reading is judged by its value and time alone', () => {
    const rule: WindowRule = { ...VALUE, maxSpeedKmh: 1, noFix: true, minSatellites: 9 };
    assert.deepEqual(reasonsOf(chain(rule, [reading(0, 40, { fix: NO_FIX }), reading(1, 90, { lat: 50, fix: POOR_FIX })]).verdicts), ['first', 'changed']);
  });

  it('takes a baseline without a value (written in position mode before the mode changed) as no reading: the next one is a change', () => {
    assert.equal(decideWindow(baselineOf(ping(0)), reading(60, 40), VALUE, NOW).reason, 'changed');
  });
});
