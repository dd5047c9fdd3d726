import { MAX_ENTRIES, SLIDING_WINDOW_DEFAULTS, SLIDING_WINDOW_GUARD_DEFAULTS } from '../core/defaults';
import type { PingReadRule } from '../core/window/ping';
import { DEFAULT_DEADBANDS, type GridRule, type GridSpec } from './grid';

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

/** The spec with the node's current setting added to each list, so the chart can mark it (a value-mode node's deadband to the deadbands). */
export function withCurrent(spec: GridSpec, minSeconds: number | undefined, minMetres: number | undefined, deadband?: number): GridSpec {
  const add = (values: readonly number[], value: number | undefined): number[] =>
    value === undefined || !(value > 0) || values.includes(value) || values.length >= MAX_VALUES ? [...values] : [...values, value].sort((a, b) => a - b);
  const out: GridSpec = { seconds: add(spec.seconds, minSeconds), metres: add(spec.metres, minMetres) };
  if (spec.deadbands !== undefined || deadband !== undefined) out.deadbands = add(spec.deadbands ?? DEFAULT_DEADBANDS, deadband);
  return out;
}

/**
 * The parts of a node's settings the grid keeps fixed: every rule of the
 * node, its guards and its mode included. `from` says what an absent clock
 * guard or no-fix guard means: for the command's options, a node's default
 * (300 s; on); in a running node's settings, that the node has it off.
 */
export function ruleOf(settings: Record<string, unknown>, from: 'options' | 'node' = 'options'): GridRule {
  const number = (value: unknown): number | undefined => (typeof value === 'number' && Number.isFinite(value) ? value : undefined);
  const rule: GridRule = {
    ttlSeconds: number(settings.ttlSeconds) ?? SLIDING_WINDOW_DEFAULTS.ttlSeconds,
    maxAssets: number(settings.maxAssets) ?? MAX_ENTRIES,
  };
  const heading = number(settings.minHeadingDegrees);
  if (heading !== undefined) rule.minHeadingDegrees = heading;
  const ahead = from === 'node' || 'maxAheadSeconds' in settings ? number(settings.maxAheadSeconds) : SLIDING_WINDOW_DEFAULTS.maxAheadSeconds;
  if (ahead !== undefined) rule.maxAheadSeconds = ahead;
  const noFix = from === 'node' || 'noFix' in settings ? settings.noFix === true : SLIDING_WINDOW_GUARD_DEFAULTS.noFix;
  if (noFix) rule.noFix = true;
  for (const key of ['minSatellites', 'maxHdop', 'maxSpeedKmh', 'relocateAfterSeconds', 'relocateAfterPings'] as const) {
    const value = number(settings[key]);
    if (value !== undefined) rule[key] = value;
  }
  if (settings.mode === 'value') {
    rule.mode = 'value';
    // The node's own deadband (the grid puts each of its own in its place) and its unit.
    const deadband = number(settings.deadband);
    if (deadband !== undefined) rule.deadband = deadband;
    if (settings.deadbandPercent === true) rule.deadbandPercent = true;
  }
  return rule;
}

/** What of a grid's rule reading a ping applies (core/window/ping): its mode and the fix's quality. */
export function readRuleOf(rule: GridRule): PingReadRule {
  const read: PingReadRule = {};
  if (rule.mode !== undefined) read.mode = rule.mode;
  if (rule.noFix !== undefined) read.noFix = rule.noFix;
  if (rule.minSatellites !== undefined) read.minSatellites = rule.minSatellites;
  if (rule.maxHdop !== undefined) read.maxHdop = rule.maxHdop;
  return read;
}
