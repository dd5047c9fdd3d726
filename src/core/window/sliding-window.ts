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
 * the fix's quality, a jump guard, an event that changed, the fixes'
 * accuracy, and a turn. The reasons are checked in this order, and the first
 * that applies wins (the codes of WINDOW_REASONS are not this order: new
 * reasons are appended there; REASON_ORDER lists it for the tests):
 *
 *   position mode   ahead, no-fix, poor-fix, first, replayed, late,
 *                   jump | relocated, elapsed, event, moved, turned, window
 *   value mode      ahead, first, replayed, late, elapsed, event,
 *                   changed, unchanged
 *
 * `ahead` comes first so that a bad clock can never set the first baseline;
 * `no-fix` and `poor-fix` come before `first` for the same reason: a ping
 * that is not a position never becomes the baseline, not even the first one.
 * A ping suppressed before `first` is treated as `ahead` always was: on an
 * asset with no record it writes none (its counts stay 0/0); on one with a
 * record it counts as suppressed. The fix's quality needs no state, so it is
 * decided when the ping is read (core/window/fix-quality) and arrives here
 * as `ping.fix`.
 *
 * THE JUMP GUARD (maxSpeedKmh > 0). A ping newer than the baseline, dt
 * seconds and d metres from it:
 * - after a silence (dt > relocateAfterSeconds, default ten Heartbeats) its
 *   speed is not judged: the asset may have been carried anywhere while
 *   off. If it moved at least minMetres it is admitted as `relocated`;
 *   otherwise the ordinary rules decide. (Traccar's maxSpeed has no such
 *   way out: after an offline gap the real position is far from the stale
 *   one, every fix looks like a jump, and the device is locked out for good.)
 * - otherwise it is a jump when it would be a move (d at least minMetres and
 *   more than the two accuracies together: jitter is never a jump, so fixes
 *   a fraction of a second apart lock nothing) at more than maxSpeedKmh:
 *   d / dt * 3.6 > maxSpeedKmh. A jump is suppressed as `jump`, is never the
 *   baseline, and becomes the asset's CANDIDATE (t, position, count): count
 *   is the candidate's count + 1 when the ping agrees with the candidate
 *   (newer than it, and not a jump from it, by the same test, the
 *   candidate's accuracy being unknown), else 1. When count reaches
 *   relocateAfterPings (default 3) the ping is admitted as `relocated`
 *   instead: the asset really is somewhere else.
 * Every ping judged here that is not a jump clears the candidate; pings
 * that never get here (ahead, no-fix, poor-fix, replayed, late: a late ping
 * is never judged by speed) leave it as it is. The candidate is state: the
 * stores keep it with the baseline (the memory store in columns, the saved
 * state in its records, the Redis record in its tail), at the baseline's
 * precision.
 *
 * VALUE MODE (mode 'value'): the ping carries a reading, `value`, instead
 * of a position, and the rule is "enough time OR enough change": the change
 * counts when |value - baseline value| > 0 and >= the deadband (in the
 * value's units, or with deadbandPercent in percent of |baseline value|:
 * |b| * deadband / 100), so 0 to 0 is never a change. Node-RED's filter
 * node (rbe) has the deadband but no heartbeat: a reading that stays put
 * goes silent for ever, and a consumer cannot tell quiet from dead. The
 * baseline keeps the value as an exact double.
 *
 * lua/sliding-window.lua is the same rule for the Redis store; the contract
 * and parity tests hold the two to the same answers, bit for bit, which is
 * why the baseline is kept at the precision the Redis record has (see
 * baselineOf) in both stores, and why each comparison above is written as
 * the one expression both sides evaluate.
 */
import { SLIDING_WINDOW_DEFAULTS } from '../defaults';
import { FIX_OK, NO_FIX, type FixQuality, type FixRule } from './fix-quality';
import { distanceMetres } from './geo';
import { WINDOW_REASONS, type WindowReason } from './window-reasons';

export type WindowMode = 'position' | 'value';

export interface WindowRule extends FixRule {
  minSeconds: number;
  minMetres: number;
  /** Admit a change of heading of at least this many degrees; 0 or absent: off. */
  minHeadingDegrees?: number;
  /** Suppress a ping dated more than this far ahead of the host's clock; absent: off. */
  maxAheadSeconds?: number;
  /** `value`: the rule compares a reading's value, not a position; absent: `position`. */
  mode?: WindowMode;
  /** Value mode: the change that admits (it must also be more than 0); absent: 0, any change. */
  deadband?: number;
  /** Value mode: the deadband is a percentage of the baseline's value (its absolute value). */
  deadbandPercent?: boolean;
  /** The jump guard: suppress a move faster than this from the baseline; 0 or absent: off. */
  maxSpeedKmh?: number;
  /** After a silence longer than this, a move is `relocated`, whatever its speed; absent: minSeconds × 10. */
  relocateAfterSeconds?: number;
  /** This many jumps in a row that agree with each other relocate the asset; absent: 3. */
  relocateAfterPings?: number;
}

/** relocateAfterPings when the rule does not say. */
export const DEFAULT_RELOCATE_PINGS = SLIDING_WINDOW_DEFAULTS.relocateAfterPings;
/** relocateAfterSeconds when the rule does not say, in Heartbeats. */
export const RELOCATE_HEARTBEATS = 10;

export interface Ping {
  assetId: string;
  /** Milliseconds since the epoch, UTC; fractions allowed. */
  t: number;
  /** The position; 0 in value mode. */
  lat: number;
  lon: number;
  /** Degrees clockwise from north, 0 to 360; NaN or absent when the ping carries none. */
  heading?: number;
  /** The fix's accuracy radius in metres; 0 or absent when unknown. */
  accuracy?: number;
  /** A 48-bit fingerprint of the watched event properties' values (see eventFingerprint); 0 or absent: none watched. */
  events?: number;
  /** Value mode: the reading, a finite number; absent (undefined) or NaN in position mode. */
  value?: number;
  /** Whether the position is a usable fix (core/window/fix-quality), decided when the ping was read; absent: FIX_OK. */
  fix?: FixQuality;
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
  /** Value mode: the reading, exactly; NaN (or absent) in position mode. */
  value?: number;
}

/**
 * Where the pings that jumped from an asset's baseline seem to be (see the
 * jump guard): the last such ping, at the baseline's precision, and how many
 * agreeing jumps in a row led there. count 0: no candidate.
 */
export interface JumpCandidate {
  t: number;
  lat: number;
  lon: number;
  count: number;
}

export interface WindowVerdict {
  admit: boolean;
  reason: WindowReason;
  /** Seconds since the baseline; null when there is none (or for `replayed`). */
  dtSeconds: number | null;
  /** Metres from the baseline; null when not measured (no baseline, ahead, no-fix, poor-fix, late, replayed, value mode). */
  distanceMetres: number | null;
  /** The shortest angle between the two headings, in degrees; null unless both exist and were compared. */
  headingChange: number | null;
  /** Value mode: the value minus the baseline's value; null when not measured (as distanceMetres), and in position mode. */
  valueChange: number | null;
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
    value: ping.value ?? NaN,
  };
}

/** Forgets the candidate, in place. */
export function clearCandidate(candidate: JumpCandidate): void {
  candidate.t = 0;
  candidate.lat = 0;
  candidate.lon = 0;
  candidate.count = 0;
}

/** The shortest angle between two headings in [0, 360], in degrees. */
export function headingChange(a: number, b: number): number {
  // No modulo: both lie in [0, 360], so one subtraction wraps, and it is
  // exact in IEEE doubles, as the Lua script's is.
  let d = Math.abs(a - b);
  if (d >= 360) d -= 360;
  return d > 180 ? 360 - d : d;
}

function verdict(reason: WindowReason, dtSeconds: number | null, metres: number | null, turn: number | null, change: number | null = null): WindowVerdict {
  return { admit: WINDOW_REASONS[reason].admit, reason, dtSeconds, distanceMetres: metres, headingChange: turn, valueChange: change };
}

/**
 * The decision for one ping. nowMs is the host's clock, read by the store,
 * for the clock guard only: every other rule compares the ping with the
 * baseline, both dated by the device.
 *
 * `candidate` is the asset's jump candidate (see the jump guard), read and
 * left as it is after this ping: set on a `jump`, cleared when the ping was
 * judged against the baseline and was not one, untouched otherwise. A
 * caller that keeps none passes nothing: every jump is then the first of
 * its kind.
 */
export function decideWindow(baseline: WindowBaseline | undefined, ping: Ping, rule: WindowRule, nowMs: number, candidate?: JumpCandidate): WindowVerdict {
  const dtSeconds = baseline === undefined ? null : (ping.t - baseline.t) / 1000;
  if (rule.maxAheadSeconds !== undefined && ping.t - nowMs > rule.maxAheadSeconds * 1000) {
    return verdict('ahead', dtSeconds, null, null);
  }
  if (rule.mode === 'value') return decideValue(baseline, dtSeconds, ping, rule);
  const fix = ping.fix ?? FIX_OK;
  if (fix !== FIX_OK) return verdict(fix === NO_FIX ? 'no-fix' : 'poor-fix', dtSeconds, null, null);
  if (baseline === undefined || dtSeconds === null) return verdict('first', null, null, null);
  if (ping.retry === true && isBaseline(baseline, ping, false)) return verdict('replayed', null, null, null);
  // A late ping must not become the baseline: writing it would rewind the
  // window, and the next genuine ping would be compared against a position
  // the vehicle already left.
  if (dtSeconds <= 0) return verdict('late', dtSeconds, null, null);
  const metres = distanceMetres(baseline.lat, baseline.lon, ping.lat, ping.lon);
  const heading = ping.heading ?? NaN;
  const turn = Number.isNaN(heading) || Number.isNaN(baseline.heading) ? null : headingChange(baseline.heading, heading);
  const accuracy = ping.accuracy ?? 0;
  const maxSpeed = rule.maxSpeedKmh ?? 0;
  if (maxSpeed > 0) {
    const jump = judgeJump(metres, dtSeconds, accuracy + baseline.accuracy, ping, rule, maxSpeed, candidate);
    if (jump !== undefined) return verdict(jump, dtSeconds, metres, turn);
  }
  if (dtSeconds >= rule.minSeconds) return verdict('elapsed', dtSeconds, metres, turn);
  if ((ping.events ?? 0) !== baseline.events) return verdict('event', dtSeconds, metres, turn);
  // A move smaller than the two fixes' uncertainty together is jitter, not a move.
  if (metres >= rule.minMetres && metres > accuracy + baseline.accuracy) return verdict('moved', dtSeconds, metres, turn);
  const minTurn = rule.minHeadingDegrees ?? 0;
  if (minTurn > 0 && turn !== null && turn >= minTurn) return verdict('turned', dtSeconds, metres, turn);
  return verdict('window', dtSeconds, metres, turn);
}

/**
 * The jump guard for a ping newer than the baseline: `jump`, `relocated`,
 * or undefined for the ordinary rules; the candidate is left as the guard
 * says (see the header).
 */
function judgeJump(
  metres: number,
  dtSeconds: number,
  jitter: number,
  ping: Ping,
  rule: WindowRule,
  maxSpeed: number,
  candidate: JumpCandidate | undefined,
): 'jump' | 'relocated' | undefined {
  if (dtSeconds > (rule.relocateAfterSeconds ?? rule.minSeconds * RELOCATE_HEARTBEATS)) {
    if (candidate !== undefined) clearCandidate(candidate);
    return metres >= rule.minMetres ? 'relocated' : undefined;
  }
  if (!isJump(metres, dtSeconds, jitter, rule.minMetres, maxSpeed)) {
    if (candidate !== undefined) clearCandidate(candidate);
    return undefined;
  }
  let count = 1;
  if (candidate !== undefined && candidate.count > 0 && ping.t > candidate.t) {
    const fromCandidate = distanceMetres(candidate.lat, candidate.lon, ping.lat, ping.lon);
    if (!isJump(fromCandidate, (ping.t - candidate.t) / 1000, ping.accuracy ?? 0, rule.minMetres, maxSpeed)) count = candidate.count + 1;
  }
  if (count >= (rule.relocateAfterPings ?? DEFAULT_RELOCATE_PINGS)) {
    if (candidate !== undefined) clearCandidate(candidate);
    return 'relocated';
  }
  if (candidate !== undefined) {
    candidate.t = ping.t;
    candidate.lat = storedDegrees(ping.lat);
    candidate.lon = storedDegrees(ping.lon);
    candidate.count = count;
  }
  return 'jump';
}

/**
 * A move (as `moved` counts one: at least minMetres, and more than the
 * accuracies together) faster than maxSpeedKmh. The lead's sketch had
 * d >= max(minMetres, accuracies); this takes the jitter test of `moved`
 * itself (strictly more than the accuracies), so that "a jump is a move
 * that is too fast" holds at the boundary too.
 */
function isJump(metres: number, dtSeconds: number, jitter: number, minMetres: number, maxSpeed: number): boolean {
  return metres >= minMetres && metres > jitter && (metres / dtSeconds) * 3.6 > maxSpeed;
}

/** Value mode: ahead is decided already. */
function decideValue(baseline: WindowBaseline | undefined, dtSeconds: number | null, ping: Ping, rule: WindowRule): WindowVerdict {
  if (baseline === undefined || dtSeconds === null) return verdict('first', null, null, null);
  if (ping.retry === true && isBaseline(baseline, ping, true)) return verdict('replayed', null, null, null);
  if (dtSeconds <= 0) return verdict('late', dtSeconds, null, null);
  const before = baseline.value ?? NaN;
  const change = (ping.value ?? NaN) - before;
  if (dtSeconds >= rule.minSeconds) return verdict('elapsed', dtSeconds, null, null, change);
  if ((ping.events ?? 0) !== baseline.events) return verdict('event', dtSeconds, null, null, change);
  const size = Math.abs(change);
  const deadband = rule.deadband ?? 0;
  const band = rule.deadbandPercent === true ? (Math.abs(before) * deadband) / 100 : deadband;
  // A baseline without a value (written in position mode, before the node's
  // mode was changed) is no reading to stay within a deadband of.
  if ((size > 0 && size >= band) || Number.isNaN(before)) return verdict('changed', dtSeconds, null, null, change);
  return verdict('unchanged', dtSeconds, null, null, change);
}

/** The ping is the baseline itself, as the store would have written it. */
function isBaseline(baseline: WindowBaseline, ping: Ping, valueMode: boolean): boolean {
  if (baseline.t !== ping.t || baseline.events !== (ping.events ?? 0)) return false;
  if (valueMode) return baseline.value === ping.value;
  return baseline.lat === storedDegrees(ping.lat) && baseline.lon === storedDegrees(ping.lon);
}
