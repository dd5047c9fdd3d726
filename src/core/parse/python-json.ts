/**
 * The parts of JSON as Python's
 * `json.dumps(value, sort_keys=True, separators=(",", ":"))` writes it (a
 * number, a string, the order of keys), from which the idempotency key's
 * ContentLayout writes a reading, so that a hash taken here equals the one a
 * Python worker takes of the same reading.
 *
 * Where the two languages differ:
 * - numbers: the reference model declares measurements as `float`, and
 *   Python's float repr always shows a fraction or an exponent (`71.0`,
 *   `1e-05`, `1e+16`), where JavaScript writes `71`, `0.00001`, `10000000000000000`;
 * - strings: `ensure_ascii` escapes every non-ASCII code unit as `\uXXXX`;
 * - key order: Python sorts by code point, JavaScript's default by UTF-16 unit.
 */

/** `repr(float(n))` in Python 3: shortest round-trip digits, Python's layout. */
export function pythonFloatRepr(n: number): string {
  if (Number.isNaN(n)) return 'NaN';
  if (n === Infinity) return 'Infinity';
  if (n === -Infinity) return '-Infinity';
  if (n === 0) return Object.is(n, -0) ? '-0.0' : '0.0';
  // The common case, taken first because this runs for every reading of a
  // burst: where Python writes plain decimals (1e-4 <= |n| < 1e16), so does
  // String(n), with the same shortest digits; only whole numbers lack the
  // `.0`. (A non-integer double is below 2^53, so never reaches 1e16.)
  const magnitude = Math.abs(n);
  if (magnitude >= 1e-4 && magnitude < 1e16) return Number.isInteger(n) ? `${n}.0` : String(n);
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

/** Printable ASCII other than `"` and `\`: written as is. */
const PLAIN_ASCII = /^[\x20\x21\x23-\x5b\x5d-\x7e]*$/;

export function pythonJsonString(s: string): string {
  // Keys, timestamps and ids are almost always plain: no escaping to do.
  if (PLAIN_ASCII.test(s)) return `"${s}"`;
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

/** Python's order of str keys: by code point (JavaScript's default sort is by UTF-16 unit). */
export function compareCodePoints(a: string, b: string): number {
  // UTF-16 unit order is code point order until a surrogate is involved, and
  // comparing units needs no iterator objects: taken for everything else.
  const shorter = Math.min(a.length, b.length);
  for (let i = 0; i < shorter; i++) {
    const ua = a.charCodeAt(i);
    const ub = b.charCodeAt(i);
    if (ua === ub) continue;
    if (isSurrogate(ua) || isSurrogate(ub)) return compareBySurrogatePairs(a, b);
    return ua - ub;
  }
  return a.length - b.length;
}

function isSurrogate(unit: number): boolean {
  return unit >= 0xd800 && unit <= 0xdfff;
}

function compareBySurrogatePairs(a: string, b: string): number {
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
