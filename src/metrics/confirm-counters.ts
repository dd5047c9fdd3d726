import { countIn, drop, keep, recordOf, recordsIn } from '../node-red/node-registry';
import { add, FAILURE_CAUSES, failureCause } from './node-counters';

/**
 * What the dedup confirm nodes count for Prometheus, by node id: keys
 * settled in time (confirmed or released, by the node's action), settled
 * after their lease ran out (late), and not settled (unmatched: kept by a
 * newer claim, or not held at all); messages it failed; store failures by
 * cause. Plain numbers, read by metrics/exporter at scrape time. Kept in
 * node-red/node-registry: a redeploy keeps the counts; a removed node's go
 * with the rest of what was kept of it.
 */
export const CONFIRM_OUTCOMES = ['confirmed', 'released', 'late', 'unmatched'] as const;
const CONFIRMED_SLOT = 0;
const RELEASED_SLOT = 1;
const LATE_SLOT = 2;
const UNMATCHED_SLOT = 3;

export interface ConfirmCounters {
  id: string;
  name: string;
  /** By CONFIRM_OUTCOMES index. */
  readonly keys: Float64Array;
  /** Messages that went to Catch (bad claim, unknown node, unmatched keys, store failure). */
  failed: number;
  readonly failures: Float64Array;
}

/** Nodes followed at most: far more than a flow has; a runaway of ids cannot grow it without bound. */
const MAX_NODES = 1000;

function countersOf(node: { id: string; name?: string }): ConfirmCounters {
  let counters = recordOf(node.id, 'confirm');
  if (counters === undefined) {
    if (countIn('confirm') >= MAX_NODES) {
      for (const [oldest] of recordsIn('confirm')) {
        drop(oldest, 'confirm');
        break;
      }
    }
    counters = { id: node.id, name: node.name ?? '', keys: new Float64Array(CONFIRM_OUTCOMES.length), failed: 0, failures: new Float64Array(FAILURE_CAUSES.length) };
    keep(node.id, 'confirm', counters);
  }
  counters.name = node.name ?? '';
  return counters;
}

/** A confirm node started: its series are there from the first scrape, so that a rate sees its first keys. */
export function confirmStarted(node: { id: string; name?: string }): void {
  countersOf(node);
}

/** A message's keys settled: `settled` of them in time (late ones included, as msg.dedup counts them). */
export function confirmReported(node: { id: string; name?: string }, action: 'confirm' | 'release', settled: number, late: number, kept: number, notHeld: number): void {
  const keys = countersOf(node).keys;
  add(keys, action === 'confirm' ? CONFIRMED_SLOT : RELEASED_SLOT, settled - late);
  add(keys, LATE_SLOT, late);
  add(keys, UNMATCHED_SLOT, kept + notHeld);
}

/** A message the confirm node handed to Catch. */
export function confirmFailed(node: { id: string; name?: string }): void {
  countersOf(node).failed++;
}

/** The seen-set's store failed a settle. */
export function confirmStoreFailed(node: { id: string; name?: string }, error: unknown): void {
  add(countersOf(node).failures, FAILURE_CAUSES.indexOf(failureCause(error)));
}

export function* confirmCounters(): Generator<ConfirmCounters> {
  for (const [, counters] of recordsIn('confirm')) yield counters;
}
