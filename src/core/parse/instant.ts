/**
 * Timestamps as they arrive in IoT payloads, reduced to one representation:
 * whole microseconds since the Unix epoch, UTC. Microseconds because the
 * reconnect-dedup key must reproduce Python's `datetime.isoformat()`, which
 * keeps them; a float64 holds any such instant up to the year 2255 exactly.
 */
import { DECIMAL_NUMBER, describeType } from './fields';

/**
 * A number below this is epoch seconds, at or above it epoch milliseconds.
 * 1e11 seconds is the year 5138 and 1e11 milliseconds is March 1973, so no
 * real device clock falls on the wrong side of the line.
 */
export const EPOCH_SECONDS_LIMIT = 1e11;

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

const NOT_ISO: InstantResult = { ok: false, problem: 'is not an ISO-8601 date-time' };

const HYPHEN = 0x2d;
const COLON = 0x3a;
const PLUS = 0x2b;

/**
 * YYYY-MM-DD, then T, t or a space, then hh:mm, optionally :ss with an
 * optional fraction (`.` or `,`, 1 to 9 digits), then optionally Z, z,
 * ±hh:mm or ±hhmm. Read character by character, with plain arithmetic and
 * no Date: this runs for every reading of a burst, and a regular
 * expression's match and its eleven substrings cost more than the rest of
 * the key together.
 */
function fromIsoString(text: string): InstantResult {
  const n = text.length;
  const year = digitsAt(text, 0, 4);
  const month = digitsAt(text, 5, 2);
  const day = digitsAt(text, 8, 2);
  const hour = digitsAt(text, 11, 2);
  const minute = digitsAt(text, 14, 2);
  if (
    year < 0 || month < 0 || day < 0 || hour < 0 || minute < 0 ||
    text.charCodeAt(4) !== HYPHEN || text.charCodeAt(7) !== HYPHEN || text.charCodeAt(13) !== COLON ||
    !isDateTimeSeparator(text.charCodeAt(10))
  ) {
    return NOT_ISO;
  }
  let at = 16;
  let second = 0;
  let micros = 0;
  if (text.charCodeAt(at) === COLON) {
    second = digitsAt(text, at + 1, 2);
    if (second < 0) return NOT_ISO;
    at += 3;
    const mark = text.charCodeAt(at);
    if (mark === 0x2e || mark === 0x2c) {
      let end = at + 1;
      while (end < n && isDigit(text.charCodeAt(end))) end++;
      const count = end - at - 1;
      if (count < 1 || count > 9) return NOT_ISO;
      // Digits past the sixth are truncated, as Python's datetime cannot hold them.
      const kept = Math.min(count, 6);
      micros = digitsAt(text, at + 1, kept) * 10 ** (6 - kept);
      at = end;
    }
  }
  let offsetMinutes = 0;
  let badOffset = false;
  if (at < n) {
    const mark = text.charCodeAt(at);
    if (mark === 0x5a || mark === 0x7a) {
      at += 1;
    } else if (mark === PLUS || mark === HYPHEN) {
      const oh = digitsAt(text, at + 1, 2);
      const minutesAt = text.charCodeAt(at + 3) === COLON ? at + 4 : at + 3;
      const om = digitsAt(text, minutesAt, 2);
      if (oh < 0 || om < 0) return NOT_ISO;
      badOffset = oh > 23 || om > 59;
      offsetMinutes = (mark === HYPHEN ? -1 : 1) * (oh * 60 + om);
      at = minutesAt + 2;
    }
    if (at !== n) return NOT_ISO;
  }
  if (
    year < 1 || month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month) ||
    hour > 23 || minute > 59 || second > 59
  ) {
    return { ok: false, problem: 'is not a valid calendar date-time' };
  }
  if (badOffset) return { ok: false, problem: 'has an invalid UTC offset' };
  const epochMs =
    daysFromCivil(year, month, day) * 86_400_000 + hour * 3_600_000 + (minute - offsetMinutes) * 60_000 + second * 1000;
  const epochMicros = epochMs * 1000 + micros;
  // An offset can carry 0001-01-01 or 9999-12-31 out of Python's range.
  if (epochMicros < START_EPOCH_MICROS || epochMicros >= END_EPOCH_MICROS) {
    return { ok: false, problem: 'is outside the years 1 to 9999 in UTC' };
  }
  return { ok: true, epochMicros };
}

function isDigit(code: number): boolean {
  return code >= 0x30 && code <= 0x39;
}

function isDateTimeSeparator(code: number): boolean {
  return code === 0x54 || code === 0x74 || code === 0x20;
}

/** The number written by `count` ASCII digits from `at`, or -1 when any of them is not a digit (or past the end). */
function digitsAt(text: string, at: number, count: number): number {
  let value = 0;
  for (let i = at; i < at + count; i++) {
    const code = text.charCodeAt(i);
    if (!isDigit(code)) return -1;
    value = value * 10 + (code - 0x30);
  }
  return value;
}

const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/** In the proleptic Gregorian calendar, which both Python and Date use. */
function daysInMonth(year: number, month: number): number {
  const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
  return month === 2 && leap ? 29 : (DAYS_IN_MONTH[month - 1] as number);
}

/**
 * Days from 1970-01-01 to the given date (proleptic Gregorian, any year),
 * counted in 400-year eras of 146,097 days from a year that starts in March,
 * so that the leap day falls at the end of the year.
 */
function daysFromCivil(year: number, month: number, day: number): number {
  const y = month <= 2 ? year - 1 : year;
  const era = Math.floor(y / 400);
  const yearOfEra = y - era * 400;
  const dayOfYear = Math.floor((153 * (month > 2 ? month - 3 : month + 9) + 2) / 5) + day - 1;
  const dayOfEra = yearOfEra * 365 + Math.floor(yearOfEra / 4) - Math.floor(yearOfEra / 100) + dayOfYear;
  return era * 146_097 + dayOfEra - 719_468;
}

/**
 * The date of a day counted from 1970-01-01, the inverse of daysFromCivil:
 * [year, month 1-12, day 1-31].
 */
function civilFromDays(days: number): [number, number, number] {
  const z = days + 719_468;
  const era = Math.floor(z / 146_097);
  const dayOfEra = z - era * 146_097;
  const yearOfEra = Math.floor(
    (dayOfEra - Math.floor(dayOfEra / 1460) + Math.floor(dayOfEra / 36_524) - Math.floor(dayOfEra / 146_096)) / 365,
  );
  const dayOfYear = dayOfEra - (365 * yearOfEra + Math.floor(yearOfEra / 4) - Math.floor(yearOfEra / 100));
  const shiftedMonth = Math.floor((5 * dayOfYear + 2) / 153);
  const day = dayOfYear - Math.floor((153 * shiftedMonth + 2) / 5) + 1;
  const month = shiftedMonth < 10 ? shiftedMonth + 3 : shiftedMonth - 9;
  return [yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day];
}

const pad = (n: number, width: number): string => String(n).padStart(width, '0');
const TWO_DIGITS = Array.from({ length: 100 }, (_, n) => pad(n, 2));

/**
 * The instant as Python's `datetime.isoformat()` writes an aware UTC
 * datetime: `2026-07-16T09:00:00+00:00`, with `.ffffff` only when the
 * microseconds are not zero.
 */
export function formatPythonIsoUtc(epochMicros: number): string {
  const micros = ((epochMicros % 1e6) + 1e6) % 1e6;
  if (epochMicros >= START_EPOCH_MICROS && epochMicros < END_EPOCH_MICROS) {
    // Years 1 to 9999, the ones readings have: the same text by arithmetic,
    // without a Date and its getters (this runs for every reading).
    const seconds = (epochMicros - micros) / 1e6;
    const days = Math.floor(seconds / 86_400);
    const ofDay = seconds - days * 86_400;
    const [year, month, day] = civilFromDays(days);
    const hms = `${TWO_DIGITS[Math.floor(ofDay / 3600)]}:${TWO_DIGITS[Math.floor(ofDay / 60) % 60]}:${TWO_DIGITS[ofDay % 60]}`;
    return `${pad(year, 4)}-${TWO_DIGITS[month]}-${TWO_DIGITS[day]}T${hms}${micros === 0 ? '' : `.${pad(micros, 6)}`}+00:00`;
  }
  const d = new Date((epochMicros - micros) / 1000);
  const date = `${pad(d.getUTCFullYear(), 4)}-${pad(d.getUTCMonth() + 1, 2)}-${pad(d.getUTCDate(), 2)}`;
  const time = `${pad(d.getUTCHours(), 2)}:${pad(d.getUTCMinutes(), 2)}:${pad(d.getUTCSeconds(), 2)}`;
  return `${date}T${time}${micros === 0 ? '' : `.${pad(micros, 6)}`}+00:00`;
}
