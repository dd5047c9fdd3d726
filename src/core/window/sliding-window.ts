/**
 * The sliding-window rule for one asset, compared against the last ping that
 * was ACCEPTED for it (not against a clock, which is what lets the tumbling
 * scheme admit two pings four seconds apart on either side of a bucket edge).
 *
 * At its heart only the quadrant "neither waited nor moved" suppresses: time
 * OR distance admits. Time alone would drop a vehicle that accelerated away
 * inside the window; distance alone would never emit for a parked vehicle,
 * and a consumer could not tell parked from disconnected.
 *
 * Around that, the fleet rules (each off unless configured): a clock guard,
 * an event that changed, the fixes' accuracy, and a turn. The reasons are
 * checked in the order of WINDOW_REASONS and the first that applies wins.
 *
 * lua/sliding-window.lua is the same rule for the Redis store; the contract
 * and parity tests hold the two to the same answers, bit for bit, which is
 * why the baseline is kept at the precision the Redis record has (see
 * baselineOf) in both stores.
 */
import { distanceMetres } from './geo';
import { WINDOW_REASONS, type WindowReason } from './window-reasons';

export interface WindowRule {
  minSeconds: number;
  minMetres: number;
  /** Admit a change of heading of at least this many degrees; 0 or absent: off. */
  minHeadingDegrees?: number;
  /** Suppress a ping dated more than this far ahead of the host's clock; absent: off. */
  maxAheadSeconds?: number;
}

export interface Ping {
  assetId: string;
  /** Milliseconds since the epoch, UTC; fractions allowed. */
  t: number;
  lat: number;
  lon: number;
  /** Degrees clockwise from north, 0 to 360; NaN or absent when the ping carries none. */
  heading?: number;
  /** The fix's accuracy radius in metres; 0 or absent when unknown. */
  accuracy?: number;
  /** A 48-bit fingerprint of the watched event properties' values (see eventFingerprint); 0 or absent: none watched. */
  events?: number;
  /**
   * Set when this very message was sent before and its decision was lost
   * (the store failed and the message went to a Catch node): if the store
   * holds exactly this ping as the asset's baseline, the earlier attempt
   * admitted it, and it is admitted again as `replayed`.
   */
  retry?: boolean;
}

/** The last admitted ping of an asset, at the precision both stores keep it. */
export interface WindowBaseline {
  t: number;
  lat: number;
  lon: number;
  /** NaN when the ping had none. */
  heading: number;
  accuracy: number;
  events: number;
}

export interface WindowVerdict {
  admit: boolean;
  reason: WindowReason;
  /** Seconds since the baseline; null when there is none (or for `replayed`). */
  dtSeconds: number | null;
  /** Metres from the baseline; null when not measured (no baseline, ahead, late, replayed). */
  distanceMetres: number | null;
  /** The shortest angle between the two headings, in degrees; null unless both exist and were compared. */
  headingChange: number | null;
}

/*
 * Precision of the stored baseline: the Redis record packs it into 44
 * bytes (lua/sliding-window.lua), and the memory store keeps the same
 * values so that both decide alike. 1e-7 degrees is about 1 cm; a heading
 * to 0.01 degrees and an accuracy to 0.1 m are far below what a GPS fix
 * means. The new ping itself is always compared at full precision.
 */
export const DEGREE_STEPS = 1e7;
export const HEADING_STEPS = 100;
export const ACCURACY_STEPS = 10;
/** A stored heading of 0xffff is no heading: the records (in Redis, on disk) hold headings in 16 bits. */
export const NO_HEADING = 65_535;
/** The largest accuracy a record holds, in steps: 6553.4 m. */
export const MAX_ACCURACY_STEP = 65_534;

export function storedDegrees(value: number): number {
  return Math.floor(value * DEGREE_STEPS + 0.5) / DEGREE_STEPS;
}

/** A heading as stored: to 0.01 degrees, 360 as 0, NaN for none. */
export function storedHeading(value: number | undefined): number {
  if (value === undefined || Number.isNaN(value)) return NaN;
  let steps = Math.floor(value * HEADING_STEPS + 0.5);
  if (steps >= 360 * HEADING_STEPS) steps -= 360 * HEADING_STEPS;
  return steps / HEADING_STEPS;
}

export function storedAccuracy(value: number | undefined): number {
  if (value === undefined || !(value > 0)) return 0;
  return Math.min(Math.floor(value * ACCURACY_STEPS + 0.5), MAX_ACCURACY_STEP) / ACCURACY_STEPS;
}

/** The baseline an admitted ping becomes. */
export function baselineOf(ping: Ping): WindowBaseline {
  return {
    t: ping.t,
    lat: storedDegrees(ping.lat),
    lon: storedDegrees(ping.lon),
    heading: storedHeading(ping.heading),
    accuracy: storedAccuracy(ping.accuracy),
    events: ping.events ?? 0,
  };
}

/** The shortest angle between two headings in [0, 360], in degrees. */
export function headingChange(a: number, b: number): number {
  // No modulo: both lie in [0, 360], so one subtraction wraps, and it is
  // exact in IEEE doubles, as the Lua script's is.
  let d = Math.abs(a - b);
  if (d >= 360) d -= 360;
  return d > 180 ? 360 - d : d;
}

function verdict(reason: WindowReason, dtSeconds: number | null, metres: number | null, turn: number | null): WindowVerdict {
  return { admit: WINDOW_REASONS[reason].admit, reason, dtSeconds, distanceMetres: metres, headingChange: turn };
}

/**
 * The decision for one ping. nowMs is the host's clock, read by the store,
 * for the clock guard only: every other rule compares the ping with the
 * baseline, both dated by the device.
 */
export function decideWindow(baseline: WindowBaseline | undefined, ping: Ping, rule: WindowRule, nowMs: number): WindowVerdict {
  const dtSeconds = baseline === undefined ? null : (ping.t - baseline.t) / 1000;
  // First, so that a bad clock can never set the first baseline either: one
  // ping dated 2099 would otherwise make every real ping `late` until the
  // record expired.
  if (rule.maxAheadSeconds !== undefined && ping.t - nowMs > rule.maxAheadSeconds * 1000) {
    return verdict('ahead', dtSeconds, null, null);
  }
  if (baseline === undefined || dtSeconds === null) return verdict('first', null, null, null);
  if (ping.retry === true && isBaseline(baseline, ping)) return verdict('replayed', null, null, null);
  // A late ping must not become the baseline: writing it would rewind the
  // window, and the next genuine ping would be compared against a position
  // the vehicle already left.
  if (dtSeconds <= 0) return verdict('late', dtSeconds, null, null);
  const metres = distanceMetres(baseline.lat, baseline.lon, ping.lat, ping.lon);
  const heading = ping.heading ?? NaN;
  const turn = Number.isNaN(heading) || Number.isNaN(baseline.heading) ? null : headingChange(baseline.heading, heading);
  if (dtSeconds >= rule.minSeconds) return verdict('elapsed', dtSeconds, metres, turn);
  if ((ping.events ?? 0) !== baseline.events) return verdict('event', dtSeconds, metres, turn);
  // A move smaller than the two fixes' uncertainty together is jitter, not a move.
  if (metres >= rule.minMetres && metres > (ping.accuracy ?? 0) + baseline.accuracy) {
    return verdict('moved', dtSeconds, metres, turn);
  }
  const minTurn = rule.minHeadingDegrees ?? 0;
  if (minTurn > 0 && turn !== null && turn >= minTurn) return verdict('turned', dtSeconds, metres, turn);
  return verdict('window', dtSeconds, metres, turn);
}

/** The ping is the baseline itself, as the store would have written it. */
function isBaseline(baseline: WindowBaseline, ping: Ping): boolean {
  return (
    baseline.t === ping.t &&
    baseline.lat === storedDegrees(ping.lat) &&
    baseline.lon === storedDegrees(ping.lon) &&
    baseline.events === (ping.events ?? 0)
  );
}
