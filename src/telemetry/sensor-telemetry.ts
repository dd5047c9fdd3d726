import { claimIndex, type Prepared, type Settled } from '../core/sensor/burst';
import { decisionTime } from './coarse-clock';
import { DecidingRecord } from './deciding-record';
import { add, countingReasons, SENSOR_DUPLICATE, SENSOR_IN_FLIGHT, SENSOR_NEW, SENSOR_REPLAYED, SENSOR_SLOTS, STORE_UNAVAILABLE } from './decision-slots';
import { DeviceBoard } from './device-board';
import { countFailure } from './failure-causes';
import { KeyArrivals } from './key-arrivals';
import { ADMITTED, REJECTED, SUPPRESSED } from './rate-series';
import type { SensorSubject } from './subjects';

/** Devices followed per sensor node for the replay list. */
const MAX_DEVICES = 10_000;
/** Keys whose admission time the TTL what-if remembers, and replay gaps it keeps. */
const MAX_SAMPLED_KEYS = 20_000;
const MAX_GAPS = 10_000;

/**
 * A sensor reconnect node's telemetry, counted by reading: its controller
 * writes each message's outcome here once, and the status line, the
 * sidebar (its rates, the devices that replay most, the gaps the TTL
 * what-if measures) and Prometheus read it. As cheap as the sliding
 * window's on the path of every message.
 */
export class SensorTelemetry extends DecidingRecord<SensorSubject> {
  readonly decisions = new Float64Array(SENSOR_SLOTS.length);
  /** Admissions that took over a pending key whose lease ran out. */
  leaseExpired = 0;
  readonly devices = new DeviceBoard(MAX_DEVICES);
  arrivals: KeyArrivals;
  private arrivalsTtlMs: number;

  constructor(subject: SensorSubject) {
    super(subject);
    this.arrivalsTtlMs = ttlMsOf(subject);
    this.arrivals = new KeyArrivals(this.arrivalsTtlMs, MAX_SAMPLED_KEYS, MAX_GAPS, Date.now());
  }

  /**
   * The sample keeps keys for as long as the node remembers them: under a
   * new Remember it starts afresh, so that all its gaps come under one limit.
   */
  override adopt(subject: SensorSubject): void {
    super.adopt(subject);
    const ttlMs = ttlMsOf(subject);
    if (this.arrivalsTtlMs === ttlMs) return;
    this.arrivals = new KeyArrivals(ttlMs, MAX_SAMPLED_KEYS, MAX_GAPS, Date.now());
    this.arrivalsTtlMs = ttlMs;
  }

  /** A message's readings decided: by the store, or (settled.storeError) admitted without it. */
  decided(prepared: Prepared, settled: Settled): void {
    const now = decisionTime();
    if (prepared.rejected.length > 0) this.countRejected(now, prepared.rejected.length);
    const admitted = settled.admitted.length;
    const suppressed = settled.suppressed.length;
    this.admitted += admitted;
    this.suppressed += suppressed;
    this.leaseExpired += settled.leaseExpired;
    if (admitted > 0) this.rates.add(now, ADMITTED, admitted);
    if (suppressed > 0) this.rates.add(now, SUPPRESSED, suppressed);
    if (countingReasons()) this.countReasons(settled);
    // Admitted without the store (it failed): no admission was remembered, so none is sampled.
    if (settled.storeError === undefined) this.sample(prepared, settled, now);
    this.changed();
  }

  /** The store failed and, by the node's policy, the readings were admitted without it (settled.storeError says why). */
  admittedWithoutStore(prepared: Prepared, settled: Settled, error: unknown): void {
    countFailure(this.failures, error);
    this.decided(prepared, settled);
  }

  /** The store failed and, by the node's policy, the message went to Catch: none of its readings was decided. */
  failedToCatch(prepared: Prepared, error: unknown): void {
    countFailure(this.failures, error);
    this.storeErrors++;
    this.countRejected(decisionTime(), prepared.rejected.length + prepared.keyed.length);
    this.changed();
  }

  /** A message rejected whole, before any reading of it reached the store. */
  rejectedOne(): void {
    this.countRejected(decisionTime(), 1);
    this.changed();
  }

  /** The counts the status line shows, as they are now. */
  counts(): SensorCounts {
    return {
      received: this.admitted + this.suppressed + this.rejected,
      unique: this.admitted,
      suppressed: this.suppressed,
      rejected: this.rejected,
      leaseExpired: this.leaseExpired,
      storeErrors: this.storeErrors,
    };
  }

  /** The readings by reason, for Prometheus and the stats node. */
  private countReasons(settled: Settled): void {
    const decisions = this.decisions;
    if (settled.storeError !== undefined) add(decisions, STORE_UNAVAILABLE, settled.admitted.length);
    else {
      add(decisions, SENSOR_REPLAYED, settled.replayed);
      add(decisions, SENSOR_NEW, settled.admitted.length - settled.replayed);
    }
    for (const { reason } of settled.suppressed) add(decisions, reason === 'in-flight' ? SENSOR_IN_FLIGHT : SENSOR_DUPLICATE);
  }

  /** The admissions and replays into the sidebar's samples: the key-arrival gaps and the devices that replay. */
  private sample(prepared: Prepared, settled: Settled, now: number): void {
    for (const keyed of settled.admitted) this.arrivals.admitted(keyed.key, now);
    for (const { keyed } of settled.suppressed) {
      // A repeat inside the message points at its first occurrence's claim (core/sensor/burst).
      const claim = prepared.claims[claimIndex(keyed)];
      if (claim !== undefined) this.devices.replayed(claim.group, now);
      this.arrivals.replayed(keyed.key, now);
    }
  }

  private countRejected(now: number, count: number): void {
    this.rejected += count;
    this.rates.add(now, REJECTED, count);
  }
}

export interface SensorCounts {
  /** Readings in: unique + suppressed + rejected. */
  received: number;
  unique: number;
  suppressed: number;
  rejected: number;
  leaseExpired: number;
  storeErrors: number;
}

function ttlMsOf(subject: SensorSubject): number {
  return subject.settings.ttlSeconds * 1000;
}
