import { grown } from '../structures/recency-index';
import { DEGREE_STEPS, type JumpCandidate } from './sliding-window';

/**
 * The jump candidates of a store's records (core/window/sliding-window's
 * jump guard), as columns indexed by slot beside the baselines' RuleColumns.
 *
 * Held only while the guard is on: a node without it pays no byte per asset
 * for them (at 100,000 assets the memory store's whole record is some 160
 * bytes; four plain columns would have added 32). When held, 18 bytes a
 * record: the time as a double, the position in 1e-7 degree steps (the
 * precision a candidate is kept at, so it reads back exactly), the count in
 * 16 bits.
 */
export class CandidateColumns {
  private t = new Float64Array(0);
  private lat = new Int32Array(0);
  private lon = new Int32Array(0);
  private count = new Uint16Array(0);

  /** Whether candidates are held (the guard is on). */
  get held(): boolean {
    return this.count.length > 0;
  }

  /** Holds candidates for `capacity` slots, all none, or (0) drops them all. */
  hold(capacity: number): void {
    if (capacity === 0) {
      this.t = new Float64Array(0);
      this.lat = new Int32Array(0);
      this.lon = new Int32Array(0);
      this.count = new Uint16Array(0);
    } else this.resize(capacity);
  }

  /** Grows (or cuts) the columns with the store's slots, while held. */
  resize(capacity: number): void {
    this.t = grown(this.t, capacity);
    this.lat = grown(this.lat, capacity);
    this.lon = grown(this.lon, capacity);
    this.count = grown(this.count, capacity);
  }

  /** Slot i's candidate into `into` (none when not held); returns its count. */
  read(i: number, into: JumpCandidate): number {
    if (i >= this.count.length) {
      into.t = 0;
      into.lat = 0;
      into.lon = 0;
      return (into.count = 0);
    }
    into.t = this.t[i] as number;
    into.lat = (this.lat[i] as number) / DEGREE_STEPS;
    into.lon = (this.lon[i] as number) / DEGREE_STEPS;
    return (into.count = this.count[i] as number);
  }

  /** Slot i's candidate; nothing while not held. */
  write(i: number, candidate: Readonly<JumpCandidate>): void {
    if (i >= this.count.length) return;
    this.t[i] = candidate.t;
    this.lat[i] = Math.round(candidate.lat * DEGREE_STEPS);
    this.lon[i] = Math.round(candidate.lon * DEGREE_STEPS);
    this.count[i] = Math.min(candidate.count, 0xffff);
  }
}
