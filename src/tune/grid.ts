import { WINDOW_REASON_BY_CODE, WINDOW_REASONS, type WindowReason } from '../core/window/window-reasons';
import { MemoryWindowStore, type MemoryWindowSettings } from '../stores/memory-window-store';
import type { WindowOutcome } from '../stores/types';
import { blankPing, pingAt, type PingColumns } from '../core/window/ping-columns';

/**
 * The what-if itself: the same pings through a sliding-window node's memory
 * store once per Heartbeat × Movement pair. The store is the node's own
 * (stores/memory-window-store, which calls core/window/sliding-window's
 * decideWindow), not a copy of the rule, so what the grid says a setting
 * admits is what a node with that setting admits, late pings, the memory
 * cap and "Forget after" included.
 *
 * Every rule of the node runs as the node runs it: the fix's quality as the
 * pings were read with it (ping.fix), the jump guard with the candidate the
 * store keeps, and value mode, whose grid is Heartbeat × Deadband instead
 * of Heartbeat × Movement.
 *
 * The store reads the host's clock for two things only: the clock guard
 * (maxAheadSeconds) and forgetting an asset after ttlSeconds. The grid
 * gives it the time each ping reached the node when that is known (a
 * node's sample), and otherwise (a file) the latest ping time so far, as
 * if the file were arriving live.
 */

/** The node's settings other than the two the grid varies (in value mode its deadband is the second). */
export type GridRule = Omit<MemoryWindowSettings, 'minSeconds' | 'minMetres'>;

export interface GridCell {
  minSeconds: number;
  /** The Movement of a position cell; absent in value mode. */
  minMetres?: number;
  /** The Deadband of a value-mode cell (in the rule's units, or percent); absent in position mode. */
  deadband?: number;
  received: number;
  admitted: number;
  suppressed: number;
  admittedFraction: number;
  /** How many pings each reason decided. */
  reasons: Partial<Record<WindowReason, number>>;
}

export interface GridSpec {
  seconds: readonly number[];
  metres: readonly number[];
  /** Value mode's second list, instead of metres; absent: DEFAULT_DEADBANDS. */
  deadbands?: readonly number[];
}

/** Value mode's Deadband list when the spec has none. */
export const DEFAULT_DEADBANDS: readonly number[] = [1, 2, 5, 10, 20];

/** Decides every ping with one setting; the counts of a grid cell. */
export function decideAll(columns: PingColumns, settings: MemoryWindowSettings): GridCell {
  const byCode = new Float64Array(WINDOW_REASON_BY_CODE.length);
  let admitted = 0;
  decideEach(columns, settings, (outcome) => {
    if (outcome.admit) admitted++;
    const code = WINDOW_REASONS[outcome.reason].code;
    byCode[code] = (byCode[code] ?? 0) + 1;
  });
  const reasons: Partial<Record<WindowReason, number>> = {};
  WINDOW_REASON_BY_CODE.forEach((reason, code) => {
    if (reason !== undefined && (byCode[code] as number) > 0) reasons[reason] = byCode[code];
  });
  const received = columns.size;
  // A value-mode cell's second setting is its Deadband, a position cell's its Movement.
  const second = settings.mode === 'value' ? { deadband: settings.deadband ?? 0 } : { minMetres: settings.minMetres };
  return {
    minSeconds: settings.minSeconds,
    ...second,
    received,
    admitted,
    suppressed: received - admitted,
    admittedFraction: received === 0 ? 0 : admitted / received,
    reasons,
  };
}

/** Decides every ping with one setting, in order, telling `visit` each outcome and the ping's index. */
export function decideEach(columns: PingColumns, settings: MemoryWindowSettings, visit: (outcome: WindowOutcome, index: number) => void): void {
  let now = -Infinity;
  const store = new MemoryWindowStore(settings, () => now);
  const ping = blankPing();
  const { arrival, t } = columns;
  for (let i = 0; i < columns.size; i++) {
    const at = arrival[i] as number;
    // A file has no arrival times: its pings arrive "live", the clock never running back.
    now = at === at ? at : Math.max(now, t[i] as number);
    visit(store.decideNow(pingAt(columns, i, ping)), i);
  }
}

/**
 * The settings of every cell of the grid, in the cells' order: Heartbeat
 * first (one row per Heartbeat, then per Movement, or in value mode per
 * Deadband).
 */
export function cellSettings(spec: GridSpec, rule: GridRule): MemoryWindowSettings[] {
  if (rule.mode === 'value') {
    const deadbands = spec.deadbands ?? DEFAULT_DEADBANDS;
    // minMetres is no part of the value rule; 0 keeps the settings whole.
    return spec.seconds.flatMap((minSeconds) => deadbands.map((deadband) => ({ ...rule, minSeconds, minMetres: 0, deadband })));
  }
  return spec.seconds.flatMap((minSeconds) => spec.metres.map((minMetres) => ({ ...rule, minSeconds, minMetres })));
}

/** The second axis of a grid of this rule: Movement in metres, or value mode's Deadband. */
export function secondAxis(spec: GridSpec, rule: Pick<GridRule, 'mode'>): readonly number[] {
  return rule.mode === 'value' ? (spec.deadbands ?? DEFAULT_DEADBANDS) : spec.metres;
}

/** Every pair of the spec, in cellSettings' order. */
export function runGrid(columns: PingColumns, spec: GridSpec, rule: GridRule, onCell?: (done: number, total: number) => void): GridCell[] {
  const settings = cellSettings(spec, rule);
  const cells: GridCell[] = [];
  for (const s of settings) {
    cells.push(decideAll(columns, s));
    onCell?.(cells.length, settings.length);
  }
  return cells;
}
