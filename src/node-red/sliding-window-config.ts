import type { MemoryWindowSettings } from '../stores/memory-window-store';
import type { NodeAPI, NodeDef } from './api';
import { flag, isBlank, nonNegativeNumber, oneOf, optionalNonNegative, optionalPositive, positiveInteger, positiveNumber } from './config-values';
import { MAX_ENTRIES, SLIDING_WINDOW_DEFAULTS as DEFAULTS } from '../core/defaults';
import { compileMessagePath, type MessagePath } from './message-path';
import type { StartWarning } from './node-lifecycle';
import type { OnStoreError } from './store-failure';
import type { StoreKind } from '../telemetry/subjects';

export interface SlidingWindowDef extends NodeDef {
  store?: string;
  redis?: string;
  mode?: string;
  minSeconds?: string | number;
  minMetres?: string | number;
  ttlSeconds?: string | number;
  maxAssets?: string | number;
  persistSeconds?: string | number;
  assetIdProperty?: string;
  timeProperty?: string;
  latProperty?: string;
  lonProperty?: string;
  valueProperty?: string;
  deadband?: string | number;
  deadbandUnit?: string;
  eventFields?: string;
  minHeadingDegrees?: string | number;
  headingProperty?: string;
  noFix?: boolean | string;
  validProperty?: string;
  satellitesProperty?: string;
  minSatellites?: string | number;
  hdopProperty?: string;
  maxHdop?: string | number;
  accuracyProperty?: string;
  maxSpeedKmh?: string | number;
  relocateAfterSeconds?: string | number;
  relocateAfterPings?: string | number;
  maxAheadSeconds?: string | number;
  sampleSize?: string | number;
  onStoreError?: string;
}

export interface SlidingWindowPaths {
  assetId: MessagePath;
  time: MessagePath;
  /** Position mode's; undefined in value mode. */
  lat: MessagePath | undefined;
  lon: MessagePath | undefined;
  /** Value mode's reading; undefined in position mode. */
  value: MessagePath | undefined;
  /** Read only when the turn rule is on. */
  heading: MessagePath | undefined;
  /** Read only when the accuracy rule is on. */
  accuracy: MessagePath | undefined;
  /** The fix's quality, each read only when its rule is on (position mode): the validity property with the no-fix guard, satellites with Min satellites, the HDOP with Max HDOP. */
  valid: MessagePath | undefined;
  satellites: MessagePath | undefined;
  hdop: MessagePath | undefined;
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
  const mode = oneOf(def.mode, 'mode', ['position', 'value'], DEFAULTS.mode);
  const position = mode === 'position';
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
    ...(position ? positionGuards(def) : valueRule(def)),
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
    lat: position ? path(def.latProperty, DEFAULTS.latProperty) : undefined,
    lon: position ? path(def.lonProperty, DEFAULTS.lonProperty) : undefined,
    value: position ? undefined : path(def.valueProperty, DEFAULTS.valueProperty),
    heading: !position || minHeading === undefined ? undefined : path(def.headingProperty, DEFAULTS.headingProperty),
    accuracy: !position || isBlank(def.accuracyProperty) ? undefined : path(def.accuracyProperty, ''),
    valid: settings.noFix === true && !isBlank(def.validProperty) ? path(def.validProperty, '') : undefined,
    satellites: settings.minSatellites === undefined ? undefined : path(def.satellitesProperty, DEFAULTS.satellitesProperty),
    hdop: settings.maxHdop === undefined ? undefined : path(def.hdopProperty, DEFAULTS.hdopProperty),
    events,
  };
  const every = [read.assetId, read.time, read.lat, read.lon, read.value, read.heading, read.accuracy, read.valid, read.satellites, read.hdop, ...events];
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

/**
 * Position mode's guards of the fix and of jumps (core/window/fix-quality,
 * the jump guard of core/window/sliding-window), each in the rule only when
 * on. Absent no-fix is on, as for a new node (a saved flow of version 2
 * gets it from its migration).
 */
function positionGuards(def: SlidingWindowDef): Partial<MemoryWindowSettings> {
  const guards: Partial<MemoryWindowSettings> = {};
  if (flag(def.noFix, 'noFix', DEFAULTS.noFix)) guards.noFix = true;
  const minSatellites = optionalNonNegative(def.minSatellites, 'minSatellites');
  if (minSatellites !== undefined) guards.minSatellites = minSatellites;
  const maxHdop = optionalNonNegative(def.maxHdop, 'maxHdop');
  if (maxHdop !== undefined) guards.maxHdop = maxHdop;
  const maxSpeed = optionalNonNegative(def.maxSpeedKmh, 'maxSpeedKmh');
  // The options of the way out are checked whether or not the guard is on: a wrong value is wrong either way.
  const relocateAfterSeconds = optionalPositive(def.relocateAfterSeconds, 'relocateAfterSeconds');
  const relocateAfterPings = positiveInteger(def.relocateAfterPings, 'relocateAfterPings', DEFAULTS.relocateAfterPings);
  if (maxSpeed !== undefined && maxSpeed > 0) {
    guards.maxSpeedKmh = maxSpeed;
    if (relocateAfterSeconds !== undefined) guards.relocateAfterSeconds = relocateAfterSeconds;
    guards.relocateAfterPings = relocateAfterPings;
  }
  return guards;
}

/** Value mode's deadband, in the reading's units or in percent of the last admitted value. */
function valueRule(def: SlidingWindowDef): Partial<MemoryWindowSettings> {
  const deadband = nonNegativeNumber(def.deadband, 'deadband', DEFAULTS.deadband);
  const percent = oneOf(def.deadbandUnit, 'deadbandUnit', ['units', 'percent'], DEFAULTS.deadbandUnit) === 'percent';
  return { mode: 'value', deadband, ...(percent ? { deadbandPercent: true } : {}) };
}
