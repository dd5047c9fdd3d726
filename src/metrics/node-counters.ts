import { ScriptFailedError, StoreUnreachableError, TimeoutError } from '../redis/store-errors';
import { WINDOW_REASONS, type WindowReason } from '../core/window/window-reasons';

/**
 * What a dedup node counts for Prometheus, as plain numbers: the insight
 * registry (node-red/insight) adds to them on every decision, and the
 * exporter (metrics/exporter) turns them into prom-client metrics only when
 * Prometheus scrapes. An increment here is an array write; a prom-client
 * inc() per message would hash its labels every time.
 *
 * Held with the node's insight record, by node id: a redeploy keeps
 * counting where the old node left off, so the counters never go down while
 * the node exists.
 */

/** Adds to one counter of a column (an index out of range would be a bug of this module's tables, and counts nothing). */
export function add(counts: Float64Array, slot: number, n = 1): void {
  counts[slot] = (counts[slot] ?? 0) + n;
}

/** Slot 0 of a sliding-window node's decisions: admitted because the store failed. */
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

/** Classes of store failure: few and fixed, whatever the error's own words. */
export const FAILURE_CAUSES = ['timeout', 'unreachable', 'script', 'other'] as const;
export type FailureCause = (typeof FAILURE_CAUSES)[number];

/**
 * The class of a store failure, by its type (redis/store-errors):
 * `timeout` (Redis did not answer in time), `unreachable` (no working
 * connection: refused, closed, authentication), `script` (Redis answered
 * with an error, or runs no scripts), `other`.
 */
export function failureCause(error: unknown): FailureCause {
  if (error instanceof TimeoutError) return 'timeout';
  if (error instanceof StoreUnreachableError) return 'unreachable';
  if (error instanceof ScriptFailedError) return 'script';
  return 'other';
}

export class NodeCounters {
  /** Decisions (pings or readings) by slot of WINDOW_SLOTS or SENSOR_SLOTS. */
  readonly decisions: Float64Array;
  /** Messages or readings that could not be read, or not decided (the store failed and Catch got them). */
  rejected = 0;
  /** Sensor: admissions that took over a pending key whose lease ran out. */
  leaseExpired = 0;
  /** Store failures by FAILURE_CAUSES index. */
  readonly failures = new Float64Array(FAILURE_CAUSES.length);

  constructor(readonly window: boolean) {
    this.decisions = new Float64Array(window ? WINDOW_SLOTS.length : SENSOR_SLOTS.length);
  }

  storeFailed(error: unknown): void {
    add(this.failures, FAILURE_CAUSES.indexOf(failureCause(error)));
  }
}
