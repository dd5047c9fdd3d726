import { decidingRecords, telemetryOf } from '../telemetry/records';
import { ConfirmTelemetry } from '../telemetry/confirm-telemetry';
import type { DecidingSubject, StoreKind } from '../telemetry/subjects';
import { WindowTelemetry } from '../telemetry/window-telemetry';
import { TOP_ROWS } from './sidebar-view';
import type { Totals } from './stats-report';

/** What a dedup-stats node reads of one dedup node: the counts the sidebar and Prometheus read, and its top rows. */
export interface NodeCounts {
  subject: DecidingSubject;
  store: StoreKind;
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
  const record = telemetryOf(id);
  if (record === undefined || record instanceof ConfirmTelemetry || !record.started) return undefined;
  const rows = Math.max(0, Math.min(TOP_ROWS, Math.floor(topRows)));
  const top =
    rows === 0
      ? []
      : record instanceof WindowTelemetry
        ? record.assets.mostSuppressed(rows).map((r) => ({ id: r.assetId, suppressed: r.suppressed, admitted: r.accepted }))
        : record.devices.top(rows).map((r) => ({ id: r.device, suppressed: r.replays, admitted: null }));
  return {
    subject: record.subject,
    store: record.storeInfo().kind,
    running: record.running,
    since: record.since,
    totals: { admitted: record.admitted, suppressed: record.suppressed, rejected: record.rejected },
    decisions: record.decisions.slice(),
    top,
  };
}

/** The ids of every sliding-window and sensor node the pack knows, oldest first. */
export function countedNodeIds(): string[] {
  return [...decidingRecords()].map((record) => record.subject.id);
}
