/**
 * One sensor reading as the reconnect-dedup node receives it, checked and
 * reduced to the parts its idempotency key is made of. Where each part sits
 * comes from the node's configuration, as a path inside the reading, since
 * readings arrive flat from a decoder or nested in a LoRaWAN network
 * server's uplink (`uplink_message.decoded_payload.fill_pct`).
 */
import { readId, readNumber, readSequence, showValue } from '../parse/fields';
import { parseInstant } from '../parse/instant';
import { readPath, type PropertyPath } from '../parse/property-path';

export interface MeasureField {
  /** Its name in the hashed JSON: the path's last name unless the user gave one. */
  name: string;
  path: PropertyPath;
  /** The valid range; undefined: unbounded on that side. */
  min?: number;
  max?: number;
}

export interface ReadingFields {
  /** Null: the device id is the message's (msg.topic, say), handed to readReading for every reading of it. */
  device: PropertyPath | null;
  /** Where a device id given by the message was read, for errors (`msg.topic`). */
  deviceLabel?: string;
  seq: PropertyPath;
  /** The timestamp, hashed as `ts` whatever this path (see TS_NAME). */
  ts: PropertyPath;
  /** The measured fields, hashed with the timestamp. */
  measures: readonly MeasureField[];
}

/**
 * The timestamp's name in the hashed JSON, whatever its path: the reference
 * design's idempotency_key names it `ts`, so that a worker mapping the same
 * uplink to its SensorReading gets the same key. (Development rounds 1 and
 * 2 used the path's last name: `received_at` for The Things Stack's preset.)
 */
export const TS_NAME = 'ts';

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
  /** The offending value as the reading held it (undefined when missing), for the audit. */
  given: unknown;
  problem: string;
  /** Where the value was read when it was not inside the reading (a device id from msg.topic). */
  where?: string;
}

export type ReadingResult = { ok: true; reading: Reading } | ReadingRejection;

/**
 * `messageDevice`: the device id the message gave, when `fields.device` is
 * null (read from msg.topic, say): every reading of the message gets it.
 */
export function readReading(raw: unknown, fields: ReadingFields, messageDevice?: unknown): ReadingResult {
  if (!isRecord(raw)) {
    return { ok: false, path: null, value: showValue(raw), given: raw, problem: `must be an object, not ${kindOf(raw)}` };
  }
  // Each field read in line, with no closure or result object made for a
  // field that is fine: this runs for every reading of every burst.
  const devicePath = fields.device;
  const deviceValue = devicePath === null ? messageDevice : readPath(raw, devicePath);
  if (deviceValue === undefined) return devicePath === null ? { ...missing(null), where: fields.deviceLabel } : missing(devicePath);
  const device = readId(deviceValue);
  if (!device.ok) return devicePath === null ? { ...wrong(null, deviceValue, device.problem), where: fields.deviceLabel } : wrong(devicePath, deviceValue, device.problem);
  const seqValue = readPath(raw, fields.seq);
  if (seqValue === undefined) return missing(fields.seq);
  const seq = readSequence(seqValue);
  if (!seq.ok) return wrong(fields.seq, seqValue, seq.problem);
  const timeValue = readPath(raw, fields.ts);
  if (timeValue === undefined) return missing(fields.ts);
  const time = parseInstant(timeValue);
  if (!time.ok) return wrong(fields.ts, timeValue, time.problem);
  // No prototype: a measured field may be called anything, `__proto__` included.
  const measures: Record<string, number> = Object.create(null) as Record<string, number>;
  for (const measure of fields.measures) {
    const value = readPath(raw, measure.path);
    if (value === undefined) return missing(measure.path);
    const n = readNumber(value);
    if (!n.ok) return wrong(measure.path, value, n.problem);
    const outOfRange = rangeProblem(n.value, measure.min, measure.max);
    if (outOfRange !== undefined) return wrong(measure.path, value, outOfRange);
    measures[measure.name] = n.value;
  }
  return { ok: true, reading: { deviceId: device.value, seq: seq.value, epochMicros: time.epochMicros, measures } };
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
function missing(path: PropertyPath | null): ReadingRejection {
  return { ok: false, path, value: 'undefined', given: undefined, problem: 'is missing' };
}

function wrong(path: PropertyPath | null, value: unknown, problem: string): ReadingRejection {
  return { ok: false, path, value: showValue(value), given: value, problem };
}

/** Why a number is outside the field's valid range, or undefined when it is inside. */
function rangeProblem(n: number, min: number | undefined, max: number | undefined): string | undefined {
  const tooLow = min !== undefined && n < min;
  const tooHigh = max !== undefined && n > max;
  if (!tooLow && !tooHigh) return undefined;
  if (min !== undefined && max !== undefined) return `must be between ${min} and ${max}`;
  return tooLow ? `must be at least ${String(min)}` : `must be at most ${String(max)}`;
}
