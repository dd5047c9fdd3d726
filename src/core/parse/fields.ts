/**
 * Field readers shared by both nodes. Each returns the value or a sentence
 * saying what is wrong with it, so that a node can name the field, the value
 * and (in a burst) the index in the error a Catch node receives.
 */
export type FieldResult<T> = { ok: true; value: T } | { ok: false; problem: string };

/** Ids longer than this are refused: they are almost always a wrong path. */
export const MAX_ID_LENGTH = 512;

/** A plain decimal number as text, as many decoders emit it. */
export const DECIMAL_NUMBER = /^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/;

export function readId(value: unknown): FieldResult<string> {
  if (typeof value === 'number' && Number.isFinite(value)) return { ok: true, value: String(value) };
  if (typeof value !== 'string') {
    return { ok: false, problem: `must be a non-empty string, not ${describeType(value)}` };
  }
  if (value.length === 0) return { ok: false, problem: 'must not be empty' };
  if (value.length > MAX_ID_LENGTH) {
    return { ok: false, problem: `is ${value.length} characters long; the limit is ${MAX_ID_LENGTH}` };
  }
  return { ok: true, value };
}

/**
 * A finite number, or a string holding one (many decoders emit strings). A
 * string is read only as a plain decimal number: "52,52" (a decimal comma)
 * is not a number, and is called so, since strings are accepted.
 */
export function readNumber(value: unknown): FieldResult<number> {
  let n: number;
  if (typeof value === 'number') n = value;
  else if (typeof value === 'string') {
    if (!DECIMAL_NUMBER.test(value.trim())) return { ok: false, problem: 'is not a number' };
    n = Number(value);
  } else return { ok: false, problem: `must be a number, not ${describeType(value)}` };
  return Number.isFinite(n) ? { ok: true, value: n } : { ok: false, problem: 'must be a finite number' };
}

export function readNumberInRange(value: unknown, min: number, max: number): FieldResult<number> {
  const n = readNumber(value);
  if (!n.ok) return n;
  return n.value >= min && n.value <= max
    ? n
    : { ok: false, problem: `must be between ${min} and ${max}` };
}

export function readSequence(value: unknown): FieldResult<number> {
  const n = readNumber(value);
  if (!n.ok) return n;
  return Number.isSafeInteger(n.value) && n.value >= 0
    ? n
    : { ok: false, problem: 'must be a whole number, 0 or more' };
}

/** A short, printable rendering of an offending value for error messages. */
export function showValue(value: unknown): string {
  let text: string;
  if (typeof value === 'string') text = JSON.stringify(value);
  else if (typeof value === 'number' || typeof value === 'boolean' || value == null) text = String(value);
  else if (value instanceof Date) text = `Date(${String(value.getTime())})`;
  else {
    try {
      text = JSON.stringify(value) ?? typeof value;
    } catch {
      text = describeType(value);
    }
  }
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
}

/**
 * The text a value stands for where a string is expected: a string as it
 * is, another primitive as String() writes it, an object as its JSON (so it
 * reads as what it holds, never as "[object Object]").
 */
export function textOf(value: unknown): string {
  if (typeof value === 'string') return value;
  if (typeof value !== 'object' || value === null) return String(value);
  try {
    return JSON.stringify(value) ?? describeType(value);
  } catch {
    return describeType(value);
  }
}

/**
 * A payload that still holds its text (an http-in with text/plain, an
 * mqtt-in set to output a string, tcp, udp): 'String' or 'Buffer', so the
 * node can say "parse it first" instead of naming a missing field. Undefined
 * for anything else.
 */
export function unparsedKind(value: unknown): 'String' | 'Buffer' | undefined {
  if (typeof value === 'string') return 'String';
  return Buffer.isBuffer(value) ? 'Buffer' : undefined;
}

export function describeType(value: unknown): string {
  if (value === null || value === undefined) return String(value);
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'object' ? 'an object' : `a ${typeof value}`;
}
