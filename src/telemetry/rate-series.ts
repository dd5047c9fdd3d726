/**
 * A node's decisions over the last ten minutes, counted in ten-second
 * buckets: the sidebar's rate chart. Counting is one division and one
 * increment per decision; old buckets are overwritten in place, so nothing
 * is allocated while messages flow.
 */
export const BUCKET_MS = 10_000;
export const BUCKETS = 60;

export const SERIES = ['admitted', 'suppressed', 'rejected'] as const;
export type SeriesName = (typeof SERIES)[number];
export const ADMITTED = 0;
export const SUPPRESSED = 1;
export const REJECTED = 2;

export interface RateSnapshot {
  bucketMs: number;
  /** Epoch ms at which the newest bucket ends (it is still filling). */
  end: number;
  /** Counts per bucket, oldest first, for each series. */
  admitted: number[];
  suppressed: number[];
  rejected: number[];
}

export class RateSeries {
  private readonly counts = new Float64Array(BUCKETS * SERIES.length);
  /** The newest bucket, as a bucket number since the epoch; -1 before the first count. */
  private newest = -1;

  add(now: number, series: number, n: number): void {
    const bucket = Math.floor(now / BUCKET_MS);
    if (bucket > this.newest) this.roll(bucket);
    // A clock that stepped back counts into the newest bucket.
    const at = (bucket < this.newest ? this.newest : bucket) % BUCKETS;
    this.counts[series * BUCKETS + at] = (this.counts[series * BUCKETS + at] as number) + n;
  }

  snapshot(now: number): RateSnapshot {
    const bucket = Math.floor(now / BUCKET_MS);
    if (bucket > this.newest) this.roll(bucket);
    const newest = Math.max(bucket, this.newest);
    const series = (s: number): number[] => {
      const values: number[] = [];
      for (let b = newest - BUCKETS + 1; b <= newest; b++) values.push(this.counts[s * BUCKETS + (((b % BUCKETS) + BUCKETS) % BUCKETS)] as number);
      return values;
    };
    return { bucketMs: BUCKET_MS, end: (newest + 1) * BUCKET_MS, admitted: series(ADMITTED), suppressed: series(SUPPRESSED), rejected: series(REJECTED) };
  }

  /** Empties the buckets between the newest and `bucket`, which becomes the newest. */
  private roll(bucket: number): void {
    const from = this.newest < 0 ? bucket - BUCKETS + 1 : Math.max(this.newest + 1, bucket - BUCKETS + 1);
    for (let b = from; b <= bucket; b++) {
      const at = b % BUCKETS;
      for (let s = 0; s < SERIES.length; s++) this.counts[s * BUCKETS + at] = 0;
    }
    this.newest = bucket;
  }
}
