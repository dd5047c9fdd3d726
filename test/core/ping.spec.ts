import assert from 'node:assert/strict';
import { readPing, type RawPing } from '../../src/core/ping';

const base: RawPing = { assetId: 'veh-1', time: 1_780_000_000, lat: 52.52, lon: 13.4 };

describe('core/ping readPing', () => {
  it('accepts latitudes in [-90, 90] and longitudes in [-180, 180] only', () => {
    for (const lat of [-90, -0, 0, 45.5, 90]) assert.equal(readPing({ ...base, lat }).ok, true, String(lat));
    for (const lat of [-90.0001, 90.0001, NaN, Infinity, -Infinity]) {
      const read = readPing({ ...base, lat });
      assert.equal(read.ok, false, String(lat));
      assert.equal(read.ok ? '' : read.field, 'lat');
    }
    for (const lon of [-180, 0, 179.9999, 180]) assert.equal(readPing({ ...base, lon }).ok, true, String(lon));
    for (const lon of [-180.0001, 180.0001, 360, NaN, Infinity]) {
      const read = readPing({ ...base, lon });
      assert.equal(read.ok, false, String(lon));
      assert.equal(read.ok ? '' : read.field, 'lon');
    }
  });

  it('gives the time in epoch milliseconds and the id as a string', () => {
    assert.deepEqual(readPing({ ...base, assetId: 7 }), { ok: true, ping: { assetId: '7', t: 1_780_000_000_000, lat: 52.52, lon: 13.4 } });
  });
});
