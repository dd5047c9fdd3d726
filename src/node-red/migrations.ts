/**
 * Versioned node configuration, so a flow saved by one release of the pack
 * keeps meaning the same thing when a later release adds or changes options.
 *
 * Every node saves `version` (the editor's default). A config without one
 * (a flow written by hand or by a script, deployed through the admin API)
 * means the current schema with every documented default: no release that
 * saved version 1 was ever published, so nobody holds a version-1 flow
 * without the version in it. When a release changes
 * what a saved option means, or adds one whose default would change how an
 * existing flow behaves, it raises CONFIG_VERSION and adds a step here that
 * turns a config of the previous version into one of the new version with
 * the old behaviour (for example: "version 1 had no X; X = <what v1 did>").
 * The node constructors run every step from the saved version up before they
 * read the config, so old flows load unchanged; the editor's `version`
 * default is raised to match (test/migrations checks the two agree).
 *
 * Pure: no Node-RED, no I/O; the input object is never modified.
 */

import { textOf } from '../core/parse/fields';

/** The config version this release writes and reads. */
export const CONFIG_VERSION = 3;

/**
 * The version of a saved config that has none: the current one, so that a
 * hand-written flow gets today's defaults (the clock guard on, fields as
 * paths). Every version ever saved is written in the flow, so an older
 * config always says so and still migrates.
 */
export const UNVERSIONED = CONFIG_VERSION;

export type DedupNodeType = 'sliding-window-dedup' | 'sensor-reconnect-dedup' | 'dedup-confirm' | 'dedup-redis' | 'dedup-stats';

export type SavedConfig = Readonly<Record<string, unknown>>;

/** Turns a config of version `from` into one of version `from + 1`. */
export interface MigrationStep {
  readonly from: number;
  /** What changed, for the reader of this file and for test messages. */
  readonly change: string;
  readonly up: (config: SavedConfig) => Record<string, unknown>;
}

export type MigrationTable = Readonly<Record<string, readonly MigrationStep[]>>;

const unchanged = (config: SavedConfig): Record<string, unknown> => ({ ...config });

/** The steps of each node type. */
export const MIGRATIONS: Readonly<Record<DedupNodeType, readonly MigrationStep[]>> = {
  'sliding-window-dedup': [
    {
      from: 1,
      change: 'added the clock guard (maxAheadSeconds, 300 for new nodes); version 1 had none, so it stays off',
      up: (config) => ({ ...config, maxAheadSeconds: config.maxAheadSeconds ?? '' }),
    },
    {
      from: 2,
      change:
        'added the fix\'s quality, the jump guard and value mode; the no-fix guard is turned on (version 2 took a ping at 0,0 for a position), every other new option stays off',
      up: (config) => ({
        ...config,
        mode: config.mode ?? 'position',
        noFix: config.noFix ?? true,
        minSatellites: config.minSatellites ?? '',
        maxHdop: config.maxHdop ?? '',
        maxSpeedKmh: config.maxSpeedKmh ?? '',
      }),
    },
  ],
  'sensor-reconnect-dedup': [
    {
      from: 1,
      change: 'reading fields became paths inside the reading, and the one valid range a range per measured field',
      up: sensorFieldsAsPaths,
    },
    { from: 2, change: 'nothing changed', up: unchanged },
  ],
  'dedup-confirm': [
    { from: 1, change: 'nothing: the node is new in version 2', up: unchanged },
    { from: 2, change: 'nothing changed', up: unchanged },
  ],
  'dedup-redis': [
    { from: 1, change: 'nothing changed', up: unchanged },
    { from: 2, change: 'nothing changed', up: unchanged },
  ],
  'dedup-stats': [
    { from: 1, change: 'nothing: the node is new in version 2', up: unchanged },
    { from: 2, change: 'nothing changed', up: unchanged },
  ],
};

/**
 * Sensor v1 -> v2. Version 1 read top-level keys by name (`meta.temp` was a
 * key with a dot in it) and applied one range (valueMin, valueMax: absent
 * meant 0 to 100, blank meant unbounded) to every measured field. Version 2
 * reads paths and keeps a range per measured field; a v1 name that is not a
 * plain path is quoted, so it still names the same key, and keeps its
 * name in the hashed JSON, so its keys stay the same.
 */
function sensorFieldsAsPaths(config: SavedConfig): Record<string, unknown> {
  const { contentFields, valueMin, valueMax, ...rest } = config;
  const bound = (value: unknown, absent: number): unknown => (value === undefined ? absent : value);
  const names = textOf(contentFields ?? 'fill_pct').split(',').map((name) => name.trim()).filter((name) => name !== '');
  const ts = plainName(config.tsField, 'ts');
  const measures = [...new Set(names)]
    .filter((name) => name !== ts)
    .map((name) => ({ path: asPath(name), name: asPath(name) === name ? '' : name, min: bound(valueMin, 0), max: bound(valueMax, 100) }));
  return {
    ...rest,
    deviceField: asPath(plainName(config.deviceField, 'device_id')),
    seqField: asPath(plainName(config.seqField, 'seq')),
    tsField: asPath(ts),
    measures,
  };
}

function plainName(value: unknown, fallback: string): string {
  const name = typeof value === 'string' ? value.trim() : '';
  return name === '' ? fallback : name;
}

/** A top-level key as a path: as it is when it reads as one, quoted otherwise. */
function asPath(name: string): string {
  return /^[A-Za-z_$][\w$]*$/.test(name) ? name : `[${JSON.stringify(name)}]`;
}

export interface UpgradeResult<T> {
  /** The config at `to`, with `version` set to it (a copy; the saved one is untouched). */
  readonly config: T & { version: number };
  /** The version the config was saved with. */
  readonly from: number;
  /** The version of `config`: the current one, or `from` when that is newer. */
  readonly to: number;
  /** The `change` of each step applied, oldest first. */
  readonly applied: readonly string[];
  /** The config was saved by a newer release: passed through as it is. */
  readonly newer: boolean;
}

/** The saved `version` as a whole number >= 1, or an Error saying what is wrong with it. */
export function savedVersion(config: SavedConfig): number {
  const raw = config.version;
  if (raw === undefined || raw === null || raw === '') return UNVERSIONED;
  const n = typeof raw === 'number' ? raw : typeof raw === 'string' && /^\s*\d+\s*$/.test(raw) ? Number(raw) : NaN;
  if (!Number.isSafeInteger(n) || n < 1) {
    throw new Error(`version must be a whole number from 1, not ${JSON.stringify(raw)}`);
  }
  return n;
}

/**
 * Runs the steps of `type` from the saved version up to `current`. Throws
 * when the saved version is malformed or a step is missing from the table.
 */
export function upgrade<T extends object>(
  type: string,
  saved: T,
  table: MigrationTable = MIGRATIONS,
  current: number = CONFIG_VERSION,
): UpgradeResult<T> {
  const steps = table[type];
  if (steps === undefined) throw new Error(`no migrations are registered for node type "${type}"`);
  const from = savedVersion(saved as SavedConfig);
  if (from > current) {
    return { config: { ...saved, version: from }, from, to: from, applied: [], newer: true };
  }
  let config: Record<string, unknown> = { ...(saved as SavedConfig) };
  const applied: string[] = [];
  for (let version = from; version < current; version++) {
    const step = steps.find((s) => s.from === version);
    if (step === undefined) throw new Error(`${type}: no migration from config version ${version} to ${version + 1}`);
    config = { ...step.up(config), version: version + 1 };
    applied.push(step.change);
  }
  return { config: { ...config, version: current } as T & { version: number }, from, to: current, applied, newer: false };
}

/**
 * What a node constructor calls: the config brought up to date. A config
 * saved by a newer release is used as it is, after `onNewer` is told (the
 * node warns: options it does not know are ignored).
 */
export function upgradeConfig<T extends object>(
  type: DedupNodeType,
  saved: T,
  onNewer?: (savedVersion: number, supported: number) => void,
): T & { version: number } {
  const result = upgrade(type, saved);
  if (result.newer && onNewer) onNewer(result.from, CONFIG_VERSION);
  return result.config;
}
