import { distanceMetres } from './geo';

/**
 * The sliding-window rule for one asset, compared against the last ping that
 * was ACCEPTED for it (not against a clock, which is what lets the tumbling
 * scheme admit two pings four seconds apart on either side of a bucket edge).
 *
 * Only the quadrant "neither waited nor moved" suppresses: time OR distance
 * admits. Time alone would drop a vehicle that accelerated away inside the
 * window; distance alone would never emit for a parked vehicle, and a
 * consumer could not tell parked from disconnected.
 *
 * lua/sliding-window.lua is the same rule for the Redis store; the contract
 * tests run both against the same cases.
 */

export interface WindowRule {
  minSeconds: number;
  minMetres: number;
}

export interface Ping {
  assetId: string;
  /** Milliseconds since the epoch, UTC; fractions allowed. */
  t: number;
  lat: number;
  lon: number;
}

export interface WindowBaseline {
  t: number;
  lat: number;
  lon: number;
}

/**
 * Why a ping was admitted or suppressed.
 * - `first`: no baseline for the asset (new, expired, or reset);
 * - `elapsed`: at least minSeconds since the last accepted ping;
 * - `moved`: at least minMetres from it, sooner than minSeconds;
 * - `late`: not newer than the last accepted ping; the baseline is kept;
 * - `window`: neither waited nor moved;
 * - `replayed`: the store saw this very call before (a client retry) and
 *   repeats the admission it already made.
 */
export type AdmitReason = 'first' | 'elapsed' | 'moved' | 'replayed';
export type SuppressReason = 'late' | 'window';

export type WindowVerdict =
  | { admit: true; reason: AdmitReason; dtSeconds: number | null; distanceMetres: number | null }
  | { admit: false; reason: SuppressReason; dtSeconds: number; distanceMetres: number | null };

export function decideWindow(baseline: WindowBaseline | undefined, ping: Ping, rule: WindowRule): WindowVerdict {
  if (baseline === undefined) {
    return { admit: true, reason: 'first', dtSeconds: null, distanceMetres: null };
  }
  const dtSeconds = (ping.t - baseline.t) / 1000;
  // A late ping must not become the baseline: writing it would rewind the
  // window, and the next genuine ping would be compared against a position
  // the vehicle already left.
  if (dtSeconds <= 0) return { admit: false, reason: 'late', dtSeconds, distanceMetres: null };
  const metres = distanceMetres(baseline.lat, baseline.lon, ping.lat, ping.lon);
  if (dtSeconds >= rule.minSeconds) return { admit: true, reason: 'elapsed', dtSeconds, distanceMetres: metres };
  if (metres >= rule.minMetres) return { admit: true, reason: 'moved', dtSeconds, distanceMetres: metres };
  return { admit: false, reason: 'window', dtSeconds, distanceMetres: metres };
}
