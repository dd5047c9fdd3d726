/**
 * JSON written byte for byte as Python's
 * `json.dumps(value, sort_keys=True, separators=(",", ":"))` writes it, so a
 * hash taken here equals the one a Python worker takes of the same reading.
 *
 * Where the two languages differ:
 * - numbers: the reference model declares measurements as `float`, and
 *   Python's float repr always shows a fraction or an exponent (`71.0`,
 *   `1e-05`, `1e+16`), where JavaScript writes `71`, `0.00001`, `10000000000000000`;
 * - strings: `ensure_ascii` escapes every non-ASCII code unit as `\uXXXX`;
 * - key order: Python sorts by code point, JavaScript's default by UTF-16 unit.
 */

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
  return `{${keys.map((k) => `${pythonJsonString(k)}:${pythonJsonDumps(value[k] as JsonValue)}`).join(',')}}`;
}

/** `repr(float(n))` in Python 3: shortest round-trip digits, Python's layout. */
export function pythonFloatRepr(n: number): string {
  if (Number.isNaN(n)) return 'NaN';
  if (n === Infinity) return 'Infinity';
  if (n === -Infinity) return '-Infinity';
  if (n === 0) return Object.is(n, -0) ? '-0.0' : '0.0';
  // toExponential() with no argument gives the shortest digits that round-trip,
  // the same digits Python's repr chooses; only the layout differs.
  const [mantissa, exp] = Math.abs(n).toExponential().split('e') as [string, string];
  const digits = mantissa.replace('.', '');
  const exponent = Number(exp);
  const sign = n < 0 ? '-' : '';
  if (exponent < -4 || exponent >= 16) {
    const frac = digits.length > 1 ? `.${digits.slice(1)}` : '';
    const e = Math.abs(exponent);
    return `${sign}${digits[0]}${frac}e${exponent < 0 ? '-' : '+'}${e < 10 ? `0${e}` : e}`;
  }
  if (exponent < 0) return `${sign}0.${'0'.repeat(-exponent - 1)}${digits}`;
  const intLen = exponent + 1;
  if (digits.length <= intLen) return `${sign}${digits.padEnd(intLen, '0')}.0`;
  return `${sign}${digits.slice(0, intLen)}.${digits.slice(intLen)}`;
}

const SHORT_ESCAPES: Record<string, string> = {
  '"': '\\"',
  '\\': '\\\\',
  '\n': '\\n',
  '\r': '\\r',
  '\t': '\\t',
  '\b': '\\b',
  '\f': '\\f',
};

export function pythonJsonString(s: string): string {
  let out = '"';
  for (let i = 0; i < s.length; i++) {
    const ch = s[i] as string;
    const code = s.charCodeAt(i);
    const short = SHORT_ESCAPES[ch];
    if (short !== undefined) out += short;
    else if (code < 0x20 || code > 0x7e) out += `\\u${code.toString(16).padStart(4, '0')}`;
    else out += ch;
  }
  return `${out}"`;
}

function compareCodePoints(a: string, b: string): number {
  const ia = a[Symbol.iterator]();
  const ib = b[Symbol.iterator]();
  for (;;) {
    const ca = ia.next();
    const cb = ib.next();
    if (ca.done || cb.done) return ca.done ? (cb.done ? 0 : -1) : 1;
    const diff = (ca.value.codePointAt(0) as number) - (cb.value.codePointAt(0) as number);
    if (diff !== 0) return diff;
  }
}
