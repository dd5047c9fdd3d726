/**
 * Python's `json.dumps(value, sort_keys=True, separators=(",", ":"))` for any
 * JSON value, written from the pack's own parts (src/core/parse/python-json): the
 * oracle the idempotency key's ContentLayout is held to, itself held to
 * CPython's output in test/unit/core/parse/python-json.spec.ts.
 */
import { compareCodePoints, pythonFloatRepr, pythonJsonString } from '../../src/core/parse/python-json';

export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };

export function pythonJsonDumps(value: JsonValue): string {
  if (value === null) return 'null';
  switch (typeof value) {
    case 'boolean':
      return value ? 'true' : 'false';
    case 'number':
      return pythonFloatRepr(value);
    case 'string':
      return pythonJsonString(value);
    default:
      break;
  }
  if (Array.isArray(value)) return `[${value.map(pythonJsonDumps).join(',')}]`;
  const keys = Object.keys(value).sort(compareCodePoints);
  let out = '{';
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i] as string;
    out += `${i === 0 ? '' : ','}${pythonJsonString(key)}:${pythonJsonDumps(value[key] as JsonValue)}`;
  }
  return `${out}}`;
}

