import { add, CONFIRMED_SLOT, CONFIRM_OUTCOMES, LATE_SLOT, RELEASED_SLOT, UNMATCHED_SLOT } from './decision-slots';
import { countFailure, FAILURE_CAUSES } from './failure-causes';
import type { ConfirmSubject } from './subjects';

/** What one message's keys came to when a confirm node settled them (as msg.dedup counts them). */
export interface SettleCounts {
  /** Settled in time... */
  settled: number;
  /** ...and after their lease ran out. */
  late: number;
  /** Kept by a newer claim. */
  kept: number;
  /** Not held at all. */
  notHeld: number;
}

/**
 * A dedup confirm node's telemetry: its keys by outcome (confirmed or
 * released in time, by the node's action; late, after their lease ran
 * out; unmatched: kept by a newer claim, or not held), the messages it
 * handed to Catch, its store failures by cause. Written once per message
 * by its controller; read by its status line and Prometheus. Held by node
 * id, like the others: a redeploy keeps the counts.
 */
export class ConfirmTelemetry {
  /** By CONFIRM_OUTCOMES index. */
  readonly keys = new Float64Array(CONFIRM_OUTCOMES.length);
  /** Messages that went to Catch (bad claim, unknown node, unmatched keys, store failure). */
  failed = 0;
  readonly failures = new Float64Array(FAILURE_CAUSES.length);
  private listener: (() => void) | undefined;

  constructor(public subject: ConfirmSubject) {}

  /** A message's keys settled; `failed` when the message then went to Catch for the keys not settled. */
  settled(action: 'confirm' | 'release', counts: SettleCounts, failed: boolean): void {
    add(this.keys, action === 'confirm' ? CONFIRMED_SLOT : RELEASED_SLOT, counts.settled);
    add(this.keys, LATE_SLOT, counts.late);
    add(this.keys, UNMATCHED_SLOT, counts.kept + counts.notHeld);
    if (failed) this.failed++;
    this.listener?.();
  }

  /** A message handed to Catch before any key of it was settled (no claim on it, an unknown node). */
  failedOne(): void {
    this.failed++;
    this.listener?.();
  }

  /** The seen-set's store failed a settle; the message went to Catch. */
  storeFailed(error: unknown): void {
    countFailure(this.failures, error);
    this.failed++;
    this.listener?.();
  }

  /** The counts the status line shows, as they are now: keys settled by `action` (late ones included), and messages failed. */
  counts(action: 'confirm' | 'release'): { settled: number; failed: number } {
    return { settled: (this.keys[action === 'confirm' ? CONFIRMED_SLOT : RELEASED_SLOT] as number) + (this.keys[LATE_SLOT] as number), failed: this.failed };
  }

  /** Tells `listener` of every change of the counts from now on (the status line of the node running it). */
  follow(listener: () => void): void {
    this.listener = listener;
  }
}
