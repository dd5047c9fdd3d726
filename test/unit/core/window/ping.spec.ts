/**
 * Reading one ping's raw values into the shape the rule decides on, or into
 * a rejection naming the field, its value and what is wrong with it.
 */
import assert from 'node:assert/strict';
import { eventFingerprint } from '../../../../src/core/window/event-fingerprint';
import { FIX_OK, NO_FIX, POOR_FIX } from '../../../../src/core/window/fix-quality';
import { readPing, type PingReadRule, type RawPing } from '../../../../src/core/window/ping';

const base: RawPing = { assetId: 'veh-1', time: 1_780_000_000, lat: 52.52, lon: 13.4 };

function rejectedField(raw: RawPing): string {
  const read = readPing(raw);
  assert.equal(read.ok, false, JSON.stringify(raw));
  return read.ok ? '' : read.field;
}

describe('core/window/ping readPing', () => {
  it('accepts latitudes in [-90, 90] and longitudes in [-180, 180] only', () => {
    for (const lat of [-90, -0, 0, 45.5, 90]) assert.equal(readPing({ ...base, lat }).ok, true, String(lat));
    for (const lat of [-90.0001, 90.0001, NaN, Infinity, -Infinity]) assert.equal(rejectedField({ ...base, lat }), 'lat');
    for (const lon of [-180, 0, 179.9999, 180]) assert.equal(readPing({ ...base, lon }).ok, true, String(lon));
    for (const lon of [-180.0001, 180.0001, 360, NaN, Infinity]) assert.equal(rejectedField({ ...base, lon }), 'lon');
  });

  it('gives every ping one shape: time in epoch ms, the id as a string, no heading, accuracy 0, no events, no value, a fix', () => {
    const read = readPing({ ...base, assetId: 7 });
    assert.ok(read.ok);
    assert.deepEqual(read.ping, {
      assetId: '7',
      t: 1_780_000_000_000,
      lat: 52.52,
      lon: 13.4,
      heading: NaN,
      accuracy: 0,
      events: 0,
      value: undefined,
      fix: FIX_OK,
      retry: false,
    });
    const ruled = readPing({ ...base, assetId: 7 }, { noFix: true, minSatellites: 4, maxHdop: 2 });
    assert.ok(ruled.ok);
    assert.deepEqual(Object.keys(ruled.ping), Object.keys(read.ping), 'the same shape with a rule');
  });

  it('checks the id and the time first, naming the field', () => {
    assert.equal(rejectedField({ ...base, assetId: '' }), 'assetId');
    assert.equal(rejectedField({ ...base, assetId: undefined }), 'assetId');
    assert.equal(rejectedField({ ...base, time: 'not a time' }), 'time');
    const read = readPing({ ...base, lat: '91' });
    assert.deepEqual(read, { ok: false, field: 'lat', value: '"91"', problem: 'must be between -90 and 90' });
  });

  it('reads a heading in [0, 360] when there is one; none (null or absent) is NaN', () => {
    for (const heading of [0, 90.5, '180', 360]) {
      const read = readPing({ ...base, heading });
      assert.ok(read.ok, String(heading));
      assert.equal(read.ping.heading, Number(heading));
    }
    for (const heading of [null, undefined]) {
      const read = readPing({ ...base, heading });
      assert.ok(read.ok && Number.isNaN(read.ping.heading));
    }
    for (const heading of [-1, 360.5, 'north', Number.NaN, {}]) assert.equal(rejectedField({ ...base, heading }), 'heading');
  });

  it('reads an accuracy of 0 or more metres; none is 0', () => {
    const read = readPing({ ...base, accuracy: '4.5' });
    assert.ok(read.ok && read.ping.accuracy === 4.5);
    const none = readPing({ ...base, accuracy: null });
    assert.ok(none.ok && none.ping.accuracy === 0);
    assert.equal(rejectedField({ ...base, accuracy: -0.1 }), 'accuracy');
    assert.equal(rejectedField({ ...base, accuracy: 'good' }), 'accuracy');
    const negative = readPing({ ...base, accuracy: -2 });
    assert.match(negative.ok ? '' : negative.problem, /0 or more metres/);
  });

  it('fingerprints the watched event values, a missing one included', () => {
    const read = readPing({ ...base, events: [true, undefined] });
    assert.ok(read.ok);
    assert.equal(read.ping.events, eventFingerprint([true, undefined]));
    const other = readPing({ ...base, events: [true, 'x'] });
    assert.ok(other.ok && other.ping.events !== read.ping.events);
  });

  describe('the fix quality (issue 29): decided once, from the ping alone, carried as ping.fix', () => {
    const NO_FIX_RULE: PingReadRule = { noFix: true };
    const fixOf = (raw: Partial<RawPing>, rule: PingReadRule = NO_FIX_RULE): number => {
      const read = readPing({ ...base, ...raw }, rule);
      assert.ok(read.ok, JSON.stringify(raw));
      return read.ping.fix ?? -1;
    };

    it('no fix at 0,0 (both within 1e-7 degrees), a fix a hair beyond on either axis', () => {
      for (const [lat, lon] of [[0, 0], [-0, 0], [1e-7, -1e-7], ['0', '0.0000001']] as const) assert.equal(fixOf({ lat, lon }), NO_FIX, `${lat},${lon}`);
      for (const [lat, lon] of [[2e-7, 0], [0, -2e-7], [0, 13.4], [52.52, 0]] as const) assert.equal(fixOf({ lat, lon }), FIX_OK, `${lat},${lon}`);
    });

    it('no fix when the validity field says so (false, 0, "0", "false", NMEA\'s "V"); unknown (absent, null) or anything else is a fix', () => {
      for (const valid of [false, 0, '0', 'V', 'v', ' V ', 'false', 'FALSE']) assert.equal(fixOf({ valid }), NO_FIX, JSON.stringify(valid));
      for (const valid of [undefined, null, true, 1, '1', 'A', '3D', 'true', 2]) assert.equal(fixOf({ valid }), FIX_OK, JSON.stringify(valid));
    });

    it('is off without noFix: 0,0 and a void validity are positions like any other', () => {
      assert.equal(fixOf({ lat: 0, lon: 0, valid: 'V' }, {}), FIX_OK);
      assert.equal(fixOf({ lat: 0, lon: 0, valid: false }, { noFix: false }), FIX_OK);
      const bare = readPing({ ...base, lat: 0, lon: 0, valid: false });
      assert.ok(bare.ok && bare.ping.fix === FIX_OK, 'without a rule, as before the guard existed');
    });

    it('poor fix below minSatellites or above maxHdop; the limits themselves pass; absent or null is unknown and passes', () => {
      const rule: PingReadRule = { minSatellites: 4, maxHdop: 2 };
      assert.equal(fixOf({ satellites: 3 }, rule), POOR_FIX);
      assert.equal(fixOf({ satellites: 4, hdop: 2 }, rule), FIX_OK);
      assert.equal(fixOf({ satellites: '12', hdop: '0.8' }, rule), FIX_OK);
      assert.equal(fixOf({ hdop: 2.01 }, rule), POOR_FIX);
      assert.equal(fixOf({ satellites: null, hdop: undefined }, rule), FIX_OK);
      assert.equal(fixOf({ satellites: 0, hdop: 99 }, {}), FIX_OK, 'no limits: not judged');
    });

    it('checks no-fix before poor-fix', () => {
      assert.equal(fixOf({ lat: 0, lon: 0, satellites: 0 }, { noFix: true, minSatellites: 4 }), NO_FIX);
    });

    it('rejects a satellites or HDOP value that is not a number of 0 or more, naming the field, as other fields are', () => {
      const rule: PingReadRule = { minSatellites: 4, maxHdop: 2 };
      for (const [field, value] of [['satellites', 'many'], ['satellites', -1], ['hdop', 'good'], ['hdop', {}], ['hdop', Number.NaN]] as const) {
        const read = readPing({ ...base, [field]: value }, rule);
        assert.equal(read.ok, false, `${field} ${JSON.stringify(value)}`);
        assert.equal(read.ok ? '' : read.field, field);
      }
      const read = readPing({ ...base, satellites: -1 }, rule);
      assert.deepEqual(read, { ok: false, field: 'satellites', value: '-1', problem: 'must be 0 or more' });
      // Read only for the limit that judges it: a rule without one never looks at the field.
      assert.equal(readPing({ ...base, satellites: 'many', hdop: {} }, { noFix: true }).ok, true);
    });
  });

  describe('value mode (issue 29): a reading instead of a position', () => {
    const VALUE: PingReadRule = { mode: 'value', noFix: true, minSatellites: 4 };

    it('reads the value as a number, no position, and every value-mode ping a fix', () => {
      const read = readPing({ assetId: 'bin-A17', time: 1_780_000_000, lat: undefined, lon: undefined, value: '46.5', satellites: 'ignored' }, VALUE);
      assert.ok(read.ok);
      assert.deepEqual([read.ping.value, read.ping.lat, read.ping.lon, read.ping.fix], [46.5, 0, 0, FIX_OK]);
      const zero = readPing({ ...base, value: 0 }, VALUE);
      assert.ok(zero.ok && zero.ping.value === 0);
    });

    it('rejects a value that is not a finite number, naming the field and the value', () => {
      for (const value of [undefined, null, 'full', '71,5', Number.NaN, Infinity, true, {}]) {
        const read = readPing({ ...base, value }, VALUE);
        assert.equal(read.ok, false, JSON.stringify(value) ?? 'undefined');
        assert.equal(read.ok ? '' : read.field, 'value');
      }
      assert.deepEqual(readPing({ ...base, value: 'full' }, VALUE), { ok: false, field: 'value', value: '"full"', problem: 'is not a number' });
    });
  });
});
