import { MAX_ENTRIES } from '../core/defaults';
import { claimIndex, type Prepared, type Settled } from '../core/sensor/burst';
import type { Ping } from '../core/window/sliding-window';
import { WINDOW_REASONS } from '../core/window/window-reasons';
import { add, NodeCounters, SENSOR_DUPLICATE, SENSOR_IN_FLIGHT, SENSOR_NEW, SENSOR_REPLAYED, STORE_UNAVAILABLE } from '../metrics/node-counters';
import type { WindowOutcome } from '../stores/types';
import { AssetBoard, type AssetRow } from '../insight/asset-board';
import { DeviceBoard, type DeviceRow } from '../insight/device-board';
import { KeyArrivals, type KeyArrivalStats } from '../insight/key-arrivals';
import { blankPing, pingAt, type PingColumns } from '../core/window/ping-columns';
import { PingRing } from '../insight/ping-ring';
import { ADMITTED, RateSeries, REJECTED, SUPPRESSED, type RateSnapshot } from '../insight/rate-series';
import { drop, keep, recordOf, recordsIn } from './node-registry';
import type { StoreInfo } from './store-binding';

/**
 * What the dedup nodes tell the editor's dedup sidebar about themselves:
 * every decision, as it is made. The registry keeps, per running node, its
 * counts over time, the assets or devices worth a look, and a bounded
 * sample of its recent input for the what-if charts.
 *
 * It is on the path of every message, so each report costs a clock read, a
 * few typed-array writes and one map lookup, and allocates nothing; the
 * lists and charts are worked out only when the sidebar asks (the
 * dedup-sidebar plugin, src/dedup-sidebar.ts).
 *
 * Held by node id, like the memory stores: a redeploy builds a new node
 * object, which finds its rates, lists and sample where the old one left
 * them. A deleted node's go with it.
 */
export interface NodeInsight {
  /** A sliding-window decision (also the store-unavailable admissions, with outcome undefined). */
  windowDecided(ping: Ping, outcome: WindowOutcome | undefined): void;
  /** A sensor message decided: its readings and what became of them. */
  sensorDecided(prepared: Prepared, settled: Settled | undefined): void;
  /** A message (or reading) that could not be read. */
  rejected(count: number): void;
  /** The store failed a request (whether the message was then admitted or went to Catch). */
  storeFailed(error: unknown): void;
  /** The node closed: it leaves the sidebar unless it comes back (a redeploy). */
  close(removed: boolean): void;
}

export interface InsightSubject {
  id: string;
  type: string;
  name: string;
  /** The node's store and its state. */
  info: () => StoreInfo;
  /** The node's options the sidebar shows and the what-if starts from. */
  settings: () => Record<string, unknown>;
  /** Pings kept for the what-if (sliding window), 0: none. */
  sampleSize: number;
}

/** Rows in each of the sidebar's lists. */
export const TOP_ROWS = 20;
/** Devices followed per sensor node for the replay list. */
const MAX_DEVICES = 10_000;
/** Keys whose admission time the TTL what-if remembers, and replay gaps it keeps. */
const MAX_SAMPLED_KEYS = 20_000;
const MAX_GAPS = 10_000;
/** A closed node that has not come back within this long is forgotten (flows stopped, say). */
const FORGET_CLOSED_MS = 3_600_000;

export interface Totals {
  admitted: number;
  suppressed: number;
  rejected: number;
}

/** One node as the sidebar lists it (pushed every few seconds). */
export interface NodeSummary {
  id: string;
  type: string;
  name: string;
  store: StoreInfo;
  settings: Record<string, unknown>;
  /** Epoch ms since which the totals count. */
  since: number;
  /** Sliding window: pings; sensor: readings. */
  totals: Totals;
  rates: RateSnapshot;
  /** Sliding window: the what-if sample. */
  sample?: { size: number; capacity: number; oldest: number | null };
  /** Sensor: the key-arrival sample. */
  keys?: KeyArrivalStats;
}

/** One node with its lists (asked for when the sidebar opens it). */
export interface NodeDetails extends NodeSummary {
  /** Sliding window: the highest suppressed/accepted ratios, and the assets silent longest. */
  stuck?: AssetRow[];
  silent?: AssetRow[];
  assets?: number;
  /** Sensor: the devices with the most replays. */
  replays?: DeviceRow[];
  devices?: number;
}

/** The data of one node id, kept across redeploys (in node-red/node-registry). */
class NodeRecord {
  readonly rates = new RateSeries();
  readonly totals: Totals = { admitted: 0, suppressed: 0, rejected: 0 };
  readonly since = Date.now();
  assets: AssetBoard | undefined;
  ring: PingRing | undefined;
  devices: DeviceBoard | undefined;
  arrivals: KeyArrivals | undefined;
  arrivalsTtlMs = 0;
  /** What Prometheus reads (metrics/exporter); counted only while countMetrics is on. */
  readonly counters: NodeCounters;
  /** The NodeInsight of the running node; undefined once it closed. */
  current: NodeInsight | undefined;
  closedAt = 0;

  constructor(public subject: InsightSubject) {
    this.counters = new NodeCounters(isWindow(subject));
  }

  /** Fits the sample and boards to the (possibly redeployed) node's settings. */
  adopt(subject: InsightSubject): void {
    this.subject = subject;
    const settings = subject.settings();
    if (isWindow(subject)) {
      const maxAssets = typeof settings.maxAssets === 'number' && settings.maxAssets > 0 ? Math.min(settings.maxAssets, MAX_ENTRIES) : MAX_ENTRIES;
      this.assets ??= new AssetBoard(maxAssets);
      const capacity = Math.max(0, Math.floor(subject.sampleSize));
      if (this.ring?.capacity !== capacity) this.ring = resized(this.ring, capacity);
    } else {
      this.devices ??= new DeviceBoard(MAX_DEVICES);
      const ttlMs = typeof settings.ttlSeconds === 'number' ? settings.ttlSeconds * 1000 : Infinity;
      // The sample keeps keys for as long as the node remembers them: under a new Remember it starts afresh, so that all its gaps come under one limit.
      if (this.arrivals === undefined || this.arrivalsTtlMs !== ttlMs) {
        this.arrivals = new KeyArrivals(ttlMs, MAX_SAMPLED_KEYS, MAX_GAPS, Date.now());
        this.arrivalsTtlMs = ttlMs;
      }
    }
  }
}

/** What node-red/node-registry keeps of a node for the sidebar and Prometheus. */
export type InsightRecord = NodeRecord;

/**
 * Whether decisions are counted for Prometheus: on unless the runtime
 * setting dedupMetrics is false (the dedup-sidebar plugin decides); the
 * metrics bench turns it off to measure what counting costs.
 */
let countMetrics = true;

export function setMetricsCounting(on: boolean): void {
  countMetrics = on;
}

/*
 * The time of a decision, to the quarter second: Date.now() costs more than
 * everything else a report does (it is a system call on some virtual
 * machines), so it is read every 250 ms by a timer, and every 1024 reports
 * besides, for a burst that holds the event loop longer than that. Ten-second
 * rate buckets, "last ping" times and the what-if's clock need no finer.
 */
let coarseNow = Date.now();
let reportsSinceRead = 0;
let clockTimer: NodeJS.Timeout | undefined;

function decisionTime(): number {
  if (++reportsSinceRead >= 1024) {
    reportsSinceRead = 0;
    coarseNow = Date.now();
  }
  return coarseNow;
}

function startClock(): void {
  if (clockTimer !== undefined) return;
  coarseNow = Date.now();
  clockTimer = setInterval(() => {
    coarseNow = Date.now();
    reportsSinceRead = 0;
  }, 250);
  clockTimer.unref();
}

function isWindow(subject: InsightSubject): boolean {
  return subject.type === 'sliding-window-dedup';
}

/** A ring of the new capacity holding the newest pings of the old one. */
function resized(old: PingRing | undefined, capacity: number): PingRing {
  const ring = new PingRing(capacity);
  if (old !== undefined && capacity > 0) {
    const columns = old.columns();
    const ping = blankPing();
    for (let i = Math.max(0, columns.size - capacity); i < columns.size; i++) ring.push(pingAt(columns, i, ping), columns.arrival[i] as number);
  }
  return ring;
}

/** Tracks a node for the sidebar; its NodeInsight is what the node reports to. */
export function trackNode(subject: InsightSubject): NodeInsight {
  startClock();
  let record = recordOf(subject.id, 'insight');
  if (record === undefined || record.subject.type !== subject.type) {
    record = new NodeRecord(subject);
    keep(subject.id, 'insight', record);
  }
  record.adopt(subject);
  const insight = isWindow(subject) ? windowInsight(record) : sensorInsight(record);
  record.current = insight;
  return insight;
}

function windowInsight(record: NodeRecord): NodeInsight {
  const { rates, totals, counters } = record;
  const assets = record.assets as AssetBoard;
  const ring = record.ring as PingRing;
  const insight: NodeInsight = {
    windowDecided(ping, outcome) {
      const now = decisionTime();
      if (countMetrics) add(counters.decisions, outcome === undefined ? STORE_UNAVAILABLE : WINDOW_REASONS[outcome.reason].code);
      if (outcome === undefined || outcome.admit) {
        totals.admitted++;
        rates.add(now, ADMITTED, 1);
      } else {
        totals.suppressed++;
        rates.add(now, SUPPRESSED, 1);
      }
      if (outcome === undefined) assets.seen(ping.assetId, now, NaN, NaN);
      else assets.seen(ping.assetId, now, outcome.accepted, outcome.suppressed);
      ring.push(ping, now);
    },
    sensorDecided: () => undefined,
    rejected: (count) => rejected(record, count),
    storeFailed: (error) => counters.storeFailed(error),
    close: (removed) => closed(record, insight, removed),
  };
  return insight;
}

function sensorInsight(record: NodeRecord): NodeInsight {
  const { rates, totals, counters } = record;
  const devices = record.devices as DeviceBoard;
  const arrivals = record.arrivals as KeyArrivals;
  const insight: NodeInsight = {
    windowDecided: () => undefined,
    sensorDecided(prepared, settled) {
      const now = decisionTime();
      if (prepared.rejected.length > 0) rejected(record, prepared.rejected.length);
      if (settled === undefined) {
        // The store failed and the message went to a Catch node: nothing was decided.
        rejected(record, prepared.keyed.length);
        return;
      }
      const admitted = settled.admitted.length;
      const suppressed = settled.suppressed.length;
      totals.admitted += admitted;
      totals.suppressed += suppressed;
      if (admitted > 0) rates.add(now, ADMITTED, admitted);
      if (suppressed > 0) rates.add(now, SUPPRESSED, suppressed);
      if (settled.storeError !== undefined) {
        // Admitted without the store (it failed): no admission was remembered, so none is sampled.
        if (countMetrics) countUnsettled(counters, settled);
        return;
      }
      if (countMetrics) {
        const decisions = counters.decisions;
        add(decisions, SENSOR_REPLAYED, settled.replayed);
        add(decisions, SENSOR_NEW, admitted - settled.replayed);
        counters.leaseExpired += settled.leaseExpired;
      }
      for (const keyed of settled.admitted) arrivals.admitted(keyed.key, now);
      for (const { keyed, reason } of settled.suppressed) {
        if (countMetrics) add(counters.decisions, reason === 'in-flight' ? SENSOR_IN_FLIGHT : SENSOR_DUPLICATE);
        // A repeat inside the message points at its first occurrence's claim (core/sensor/burst).
        const claim = prepared.claims[claimIndex(keyed)];
        if (claim !== undefined) devices.replayed(claim.group, now);
        arrivals.replayed(keyed.key, now);
      }
    },
    rejected: (count) => rejected(record, count),
    storeFailed: (error) => counters.storeFailed(error),
    close: (removed) => closed(record, insight, removed),
  };
  return insight;
}

/** A sensor message admitted without its store: its readings into the Prometheus counters. */
function countUnsettled(counters: NodeCounters, settled: Settled): void {
  add(counters.decisions, STORE_UNAVAILABLE, settled.admitted.length);
  for (const { reason } of settled.suppressed) add(counters.decisions, reason === 'in-flight' ? SENSOR_IN_FLIGHT : SENSOR_DUPLICATE);
}

function rejected(record: NodeRecord, count: number): void {
  if (countMetrics) record.counters.rejected += count;
  record.totals.rejected += count;
  record.rates.add(decisionTime(), REJECTED, count);
}

function closed(record: NodeRecord, insight: NodeInsight, removed: boolean): void {
  if (recordOf(record.subject.id, 'insight') !== record) return;
  if (removed) {
    drop(record.subject.id, 'insight');
    return;
  }
  // A later node of the same id may already have taken over.
  if (record.current === insight) {
    record.current = undefined;
    record.closedAt = Date.now();
  }
}

function* insightRecords(): Generator<NodeRecord> {
  for (const [, record] of recordsIn('insight')) yield record;
}

/** Every node's Prometheus counters with its subject, running or closed but not yet forgotten (a redeploy must not make a series vanish). */
export function nodeCounters(): { subject: InsightSubject; counters: NodeCounters; running: boolean }[] {
  return [...insightRecords()].map((r) => ({ subject: r.subject, counters: r.counters, running: r.current !== undefined }));
}

/** What a dedup-stats node reads of one dedup node: the counts the sidebar and Prometheus read, and its top rows. */
export interface NodeCounts {
  subject: InsightSubject;
  running: boolean;
  since: number;
  totals: Totals;
  /** By slot of WINDOW_SLOTS or SENSOR_SLOTS; all 0 while the metrics counting is off. */
  decisions: Float64Array;
  /** Sliding window: the assets with the most suppressed pings; sensor: the devices with the most replays. */
  top: { id: string; suppressed: number; admitted: number | null }[];
}

/** The counts of the node with this id, running or closed but not yet forgotten; undefined for an id the pack does not know. */
export function nodeCounts(id: string, topRows: number): NodeCounts | undefined {
  const record = recordOf(id, 'insight');
  if (record === undefined) return undefined;
  const rows = Math.max(0, Math.min(TOP_ROWS, Math.floor(topRows)));
  const top =
    rows === 0
      ? []
      : record.assets !== undefined
        ? record.assets.mostSuppressed(rows).map((r) => ({ id: r.assetId, suppressed: r.suppressed, admitted: r.accepted }))
        : (record.devices?.top(rows) ?? []).map((r) => ({ id: r.device, suppressed: r.replays, admitted: null }));
  return { subject: record.subject, running: record.current !== undefined, since: record.since, totals: { ...record.totals }, decisions: record.counters.decisions.slice(), top };
}

/** The ids of every dedup node the pack knows, oldest first. */
export function countedNodeIds(): string[] {
  return [...recordsIn('insight')].map(([id]) => id);
}

/** Whether decisions are counted by reason (the runtime setting dedupMetrics is not false). */
export function countingReasons(): boolean {
  return countMetrics;
}

/** The running nodes' subjects. */
export function trackedNodes(): InsightSubject[] {
  return [...insightRecords()].filter((r) => r.current !== undefined).map((r) => r.subject);
}

function summaryOf(record: NodeRecord, now: number): NodeSummary {
  const { subject } = record;
  const summary: NodeSummary = {
    id: subject.id,
    type: subject.type,
    name: subject.name,
    store: subject.info(),
    settings: subject.settings(),
    since: record.since,
    totals: { ...record.totals },
    rates: record.rates.snapshot(now),
  };
  if (record.ring !== undefined) summary.sample = { size: record.ring.size, capacity: record.ring.capacity, oldest: record.ring.oldestArrival ?? null };
  if (record.arrivals !== undefined) summary.keys = record.arrivals.stats();
  return summary;
}

/** Every running dedup node, as the sidebar lists them. */
export function insightSummaries(now = Date.now()): NodeSummary[] {
  const summaries: NodeSummary[] = [];
  for (const record of insightRecords()) if (record.current !== undefined) summaries.push(summaryOf(record, now));
  return summaries;
}

/** One running node with its lists; undefined when no such node runs. */
export function insightDetails(id: string, now = Date.now()): NodeDetails | undefined {
  const record = recordOf(id, 'insight');
  if (record === undefined || record.current === undefined) return undefined;
  const details: NodeDetails = summaryOf(record, now);
  if (record.assets !== undefined) {
    details.stuck = record.assets.stuck(TOP_ROWS);
    details.silent = record.assets.silent(TOP_ROWS);
    details.assets = record.assets.size;
  }
  if (record.devices !== undefined) {
    details.replays = record.devices.top(TOP_ROWS);
    details.devices = record.devices.size;
  }
  return details;
}

/** A running sliding-window node's sample, oldest first; undefined when there is no such node. */
export function windowSample(id: string): { columns: PingColumns } | undefined {
  const record = recordOf(id, 'insight');
  if (record === undefined || record.current === undefined || record.ring === undefined) return undefined;
  return { columns: record.ring.columns() };
}

/** A running sensor node's measured replay gaps (ms), with its settings. */
export function keyGaps(id: string): { gaps: Float64Array; stats: KeyArrivalStats; settings: Record<string, unknown> } | undefined {
  const record = recordOf(id, 'insight');
  if (record === undefined || record.current === undefined || record.arrivals === undefined) return undefined;
  return { gaps: record.arrivals.measuredGaps(), stats: record.arrivals.stats(), settings: record.subject.settings() };
}

/** The subject of a running node, or undefined. */
export function runningSubject(id: string): InsightSubject | undefined {
  const record = recordOf(id, 'insight');
  return record?.current === undefined ? undefined : record.subject;
}

let publisher: { timer: NodeJS.Timeout; stop: () => void } | undefined;

/**
 * Pushes insightSummaries() through `publish` every `intervalMs` (the
 * plugin hands RED.comms.publish). One publisher at a time: a second call
 * replaces the first. Returns a function that stops it.
 */
export function publishInsight(publish: (summaries: NodeSummary[], now: number) => void, intervalMs: number): () => void {
  publisher?.stop();
  let lastWasEmpty = false;
  const tick = (): void => {
    const now = Date.now();
    for (const [id, record] of [...recordsIn('insight')]) {
      if (record.current === undefined && now - record.closedAt > FORGET_CLOSED_MS) drop(id, 'insight');
    }
    const summaries = insightSummaries(now);
    // Once empty is enough: it clears the editor's list.
    if (summaries.length === 0 && lastWasEmpty) return;
    lastWasEmpty = summaries.length === 0;
    try {
      publish(summaries, now);
    } catch {
      // The editor connection is Node-RED's business; a failed push is retried at the next tick.
    }
  };
  const timer = setInterval(tick, intervalMs);
  timer.unref();
  const stop = (): void => {
    clearInterval(timer);
    if (publisher?.timer === timer) publisher = undefined;
  };
  publisher = { timer, stop };
  tick();
  return stop;
}
