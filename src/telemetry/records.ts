import { startClock } from './coarse-clock';
import { ConfirmTelemetry } from './confirm-telemetry';
import type { DecidingRecord } from './deciding-record';
import type { ConfirmSubject, DecidingSubject, SensorSubject, WindowSubject } from './subjects';
import { SensorTelemetry } from './sensor-telemetry';
import { WindowTelemetry } from './window-telemetry';

/**
 * Every dedup node's telemetry record, by node id: kept across redeploys
 * (a new node object of the same id takes its record over), forgotten
 * when the node is deleted (node-red/node-registry's forgetNode), or, for a
 * sliding-window or sensor node, an hour after it closed without coming
 * back (forgetClosed: flows stopped, say).
 */
export type TelemetryRecord = WindowTelemetry | SensorTelemetry | ConfirmTelemetry;
export type DecidingTelemetry = WindowTelemetry | SensorTelemetry;

const records = new Map<string, TelemetryRecord>();

/** Confirm nodes followed at most: far more than a flow has; a runaway of ids cannot grow it without bound. */
const MAX_CONFIRM_NODES = 1000;
/** A closed node that has not come back within this long is forgotten. */
const FORGET_CLOSED_MS = 3_600_000;

/** The sliding-window node's record: the one its id had (given the node's new settings), or a new one. */
export function windowTelemetry(subject: WindowSubject): WindowTelemetry {
  return recordFor(subject, WindowTelemetry);
}

/** The sensor node's record: the one its id had (given the node's new settings), or a new one. */
export function sensorTelemetry(subject: SensorSubject): SensorTelemetry {
  return recordFor(subject, SensorTelemetry);
}

/** The record of a subject's id if it is of its kind (told its new subject), else a new one in its place. */
function recordFor<S extends DecidingSubject, R extends DecidingRecord<S> & DecidingTelemetry>(subject: S, Kind: new (subject: S) => R): R {
  startClock();
  const found = records.get(subject.id);
  if (found instanceof Kind) {
    found.adopt(subject);
    return found;
  }
  const record = new Kind(subject);
  records.set(subject.id, record);
  return record;
}

/** The confirm node's record: the one its id had, or a new one (the oldest confirm node's going when there are too many). */
export function confirmTelemetry(subject: ConfirmSubject): ConfirmTelemetry {
  const found = records.get(subject.id);
  if (found instanceof ConfirmTelemetry) {
    found.subject = subject;
    return found;
  }
  if (found === undefined && [...confirmRecords()].length >= MAX_CONFIRM_NODES) {
    for (const oldest of confirmRecords()) {
      records.delete(oldest.subject.id);
      break;
    }
  }
  const record = new ConfirmTelemetry(subject);
  records.set(subject.id, record);
  return record;
}

/** The record of a node id, if any. */
export function telemetryOf(id: string): TelemetryRecord | undefined {
  return records.get(id);
}

/** The sliding-window and sensor nodes' records that a node object has run, running or closed but not yet forgotten, oldest first. */
export function* decidingRecords(): Generator<DecidingTelemetry> {
  for (const record of records.values()) if (!(record instanceof ConfirmTelemetry) && record.started) yield record;
}

export function* confirmRecords(): Generator<ConfirmTelemetry> {
  for (const record of records.values()) if (record instanceof ConfirmTelemetry) yield record;
}

/**
 * The node object of `run` closed: a deleted node's record goes; otherwise
 * it waits for the node's next start. A record some other node object has
 * taken over since (another node under the id) is left alone.
 */
export function closeRun(record: DecidingTelemetry, run: number, removed: boolean): void {
  if (records.get(record.subject.id) !== record) return;
  if (removed) records.delete(record.subject.id);
  else record.stop(run);
}

/** The node was deleted: its record goes. */
export function forgetTelemetry(id: string): void {
  records.delete(id);
}

/** Forgets the sliding-window and sensor nodes closed longer than FORGET_CLOSED_MS (and those whose store never bound). */
export function forgetClosed(now: number): void {
  for (const [id, record] of [...records]) {
    if (record instanceof ConfirmTelemetry || record.running) continue;
    if (now - record.closedAt > FORGET_CLOSED_MS) records.delete(id);
  }
}
