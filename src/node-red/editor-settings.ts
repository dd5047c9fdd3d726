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

/**
 * Where a network server's message holds a reading's parts: the dialog's
 * presets fill the fields with these, and move each measured field under
 * `under` (its name kept). Two variants per network:
 *
 * - device counter: the reading counter and time the sensor itself put in
 *   its payload (decoded as `seq` and `ts`, the reference's names). A
 *   sensor replaying its buffer after a reconnect sends the same readings
 *   in new frames; their counter and time are the readings' own, so the
 *   replay has the keys of the first delivery and is suppressed.
 * - frame counter: the radio frame counter and the network's receive time.
 *   Catches an uplink heard by two gateways or delivered twice by a broker,
 *   but not a buffered replay: new frames, new counters, new receive times.
 *
 * Choosing a preset changes only what the dialog fills in: a saved flow
 * keeps its fields, so its keys do not change.
 */
export interface SensorPreset {
  /** Which parts it keys on: the device's own counter and time, or the radio frame's. */
  counter: 'device' | 'frame';
  deviceField: string;
  seqField: string;
  tsField: string;
  /** The path prefix the measured fields move under. */
  under: string;
}

export const SENSOR_PRESETS: Readonly<Record<string, SensorPreset>> = {
  'tts-device': {
    counter: 'device',
    deviceField: 'end_device_ids.dev_eui',
    seqField: 'uplink_message.decoded_payload.seq',
    tsField: 'uplink_message.decoded_payload.ts',
    under: 'uplink_message.decoded_payload.',
  },
  'tts-frame': {
    counter: 'frame',
    deviceField: 'end_device_ids.dev_eui',
    seqField: 'uplink_message.f_cnt',
    tsField: 'uplink_message.received_at',
    under: 'uplink_message.decoded_payload.',
  },
  'chirpstack-device': { counter: 'device', deviceField: 'deviceInfo.devEui', seqField: 'object.seq', tsField: 'object.ts', under: 'object.' },
  'chirpstack-frame': { counter: 'frame', deviceField: 'deviceInfo.devEui', seqField: 'fCnt', tsField: 'time', under: 'object.' },
  flat: { counter: 'device', deviceField: 'device_id', seqField: 'seq', tsField: 'ts', under: '' },
};

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
