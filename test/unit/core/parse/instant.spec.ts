import assert from 'node:assert/strict';
import { EPOCH_SECONDS_LIMIT, formatPythonIsoUtc, parseInstant, type InstantResult } from '../../../../src/core/parse/instant';

/** 2026-07-16T09:00:00Z (from Python: datetime(2026,7,16,9,tzinfo=utc).timestamp()). */
const T0_SECONDS = 1_784_192_400;
const T0_MICROS = T0_SECONDS * 1_000_000;

function micros(value: unknown): number {
  const result: InstantResult = parseInstant(value);
  assert.ok(result.ok, `expected ${String(value)} to parse, got: ${result.ok ? '' : result.problem}`);
  return result.epochMicros;
}

function rejects(value: unknown): string {
  const result = parseInstant(value);
  assert.equal(result.ok, false, `expected ${String(value)} to be rejected, got ${result.ok ? result.epochMicros : ''}`);
  return result.ok ? '' : result.problem;
}

describe('core/parse/instant parseInstant', () => {
  describe('epoch numbers', () => {
    it('reads seconds below EPOCH_SECONDS_LIMIT and milliseconds from it on', () => {
      assert.equal(EPOCH_SECONDS_LIMIT, 1e11);
      assert.equal(micros(T0_SECONDS), T0_MICROS);
      assert.equal(micros(T0_SECONDS * 1000), T0_MICROS);
      // The line itself: one below is seconds (year 5138), the limit is milliseconds (1973).
      assert.equal(micros(EPOCH_SECONDS_LIMIT - 1), (EPOCH_SECONDS_LIMIT - 1) * 1e6);
      assert.equal(micros(EPOCH_SECONDS_LIMIT), EPOCH_SECONDS_LIMIT * 1e3);
      assert.equal(micros(0), 0);
    });

    it('keeps fractions down to the microsecond', () => {
      assert.equal(micros(T0_SECONDS + 0.5), T0_MICROS + 500_000);
      assert.equal(micros(T0_SECONDS + 0.000001), T0_MICROS + 1);
      assert.equal(micros(T0_SECONDS * 1000 + 0.25), T0_MICROS + 250);
    });

    it('reads numeric strings the same way as numbers', () => {
      assert.equal(micros(String(T0_SECONDS)), T0_MICROS);
      assert.equal(micros(` ${T0_SECONDS * 1000} `), T0_MICROS);
      assert.equal(micros('1784192400.5'), T0_MICROS + 500_000);
      assert.equal(micros('1.7841924e9'), T0_MICROS);
    });

    it('refuses negative, non-finite and far-future numbers', () => {
      for (const bad of [-1, Number.NaN, Infinity, -Infinity, 1e300, '-5']) rejects(bad);
      // Milliseconds past 9999-12-31 are not a date Python can hold.
      rejects(253_402_300_800_000);
      assert.equal(micros(253_402_300_799_999), 253_402_300_799_999_000);
    });
  });

  describe('ISO-8601 strings', () => {
    it('reads Z, +00:00 and no offset (UTC) as the same instant', () => {
      for (const text of [
        '2026-07-16T09:00:00Z',
        '2026-07-16T09:00:00z',
        '2026-07-16t09:00:00Z',
        '2026-07-16 09:00:00Z',
        '2026-07-16T09:00:00+00:00',
        '2026-07-16T09:00:00-00:00',
        '2026-07-16T09:00:00+0000',
        '2026-07-16T09:00:00',
        '2026-07-16T09:00Z',
        '  2026-07-16T09:00:00Z ',
      ]) {
        assert.equal(micros(text), T0_MICROS, text);
      }
    });

    it('applies offsets (Python fromisoformat(...).astimezone(utc) agrees)', () => {
      assert.equal(micros('2026-07-16T11:00:00+02:00'), T0_MICROS);
      assert.equal(micros('2026-07-16T11:00:00+0200'), T0_MICROS);
      assert.equal(micros('2026-07-16T03:30:00-05:30'), T0_MICROS);
      // Across a day and a year boundary.
      assert.equal(micros('2026-07-17T08:00:00+23:00'), T0_MICROS);
      assert.equal(micros('2026-01-01T00:30:00+01:00'), micros('2025-12-31T23:30:00Z'));
    });

    it('reads fractions of a second, truncating past the microsecond', () => {
      assert.equal(micros('2026-07-16T09:00:00.5Z'), T0_MICROS + 500_000);
      assert.equal(micros('2026-07-16T09:00:00,5Z'), T0_MICROS + 500_000);
      assert.equal(micros('2026-07-16T09:00:00.000001Z'), T0_MICROS + 1);
      assert.equal(micros('2026-07-16T09:00:00.123456789Z'), T0_MICROS + 123_456);
      assert.equal(micros('2026-07-16T11:00:00.999999+02:00'), T0_MICROS + 999_999);
    });

    it('accepts 29 February only in leap years', () => {
      assert.equal(micros('2024-02-29T00:00:00Z'), 1_709_164_800 * 1e6);
      assert.equal(micros('2000-02-29T00:00:00Z'), 951_782_400 * 1e6);
      rejects('2026-02-29T00:00:00Z');
      rejects('1900-02-29T00:00:00Z');
    });

    it('refuses dates and times that do not exist', () => {
      for (const text of [
        '2026-02-30T00:00:00Z',
        '2026-04-31T00:00:00Z',
        '2026-13-01T00:00:00Z',
        '2026-00-10T00:00:00Z',
        '2026-07-00T00:00:00Z',
        '2026-07-16T24:00:00Z',
        '2026-07-16T09:60:00Z',
        '2026-07-16T09:00:60Z',
        '2026-07-16T09:00:00+24:00',
        '2026-07-16T09:00:00+01:60',
        '0000-01-01T00:00:00Z',
      ]) {
        const problem = rejects(text);
        assert.match(problem, /valid|offset/, text);
      }
    });

    it('refuses text that is not an ISO date-time', () => {
      for (const text of [
        '',
        'yesterday',
        '2026-07-16',
        '16/07/2026 09:00',
        '2026-07-16T9:00:00Z',
        '2026-07-16T09:00:00+2',
        '2026-07-16T09:00:00 UTC',
        '0x10',
        'Infinity',
      ]) {
        rejects(text);
      }
    });

    it('accepts exactly the strings of the ISO grammar, with the same instant or the same problem (2,000 near-misses)', () => {
      // The grammar as a regular expression, which the parser replaced for
      // speed, and an instant computed from it through Date: the oracle.
      const GRAMMAR =
        /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d{1,9}))?)?(?:([Zz])|([+-])(\d{2}):?(\d{2}))?$/;
      const oracle = (text: string): InstantResult => {
        const m = GRAMMAR.exec(text);
        if (!m) return { ok: false, problem: 'is not an ISO-8601 date-time' };
        const [y, mo, d, h, mi] = [1, 2, 3, 4, 5].map((i) => Number(m[i]));
        const sec = Number(m[6] ?? 0);
        const date = new Date(0);
        date.setUTCFullYear(y as number, (mo as number) - 1, d);
        if (date.getUTCMonth() !== (mo as number) - 1 || (y as number) < 1 || (h as number) > 23 || (mi as number) > 59 || sec > 59) {
          return { ok: false, problem: 'is not a valid calendar date-time' };
        }
        const offset = m[9] === undefined ? 0 : (m[9] === '-' ? -1 : 1) * (Number(m[10]) * 60 + Number(m[11]));
        if (m[9] !== undefined && (Number(m[10]) > 23 || Number(m[11]) > 59)) return { ok: false, problem: 'has an invalid UTC offset' };
        date.setUTCHours(h as number, (mi as number) - offset, sec, 0);
        const epochMicros = date.getTime() * 1000 + Number((m[7] ?? '').slice(0, 6).padEnd(6, '0'));
        if (epochMicros < -62_135_596_800_000_000 || epochMicros >= 253_402_300_800_000_000) {
          return { ok: false, problem: 'is outside the years 1 to 9999 in UTC' };
        }
        return { ok: true, epochMicros };
      };
      const SEEDS = ['2026-07-16T09:00:00Z', '2024-02-29 23:59:59.123456789+02:00', '0001-01-01t00:00,5-0130', '9999-12-31T23:59:59z', '1999-12-31T23:59'];
      const ALPHABET = '0123456789-:Tt .,Zz+';
      let seed = 7;
      const next = (n: number): number => {
        seed = (Math.imul(seed, 1_103_515_245) + 12_345) >>> 0;
        return seed % n;
      };
      for (let round = 0; round < 2000; round++) {
        let text = SEEDS[next(SEEDS.length)] as string;
        for (let edits = next(3); edits > 0; edits--) {
          const at = next(text.length + 1);
          const ch = ALPHABET[next(ALPHABET.length)] as string;
          const kind = next(3);
          text = kind === 0 ? text.slice(0, at) + ch + text.slice(at + 1) : kind === 1 ? text.slice(0, at) + ch + text.slice(at) : text.slice(0, at) + text.slice(at + 1);
        }
        assert.deepEqual(parseInstant(text), oracle(text.trim()), JSON.stringify(text));
      }
    });

    it('refuses an offset that carries the instant outside the years 1 to 9999 (Python cannot hold it)', () => {
      assert.match(rejects('0001-01-01T00:00:00+01:00'), /years 1 to 9999/);
      assert.match(rejects('9999-12-31T23:30:00-01:00'), /years 1 to 9999/);
      assert.equal(micros('9999-12-31T23:59:59Z'), 253_402_300_799_000_000);
      assert.equal(micros('0001-01-01T01:00:00+01:00'), -62_135_596_800_000_000);
    });

    it('handles years before 1970 and before 1000', () => {
      assert.equal(micros('1969-12-31T23:59:59.999999Z'), -1);
      assert.equal(micros('0001-01-01T00:00:00Z'), -62_135_596_800_000_000);
      assert.equal(micros('0099-06-01T00:00:00Z') < micros('0100-01-01T00:00:00Z'), true);
    });
  });

  describe('other inputs', () => {
    it('reads a Date to the millisecond', () => {
      assert.equal(micros(new Date(T0_SECONDS * 1000 + 7)), T0_MICROS + 7000);
      assert.match(rejects(new Date('not a date')), /invalid Date/);
    });

    it('refuses values of other types, saying what it got', () => {
      assert.match(rejects(null), /null/);
      assert.match(rejects(undefined), /undefined/);
      assert.match(rejects({ ts: 1 }), /object/);
      assert.match(rejects([T0_SECONDS]), /array/);
      assert.match(rejects(true), /boolean/);
      rejects(BigInt(T0_SECONDS));
    });
  });
});

describe('core/parse/instant formatPythonIsoUtc', () => {
  // Each expected string is Python's
  // (datetime(1970,1,1,tzinfo=timezone.utc) + timedelta(microseconds=n)).isoformat()
  const PYTHON: [number, string][] = [
    [0, '1970-01-01T00:00:00+00:00'],
    [-1, '1969-12-31T23:59:59.999999+00:00'],
    [1, '1970-01-01T00:00:00.000001+00:00'],
    [1_784_192_400_000_000, '2026-07-16T09:00:00+00:00'],
    [1_784_192_400_500_000, '2026-07-16T09:00:00.500000+00:00'],
    [951_782_399_999_999, '2000-02-28T23:59:59.999999+00:00'],
    [8_000_000_000_000_007, '2223-07-06T14:13:20.000007+00:00'],
    [9_007_199_254_740_992, '2255-06-05T23:47:34.740992+00:00'],
    [-62_135_596_800_000_000, '0001-01-01T00:00:00+00:00'],
  ];

  it('writes what Python datetime.isoformat() writes, microseconds only when not zero', () => {
    for (const [n, expected] of PYTHON) assert.equal(formatPythonIsoUtc(n), expected, String(n));
  });

  it('round-trips through parseInstant', () => {
    for (const [n, text] of PYTHON) assert.equal(micros(text), n, text);
  });
});
