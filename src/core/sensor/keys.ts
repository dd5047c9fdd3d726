import type { KeyResult } from './burst';
import { readId, showValue } from '../parse/fields';
import { ContentLayout, keyText } from './idempotency-key';
import { readReading, TS_NAME, type ReadingFields } from './reading';

/**
 * Key mode `reading`: the idempotency key v1 of a reading (device + seq +
 * content hash), grouped by device. The hashed JSON's layout is worked out
 * here, once for the node's fields, not once per reading. `device`: the
 * message's device id, when the fields take it from the message.
 */
export function readingKeyer(fields: ReadingFields): (raw: unknown, device?: unknown) => KeyResult {
  const layout = new ContentLayout(TS_NAME, fields.measures.map((m) => m.name));
  return (raw, device) => {
    const read = readReading(raw, fields, device);
    if (!read.ok) {
      return read.where === undefined
        ? { ok: false, path: read.path, value: read.value, given: read.given, problem: read.problem }
        : { ok: false, path: read.path, value: read.value, given: read.given, problem: read.problem, where: read.where };
    }
    const { deviceId, seq, epochMicros, measures } = read.reading;
    return { ok: true, key: keyText(deviceId, seq, layout.hash(epochMicros, measures)), group: deviceId };
  };
}

/** Key mode `property`: the key is a value the flow chose (a message property or an expression), its own group. */
export function propertyKey(value: unknown): KeyResult {
  if (value === undefined) return { ok: false, path: null, value: 'undefined', given: undefined, problem: 'is missing' };
  const id = readId(value);
  return id.ok ? { ok: true, key: id.value, group: id.value } : { ok: false, path: null, value: showValue(value), given: value, problem: id.problem };
}
