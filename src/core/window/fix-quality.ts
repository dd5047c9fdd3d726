/**
 * Whether a ping is a usable position at all, decided from the ping's own
 * fields: no state, so it is decided once, when the ping is read
 * (core/window/ping), and carried on the Ping as one small number, as the
 * event fingerprint is. The rule (core/window/sliding-window) applies it at
 * its place in the order; the Redis script gets it as one flag of the
 * operation. Neither store reads satellites or an HDOP, so they cannot
 * disagree about them.
 *
 * - no fix: the position is 0,0 (both within 1e-7 degrees, the precision a
 *   baseline is kept at: Null Island, which many GPS modules report before
 *   their first fix), or the validity field says "no fix": `false`, `0`,
 *   `"0"`, `"false"`, or NMEA's void, `"V"`. Absent or null: unknown, taken
 *   as a fix; any other value is a fix (`true`, `1`, `"A"`, `"3D"`).
 * - poor fix: fewer satellites than minSatellites, or an HDOP above
 *   maxHdop. An absent value is unknown and passes.
 *
 * A ping with no fix is not also judged poor: no-fix is checked first.
 */

/** What a ping's fix is, as the rule reads it. */
export const FIX_OK = 0;
export const NO_FIX = 1;
export const POOR_FIX = 2;
export type FixQuality = typeof FIX_OK | typeof NO_FIX | typeof POOR_FIX;

/** The parts of a node's rule that judge a fix; each off when absent. */
export interface FixRule {
  /** Refuse 0,0 and pings whose validity field says there is no fix. */
  noFix?: boolean;
  /** Refuse a ping with fewer satellites than this. */
  minSatellites?: number;
  /** Refuse a ping with an HDOP above this. */
  maxHdop?: number;
}

/** Within this many degrees of 0 on both axes: 0,0. */
export const NULL_ISLAND_DEGREES = 1e-7;

/**
 * The quality of a fix: its position, its validity field's value as the
 * message has it (undefined or null: unknown), its satellites and HDOP read
 * as numbers (NaN: absent). Arguments rather than an object: this runs for
 * every ping, and allocates nothing.
 */
export function fixQuality(lat: number, lon: number, valid: unknown, satellites: number, hdop: number, rule: FixRule): FixQuality {
  if (rule.noFix === true && (isNullIsland(lat, lon) || saysNoFix(valid))) return NO_FIX;
  // NaN (unknown) is neither fewer nor more: it passes.
  if (rule.minSatellites !== undefined && satellites < rule.minSatellites) return POOR_FIX;
  if (rule.maxHdop !== undefined && hdop > rule.maxHdop) return POOR_FIX;
  return FIX_OK;
}

export function isNullIsland(lat: number, lon: number): boolean {
  return Math.abs(lat) <= NULL_ISLAND_DEGREES && Math.abs(lon) <= NULL_ISLAND_DEGREES;
}

/** The values of a validity field that mean "no fix". */
export function saysNoFix(valid: unknown): boolean {
  if (valid === false || valid === 0) return true;
  if (typeof valid !== 'string') return false;
  // The usual values without making a string; spaces and other cases then.
  if (valid === 'A' || valid === '1' || valid === 'true') return false;
  if (valid === 'V' || valid === '0' || valid === 'false') return true;
  const text = valid.trim().toLowerCase();
  return text === '0' || text === 'v' || text === 'false';
}
