import { MAX_ENTRIES } from '../core/defaults';
import { blankPing, pingAt } from '../core/window/ping-columns';
import { FIX_OK } from '../core/window/fix-quality';
import type { Ping } from '../core/window/sliding-window';
import { WINDOW_REASONS, type WindowReason } from '../core/window/window-reasons';
import type { WindowOutcome } from '../stores/types';
import { AssetBoard, UNKNOWN_COUNTS } from './asset-board';
import { decisionTime } from './coarse-clock';
import { DecidingRecord } from './deciding-record';
import { add, countingReasons, STORE_UNAVAILABLE, WINDOW_SLOTS } from './decision-slots';
import { countFailure } from './failure-causes';
import { PingRing } from './ping-ring';
import { ADMITTED, REJECTED, SUPPRESSED } from './rate-series';
import type { WindowSubject } from './subjects';

/** The suppressions the status line names apart: pings that were no usable position. */
export const UNUSABLE_REASONS = ['no-fix', 'poor-fix', 'jump'] as const satisfies readonly WindowReason[];

/** By reason code: the index in UNUSABLE_REASONS, or -1. */
const UNUSABLE_SLOT: Int8Array = (() => {
  const slots = new Int8Array(Math.max(...Object.values(WINDOW_REASONS).map((r) => r.code)) + 1).fill(-1);
  UNUSABLE_REASONS.forEach((reason, i) => (slots[WINDOW_REASONS[reason].code] = i));
  return slots;
})();

/**
 * A sliding-window node's telemetry: its controller writes each decision
 * here once, and the status line, the sidebar (its rates, the assets that
 * look stuck or silent or have no fix, the what-if's sample of recent pings) and
 * Prometheus read it.
 *
 * On the path of every message: a write costs a clock read, a few
 * typed-array writes and one map lookup, and allocates nothing; lists and
 * charts are worked out only when read (insight/).
 */
export class WindowTelemetry extends DecidingRecord<WindowSubject> {
  readonly decisions = new Float64Array(WINDOW_SLOTS.length);
  /** Per asset: its counts as its store keeps them, and when it was last heard from. */
  readonly assets: AssetBoard;
  /** The what-if's sample: the last `sampleSize` pings, no payload. */
  ring: PingRing;
  /** Pings suppressed for each of UNUSABLE_REASONS, counted whether or not the metrics count by reason: the status line shows them. */
  private readonly unusable = new Float64Array(UNUSABLE_REASONS.length);

  constructor(subject: WindowSubject) {
    super(subject);
    const maxAssets = subject.settings.maxAssets > 0 ? Math.min(subject.settings.maxAssets, MAX_ENTRIES) : MAX_ENTRIES;
    this.assets = new AssetBoard(maxAssets);
    this.ring = new PingRing(capacityOf(subject));
  }

  /** Fits the sample to the (possibly redeployed) node's size; the asset board keeps its first cap. */
  override adopt(subject: WindowSubject): void {
    super.adopt(subject);
    const capacity = capacityOf(subject);
    if (this.ring.capacity !== capacity) this.ring = resized(this.ring, capacity);
  }

  /** A ping the store decided. */
  decided(ping: Ping, outcome: WindowOutcome): void {
    const now = decisionTime();
    const code = WINDOW_REASONS[outcome.reason].code;
    if (countingReasons()) add(this.decisions, code);
    if (outcome.admit) {
      this.admitted++;
      this.rates.add(now, ADMITTED, 1);
    } else {
      this.suppressed++;
      this.rates.add(now, SUPPRESSED, 1);
      const unusable = UNUSABLE_SLOT[code] ?? -1;
      if (unusable >= 0) add(this.unusable, unusable);
    }
    this.assets.seen(ping.assetId, now, outcome, (ping.fix ?? FIX_OK) === FIX_OK);
    this.ring.push(ping, now);
    this.changed();
  }

  /** The store failed and, by the node's policy, the ping was admitted without it. */
  admittedWithoutStore(ping: Ping, error: unknown): void {
    countFailure(this.failures, error);
    const now = decisionTime();
    if (countingReasons()) add(this.decisions, STORE_UNAVAILABLE);
    this.admitted++;
    this.rates.add(now, ADMITTED, 1);
    this.assets.seen(ping.assetId, now, UNKNOWN_COUNTS, (ping.fix ?? FIX_OK) === FIX_OK);
    this.ring.push(ping, now);
    this.changed();
  }

  /** The store failed and, by the node's policy, the message went to Catch. */
  failedToCatch(error: unknown): void {
    countFailure(this.failures, error);
    this.storeErrors++;
    this.changed();
  }

  /** A message that could not be read. */
  rejectedOne(): void {
    this.rejected++;
    this.rates.add(decisionTime(), REJECTED, 1);
    this.changed();
  }

  /** The counts the status line shows, as they are now. */
  counts(): WindowCounts {
    return { admitted: this.admitted, suppressed: this.suppressed, rejected: this.rejected, storeErrors: this.storeErrors, unusable: Array.from(this.unusable) };
  }
}

export interface WindowCounts {
  admitted: number;
  suppressed: number;
  rejected: number;
  storeErrors: number;
  /** Of the suppressed, those of each of UNUSABLE_REASONS, in its order. */
  unusable: readonly number[];
}

function capacityOf(subject: WindowSubject): number {
  return Math.max(0, Math.floor(subject.sampleSize));
}

/** A ring of the new capacity holding the newest pings of the old one. */
function resized(old: PingRing, capacity: number): PingRing {
  const ring = new PingRing(capacity);
  if (capacity > 0) {
    const columns = old.columns();
    const ping = blankPing();
    for (let i = Math.max(0, columns.size - capacity); i < columns.size; i++) ring.push(pingAt(columns, i, ping), columns.arrival[i] as number);
  }
  return ring;
}
