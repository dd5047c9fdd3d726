/**
 * The editor's copy of the defaults (core/defaults) and the config version,
 * as runtime settings that registerType exports, through RED.settings (see
 * resources/dedup-editor.js, `defaultsFor`), so that the dialog of a new node
 * and a hand-written flow mean the same thing.
 */
import { CONFIRM_DEFAULTS, REDIS_DEFAULTS, SENSOR_DEFAULTS, SLIDING_WINDOW_DEFAULTS } from '../core/defaults';
import { CONFIG_VERSION, type DedupNodeType } from './migrations';

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
