import { WINDOW_REASON_BY_CODE, WINDOW_REASONS, type WindowReason } from '../core/window/window-reasons';
import { MemoryWindowStore, type MemoryWindowSettings } from '../stores/memory-window-store';
import { blankPing, pingAt, type PingColumns } from '../core/window/ping-columns';

/**
 * The what-if itself: the same pings through a sliding-window node's memory
 * store once per Heartbeat × Movement pair. The store is the node's own
 * (stores/memory-window-store, which calls core/window/sliding-window's
 * decideWindow), not a copy of the rule, so what the grid says a setting
 * admits is what a node with that setting admits, late pings, the memory
 * cap and "Forget after" included.
 *
 * The store reads the host's clock for two things only: the clock guard
 * (maxAheadSeconds) and forgetting an asset after ttlSeconds. The grid
 * gives it the time each ping reached the node when that is known (a
 * node's sample), and otherwise (a file) the latest ping time so far, as
 * if the file were arriving live.
 */

/** The node's settings other than the two the grid varies. */
export type GridRule = Omit<MemoryWindowSettings, 'minSeconds' | 'minMetres'>;

export interface GridCell {
  minSeconds: number;
  minMetres: number;
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
}

/** Decides every ping with one setting; the counts of a grid cell. */
export function decideAll(columns: PingColumns, settings: MemoryWindowSettings): GridCell {
  let now = -Infinity;
  const store = new MemoryWindowStore(settings, () => now);
  const ping = blankPing();
  const byCode = new Float64Array(WINDOW_REASON_BY_CODE.length);
  let admitted = 0;
  const { arrival, t } = columns;
  for (let i = 0; i < columns.size; i++) {
    const at = arrival[i] as number;
    // A file has no arrival times: its pings arrive "live", the clock never running back.
    now = at === at ? at : Math.max(now, t[i] as number);
    const outcome = store.decideNow(pingAt(columns, i, ping));
    if (outcome.admit) admitted++;
    const code = WINDOW_REASONS[outcome.reason].code;
    byCode[code] = (byCode[code] ?? 0) + 1;
  }
  const reasons: Partial<Record<WindowReason, number>> = {};
  WINDOW_REASON_BY_CODE.forEach((reason, code) => {
    if (reason !== undefined && (byCode[code] as number) > 0) reasons[reason] = byCode[code];
  });
  const received = columns.size;
  return {
    minSeconds: settings.minSeconds,
    minMetres: settings.minMetres,
    received,
    admitted,
    suppressed: received - admitted,
    admittedFraction: received === 0 ? 0 : admitted / received,
    reasons,
  };
}

/** The settings of every cell of the grid, in the cells' order: Heartbeat first (one row per Heartbeat, then per Movement). */
export function cellSettings(spec: GridSpec, rule: GridRule): MemoryWindowSettings[] {
  return spec.seconds.flatMap((minSeconds) => spec.metres.map((minMetres) => ({ ...rule, minSeconds, minMetres })));
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
