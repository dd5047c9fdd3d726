import { readId, readNumber, readSequence, showValue, type FieldResult } from './fields';
import { parseInstant } from './instant';

/**
 * One sensor reading as the reconnect-dedup node receives it, checked and
 * reduced to the parts its idempotency key is made of. Field names come from
 * the node's configuration, because sensors other than bin fill-level meters
 * name and measure things differently.
 */
export interface ReadingFields {
  device: string;
  seq: string;
  ts: string;
  /** The measured fields, hashed with the timestamp; never includes `ts`. */
  measures: readonly string[];
  /** Range every measured field must lie in; undefined means unbounded on that side. */
  min?: number;
  max?: number;
}

export interface Reading {
  deviceId: string;
  seq: number;
  epochMicros: number;
  measures: Record<string, number>;
}

export interface ReadingRejection {
  ok: false;
  /** The offending field, or null when the reading itself is not an object. */
  field: string | null;
  /** The offending value, rendered for an error message. */
  value: string;
  problem: string;
}

export type ReadingResult = { ok: true; reading: Reading } | ReadingRejection;

export function readReading(raw: unknown, fields: ReadingFields): ReadingResult {
  if (!isRecord(raw)) {
    return { ok: false, field: null, value: showValue(raw), problem: `must be an object, not ${kindOf(raw)}` };
  }
  const device = present(raw, fields.device, readId);
  if (!device.ok) return rejected(fields.device, raw, device);
  const seq = present(raw, fields.seq, readSequence);
  if (!seq.ok) return rejected(fields.seq, raw, seq);
  const time = present(raw, fields.ts, (value): FieldResult<number> => {
    const parsed = parseInstant(value);
    return parsed.ok ? { ok: true, value: parsed.epochMicros } : parsed;
  });
  if (!time.ok) return rejected(fields.ts, raw, time);
  // No prototype: a measured field may be called anything, `__proto__` included.
  const measures: Record<string, number> = Object.create(null) as Record<string, number>;
  for (const name of fields.measures) {
    const measure = present(raw, name, (value) => readBounded(value, fields.min, fields.max));
    if (!measure.ok) return rejected(name, raw, measure);
    measures[name] = measure.value;
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

/**
 * A missing field gets its own wording: the shared readers would describe
 * it by type ("not a undefined"), which reads like a bug, not a hint.
 */
function present<T>(raw: Record<string, unknown>, name: string, read: (value: unknown) => FieldResult<T>): FieldResult<T> {
  // Own properties only, so a reading cannot pick up `constructor` and friends.
  if (!Object.prototype.hasOwnProperty.call(raw, name) || raw[name] === undefined) {
    return { ok: false, problem: 'is missing' };
  }
  return read(raw[name]);
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

function rejected(field: string, raw: Record<string, unknown>, result: { problem: string }): ReadingRejection {
  const value = Object.prototype.hasOwnProperty.call(raw, field) ? raw[field] : undefined;
  return { ok: false, field, value: showValue(value), problem: result.problem };
}
