/**
 * Reading one ping's raw values into the shape the rule decides on, or into
 * a rejection naming the field, its value and what is wrong with it.
 */
import assert from 'node:assert/strict';
import { eventFingerprint } from '../../../../src/core/window/event-fingerprint';
import { readPing, type RawPing } from '../../../../src/core/window/ping';

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

  it('gives every ping one shape: time in epoch ms, the id as a string, no heading, accuracy 0, no events', () => {
    const read = readPing({ ...base, assetId: 7 });
    assert.ok(read.ok);
    assert.deepEqual({ ...read.ping, heading: String(read.ping.heading) }, {
      assetId: '7',
      t: 1_780_000_000_000,
      lat: 52.52,
      lon: 13.4,
      heading: 'NaN',
      accuracy: 0,
      events: 0,
      retry: false,
    });
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
});
