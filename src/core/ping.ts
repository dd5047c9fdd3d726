import { readId, readNumberInRange, showValue } from './fields';
import { parseInstant } from './instant';
import type { Ping } from './sliding-window';

/** The raw values a node found for one ping, before they are checked. */
export interface RawPing {
  assetId: unknown;
  time: unknown;
  lat: unknown;
  lon: unknown;
}

export type PingField = keyof RawPing;

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
  return { ok: true, ping: { assetId: assetId.value, t: time.epochMicros / 1000, lat: lat.value, lon: lon.value } };
}

function rejected(field: PingField, value: unknown, result: { problem: string }): PingResult {
  return { ok: false, field, value: showValue(value), problem: result.problem };
}
