/**
 * Every node option's default, written once: the runtime reads a missing
 * option as its default here, and the editor gets the same values (and the
 * config version) as runtime settings that registerType exports, through
 * RED.settings (see resources/dedup-editor.js, `defaultsFor`), so that the
 * dialog of a new node and a hand-written flow mean the same thing.
 *
 * A blank *Max assets* / *Max keys* means "the runtime setting"
 * (slidingWindowDedupMaxAssets / sensorReconnectDedupMaxKeys in
 * settings.js), whose own default is MAX_ENTRIES.
 */
import { CONFIG_VERSION, type DedupNodeType } from './migrations';

export const MAX_ENTRIES = 100_000;

export const SLIDING_WINDOW_DEFAULTS = {
  name: '',
  store: 'memory',
  redis: '',
  minSeconds: 60,
  minMetres: 25,
  ttlSeconds: 21_600,
  maxAssets: '',
  persistSeconds: 10,
  assetIdProperty: 'payload.assetId',
  timeProperty: 'payload.ts',
  latProperty: 'payload.lat',
  lonProperty: 'payload.lon',
  eventFields: '',
  minHeadingDegrees: '',
  headingProperty: 'payload.heading',
  accuracyProperty: '',
  maxAheadSeconds: 300,
  sampleSize: 10_000,
  onStoreError: 'admit',
} as const;

export interface MeasureDef {
  /** A property path inside the reading. */
  path: string;
  /** The name in the hashed JSON; blank: the path's last segment. */
  name?: string;
  /** The valid range; blank or absent: unbounded on that side. */
  min?: string | number;
  max?: string | number;
}

export const SENSOR_DEFAULTS = {
  name: '',
  store: 'memory',
  redis: '',
  ttlSeconds: 21_600,
  maxKeys: '',
  persistSeconds: 10,
  keyMode: 'reading',
  keyProperty: 'payload.id',
  keyPropertyType: 'msg',
  deviceField: 'device_id',
  seqField: 'seq',
  tsField: 'ts',
  measures: [{ path: 'fill_pct', name: '', min: 0, max: 100 }] as readonly MeasureDef[],
  confirm: 'off',
  leaseSeconds: 60,
  outputMode: 'burst',
  onStoreError: 'admit',
} as const;

export const CONFIRM_DEFAULTS = {
  name: '',
  action: 'confirm',
} as const;

export const REDIS_DEFAULTS = {
  name: '',
  mode: 'standalone',
  url: '',
  host: '127.0.0.1',
  port: 6379,
  db: 0,
  tls: false,
  sentinels: '',
  masterName: 'mymaster',
  clusterNodes: '',
  keyPrefix: 'dedup:',
  timeoutMs: 2000,
} as const;

const DEFAULTS: Record<DedupNodeType, object> = {
  'sliding-window-dedup': SLIDING_WINDOW_DEFAULTS,
  'sensor-reconnect-dedup': SENSOR_DEFAULTS,
  'dedup-confirm': CONFIRM_DEFAULTS,
  'dedup-redis': REDIS_DEFAULTS,
};

/** `sliding-window-dedup` -> `slidingWindowDedup`: the prefix Node-RED requires of a node's settings. */
export function settingsPrefix(type: string): string {
  return type.replace(/-([a-z])/g, (_, letter: string) => letter.toUpperCase());
}

/** The registerType `settings` of a node type: its defaults and config version, for the editor. */
export function editorSettings(type: DedupNodeType, more: Record<string, { value: unknown; exportable: boolean }> = {}): Record<string, { value: unknown; exportable: boolean }> {
  return {
    [`${settingsPrefix(type)}Defaults`]: { value: { ...DEFAULTS[type], version: CONFIG_VERSION }, exportable: true },
    ...more,
  };
}
