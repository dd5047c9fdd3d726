import { MAX_ENTRIES, SLIDING_WINDOW_DEFAULTS } from '../core/defaults';
import type { MemoryWindowSettings } from '../stores/memory-window-store';
import type { GridRule, GridSpec } from './grid';

/**
 * The what-if's inputs as users give them: the Heartbeat and Movement lists
 * (the command's --seconds / --metres, the sidebar's two fields), checked
 * and bounded the same way for both, and the rest of a node's rule.
 */
export const DEFAULT_SECONDS = [10, 30, 60, 120, 300];
export const DEFAULT_METRES = [5, 10, 25, 50, 100];
/** The most values a list may have: 20 × 20 is already 400 passes over the pings. */
export const MAX_VALUES = 20;

export type ListResult = { ok: true; values: number[] } | { ok: false; problem: string; value: string };

/** A list of positive numbers, as `10,30,60` or an array; sorted, each once. */
export function parseList(input: string | readonly unknown[]): ListResult {
  const items = typeof input === 'string' ? input.split(',').map((s) => s.trim()) : input.map((v) => (typeof v === 'number' ? String(v) : typeof v === 'string' ? v.trim() : JSON.stringify(v)));
  const values: number[] = [];
  for (const item of items) {
    const value = /^[+]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$/.test(item) ? Number(item) : NaN;
    if (!(Number.isFinite(value) && value > 0)) return { ok: false, problem: 'notPositive', value: String(item) };
    if (!values.includes(value)) values.push(value);
  }
  if (values.length === 0) return { ok: false, problem: 'empty', value: '' };
  if (values.length > MAX_VALUES) return { ok: false, problem: 'tooMany', value: String(values.length) };
  return { ok: true, values: values.sort((a, b) => a - b) };
}

/** The spec with the node's current setting added to each list, so the chart can mark it. */
export function withCurrent(spec: GridSpec, minSeconds: number | undefined, minMetres: number | undefined): GridSpec {
  const add = (values: readonly number[], value: number | undefined): number[] =>
    value === undefined || !(value > 0) || values.includes(value) || values.length >= MAX_VALUES ? [...values] : [...values, value].sort((a, b) => a - b);
  return { seconds: add(spec.seconds, minSeconds), metres: add(spec.metres, minMetres) };
}

/**
 * The parts of a node's settings the grid keeps fixed, from the command's
 * options: what an option does not give is a new node's default (the clock
 * guard on, at 300 s).
 */
export function ruleOf(options: { ttlSeconds?: number }): GridRule {
  return { ttlSeconds: options.ttlSeconds ?? SLIDING_WINDOW_DEFAULTS.ttlSeconds, maxAssets: MAX_ENTRIES, maxAheadSeconds: SLIDING_WINDOW_DEFAULTS.maxAheadSeconds };
}

/**
 * The parts of a running node's settings (as its config read them) the
 * grid keeps fixed: its own, with an absent clock guard one the node
 * turned off.
 */
export function nodeRule(settings: Readonly<MemoryWindowSettings>): GridRule {
  const rule: GridRule = { ttlSeconds: settings.ttlSeconds, maxAssets: settings.maxAssets };
  if (settings.minHeadingDegrees !== undefined) rule.minHeadingDegrees = settings.minHeadingDegrees;
  if (settings.maxAheadSeconds !== undefined) rule.maxAheadSeconds = settings.maxAheadSeconds;
  return rule;
}
