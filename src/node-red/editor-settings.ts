/**
 * The editor's copy of the defaults (core/defaults) and the config version,
 * as runtime settings that registerType exports, through RED.settings (see
 * resources/dedup-editor.js, `defaultsFor`), so that the dialog of a new node
 * and a hand-written flow mean the same thing; and what else the dialogs
 * are handed (the sensor node's presets).
 */
import { CONFIRM_DEFAULTS, REDIS_DEFAULTS, SENSOR_DEFAULTS, SLIDING_WINDOW_DEFAULTS, STATS_DEFAULTS } from '../core/defaults';
import { CONFIG_VERSION, type DedupNodeType } from './migrations';

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

const DEFAULTS: Record<DedupNodeType, object> = {
  'sliding-window-dedup': SLIDING_WINDOW_DEFAULTS,
  'sensor-reconnect-dedup': SENSOR_DEFAULTS,
  'dedup-confirm': CONFIRM_DEFAULTS,
  'dedup-redis': REDIS_DEFAULTS,
  'dedup-stats': STATS_DEFAULTS,
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
