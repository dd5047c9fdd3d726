import assert from 'node:assert/strict';
import { ContentLayout, contentHash, deviceOfKey, idempotencyKey, type KeyedContent } from '../../../../src/core/sensor/idempotency-key';
import { formatPythonIsoUtc, parseInstant } from '../../../../src/core/parse/instant';
import { pythonJsonDumps } from '../../../support/python-json-dumps';

function at(value: unknown): number {
  const parsed = parseInstant(value);
  assert.ok(parsed.ok, `test timestamp ${String(value)} did not parse`);
  return parsed.epochMicros;
}

function reading(deviceId: string, seq: number, ts: unknown, fill: number): KeyedContent {
  return { deviceId, seq, timeField: 'ts', epochMicros: at(ts), measures: { fill_pct: fill } };
}

describe('core/sensor/idempotency-key', () => {
  it('reproduces the three reference vectors, the keys of the reference design\'s idempotency_key', () => {
    assert.equal(idempotencyKey(reading('bin-A17', 41, '2026-07-16T09:00:00Z', 62.5)), 'bin-A17:41:76c73ee2946cc70e');
    assert.equal(idempotencyKey(reading('bin-A17', 42, '2026-07-16T09:00:00Z', 71)), 'bin-A17:42:ed9b14ef6ee4c460');
    assert.equal(idempotencyKey(reading('bin-B04', 8, '2026-07-16T09:00:05Z', 15)), 'bin-B04:8:22b0c123bd3acdfd');
  });

  it('gives one key for one instant however the timestamp is written', () => {
    const expected = 'bin-A17:41:76c73ee2946cc70e';
    for (const ts of [
      '2026-07-16T09:00:00Z',
      '2026-07-16T09:00:00+00:00',
      '2026-07-16T11:00:00+02:00',
      '2026-07-16T03:30:00-05:30',
      '2026-07-16 09:00:00',
      '2026-07-16T09:00:00.000Z',
      1_784_192_400,
      1_784_192_400_000,
      '1784192400',
      new Date(Date.UTC(2026, 6, 16, 9, 0, 0)),
    ]) {
      assert.equal(idempotencyKey(reading('bin-A17', 41, ts, 62.5)), expected, String(ts));
    }
  });

  it('includes microseconds in the hashed timestamp only when they are not zero (Python isoformat)', () => {
    // Keys printed by the reference idempotency_key() in Python for the same readings.
    assert.equal(idempotencyKey(reading('bin-A17', 41, '2026-07-16T09:00:00.5Z', 62.5)), 'bin-A17:41:c5c5cd7cdffb0d65');
    assert.equal(idempotencyKey(reading('bin-A17', 41, '2026-07-16T09:00:00.000001Z', 62.5)), 'bin-A17:41:b8d1986de3bb3a90');
    assert.equal(idempotencyKey(reading('bin-A17', 41, 1_784_192_400.123456, 0.1)), 'bin-A17:41:1ebd6efe6521be47');
    assert.equal(idempotencyKey(reading('bin{A}:17%', 7, '1999-12-31T23:59:59.999999Z', 1e-5)), 'bin{A}:17%:7:8da973297344c126');
    // Another wall-clock hour is another instant, so another key.
    assert.equal(idempotencyKey(reading('bin-A17', 41, '2026-07-16T09:00:00+02:00', 62.5)), 'bin-A17:41:5f102bf4dc5e2e76');
  });

  it('binds the content: seq alone or timestamp alone does not decide the key', () => {
    const base = idempotencyKey(reading('bin-A17', 41, '2026-07-16T09:00:00Z', 62.5));
    // Battery swap: seq restarts, a different reading gets an old seq.
    assert.notEqual(idempotencyKey(reading('bin-A17', 41, '2026-07-16T09:00:00Z', 62.6)), base);
    assert.notEqual(idempotencyKey(reading('bin-A17', 41, '2026-07-16T09:00:01Z', 62.5)), base);
    assert.notEqual(idempotencyKey(reading('bin-A18', 41, '2026-07-16T09:00:00Z', 62.5)), base);
    assert.notEqual(idempotencyKey(reading('bin-A17', 40, '2026-07-16T09:00:00Z', 62.5)), base);
  });

  it('hashes other measures and another time-field name when configured', () => {
    const content: KeyedContent = {
      deviceId: 'probe-1',
      seq: 3,
      timeField: 'observed_at',
      epochMicros: at('2026-07-16T09:00:00Z'),
      measures: { temp_c: 21.5, rh: 40 },
    };
    // hashlib.sha256(json.dumps({"observed_at": ..., "temp_c": 21.5, "rh": 40.0},
    //   sort_keys=True, separators=(",", ":")).encode()).hexdigest()[:16]
    assert.equal(contentHash(content), '6c5e4e8ec1912ffe');
    assert.equal(idempotencyKey(content), 'probe-1:3:6c5e4e8ec1912ffe');
    // Field order in the source does not matter.
    assert.equal(contentHash({ ...content, measures: { rh: 40, temp_c: 21.5 } }), '6c5e4e8ec1912ffe');
  });

  it('lays out the hashed JSON exactly as pythonJsonDumps writes the reading, for any names and values', () => {
    // Names that sort differently by code point and by UTF-16 unit, need
    // escaping, or collide with the timestamp's name (which then wins).
    const NAMES = ['fill_pct', 'ts', 'Temp', '_a', 'a"b', 'tab\there', '\uff21', '\ud83d\ude00', 'é', '', '__proto__', 'observed_at'];
    const VALUES = [0, -0, 71, 62.5, 1e-5, 1e16, -3.25e-7, 123456789.125, 0.1, Number.MAX_VALUE];
    let seed = 20260716;
    const next = (n: number): number => {
      seed = (Math.imul(seed, 1_103_515_245) + 12_345) >>> 0;
      return seed % n;
    };
    for (let round = 0; round < 2000; round++) {
      const timeField = NAMES[next(NAMES.length)] as string;
      const names = Array.from({ length: next(5) }, () => NAMES[next(NAMES.length)] as string);
      const measures: Record<string, number> = Object.create(null) as Record<string, number>;
      for (const name of names) measures[name] = VALUES[next(VALUES.length)] as number;
      const epochMicros = (next(4_000_000) - 1_000_000) * 1_000_003;
      const reference: Record<string, string | number> = Object.create(null) as Record<string, string | number>;
      for (const name of Object.keys(measures)) reference[name] = measures[name] as number;
      reference[timeField] = formatPythonIsoUtc(epochMicros);
      assert.equal(new ContentLayout(timeField, names).text(epochMicros, measures), pythonJsonDumps(reference), `round ${round}`);
    }
  });

  it('finds the device part of a key even when the id has colons', () => {
    assert.equal(deviceOfKey('bin-A17:41:76c73ee2946cc70e'), 'bin-A17');
    assert.equal(deviceOfKey('site:7:bin:3:0:0123456789abcdef'), 'site:7:bin:3');
    assert.equal(deviceOfKey(idempotencyKey(reading('a:b{c}%', 9, 0, 1))), 'a:b{c}%');
  });
});
