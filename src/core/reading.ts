/**
 * One sensor reading as the reconnect-dedup node receives it, checked and
 * reduced to the parts its idempotency key is made of. Where each part sits
 * comes from the node's configuration, as a path inside the reading, since
 * readings arrive flat from a decoder or nested in a LoRaWAN network
 * server's uplink (`uplink_message.decoded_payload.fill_pct`).
 */
import { readId, readNumber, readSequence, showValue, type FieldResult } from './fields';
import { parseInstant } from './instant';
import { readPath, type PropertyPath } from './property-path';

export interface MeasureField {
  /** Its name in the hashed JSON: the path's last name unless the user gave one. */
  name: string;
  path: PropertyPath;
  /** The valid range; undefined: unbounded on that side. */
  min?: number;
  max?: number;
}

export interface ReadingFields {
  device: PropertyPath;
  seq: PropertyPath;
  ts: PropertyPath;
  /** The timestamp's name in the hashed JSON: its path's last name. */
  tsName: string;
  /** The measured fields, hashed with the timestamp. */
  measures: readonly MeasureField[];
}

export interface Reading {
  deviceId: string;
  seq: number;
  epochMicros: number;
  measures: Record<string, number>;
}

export interface ReadingRejection {
  ok: false;
  /** The offending field's path, or null when the reading itself is not an object. */
  path: PropertyPath | null;
  /** The offending value, rendered for an error message. */
  value: string;
  problem: string;
}

export type ReadingResult = { ok: true; reading: Reading } | ReadingRejection;

export function readReading(raw: unknown, fields: ReadingFields): ReadingResult {
  if (!isRecord(raw)) {
    return { ok: false, path: null, value: showValue(raw), problem: `must be an object, not ${kindOf(raw)}` };
  }
  const device = present(raw, fields.device, readId);
  if (!device.ok) return device;
  const seq = present(raw, fields.seq, readSequence);
  if (!seq.ok) return seq;
  const time = present(raw, fields.ts, (value): FieldResult<number> => {
    const parsed = parseInstant(value);
    return parsed.ok ? { ok: true, value: parsed.epochMicros } : parsed;
  });
  if (!time.ok) return time;
  // No prototype: a measured field may be called anything, `__proto__` included.
  const measures: Record<string, number> = Object.create(null) as Record<string, number>;
  for (const measure of fields.measures) {
    const value = present(raw, measure.path, (v) => readBounded(v, measure.min, measure.max));
    if (!value.ok) return value;
    measures[measure.name] = value.value;
  }
  return { ok: true, reading: { deviceId: device.value, seq: seq.value, epochMicros: time.value, measures } };
}

/** True for what can hold a reading's fields: a plain object, not a Buffer, Date or array. */
export function isRecord(value: unknown): value is Record<string, unknown> {
  return (
    typeof value === 'object' &&
    value !== null &&
    !Array.isArray(value) &&
    !(value instanceof Date) &&
    !Buffer.isBuffer(value)
  );
}

function kindOf(value: unknown): string {
  if (value === null) return 'null';
  if (value === undefined) return 'undefined';
  if (Array.isArray(value)) return 'an array';
  if (value instanceof Date) return 'a Date';
  if (Buffer.isBuffer(value)) return 'a Buffer';
  return `a ${typeof value}`;
}

type Present<T> = { ok: true; value: T } | ReadingRejection;

/**
 * A missing field gets its own wording: the shared readers would describe
 * it by type ("not a undefined"), which reads like a bug, not a hint.
 */
function present<T>(raw: Record<string, unknown>, path: PropertyPath, read: (value: unknown) => FieldResult<T>): Present<T> {
  const value = readPath(raw, path);
  if (value === undefined) return { ok: false, path, value: 'undefined', problem: 'is missing' };
  const result = read(value);
  return result.ok ? result : { ok: false, path, value: showValue(value), problem: result.problem };
}

function readBounded(value: unknown, min: number | undefined, max: number | undefined): FieldResult<number> {
  const n = readNumber(value);
  if (!n.ok) return n;
  const tooLow = min !== undefined && n.value < min;
  const tooHigh = max !== undefined && n.value > max;
  if (!tooLow && !tooHigh) return n;
  if (min !== undefined && max !== undefined) return { ok: false, problem: `must be between ${min} and ${max}` };
  return { ok: false, problem: tooLow ? `must be at least ${String(min)}` : `must be at most ${String(max)}` };
}
