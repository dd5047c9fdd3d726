import type { PingColumns } from '../core/window/ping-columns';
import type { AssetRow } from '../telemetry/asset-board';
import type { DeviceRow } from '../telemetry/device-board';
import type { KeyArrivalStats } from '../telemetry/key-arrivals';
import type { RateSnapshot } from '../telemetry/rate-series';
import { decidingRecords, telemetryOf, type DecidingTelemetry } from '../telemetry/records';
import { SensorTelemetry } from '../telemetry/sensor-telemetry';
import type { DecidingSubject, SensorNodeSettings, StoreInfo, WindowNodeSettings } from '../telemetry/subjects';
import { WindowTelemetry } from '../telemetry/window-telemetry';
import type { Totals } from './stats-report';

/**
 * What the editor's dedup sidebar reads of the running dedup nodes (the
 * plugin, src/dedup-sidebar.ts, serves it): their counts and rates, the
 * assets or devices worth a look, the what-if's sample. Worked out from the
 * nodes' telemetry records only when asked, never on the path of a message.
 */

/** Rows in each of the sidebar's lists (and at most in the stats node's). */
export const TOP_ROWS = 20;

/** One node as the sidebar lists it (pushed every few seconds). */
export interface NodeSummary {
  id: string;
  type: DecidingSubject['type'];
  name: string;
  store: StoreInfo;
  settings: Readonly<WindowNodeSettings> | Readonly<SensorNodeSettings>;
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
  /** Sliding window, position mode: the assets whose pings have had no fix for at least a Heartbeat, longest first. */
  noFix?: AssetRow[];
  assets?: number;
  /** Sensor: the devices with the most replays. */
  replays?: DeviceRow[];
  devices?: number;
}

/** The record of a running sliding-window or sensor node. */
function runningRecord(id: string): DecidingTelemetry | undefined {
  const record = telemetryOf(id);
  return (record instanceof WindowTelemetry || record instanceof SensorTelemetry) && record.running ? record : undefined;
}

function summaryOf(record: DecidingTelemetry, now: number): NodeSummary {
  const { subject } = record;
  const summary: NodeSummary = {
    id: subject.id,
    type: subject.type,
    name: subject.name,
    store: record.storeInfo(),
    settings: subject.settings,
    since: record.since,
    totals: { admitted: record.admitted, suppressed: record.suppressed, rejected: record.rejected },
    rates: record.rates.snapshot(now),
  };
  if (record instanceof WindowTelemetry) summary.sample = { size: record.ring.size, capacity: record.ring.capacity, oldest: record.ring.oldestArrival ?? null };
  else summary.keys = record.arrivals.stats();
  return summary;
}

/** Every running dedup node, as the sidebar lists them. */
export function insightSummaries(now = Date.now()): NodeSummary[] {
  const summaries: NodeSummary[] = [];
  for (const record of decidingRecords()) if (record.running) summaries.push(summaryOf(record, now));
  return summaries;
}

/** One running node with its lists; undefined when no such node runs. */
export function insightDetails(id: string, now = Date.now()): NodeDetails | undefined {
  const record = runningRecord(id);
  if (record === undefined) return undefined;
  const details: NodeDetails = summaryOf(record, now);
  if (record instanceof WindowTelemetry) {
    details.stuck = record.assets.stuck(TOP_ROWS);
    details.silent = record.assets.silent(TOP_ROWS);
    // No fix for a Heartbeat: the consumer would have had a ping by then, and has had none.
    if (record.subject.settings.mode !== 'value') details.noFix = record.assets.withoutFix(TOP_ROWS, now, record.subject.settings.minSeconds * 1000);
    details.assets = record.assets.size;
  } else {
    details.replays = record.devices.top(TOP_ROWS);
    details.devices = record.devices.size;
  }
  return details;
}

/** The subject of a running sliding-window or sensor node, or undefined. */
export function runningSubject(id: string): DecidingSubject | undefined {
  return runningRecord(id)?.subject;
}

/** A running sliding-window node's sample, oldest first; undefined when there is no such node. */
export function windowSample(id: string): { columns: PingColumns } | undefined {
  const record = runningRecord(id);
  return record instanceof WindowTelemetry ? { columns: record.ring.columns() } : undefined;
}

/** A running sensor node's measured replay gaps (ms), with its settings. */
export function keyGaps(id: string): { gaps: Float64Array; stats: KeyArrivalStats; settings: Readonly<SensorNodeSettings> } | undefined {
  const record = runningRecord(id);
  if (!(record instanceof SensorTelemetry)) return undefined;
  return { gaps: record.arrivals.measuredGaps(), stats: record.arrivals.stats(), settings: record.subject.settings };
}
