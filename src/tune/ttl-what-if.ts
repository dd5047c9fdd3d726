/**
 * The sensor node's *Remember* (ttlSeconds), tried shorter: of the replays
 * the node suppressed, the fraction a shorter TTL would have let through.
 * A replay arriving `gap` after its key was first admitted is still caught
 * by a TTL longer than the gap, and let through by one at most the gap (a
 * key is forgotten at admission + TTL, as both stores do it: expiry <= now).
 * A TTL longer than the node's own tells nothing: a replay later than that
 * was never recognised as one.
 */

export interface TtlPoint {
  ttlSeconds: number;
  /** Replays of the sample this TTL would have let through. */
  letThrough: number;
  fraction: number;
}

/** Candidate TTLs, in seconds: round values below the node's own, and the node's own. */
export const TTL_CANDIDATES = [10, 60, 300, 900, 3600, 10_800, 21_600, 43_200, 86_400, 259_200, 604_800];

/** The fraction let through for each candidate at most `currentSeconds`, and for `currentSeconds` itself. */
export function ttlWhatIf(gapsMs: Float64Array, currentSeconds: number, candidates: readonly number[] = TTL_CANDIDATES): TtlPoint[] {
  const sorted = gapsMs.slice().sort();
  const ttls = [...new Set([...candidates.filter((s) => s < currentSeconds), currentSeconds])].sort((a, b) => a - b);
  return ttls.map((ttlSeconds) => {
    const letThrough = sorted.length - firstAtLeast(sorted, ttlSeconds * 1000);
    return { ttlSeconds, letThrough, fraction: sorted.length === 0 ? 0 : letThrough / sorted.length };
  });
}

/** The index of the first value >= x in a sorted array (its length when none). */
function firstAtLeast(sorted: Float64Array, x: number): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if ((sorted[mid] as number) < x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
