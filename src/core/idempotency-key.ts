/**
 * Idempotency key v1: `<device_id>:<seq>:<h>`, where `h` is the first 16 hex
 * characters of SHA-256 over the canonical JSON of the reading's content
 * (its timestamp plus the measured fields). Byte-identical to the reference
 * Python design's `idempotency_key`, so both can share one seen-set.
 *
 * seq alone is not enough (it restarts after a battery swap) and the
 * timestamp alone is worse (coarse clocks give distinct readings the same
 * second): binding the content is what makes the key identify one reading.
 */
import { createHash } from 'crypto';
import { formatPythonIsoUtc } from './instant';
import { pythonJsonDumps, type JsonValue } from './python-json';

export interface KeyedContent {
  deviceId: string;
  seq: number;
  /** The name the timestamp has in the canonical JSON, e.g. `ts`. */
  timeField: string;
  epochMicros: number;
  /** Measured fields by name, e.g. `{ fill_pct: 62.5 }`. */
  measures: Readonly<Record<string, number>>;
}

export function contentHash(content: KeyedContent): string {
  // Copied key by key rather than spread: a spread of the reader's
  // prototype-less object took V8's slow path, for every reading. The copy
  // has no prototype either, so a field named `__proto__` stays a field.
  const canonical = Object.create(null) as Record<string, JsonValue>;
  for (const name of Object.keys(content.measures)) canonical[name] = content.measures[name] as number;
  canonical[content.timeField] = formatPythonIsoUtc(content.epochMicros);
  return createHash('sha256').update(pythonJsonDumps(canonical), 'utf8').digest('hex').slice(0, 16);
}

export function idempotencyKey(content: KeyedContent): string {
  return `${content.deviceId}:${content.seq}:${contentHash(content)}`;
}

/** The device part of a v1 key; device ids may themselves contain colons. */
export function deviceOfKey(key: string): string {
  const hashColon = key.lastIndexOf(':');
  return key.slice(0, key.lastIndexOf(':', hashColon - 1));
}
