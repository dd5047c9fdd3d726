import type { KeyResult } from './burst';
import { readId, showValue } from './fields';
import { idempotencyKey } from './idempotency-key';
import { readReading, type ReadingFields } from './reading';

/** Key mode `reading`: the idempotency key v1 of a reading (device + seq + content hash), grouped by device. */
export function readingKey(raw: unknown, fields: ReadingFields): KeyResult {
  const read = readReading(raw, fields);
  if (!read.ok) return { ok: false, path: read.path, value: read.value, problem: read.problem };
  const { deviceId, seq, epochMicros, measures } = read.reading;
  return { ok: true, key: idempotencyKey({ deviceId, seq, timeField: fields.tsName, epochMicros, measures }), group: deviceId };
}

/** Key mode `property`: the key is a value the flow chose (a message property or an expression), its own group. */
export function propertyKey(value: unknown): KeyResult {
  if (value === undefined) return { ok: false, path: null, value: 'undefined', problem: 'is missing' };
  const id = readId(value);
  return id.ok ? { ok: true, key: id.value, group: id.value } : { ok: false, path: null, value: showValue(value), problem: id.problem };
}
