import { SENSOR_SLOTS, WINDOW_SLOTS } from '../telemetry/decision-slots';

/**
 * The message a dedup-stats node sends: per dedup node, the counts the
 * dedup sidebar and Prometheus read (the nodes' telemetry records), worked
 * into what a dashboard shows: totals by decision and reason, the share
 * suppressed, decisions per minute since the stats node's previous
 * message, and the assets or devices with the most suppressed. Pure: the
 * counts and the time come in, nothing is read here.
 *
 * The shape is documented in the node's help and docs/dashboard.md; it
 * only grows (new properties), it never renames.
 */

export interface Totals {
  admitted: number;
  suppressed: number;
  rejected: number;
}

/** Decisions by reason, as msg.dedup.reason and the `reason` label of dedup_messages_total word them. */
export interface ByReason {
  admitted: Record<string, number>;
  suppressed: Record<string, number>;
}

export interface TopRow {
  /** The asset id (sliding window) or device id (sensor). */
  id: string;
  suppressed: number;
  /** Sliding window: the asset's admitted pings as its store counts them; sensor: null. */
  admitted: number | null;
}

export interface PerMinute extends Totals {
  /** The interval the rates are taken over, in seconds. */
  seconds: number;
  reasons: ByReason | null;
  shareSuppressed: number;
}

/** What a report says of a dedup node as it was read: who it is, and its running totals. */
interface NodeOf {
  id: string;
  name: string;
  type: string;
  flow: string;
  store: string;
  running: boolean;
  /** Epoch ms since which the node's counts count. */
  since: number;
  totals: Totals;
  top: TopRow[];
}

export interface NodeStats extends NodeOf {
  /** null when the runtime counts no reasons (settings.js dedupMetrics: false). */
  reasons: ByReason | null;
  /** suppressed / (admitted + suppressed), 0 before the first decision. */
  shareSuppressed: number;
  perMinute: PerMinute;
}

/** What a report reads of one dedup node (insight/stats-view's nodeCounts, with its flow name). */
export interface CountsIn extends NodeOf {
  decisions: Float64Array;
}

/** A node's counts when a stats node last reported it: the start of the next message's per-minute interval. */
export interface Reading {
  time: number;
  totals: Totals;
  decisions: Float64Array;
}

function slotsOf(type: string): readonly { reason: string; admit: boolean }[] {
  return type === 'sliding-window-dedup' ? WINDOW_SLOTS : SENSOR_SLOTS;
}

function byReason(type: string, decisions: Float64Array, scale = 1, minus?: Float64Array): ByReason {
  const out: ByReason = { admitted: {}, suppressed: {} };
  const slots = slotsOf(type);
  for (let slot = 0; slot < slots.length; slot++) {
    const { reason, admit } = slots[slot] as { reason: string; admit: boolean };
    const n = ((decisions[slot] ?? 0) - (minus?.[slot] ?? 0)) * scale;
    (admit ? out.admitted : out.suppressed)[reason] = n;
  }
  return out;
}

export function shareOf(admitted: number, suppressed: number): number {
  const decided = admitted + suppressed;
  return decided > 0 ? suppressed / decided : 0;
}

/**
 * One node's stats at `now`. `previous` is the node's reading at the stats
 * node's last message; without one (the first message, or counts that went
 * down: a node deleted and made again under its id) the interval starts
 * at the node's `since`, from zero.
 */
export function nodeStats(counts: CountsIn, now: number, previous: Reading | undefined, withReasons: boolean): { stats: NodeStats; reading: Reading } {
  const { totals, decisions } = counts;
  const wentDown =
    previous !== undefined &&
    (totals.admitted < previous.totals.admitted || totals.suppressed < previous.totals.suppressed || totals.rejected < previous.totals.rejected || decisions.some((n, slot) => n < (previous.decisions[slot] ?? 0)));
  const from = previous === undefined || wentDown ? { time: counts.since, totals: { admitted: 0, suppressed: 0, rejected: 0 }, decisions: new Float64Array(decisions.length) } : previous;
  const ms = Math.max(0, now - from.time);
  // Nothing to divide by in the very millisecond a node started: its rates are 0.
  const scale = ms > 0 ? 60_000 / ms : 0;
  const admitted = totals.admitted - from.totals.admitted;
  const suppressed = totals.suppressed - from.totals.suppressed;
  const stats: NodeStats = {
    id: counts.id,
    name: counts.name,
    type: counts.type,
    flow: counts.flow,
    store: counts.store,
    running: counts.running,
    since: counts.since,
    totals: { ...totals },
    reasons: withReasons ? byReason(counts.type, decisions) : null,
    shareSuppressed: shareOf(totals.admitted, totals.suppressed),
    perMinute: {
      seconds: ms / 1000,
      admitted: admitted * scale,
      suppressed: suppressed * scale,
      rejected: (totals.rejected - from.totals.rejected) * scale,
      reasons: withReasons ? byReason(counts.type, decisions, scale, from.decisions) : null,
      shareSuppressed: shareOf(admitted, suppressed),
    },
    top: counts.top.map((row) => ({ ...row })),
  };
  return { stats, reading: { time: now, totals: { ...totals }, decisions: decisions.slice() } };
}
