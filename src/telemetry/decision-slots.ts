import { WINDOW_REASONS, type WindowReason } from '../core/window/window-reasons';

/**
 * The columns a node's decisions are counted in, by reason, as plain
 * numbers: a record adds to them on every decision (an array write; a
 * prom-client inc() per message would hash its labels every time) and the
 * readers (metrics/exporter, the stats node) name them by these tables.
 */

/** Adds to one counter of a column (an index out of range would be a bug of this module's tables, and counts nothing). */
export function add(counts: Float64Array, slot: number, n = 1): void {
  counts[slot] = (counts[slot] ?? 0) + n;
}

/** Slot 0 of a node's decisions: admitted because the store failed. */
export const STORE_UNAVAILABLE = 0;

/**
 * A sliding-window node's reasons, by slot: store-unavailable, then each
 * reason at its own code (core/window/window-reasons), so the hot path indexes by
 * the code it already has.
 */
export const WINDOW_SLOTS: readonly { reason: string; admit: boolean }[] = (() => {
  const slots: { reason: string; admit: boolean }[] = [{ reason: 'store-unavailable', admit: true }];
  for (const reason of Object.keys(WINDOW_REASONS) as WindowReason[]) slots[WINDOW_REASONS[reason].code] = { reason, admit: WINDOW_REASONS[reason].admit };
  return slots;
})();

/** A sensor node's reading decisions, by slot, with msg.dedup.reason's words. */
export const SENSOR_NEW = 1;
export const SENSOR_REPLAYED = 2;
export const SENSOR_DUPLICATE = 3;
export const SENSOR_IN_FLIGHT = 4;
export const SENSOR_SLOTS: readonly { reason: string; admit: boolean }[] = [
  { reason: 'store-unavailable', admit: true },
  { reason: 'new', admit: true },
  { reason: 'replayed', admit: true },
  { reason: 'duplicate', admit: false },
  { reason: 'in-flight', admit: false },
];

/** A confirm node's keys, by slot: settled in time (by its action), late (after the lease), not settled. */
export const CONFIRM_OUTCOMES = ['confirmed', 'released', 'late', 'unmatched'] as const;
export const CONFIRMED_SLOT = 0;
export const RELEASED_SLOT = 1;
export const LATE_SLOT = 2;
export const UNMATCHED_SLOT = 3;

/**
 * Whether decisions are counted by reason: on unless the runtime setting
 * dedupMetrics is false (node-red/metrics-endpoint decides); the metrics
 * bench turns it off to measure what counting costs. Every other count is
 * kept regardless: the status line and the sidebar show them.
 */
const counting = { reasons: true };

export function countReasons(on: boolean): void {
  counting.reasons = on;
}

export function countingReasons(): boolean {
  return counting.reasons;
}
