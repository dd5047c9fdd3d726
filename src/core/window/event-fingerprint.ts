/**
 * A fixed-size fingerprint of the values of a ping's watched event
 * properties (ignition, alarm, ...): the window record keeps these 48 bits,
 * never the values, so a record stays the same size whatever a flow
 * watches. Two pings whose values differ get different fingerprints except
 * with odds of one in 2^48.
 *
 * The values are written as canonical JSON (object keys sorted) so that
 * the same values give the same fingerprint whatever order a decoder put
 * their keys in; a property that is absent is written differently from one
 * that is null, so a property that appears or disappears is a change.
 */
import { sha256Hex } from '../sensor/idempotency-key';

export function eventFingerprint(values: readonly unknown[]): number {
  // canonical leaves the set as it found it, so the values can share one.
  const path = new Set<object>();
  let text = '';
  for (let i = 0; i < values.length; i++) text += `${i === 0 ? '' : ','}${canonical(values[i], path)}`;
  // 0 means "no properties watched"; a digest that starts with six zero
  // bytes is nudged, so that watching never reads as not watching.
  return Number.parseInt(sha256Hex(text).slice(0, 12), 16) || 1;
}

const ABSENT = '~';

function canonical(value: unknown, path: Set<object>): string {
  if (value === undefined) return ABSENT;
  if (value === null || typeof value === 'boolean') return String(value);
  if (typeof value === 'number') return Number.isFinite(value) ? JSON.stringify(value) : `"${String(value)}"`;
  if (typeof value === 'bigint') return `"${value.toString()}n"`;
  if (typeof value === 'string') return JSON.stringify(value);
  if (typeof value !== 'object') return `"${typeof value}"`;
  if (value instanceof Date) return JSON.stringify(Number.isFinite(value.getTime()) ? value.toISOString() : 'Invalid Date');
  if (Buffer.isBuffer(value)) return `"b64:${value.toString('base64')}"`;
  // A value that contains itself is written as a marker rather than followed forever.
  if (path.has(value)) return '"[cycle]"';
  path.add(value);
  let out: string;
  if (Array.isArray(value)) {
    out = `[${value.map((item) => canonical(item, path)).join(',')}]`;
  } else {
    const record = value as Record<string, unknown>;
    const keys = Object.keys(record).sort();
    out = `{${keys.map((key) => `${JSON.stringify(key)}:${canonical(record[key], path)}`).join(',')}}`;
  }
  path.delete(value);
  return out;
}
