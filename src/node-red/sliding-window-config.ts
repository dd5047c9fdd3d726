import type { MemoryWindowSettings } from '../stores/memory-window-store';
import type { NodeAPI, NodeDef } from './api';
import { isBlank, nonNegativeNumber, oneOf, optionalNonNegative, positiveInteger, positiveNumber } from './config-values';
import { MAX_ENTRIES, SLIDING_WINDOW_DEFAULTS as DEFAULTS } from '../core/defaults';
import { compileMessagePath, type MessagePath } from './message-path';
import type { StartWarning } from './node-lifecycle';
import type { OnStoreError } from './store-failure';
import type { StoreKind } from '../telemetry/subjects';

export interface SlidingWindowDef extends NodeDef {
  store?: string;
  redis?: string;
  minSeconds?: string | number;
  minMetres?: string | number;
  ttlSeconds?: string | number;
  maxAssets?: string | number;
  persistSeconds?: string | number;
  assetIdProperty?: string;
  timeProperty?: string;
  latProperty?: string;
  lonProperty?: string;
  eventFields?: string;
  minHeadingDegrees?: string | number;
  headingProperty?: string;
  accuracyProperty?: string;
  maxAheadSeconds?: string | number;
  sampleSize?: string | number;
  onStoreError?: string;
}

export interface SlidingWindowPaths {
  assetId: MessagePath;
  time: MessagePath;
  lat: MessagePath;
  lon: MessagePath;
  /** Read only when the turn rule is on. */
  heading: MessagePath | undefined;
  /** Read only when the accuracy rule is on. */
  accuracy: MessagePath | undefined;
  /** The watched event properties; empty when none. */
  events: MessagePath[];
  /** Some path reads inside msg.payload, which must then be an object, not text still to parse. */
  insidePayload: boolean;
}

export interface SlidingWindowConfig {
  settings: MemoryWindowSettings;
  paths: SlidingWindowPaths;
  store: StoreKind;
  redis: string | undefined;
  persistSeconds: number;
  sampleSize: number;
  onStoreError: OnStoreError;
  /** Options that work but probably do not do what was meant, as catalog keys with substitutions. */
  warnings: StartWarning[];
}

/** The node's options, checked and defaulted; throws with the first option that is wrong. */
export function readSlidingWindowConfig(RED: NodeAPI, def: SlidingWindowDef): SlidingWindowConfig {
  const settingMax = RED.settings.slidingWindowDedupMaxAssets;
  const minHeading = optionalNonNegative(def.minHeadingDegrees, 'minHeadingDegrees');
  if (minHeading !== undefined && (minHeading <= 0 || minHeading > 180)) {
    throw new Error(`minHeadingDegrees must be more than 0 and at most 180, or blank, not ${JSON.stringify(def.minHeadingDegrees)}`);
  }
  // Absent means the default (300 s); blank, as cleared in the dialog (or a flow of version 1), means off.
  const maxAhead = def.maxAheadSeconds === undefined ? DEFAULTS.maxAheadSeconds : optionalNonNegative(def.maxAheadSeconds, 'maxAheadSeconds');
  const settings: MemoryWindowSettings = {
    minSeconds: positiveNumber(def.minSeconds, 'minSeconds', DEFAULTS.minSeconds),
    minMetres: positiveNumber(def.minMetres, 'minMetres', DEFAULTS.minMetres),
    ttlSeconds: positiveNumber(def.ttlSeconds, 'ttlSeconds', DEFAULTS.ttlSeconds),
    // Blank in the editor means "use the runtime setting", as does absent.
    maxAssets: positiveInteger(isBlank(def.maxAssets) ? settingMax : def.maxAssets, 'maxAssets', MAX_ENTRIES),
    ...(minHeading !== undefined ? { minHeadingDegrees: minHeading } : {}),
    ...(maxAhead !== undefined ? { maxAheadSeconds: maxAhead } : {}),
  };
  const path = (value: string | undefined, fallback: string): MessagePath => compileMessagePath(RED, isBlank(value) ? fallback : (value as string));
  const events = (def.eventFields ?? '')
    .split(',')
    .map((p) => p.trim())
    .filter((p) => p !== '')
    .map((p) => compileMessagePath(RED, p));
  const warnings: SlidingWindowConfig['warnings'] = [];
  if (settings.ttlSeconds < settings.minSeconds) {
    warnings.push({ key: 'warnings.ttlShorterThanHeartbeat', subs: { ttl: settings.ttlSeconds, heartbeat: settings.minSeconds } });
  }
  const read = {
    assetId: path(def.assetIdProperty, DEFAULTS.assetIdProperty),
    time: path(def.timeProperty, DEFAULTS.timeProperty),
    lat: path(def.latProperty, DEFAULTS.latProperty),
    lon: path(def.lonProperty, DEFAULTS.lonProperty),
    heading: minHeading === undefined ? undefined : path(def.headingProperty, DEFAULTS.headingProperty),
    accuracy: isBlank(def.accuracyProperty) ? undefined : path(def.accuracyProperty, ''),
    events,
  };
  const every = [read.assetId, read.time, read.lat, read.lon, read.heading, read.accuracy, ...events];
  return {
    settings,
    paths: { ...read, insidePayload: every.some((p) => p?.insidePayload === true) },
    store: oneOf(def.store, 'store', ['memory', 'redis'], DEFAULTS.store),
    redis: def.redis,
    persistSeconds: nonNegativeNumber(def.persistSeconds, 'persistSeconds', DEFAULTS.persistSeconds),
    sampleSize: Math.floor(nonNegativeNumber(def.sampleSize, 'sampleSize', DEFAULTS.sampleSize)),
    onStoreError: oneOf(def.onStoreError, 'onStoreError', ['admit', 'error'], DEFAULTS.onStoreError),
    warnings,
  };
}
