import { FAILURE_CAUSES } from './failure-causes';
import { RateSeries } from './rate-series';
import type { DecidingSubject, StoreInfo } from './subjects';

/**
 * What the record of a node that decides through a store of its own (the
 * sliding-window and the sensor node) keeps besides its own lists: the
 * counts its status line, the sidebar, the stats node and Prometheus all
 * read, its rates over time, its store failures by cause, and whether a
 * node object runs it now.
 *
 * Held by node id (telemetry/records), not by node object: a redeploy
 * builds a new node object, which finds its counts where the old one left
 * them, so the counters never go down while the node exists. The status
 * line counts from its own start (see `counts()`).
 */
export abstract class DecidingRecord<S extends DecidingSubject> {
  /** Epoch ms since which the counts count. */
  readonly since = Date.now();
  readonly rates = new RateSeries();
  /** Pings (window) or readings (sensor) admitted, suppressed, and not decided (unreadable, or the store failed and Catch got them). */
  admitted = 0;
  suppressed = 0;
  rejected = 0;
  /** Messages sent to Catch because the store failed (onStoreError `error`). */
  storeErrors = 0;
  /** Decisions by slot of telemetry/decision-slots' table for the node's type; counted only while countingReasons(). */
  abstract readonly decisions: Float64Array;
  /** Store failures by FAILURE_CAUSES index. */
  readonly failures = new Float64Array(FAILURE_CAUSES.length);
  /** Epoch ms when the node object running it closed; 0 while one runs, or before the first. */
  closedAt = 0;
  private run = 0;
  private lastRun = 0;
  private info: () => StoreInfo;
  private listener: (() => void) | undefined;

  constructor(public subject: S) {
    this.info = () => ({ kind: subject.store });
  }

  /** A node object runs it now. */
  get running(): boolean {
    return this.run !== 0;
  }

  /** A node object has run it (its store bound): only then does anything list it. */
  get started(): boolean {
    return this.lastRun !== 0;
  }

  /** The node's store as it is now (its kind before the node first ran). */
  storeInfo(): StoreInfo {
    return this.info();
  }

  /** A (possibly redeployed) node of the same id takes the record over, with its own settings. */
  adopt(subject: S): void {
    this.subject = subject;
  }

  /** A node object starts running it, with its store bound: the returned run ends with stop(). */
  start(info: () => StoreInfo): number {
    this.info = info;
    this.run = ++this.lastRun;
    this.closedAt = 0;
    return this.run;
  }

  /** The node object of `run` closed; a later node of the same id may already have taken over. */
  stop(run: number): void {
    if (this.run !== run) return;
    this.run = 0;
    this.closedAt = Date.now();
  }

  /** Tells `listener` of every change of the counts from now on (the status line of the node running it). */
  follow(listener: () => void): void {
    this.listener = listener;
  }

  protected changed(): void {
    this.listener?.();
  }
}
