import { distanceMetres, EARTH_MEAN_RADIUS_METRES } from '../core/window/geo';
import { grown } from '../core/structures/recency-index';
import type { PingColumns } from '../core/window/ping-columns';

/**
 * How far a parked vehicle's fixes wander: the distances between
 * consecutive pings of one asset at most a heartbeat apart, while the asset
 * stays put. Movement should sit above that wander, or every parked
 * vehicle's jitter is admitted as `moved`; the suggestion is twice its 95th
 * percentile.
 *
 * "Stays put" must not depend on the Heartbeat: a driving vehicle's
 * consecutive pings are also close in time, and would put the percentile at
 * driving speed. A pair counts as parked when every ping of its asset from
 * `staySeconds` before the pair to `staySeconds` after it lies within
 * `stayMetres` of the pair's first ping: two minutes and more within 100 m,
 * which a vehicle moving faster than about 5 km/h never is. The minute on
 * each side also leaves out the pings of a stop's arrival and departure,
 * which would otherwise count driving steps as jitter. (It replaced a stay
 * that had to last a heartbeat: at Heartbeat 10 s that counted a car at
 * 36 km/h, 100 m in 10 s, as parked, and suggested 100 m.)
 *
 * Pairs at most a heartbeat apart rather than less: with pings exactly
 * every 5 s and a Heartbeat of 5 s there would be none to measure, though
 * the wander is the same.
 */

export interface JitterOptions {
  heartbeatSeconds: number;
  /** How far from a pair's first ping its asset may wander and still be parked (default 100 m). */
  stayMetres?: number;
  /** How long before and after a pair its asset must stay that close (default 60 s). */
  staySeconds?: number;
  /** Bars of the histogram (default 20), plus one for everything beyond. */
  bins?: number;
}

export interface JitterResult {
  heartbeatSeconds: number;
  stayMetres: number;
  staySeconds: number;
  /** Consecutive pings of one asset, later by at most a heartbeat. */
  pairs: number;
  /** Of those, the pairs of a parked asset: the parked jitter. */
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
export const DEFAULT_STAY_SECONDS = 60;
const DEFAULT_BINS = 20;
/** Metres per degree of latitude on the sphere core/window/geo measures on. */
const METRES_PER_DEGREE = (EARTH_MEAN_RADIUS_METRES * Math.PI) / 180;

export function parkedJitter(columns: PingColumns, options: JitterOptions): JitterResult {
  const heartbeatMs = options.heartbeatSeconds * 1000;
  const stayMetres = options.stayMetres ?? DEFAULT_STAY_METRES;
  const staySeconds = options.staySeconds ?? DEFAULT_STAY_SECONDS;
  const stayMs = staySeconds * 1000;
  const order = byAssetThenTime(columns);
  const stay: Stay = { order, columns, stayMs, metres: stayMetres };
  const { asset, t, lat, lon } = columns;
  const parked = new Growable();
  let pairs = 0;

  let from = 0;
  while (from < order.length) {
    const id = asset[order[from] as number] as number;
    let to = from + 1;
    while (to < order.length && asset[order[to] as number] === id) to++;
    // order[from .. to) is one asset's pings in time order.
    for (let k = from; k + 1 < to; k++) {
      const a = order[k] as number;
      const b = order[k + 1] as number;
      const dt = (t[b] as number) - (t[a] as number);
      if (!(dt > 0 && dt <= heartbeatMs)) continue;
      pairs++;
      if (stayedNear(stay, from, to, k)) {
        parked.push(distanceMetres(lat[a] as number, lon[a] as number, lat[b] as number, lon[b] as number));
      }
    }
    from = to;
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
  return { heartbeatSeconds: options.heartbeatSeconds, stayMetres, staySeconds, pairs, parkedPairs: n, binMetres, counts, beyond, p95Metres: p95, suggestedMetres: suggested };
}

/** What makes a pair parked, the same for every pair of a run: the pings by asset and time, how long and how near. */
interface Stay {
  /** Ping indexes grouped by asset, each group in time order (byAssetThenTime). */
  order: Uint32Array;
  columns: PingColumns;
  stayMs: number;
  metres: number;
}

/**
 * Whether every ping of the asset (order[from .. to)) from `stayMs` before
 * pair k to `stayMs` after it lies within `metres` of the pair's first ping.
 * A flat-earth distance, exact to well under a metre at this range, is
 * enough here and costs a few multiplications: a parked pair looks at a
 * couple of minutes of pings; a driving one stops at the first far ping.
 */
function stayedNear(stay: Stay, from: number, to: number, k: number): boolean {
  const { order, stayMs, metres } = stay;
  const { t, lat, lon } = stay.columns;
  const a = order[k] as number;
  const lat0 = lat[a] as number;
  const lon0 = lon[a] as number;
  const xScale = Math.cos((lat0 * Math.PI) / 180);
  const limit = (metres / METRES_PER_DEGREE) ** 2;
  const earliest = (t[a] as number) - stayMs;
  const latest = (t[order[k + 1] as number] as number) + stayMs;
  // Back from the pair, then forward from its second ping; no closure, as this runs for every pair.
  for (let j = k - 1, step = -1; ; j += step) {
    if (step === -1 && (j < from || (t[order[j] as number] as number) < earliest)) {
      step = 1;
      j = k + 1;
    }
    if (step === 1 && (j >= to || (t[order[j] as number] as number) > latest)) return true;
    const q = order[j] as number;
    let dLon = (lon[q] as number) - lon0;
    if (dLon > 180) dLon -= 360;
    else if (dLon < -180) dLon += 360;
    const dx = dLon * xScale;
    const dy = (lat[q] as number) - lat0;
    if (dx * dx + dy * dy > limit) return false;
  }
}

/** Ping indexes grouped by asset (in order of first appearance), each group in time order. */
function byAssetThenTime(columns: PingColumns): Uint32Array {
  const { size, asset, t } = columns;
  const starts = new Uint32Array(columns.names.length + 1);
  for (let i = 0; i < size; i++) {
    const slot = (asset[i] ?? 0) + 1;
    starts[slot] = (starts[slot] ?? 0) + 1;
  }
  for (let a = 1; a < starts.length; a++) starts[a] = (starts[a] ?? 0) + (starts[a - 1] ?? 0);
  const next = starts.slice(0, -1);
  const order = new Uint32Array(size);
  for (let i = 0; i < size; i++) {
    const a = asset[i] ?? 0;
    const at = next[a] ?? 0;
    next[a] = at + 1;
    order[at] = i;
  }
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

  values(): Float64Array {
    return this.data.slice(0, this.length);
  }

  private reserve(capacity: number): void {
    this.data = grown(this.data, capacity);
  }
}
