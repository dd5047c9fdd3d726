import type { MemorySeenSettings } from '../stores/memory-seen-store';
import type { MemoryWindowSettings } from '../stores/memory-window-store';

/**
 * Who a telemetry record is about: one subject type per kind of node, told
 * apart by `type`, for everything that reads a node's telemetry (the
 * sidebar and its what-if, the stats node, Prometheus). The settings are
 * the node's own, as its config read them: typed, never re-parsed.
 */

export type StoreKind = 'memory' | 'redis';

/** What the sidebar, the stats node and Prometheus show of a node's store. */
export interface StoreInfo {
  kind: StoreKind;
  /** Memory: entries held and the cap. */
  entries?: number;
  maxEntries?: number;
  /** Memory: epoch ms of the last save, when saving is on. */
  lastSave?: number;
  saving?: boolean;
  /** Memory: bytes of saved state on disk, when saving is on. */
  savedBytes?: number;
  /** Memory, sensor node: keys pending a confirm. */
  pendingKeys?: number;
  /** Redis: the connection's state, and what is wrong with it. */
  connection?: string;
  cause?: string;
}

export const WINDOW_TYPE = 'sliding-window-dedup';
export const SENSOR_TYPE = 'sensor-reconnect-dedup';
export const CONFIRM_TYPE = 'dedup-confirm';

/** A sliding-window node's options as the sidebar shows them and the what-if starts from. */
export interface WindowNodeSettings extends MemoryWindowSettings {
  /** The watched event properties, as written (`msg.payload.ignition`). */
  eventFields: string[];
  /** The accuracy property, as written; '' when the accuracy rule is off. */
  accuracyProperty: string;
}

/** A sensor node's options as the sidebar shows them and its TTL what-if starts from. */
export interface SensorNodeSettings extends MemorySeenSettings {
  outputMode: 'burst' | 'each';
}

export interface WindowSubject {
  readonly type: typeof WINDOW_TYPE;
  readonly id: string;
  readonly name: string;
  /** The store its config chose. */
  readonly store: StoreKind;
  readonly settings: Readonly<WindowNodeSettings>;
  /** Pings kept for the what-if, 0: none. */
  readonly sampleSize: number;
}

export interface SensorSubject {
  readonly type: typeof SENSOR_TYPE;
  readonly id: string;
  readonly name: string;
  /** The store its config chose. */
  readonly store: StoreKind;
  readonly settings: Readonly<SensorNodeSettings>;
}

export interface ConfirmSubject {
  readonly type: typeof CONFIRM_TYPE;
  readonly id: string;
  readonly name: string;
  readonly action: 'confirm' | 'release';
}

/** A node that decides messages through a store of its own. */
export type DecidingSubject = WindowSubject | SensorSubject;
