import { textOf } from '../core/parse/fields';

/**
 * Numbers from a node's saved config. The editor stores what was typed, as a
 * string; `${ENV}` references are already substituted by the runtime.
 */
export function positiveNumber(value: unknown, name: string, fallback: number): number {
  if (value === undefined || value === null || value === '') return fallback;
  const n = typeof value === 'number' ? value : Number(textOf(value).trim());
  if (!Number.isFinite(n) || n <= 0) {
    throw new Error(`${name} must be a positive number, not ${JSON.stringify(value)}`);
  }
  return n;
}

export function positiveInteger(value: unknown, name: string, fallback: number): number {
  const n = positiveNumber(value, name, fallback);
  if (!Number.isSafeInteger(n)) throw new Error(`${name} must be a whole number, not ${JSON.stringify(value)}`);
  return n;
}

/** An optional bound: blank means none. */
export function optionalNumber(value: unknown, name: string): number | undefined {
  if (value === undefined || value === null || textOf(value).trim() === '') return undefined;
  const n = typeof value === 'number' ? value : Number(textOf(value).trim());
  if (!Number.isFinite(n)) throw new Error(`${name} must be a number or blank, not ${JSON.stringify(value)}`);
  return n;
}

/** One of a fixed set of words; blank means the default, anything else is refused with the words allowed. */
export function oneOf<T extends string>(value: unknown, name: string, allowed: readonly T[], fallback: T): T {
  if (isBlank(value)) return fallback;
  const found = allowed.find((word) => word === value);
  if (found === undefined) {
    throw new Error(`${name} must be ${allowed.map((word) => JSON.stringify(word)).join(' or ')}, not ${JSON.stringify(value)}`);
  }
  return found;
}

/** Absent, or cleared in the editor. */
export function isBlank(value: unknown): boolean {
  return value === undefined || value === null || (typeof value === 'string' && value.trim() === '');
}

/** A number of 0 or more (0 usually meaning "off"). */
export function nonNegativeNumber(value: unknown, name: string, fallback: number): number {
  if (value === undefined || value === null || value === '') return fallback;
  const n = typeof value === 'number' ? value : Number(textOf(value).trim());
  if (!Number.isFinite(n) || n < 0) throw new Error(`${name} must be 0 or more, not ${JSON.stringify(value)}`);
  return n;
}

/** An option that is off when blank: a number of 0 or more, or undefined. */
export function optionalNonNegative(value: unknown, name: string): number | undefined {
  return isBlank(value) ? undefined : nonNegativeNumber(value, name, 0);
}

/** An option that is off when blank: a number greater than 0, or undefined. */
export function optionalPositive(value: unknown, name: string): number | undefined {
  return isBlank(value) ? undefined : positiveNumber(value, name, 0);
}

/** A checkbox: true or false (or their words, from a flow written by hand); blank means the default. */
export function flag(value: unknown, name: string, fallback: boolean): boolean {
  if (isBlank(value)) return fallback;
  if (value === true || value === 'true') return true;
  if (value === false || value === 'false') return false;
  throw new Error(`${name} must be true or false, not ${JSON.stringify(value)}`);
}
