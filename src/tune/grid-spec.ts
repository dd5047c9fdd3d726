import { MAX_ENTRIES, SLIDING_WINDOW_DEFAULTS } from '../core/defaults';
import type { PingReadRule } from '../core/window/ping';
import type { WindowRule } from '../core/window/sliding-window';
import type { MemoryWindowSettings } from '../stores/memory-window-store';
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

/** The rules of a node the command takes as options; each absent one as a new node has it. */
export type RuleOptions = Pick<WindowRule, 'noFix' | 'minSatellites' | 'maxHdop' | 'maxSpeedKmh' | 'relocateAfterSeconds' | 'relocateAfterPings' | 'mode' | 'deadband' | 'deadbandPercent'> & {
  ttlSeconds?: number;
};

/** The guards copied as they are from options or settings to a grid's rule. */
const GUARDS = ['minSatellites', 'maxHdop', 'maxSpeedKmh', 'relocateAfterSeconds', 'relocateAfterPings'] as const;

/**
 * The parts of a node's settings the grid keeps fixed, from the command's
 * options: what an option does not give is a new node's default (the clock
 * guard on, at 300 s; the no-fix guard on).
 */
export function ruleOf(options: RuleOptions): GridRule {
  const rule: GridRule = { ttlSeconds: options.ttlSeconds ?? SLIDING_WINDOW_DEFAULTS.ttlSeconds, maxAssets: MAX_ENTRIES, maxAheadSeconds: SLIDING_WINDOW_DEFAULTS.maxAheadSeconds };
  return withGuards(rule, { ...options, noFix: options.noFix ?? SLIDING_WINDOW_DEFAULTS.noFix });
}

/**
 * The parts of a running node's settings (as its config read them) the
 * grid keeps fixed: its own, every guard and its mode included, with an
 * absent guard one the node turned off.
 */
export function nodeRule(settings: Readonly<MemoryWindowSettings>): GridRule {
  const rule: GridRule = { ttlSeconds: settings.ttlSeconds, maxAssets: settings.maxAssets };
  if (settings.minHeadingDegrees !== undefined) rule.minHeadingDegrees = settings.minHeadingDegrees;
  if (settings.maxAheadSeconds !== undefined) rule.maxAheadSeconds = settings.maxAheadSeconds;
  return withGuards(rule, settings);
}

/** `rule` with the fix's quality, the jump guard and the mode of `from`, each only when on. */
function withGuards(rule: GridRule, from: Readonly<RuleOptions>): GridRule {
  if (from.noFix === true) rule.noFix = true;
  for (const key of GUARDS) {
    const value = from[key];
    if (value !== undefined && Number.isFinite(value)) rule[key] = value;
  }
  if (from.mode === 'value') {
    rule.mode = 'value';
    // The node's own deadband (the grid puts each of its own in its place) and its unit.
    if (from.deadband !== undefined && Number.isFinite(from.deadband)) rule.deadband = from.deadband;
    if (from.deadbandPercent === true) rule.deadbandPercent = true;
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
