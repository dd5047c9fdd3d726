import { DECIMAL_NUMBER, describeType } from './fields';

/**
 * Timestamps as they arrive in IoT payloads, reduced to one representation:
 * whole microseconds since the Unix epoch, UTC. Microseconds because the
 * reconnect-dedup key must reproduce Python's `datetime.isoformat()`, which
 * keeps them; a float64 holds any such instant up to the year 2255 exactly.
 */

/**
 * A number below this is epoch seconds, at or above it epoch milliseconds.
 * 1e11 seconds is the year 5138 and 1e11 milliseconds is March 1973, so no
 * real device clock falls on the wrong side of the line.
 */
export const EPOCH_SECONDS_LIMIT = 1e11;

const ISO_8601 =
  /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d{1,9}))?)?(?:([Zz])|([+-])(\d{2}):?(\d{2}))?$/;

export type InstantResult =
  | { ok: true; epochMicros: number }
  | { ok: false; problem: string };

/**
 * Accepts a Date, epoch seconds or milliseconds (number or numeric string),
 * or an ISO-8601 date-time; an ISO string without an offset is UTC.
 */
export function parseInstant(value: unknown): InstantResult {
  if (value instanceof Date) {
    const ms = value.getTime();
    return Number.isFinite(ms)
      ? { ok: true, epochMicros: ms * 1000 }
      : { ok: false, problem: 'is an invalid Date' };
  }
  if (typeof value === 'number') return fromEpochNumber(value);
  if (typeof value === 'string') {
    const text = value.trim();
    if (DECIMAL_NUMBER.test(text)) return fromEpochNumber(Number(text));
    return fromIsoString(text);
  }
  return { ok: false, problem: `must be a date-time, epoch number or Date, not ${describeType(value)}` };
}

function fromEpochNumber(n: number): InstantResult {
  if (!Number.isFinite(n) || n < 0) {
    return { ok: false, problem: 'must be a finite, non-negative epoch number' };
  }
  const micros = n < EPOCH_SECONDS_LIMIT ? Math.round(n * 1e6) : Math.round(n * 1e3);
  if (micros >= END_EPOCH_MICROS) return { ok: false, problem: 'is after the year 9999' };
  return { ok: true, epochMicros: micros };
}

/**
 * Python's datetime holds 0001-01-01T00:00:00Z up to, not including,
 * 10000-01-01T00:00:00Z. The bounds are kept as the first instant outside
 * the range: the last one inside, 253_402_300_799_999_999, is not a double
 * and rounds up to the year 10000, so `micros > last` let that year through.
 */
const START_EPOCH_MICROS = -62_135_596_800_000_000;
const END_EPOCH_MICROS = 253_402_300_800_000_000;

function fromIsoString(text: string): InstantResult {
  const m = ISO_8601.exec(text);
  if (!m) return { ok: false, problem: 'is not an ISO-8601 date-time' };
  const [year, month, day, hour, minute] = [m[1], m[2], m[3], m[4], m[5]].map(Number) as [
    number, number, number, number, number,
  ];
  const second = m[6] === undefined ? 0 : Number(m[6]);
  if (
    year < 1 || month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month) ||
    hour > 23 || minute > 59 || second > 59
  ) {
    return { ok: false, problem: 'is not a valid calendar date-time' };
  }
  // Digits past the sixth are truncated, as Python's datetime cannot hold them.
  const micros = m[7] === undefined ? 0 : Number(m[7].slice(0, 6).padEnd(6, '0'));
  let offsetMinutes = 0;
  if (m[9] !== undefined) {
    const oh = Number(m[10]);
    const om = Number(m[11]);
    if (oh > 23 || om > 59) return { ok: false, problem: 'has an invalid UTC offset' };
    offsetMinutes = (m[9] === '-' ? -1 : 1) * (oh * 60 + om);
  }
  const utc = new Date(0);
  utc.setUTCFullYear(year, month - 1, day);
  utc.setUTCHours(hour, minute - offsetMinutes, second, 0);
  const epochMicros = utc.getTime() * 1000 + micros;
  // An offset can carry 0001-01-01 or 9999-12-31 out of Python's range.
  if (epochMicros < START_EPOCH_MICROS || epochMicros >= END_EPOCH_MICROS) {
    return { ok: false, problem: 'is outside the years 1 to 9999 in UTC' };
  }
  return { ok: true, epochMicros };
}

function daysInMonth(year: number, month: number): number {
  // Day 0 of the next month is the last day of this one; setUTCFullYear,
  // unlike Date.UTC, does not map years 0-99 to the 1900s.
  const d = new Date(0);
  d.setUTCFullYear(year, month, 0);
  return d.getUTCDate();
}

const pad = (n: number, width: number): string => String(n).padStart(width, '0');

/**
 * The instant as Python's `datetime.isoformat()` writes an aware UTC
 * datetime: `2026-07-16T09:00:00+00:00`, with `.ffffff` only when the
 * microseconds are not zero.
 */
export function formatPythonIsoUtc(epochMicros: number): string {
  const micros = ((epochMicros % 1e6) + 1e6) % 1e6;
  const d = new Date((epochMicros - micros) / 1000);
  const date = `${pad(d.getUTCFullYear(), 4)}-${pad(d.getUTCMonth() + 1, 2)}-${pad(d.getUTCDate(), 2)}`;
  const time = `${pad(d.getUTCHours(), 2)}:${pad(d.getUTCMinutes(), 2)}:${pad(d.getUTCSeconds(), 2)}`;
  return `${date}T${time}${micros === 0 ? '' : `.${pad(micros, 6)}`}+00:00`;
}
