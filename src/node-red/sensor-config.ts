import { lastName, parsePath, type PropertyPath } from '../core/parse/property-path';
import { TS_NAME, type MeasureField, type ReadingFields } from '../core/sensor/reading';
import type { MemorySeenSettings } from '../stores/memory-seen-store';
import type { NodeAPI, NodeDef } from './api';
import { errorMessage } from '../core/parse/errors';
import { isBlank, nonNegativeNumber, oneOf, optionalNumber, positiveInteger, positiveNumber } from './config-values';
import { MAX_ENTRIES, SENSOR_DEFAULTS as DEFAULTS, type MeasureDef } from '../core/defaults';
import { compileMessagePath, type MessagePath } from './message-path';
import type { OnStoreError } from './store-failure';
import type { StoreKind } from '../telemetry/subjects';

export interface SensorDef extends NodeDef {
  store?: string;
  redis?: string;
  ttlSeconds?: string | number;
  maxKeys?: string | number;
  persistSeconds?: string | number;
  keyMode?: string;
  keyProperty?: string;
  keyPropertyType?: string;
  deviceField?: string;
  deviceFieldType?: string;
  seqField?: string;
  tsField?: string;
  measures?: unknown;
  confirm?: string;
  leaseSeconds?: string | number;
  outputMode?: string;
  onStoreError?: string;
}

/** Where a key comes from in key mode `property`: a msg property, or a JSONata expression. */
export type KeySource = { type: 'msg'; path: MessagePath } | { type: 'jsonata'; expression: unknown; text: string };

export interface SensorConfig {
  seen: MemorySeenSettings;
  /** Key mode `reading`: where each part of a reading is. */
  fields: ReadingFields | undefined;
  /** Key mode `reading` with the device id a message property (msg.topic): where it is. */
  deviceFromMessage: MessagePath | undefined;
  /** Key mode `property`: where the key is. */
  keySource: KeySource | undefined;
  outputMode: 'burst' | 'each';
  store: StoreKind;
  redis: string | undefined;
  persistSeconds: number;
  onStoreError: OnStoreError;
}

export function readSensorConfig(RED: NodeAPI, def: SensorDef): SensorConfig {
  const keyMode = oneOf(def.keyMode, 'keyMode', ['reading', 'property'], DEFAULTS.keyMode);
  const confirm = oneOf(def.confirm, 'confirm', ['off', 'on'], DEFAULTS.confirm) === 'on';
  const settingMax = RED.settings.sensorReconnectDedupMaxKeys;
  const seen: MemorySeenSettings = {
    ttlSeconds: positiveNumber(def.ttlSeconds, 'ttlSeconds', DEFAULTS.ttlSeconds),
    // Blank in the editor means "use the runtime setting", as does absent.
    maxKeys: positiveInteger(isBlank(def.maxKeys) ? settingMax : def.maxKeys, 'maxKeys', MAX_ENTRIES),
    confirm,
    leaseSeconds: positiveNumber(def.leaseSeconds, 'leaseSeconds', DEFAULTS.leaseSeconds),
    keyMode,
  };
  const fromMessage = keyMode === 'reading' && oneOf(def.deviceFieldType, 'deviceFieldType', ['reading', 'msg'], DEFAULTS.deviceFieldType) === 'msg';
  const deviceFromMessage = fromMessage ? compileMessagePath(RED, isBlank(def.deviceField) ? 'topic' : String(def.deviceField).trim()) : undefined;
  return {
    seen,
    fields: keyMode === 'reading' ? readingFields(def, deviceFromMessage?.label) : undefined,
    deviceFromMessage,
    keySource: keyMode === 'property' ? keySource(RED, def) : undefined,
    outputMode: oneOf(def.outputMode, 'outputMode', ['burst', 'each'], DEFAULTS.outputMode),
    store: oneOf(def.store, 'store', ['memory', 'redis'], DEFAULTS.store),
    redis: def.redis,
    persistSeconds: nonNegativeNumber(def.persistSeconds, 'persistSeconds', DEFAULTS.persistSeconds),
    onStoreError: oneOf(def.onStoreError, 'onStoreError', ['admit', 'error'], DEFAULTS.onStoreError),
  };
}

function keySource(RED: NodeAPI, def: SensorDef): KeySource {
  const text = isBlank(def.keyProperty) ? DEFAULTS.keyProperty : String(def.keyProperty).trim();
  if (oneOf(def.keyPropertyType, 'keyPropertyType', ['msg', 'jsonata'], DEFAULTS.keyPropertyType) === 'jsonata') {
    try {
      return { type: 'jsonata', expression: RED.util.prepareJSONataExpression(text, {}), text };
    } catch (error) {
      throw new Error(`keyProperty is not a valid JSONata expression: ${errorMessage(error)}`);
    }
  }
  return { type: 'msg', path: compileMessagePath(RED, text) };
}

function fieldPath(value: string | undefined, fallback: string, name: string): PropertyPath {
  try {
    return parsePath(isBlank(value) ? fallback : (value as string));
  } catch (error) {
    throw new Error(`${name}: ${errorMessage(error)}`);
  }
}

/**
 * The reading's fields from the config, checked for clashes. `deviceLabel`:
 * the device id is read from the message there (msg.topic), not from each reading.
 */
export function readingFields(def: SensorDef, deviceLabel?: string): ReadingFields {
  const device = deviceLabel === undefined ? fieldPath(def.deviceField, DEFAULTS.deviceField, 'deviceField') : null;
  const seq = fieldPath(def.seqField, DEFAULTS.seqField, 'seqField');
  const ts = fieldPath(def.tsField, DEFAULTS.tsField, 'tsField');
  const inReading = device === null ? [seq, ts] : [device, seq, ts];
  if (new Set(inReading.map((field) => field.text)).size < inReading.length) {
    throw new Error(`the ${device === null ? 'seq and timestamp' : 'device, seq and timestamp'} fields must differ, not ${JSON.stringify(inReading.map((field) => field.text))}`);
  }
  const listed = def.measures === undefined ? DEFAULTS.measures : def.measures;
  if (!Array.isArray(listed) || listed.length === 0) throw new Error('measures must list at least one measured field');
  const names = new Map<string, string>();
  const measures = (listed as MeasureDef[]).map((item, index): MeasureField => {
    if (item === null || typeof item !== 'object') throw new Error(`measures[${index}] must be an object with a path`);
    const path = fieldPath(item.path, '', `measures[${index}].path`);
    if (inReading.some((field) => samePath(field, path))) {
      throw new Error(`the measured field ${JSON.stringify(path.text)} is already the ${device === null ? 'seq or timestamp' : 'device, seq or timestamp'} field`);
    }
    const name = isBlank(item.name) ? lastName(path) : String(item.name).trim();
    // The timestamp is hashed as `ts`; a measure of that name would collide with it.
    if (name === TS_NAME) throw new Error(`the measured field ${JSON.stringify(path.text)} has the timestamp's name in the hashed JSON, ${JSON.stringify(TS_NAME)}: name it otherwise`);
    const clash = names.get(name);
    if (clash !== undefined) {
      throw new Error(`the measured fields ${JSON.stringify(clash)} and ${JSON.stringify(path.text)} have one name, ${JSON.stringify(name)}: name one of them otherwise`);
    }
    names.set(name, path.text);
    const min = optionalNumber(item.min, `measures[${index}].min`);
    const max = optionalNumber(item.max, `measures[${index}].max`);
    if (min !== undefined && max !== undefined && min > max) {
      throw new Error(`the valid range of ${JSON.stringify(path.text)} is reversed: ${min} is greater than ${max}`);
    }
    return { name, path, ...(min !== undefined ? { min } : {}), ...(max !== undefined ? { max } : {}) };
  });
  return deviceLabel === undefined ? { device, seq, ts, measures } : { device, deviceLabel, seq, ts, measures };
}

/** Two paths to one place, however written (`a.b` and `a["b"]`). */
function samePath(a: PropertyPath, b: PropertyPath): boolean {
  return a.parts.length === b.parts.length && a.parts.every((part, i) => part === b.parts[i]);
}
