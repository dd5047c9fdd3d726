import { eventFingerprint } from './event-fingerprint';
import { readId, readNumber, readNumberInRange, showValue, type FieldResult } from '../parse/fields';
import { parseInstant } from '../parse/instant';
import type { Ping } from './sliding-window';

/** The raw values a node found for one ping, before they are checked. */
export interface RawPing {
  assetId: unknown;
  time: unknown;
  lat: unknown;
  lon: unknown;
  /** Read only when the turn rule is on; undefined or null: the ping has no heading. */
  heading?: unknown;
  /** Read only when the accuracy rule is on; undefined or null: unknown. */
  accuracy?: unknown;
  /** The values of the watched event properties, when any are watched. */
  events?: readonly unknown[];
}

export type PingField = 'assetId' | 'time' | 'lat' | 'lon' | 'heading' | 'accuracy';

export type PingResult =
  | { ok: true; ping: Ping }
  | { ok: false; field: PingField; value: string; problem: string };

export function readPing(raw: RawPing): PingResult {
  const assetId = readId(raw.assetId);
  if (!assetId.ok) return rejected('assetId', raw.assetId, assetId);
  const time = parseInstant(raw.time);
  if (!time.ok) return rejected('time', raw.time, time);
  const lat = readNumberInRange(raw.lat, -90, 90);
  if (!lat.ok) return rejected('lat', raw.lat, lat);
  const lon = readNumberInRange(raw.lon, -180, 180);
  if (!lon.ok) return rejected('lon', raw.lon, lon);
  const heading = optional(raw.heading, NaN, readHeading);
  if (!heading.ok) return rejected('heading', raw.heading, heading);
  const accuracy = optional(raw.accuracy, 0, readAccuracy);
  if (!accuracy.ok) return rejected('accuracy', raw.accuracy, accuracy);
  // Every field is always set, so that every ping has one shape.
  return {
    ok: true,
    ping: {
      assetId: assetId.value,
      t: time.epochMicros / 1000,
      lat: lat.value,
      lon: lon.value,
      heading: heading.value,
      accuracy: accuracy.value,
      events: raw.events === undefined ? 0 : eventFingerprint(raw.events),
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

function rejected(field: PingField, value: unknown, result: { problem: string }): PingResult {
  return { ok: false, field, value: showValue(value), problem: result.problem };
}
