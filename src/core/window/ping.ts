import { eventFingerprint } from './event-fingerprint';
import { FIX_OK, fixQuality, type FixRule } from './fix-quality';
import { readId, readNumber, readNumberInRange, showValue, type FieldResult } from '../parse/fields';
import { parseInstant } from '../parse/instant';
import type { Ping, WindowMode } from './sliding-window';

/** The raw values a node found for one ping, before they are checked. */
export interface RawPing {
  assetId: unknown;
  time: unknown;
  /** Read in position mode only. */
  lat: unknown;
  lon: unknown;
  /** Read only when the turn rule is on; undefined or null: the ping has no heading. */
  heading?: unknown;
  /** Read only when the accuracy rule is on; undefined or null: unknown. */
  accuracy?: unknown;
  /** The values of the watched event properties, when any are watched. */
  events?: readonly unknown[];
  /** Value mode: the reading. */
  value?: unknown;
  /** The validity field (no-fix guard); undefined or null: unknown, a fix. */
  valid?: unknown;
  /** The number of satellites, read when the rule has minSatellites; undefined or null: unknown. */
  satellites?: unknown;
  /** The HDOP, read when the rule has maxHdop; undefined or null: unknown. */
  hdop?: unknown;
}

/** The fields a reader without a PingReadRule can reject. */
export type PingField = 'assetId' | 'time' | 'lat' | 'lon' | 'heading' | 'accuracy';
/** Every field a reader can reject: those of a PingReadRule's value mode and fix quality too. */
export type AnyPingField = PingField | 'value' | 'satellites' | 'hdop';

/** The parts of a node's rule that reading a ping applies: its mode, and the fix quality (core/window/fix-quality). */
export interface PingReadRule extends FixRule {
  mode?: WindowMode;
}

export type PingResult<F extends string = PingField> = { ok: true; ping: Ping } | { ok: false; field: F; value: string; problem: string };

/**
 * A ping's raw values checked and read into the one shape the rule decides
 * on, or the field that is wrong and why. Given a rule, it reads the
 * reading of value mode instead of the position, and decides the fix's
 * quality (`ping.fix`); without one it reads a position and leaves every
 * fix a fix, as before those rules existed, so its rejections name only the
 * fields of PingField.
 */
export function readPing(raw: RawPing): PingResult;
export function readPing(raw: RawPing, rule: PingReadRule): PingResult<AnyPingField>;
export function readPing(raw: RawPing, rule?: PingReadRule): PingResult<AnyPingField> {
  const assetId = readId(raw.assetId);
  if (!assetId.ok) return rejected('assetId', raw.assetId, assetId);
  const time = parseInstant(raw.time);
  if (!time.ok) return rejected('time', raw.time, time);
  const valueMode = rule?.mode === 'value';
  let lat = 0;
  let lon = 0;
  let value = NaN;
  if (valueMode) {
    const read = readNumber(raw.value);
    if (!read.ok) return rejected('value', raw.value, read);
    value = read.value;
  } else {
    const readLat = readNumberInRange(raw.lat, -90, 90);
    if (!readLat.ok) return rejected('lat', raw.lat, readLat);
    const readLon = readNumberInRange(raw.lon, -180, 180);
    if (!readLon.ok) return rejected('lon', raw.lon, readLon);
    lat = readLat.value;
    lon = readLon.value;
  }
  const heading = optional(raw.heading, NaN, readHeading);
  if (!heading.ok) return rejected('heading', raw.heading, heading);
  const accuracy = optional(raw.accuracy, 0, readAccuracy);
  if (!accuracy.ok) return rejected('accuracy', raw.accuracy, accuracy);
  let fix: Ping['fix'] = FIX_OK;
  if (rule !== undefined && !valueMode) {
    // Each field is read only for the limit that judges it.
    let satellites = NaN;
    if (rule.minSatellites !== undefined) {
      const read = optional(raw.satellites, NaN, readNotNegative);
      if (!read.ok) return rejected('satellites', raw.satellites, read);
      satellites = read.value;
    }
    let hdop = NaN;
    if (rule.maxHdop !== undefined) {
      const read = optional(raw.hdop, NaN, readNotNegative);
      if (!read.ok) return rejected('hdop', raw.hdop, read);
      hdop = read.value;
    }
    fix = fixQuality(lat, lon, raw.valid, satellites, hdop, rule);
  }
  // Every field is always set, so that every ping has one shape.
  return {
    ok: true,
    ping: {
      assetId: assetId.value,
      t: time.epochMicros / 1000,
      lat,
      lon,
      heading: heading.value,
      accuracy: accuracy.value,
      events: raw.events === undefined ? 0 : eventFingerprint(raw.events),
      // Undefined rather than NaN in position mode: a double field is boxed
      // on the heap, one more object for every ping that carries none.
      value: valueMode ? value : undefined,
      fix,
      retry: false,
    },
  };
}

function optional(value: unknown, absent: number, read: (value: unknown) => FieldResult<number>): FieldResult<number> {
  return value === undefined || value === null ? { ok: true, value: absent } : read(value);
}

function readHeading(value: unknown): FieldResult<number> {
  return readNumberInRange(value, 0, 360);
}

function readAccuracy(value: unknown): FieldResult<number> {
  const n = readNumber(value);
  if (!n.ok) return n;
  return n.value >= 0 ? n : { ok: false, problem: 'must be 0 or more metres' };
}

function readNotNegative(value: unknown): FieldResult<number> {
  const n = readNumber(value);
  if (!n.ok) return n;
  return n.value >= 0 ? n : { ok: false, problem: 'must be 0 or more' };
}

function rejected(field: AnyPingField, value: unknown, result: { problem: string }): { ok: false; field: AnyPingField; value: string; problem: string } {
  return { ok: false, field, value: showValue(value), problem: result.problem };
}
