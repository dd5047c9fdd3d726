/**
 * The two ways the sensor node keys a reading: the idempotency key v1 made
 * from the reading's fields (grouped by device), or a value the flow chose.
 */
import assert from 'node:assert/strict';
import { propertyKey, readingKeyer } from '../../../../src/core/sensor/keys';
import { parsePath } from '../../../../src/core/parse/property-path';
import type { ReadingFields } from '../../../../src/core/sensor/reading';
import { textOf } from '../../../../src/core/parse/fields';

const readingKey = (raw: unknown, fields: ReadingFields) => readingKeyer(fields)(raw);

const FLAT: ReadingFields = {
  device: parsePath('device_id'),
  seq: parsePath('seq'),
  ts: parsePath('ts'),
  measures: [{ name: 'fill_pct', path: parsePath('fill_pct'), min: 0, max: 100 }],
};

/** A LoRaWAN uplink, nested as a network server sends it. */
const NESTED: ReadingFields = {
  device: parsePath('end_device_ids.device_id'),
  seq: parsePath('uplink_message.f_cnt'),
  ts: parsePath('received_at'),
  measures: [{ name: 'fill_pct', path: parsePath('uplink_message.decoded_payload["fill level"]') }],
};

const SEED = { device_id: 'bin-A17', seq: 41, ts: '2026-07-16T09:00:00Z', fill_pct: 62.5 };

describe('core/sensor/keys', () => {
  describe('readingKeyer (key mode "reading")', () => {
    it('gives the reference v1 key (bin-A17, seq 41, 09:00:00Z, fill 62.5), grouped by device', () => {
      assert.deepEqual(readingKey(SEED, FLAT), { ok: true, key: 'bin-A17:41:76c73ee2946cc70e', group: 'bin-A17' });
    });

    it('reads the same reading nested under other names to the same key', () => {
      const uplink = {
        end_device_ids: { device_id: 'bin-A17' },
        received_at: '2026-07-16T11:00:00+02:00',
        uplink_message: { f_cnt: 41, decoded_payload: { 'fill level': '62.5' } },
      };
      assert.deepEqual(readingKey(uplink, NESTED), { ok: true, key: 'bin-A17:41:76c73ee2946cc70e', group: 'bin-A17' });
    });

    it('keeps a device id with colons whole as the group', () => {
      const result = readingKey({ ...SEED, device_id: 'site:7:bin' }, FLAT);
      assert.ok(result.ok);
      assert.equal(result.group, 'site:7:bin');
      assert.match(result.key, /^site:7:bin:41:[0-9a-f]{16}$/);
    });

    it('says which field is wrong, with its value and path, and never throws', () => {
      const cases: [unknown, string | null, string | RegExp, RegExp][] = [
        [{ ...SEED, device_id: undefined }, 'device_id', 'undefined', /is missing/],
        [{ ...SEED, seq: -1 }, 'seq', '-1', /whole number/],
        [{ ...SEED, ts: 'yesterday' }, 'ts', '"yesterday"', /./],
        [{ ...SEED, fill_pct: 101 }, 'fill_pct', '101', /between 0 and 100/],
        [{ ...SEED, fill_pct: 'full' }, 'fill_pct', '"full"', /is not a number/],
        ['not a reading', null, '"not a reading"', /must be an object, not a string/],
        [[SEED], null, /^\[\{"device_id":"bin-A17"/, /not an array/],
      ];
      for (const [raw, path, value, problem] of cases) {
        const result = readingKey(raw, FLAT);
        assert.equal(result.ok, false, JSON.stringify(raw));
        if (result.ok) continue;
        assert.equal(result.path?.text ?? null, path);
        if (typeof value === 'string') assert.equal(result.value, value);
        else assert.match(result.value, value);
        assert.match(result.problem, problem);
      }
    });
  });

  describe('the measured fields', () => {
    it('checks a one-sided range with its own wording, and hashes a field whatever its name', () => {
      const fields = (measure: ReadingFields['measures'][number]): ReadingFields => ({ ...FLAT, measures: [measure] });
      const atLeast = readingKey({ ...SEED, fill_pct: -1 }, fields({ name: 'fill_pct', path: parsePath('fill_pct'), min: 0 }));
      assert.match(atLeast.ok ? '' : atLeast.problem, /must be at least 0/);
      const atMost = readingKey({ ...SEED, fill_pct: 101 }, fields({ name: 'fill_pct', path: parsePath('fill_pct'), max: 100 }));
      assert.match(atMost.ok ? '' : atMost.problem, /must be at most 100/);
      // A field called __proto__ is a field like any other: it changes the key.
      const named = (value: number) => readingKey({ ...SEED, level: value }, fields({ name: '__proto__', path: parsePath('level') }));
      const one = named(1);
      const two = named(2);
      assert.ok(one.ok && two.ok);
      assert.notEqual(one.key, two.key);
    });
  });

  describe('propertyKey (key mode "property")', () => {
    it('takes the value as the key and its own group', () => {
      assert.deepEqual(propertyKey('msg-0042'), { ok: true, key: 'msg-0042', group: 'msg-0042' });
      assert.deepEqual(propertyKey(42), { ok: true, key: '42', group: '42' });
    });

    it('refuses a missing, empty or non-text value, saying why', () => {
      assert.deepEqual(propertyKey(undefined), { ok: false, path: null, value: 'undefined', given: undefined, problem: 'is missing' });
      const empty = propertyKey('');
      assert.equal(empty.ok, false);
      assert.match(empty.ok ? '' : empty.problem, /must not be empty/);
      for (const bad of [null, { id: 1 }, [1], true, Number.NaN]) {
        const result = propertyKey(bad);
        assert.equal(result.ok, false, textOf(bad));
        assert.match(result.ok ? '' : result.problem, /must be a non-empty string/);
      }
      const long = propertyKey('x'.repeat(513));
      assert.match(long.ok ? '' : long.problem, /limit is 512/);
    });
  });
});
