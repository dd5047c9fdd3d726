import assert from 'node:assert/strict';
import { distanceMetres } from '../../src/core/geo';
import { decideWindow, type Ping, type WindowBaseline } from '../../src/core/sliding-window';

const RULE = { minSeconds: 60, minMetres: 25 };
/** The seed's verification constants. */
const BASE_MS = 1_780_000_000 * 1000;
const LAT = 52.5200087;
const LON = 13.4049547;

const baseline: WindowBaseline = { t: BASE_MS, lat: LAT, lon: LON };
const ping = (seconds: number, lat = LAT, lon = LON): Ping => ({ assetId: 'veh-1', t: BASE_MS + seconds * 1000, lat, lon });

describe('core/sliding-window decideWindow', () => {
  it('admits the first ping of an asset', () => {
    assert.deepEqual(decideWindow(undefined, ping(0), RULE), {
      admit: true,
      reason: 'first',
      dtSeconds: null,
      distanceMetres: null,
    });
  });

  it('suppresses a ping that neither waited nor moved (the boundary pair, 4 s apart)', () => {
    assert.deepEqual(decideWindow(baseline, ping(4), RULE), {
      admit: false,
      reason: 'window',
      dtSeconds: 4,
      distanceMetres: 0,
    });
  });

  it('admits movement inside the window (distance is an OR)', () => {
    const verdict = decideWindow(baseline, ping(5, LAT + 0.002), RULE);
    assert.equal(verdict.admit, true);
    assert.equal(verdict.reason, 'moved');
    assert.ok(verdict.distanceMetres !== null && Math.abs(verdict.distanceMetres - 222.39) < 0.01);
  });

  it('admits a parked heartbeat once the time has passed (time is an OR)', () => {
    assert.equal(decideWindow(baseline, ping(30), RULE).reason, 'window');
    const verdict = decideWindow(baseline, ping(61), RULE);
    assert.deepEqual(verdict, { admit: true, reason: 'elapsed', dtSeconds: 61, distanceMetres: 0 });
  });

  it('prefers "elapsed" when both time and distance are past their thresholds', () => {
    assert.equal(decideWindow(baseline, ping(120, LAT + 1), RULE).reason, 'elapsed');
  });

  it('treats a ping at the same instant, or older, as late and does not measure it', () => {
    assert.deepEqual(decideWindow(baseline, ping(0), RULE), {
      admit: false,
      reason: 'late',
      dtSeconds: 0,
      distanceMetres: null,
    });
    // Late even when far away: an older fix never becomes the baseline.
    assert.deepEqual(decideWindow(baseline, ping(-100, LAT + 1), RULE), {
      admit: false,
      reason: 'late',
      dtSeconds: -100,
      distanceMetres: null,
    });
  });

  it('admits exactly at the time threshold and suppresses a millisecond before it', () => {
    assert.equal(decideWindow(baseline, ping(60), RULE).reason, 'elapsed');
    assert.equal(decideWindow(baseline, { ...ping(0), t: BASE_MS + 59_999 }, RULE).reason, 'window');
  });

  it('admits exactly at the distance threshold and suppresses just below it', () => {
    const to = { lat: LAT + 0.0003, lon: LON + 0.0001 };
    const metres = distanceMetres(LAT, LON, to.lat, to.lon);
    const atThreshold = decideWindow(baseline, ping(1, to.lat, to.lon), { minSeconds: 60, minMetres: metres });
    assert.equal(atThreshold.reason, 'moved');
    const thresholdAbove = decideWindow(baseline, ping(1, to.lat, to.lon), { minSeconds: 60, minMetres: metres * (1 + 1e-12) });
    assert.equal(thresholdAbove.reason, 'window');
  });

  it('honours a fraction of a millisecond', () => {
    assert.equal(decideWindow(baseline, { ...ping(0), t: BASE_MS + 0.5 }, RULE).reason, 'window');
    assert.equal(decideWindow(baseline, { ...ping(0), t: BASE_MS - 0.5 }, RULE).reason, 'late');
  });

  it('measures across the antimeridian the short way', () => {
    const east: WindowBaseline = { t: BASE_MS, lat: 0, lon: 179.9999 };
    const verdict = decideWindow(east, { assetId: 'ship', t: BASE_MS + 5000, lat: 0, lon: -179.9999 }, RULE);
    assert.equal(verdict.reason, 'window', 'a 22 m step must not look like 40 000 km');
    assert.ok(verdict.distanceMetres !== null && Math.abs(verdict.distanceMetres - 22.239) < 0.001);
  });

  it('with zero thresholds admits every newer ping and still refuses late ones', () => {
    const rule = { minSeconds: 0, minMetres: 0 };
    assert.equal(decideWindow(baseline, { ...ping(0), t: BASE_MS + 1 }, rule).admit, true);
    assert.equal(decideWindow(baseline, ping(0), rule).reason, 'late');
  });
});
