import { distanceMetres } from '../core/geo';
import { grown } from '../core/recency-index';
import type { PingColumns } from '../core/ping-columns';

/**
 * How far a parked vehicle's fixes wander: the distances between
 * consecutive pings of one asset less than a heartbeat apart, while the
 * asset stays put. Movement should sit above that wander, or every parked
 * vehicle's jitter is admitted as `moved`; the suggestion is twice its 95th
 * percentile.
 *
 * "Stays put" matters: a driving vehicle's consecutive pings are also less
 * than a heartbeat apart, and would put the percentile at driving speed. So
 * the pings of each asset, in time order, are cut into stays: a stay goes
 * on while the asset remains within `stayMetres` of its first ping, and only
 * a stay that lasts at least a heartbeat counts as parked. A vehicle that
 * creeps (less than stayMetres a heartbeat) counts as parked, which is what
 * the rule would make of it too.
 */

export interface JitterOptions {
  heartbeatSeconds: number;
  /** How far from where it stopped an asset may wander and still be parked (default 100 m). */
  stayMetres?: number;
  /** Bars of the histogram (default 20), plus one for everything beyond. */
  bins?: number;
}

export interface JitterResult {
  heartbeatSeconds: number;
  stayMetres: number;
  /** Consecutive pings of one asset, later by less than a heartbeat. */
  pairs: number;
  /** Of those, the pairs inside a stay of at least a heartbeat: the parked jitter. */
  parkedPairs: number;
  /** The histogram of the parked pairs' distances: `counts[i]` in [i * binMetres, (i + 1) * binMetres). */
  binMetres: number;
  counts: number[];
  /** Parked pairs beyond the last bar. */
  beyond: number;
  /** The 95th percentile of the parked distances (nearest rank); null without parked pairs. */
  p95Metres: number | null;
  /** Twice p95, rounded up to a whole metre (at least 1); null without parked pairs. */
  suggestedMetres: number | null;
}

export const DEFAULT_STAY_METRES = 100;
const DEFAULT_BINS = 20;

export function parkedJitter(columns: PingColumns, options: JitterOptions): JitterResult {
  const heartbeatMs = options.heartbeatSeconds * 1000;
  const stayMetres = options.stayMetres ?? DEFAULT_STAY_METRES;
  const order = byAssetThenTime(columns);
  const { asset, t, lat, lon } = columns;
  const parked = new Growable();
  const stay = new Growable();
  let pairs = 0;

  let i = 0;
  while (i < order.length) {
    const first = order[i] as number;
    const id = asset[first] as number;
    let anchor = first;
    let previous = first;
    stay.clear();
    for (i++; i < order.length && asset[order[i] as number] === id; i++) {
      const p = order[i] as number;
      const dt = (t[p] as number) - (t[previous] as number);
      const fromAnchor = distanceMetres(lat[anchor] as number, lon[anchor] as number, lat[p] as number, lon[p] as number);
      if (fromAnchor > stayMetres) {
        // It left: the stay behind it was parking if it lasted a heartbeat.
        if ((t[previous] as number) - (t[anchor] as number) >= heartbeatMs) parked.append(stay);
        stay.clear();
        anchor = p;
        if (dt > 0 && dt < heartbeatMs) pairs++;
      } else if (dt > 0 && dt < heartbeatMs) {
        pairs++;
        stay.push(distanceMetres(lat[previous] as number, lon[previous] as number, lat[p] as number, lon[p] as number));
      }
      previous = p;
    }
    if ((t[previous] as number) - (t[anchor] as number) >= heartbeatMs) parked.append(stay);
  }

  const distances = parked.values().sort();
  const n = distances.length;
  const p95 = n === 0 ? null : (distances[Math.ceil(0.95 * n) - 1] as number);
  const suggested = p95 === null ? null : Math.max(1, Math.ceil(2 * p95));
  const bins = options.bins ?? DEFAULT_BINS;
  // Wide enough to show the percentile and the suggestion with room beyond.
  const binMetres = niceStep(Math.max(suggested ?? 0, p95 === null ? 0 : 2.5 * p95, 1) / bins);
  const counts = new Array<number>(bins).fill(0);
  let beyond = 0;
  for (let k = 0; k < n; k++) {
    const bin = Math.floor((distances[k] as number) / binMetres);
    if (bin < bins) counts[bin] = (counts[bin] as number) + 1;
    else beyond++;
  }
  return { heartbeatSeconds: options.heartbeatSeconds, stayMetres, pairs, parkedPairs: n, binMetres, counts, beyond, p95Metres: p95, suggestedMetres: suggested };
}

/** Ping indexes grouped by asset (in order of first appearance), each group in time order. */
function byAssetThenTime(columns: PingColumns): Uint32Array {
  const { size, asset, t } = columns;
  const starts = new Uint32Array(columns.names.length + 1);
  for (let i = 0; i < size; i++) starts[(asset[i] as number) + 1]++;
  for (let a = 1; a < starts.length; a++) starts[a] = (starts[a] as number) + (starts[a - 1] as number);
  const next = starts.slice(0, -1);
  const order = new Uint32Array(size);
  for (let i = 0; i < size; i++) order[next[asset[i] as number]++] = i;
  // Recorded pings mostly come in time order already: sort only the groups that do not.
  for (let a = 0; a + 1 < starts.length; a++) {
    const from = starts[a] as number;
    const to = starts[a + 1] as number;
    let sorted = true;
    for (let k = from + 1; k < to && sorted; k++) sorted = (t[order[k - 1] as number] as number) <= (t[order[k] as number] as number);
    if (!sorted) {
      const group = Array.from(order.subarray(from, to)).sort((x, y) => (t[x] as number) - (t[y] as number) || x - y);
      order.set(group, from);
    }
  }
  return order;
}

/** 1, 2 or 5 times a power of ten, at least `raw`. */
export function niceStep(raw: number): number {
  const power = Math.pow(10, Math.floor(Math.log10(raw)));
  for (const step of [1, 2, 5, 10]) if (step * power >= raw - 1e-12) return step * power;
  return 10 * power;
}

/** A Float64Array that grows. */
class Growable {
  private data = new Float64Array(256);
  private length = 0;

  push(value: number): void {
    if (this.length === this.data.length) this.reserve(this.length * 2);
    this.data[this.length++] = value;
  }

  append(other: Growable): void {
    if (this.length + other.length > this.data.length) this.reserve(Math.max(this.data.length * 2, this.length + other.length));
    this.data.set(other.data.subarray(0, other.length), this.length);
    this.length += other.length;
  }

  clear(): void {
    this.length = 0;
  }

  values(): Float64Array {
    return this.data.slice(0, this.length);
  }

  private reserve(capacity: number): void {
    this.data = grown(this.data, capacity);
  }
}
