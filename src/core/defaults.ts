/**
 * Every node option's default, written once, in the lowest layer so that
 * every other may read it: the runtime reads a missing option as its default
 * here, the editor gets the same values as registerType settings (see
 * node-red/editor-settings), and dedup-tune and the what-if start from them.
 *
 * A blank *Max assets* / *Max keys* means "the runtime setting"
 * (slidingWindowDedupMaxAssets / sensorReconnectDedupMaxKeys in
 * settings.js), whose own default is MAX_ENTRIES.
 */
export const MAX_ENTRIES = 100_000;

export const SLIDING_WINDOW_DEFAULTS = {
  name: '',
  store: 'memory',
  redis: '',
  /** `position`: the rule compares positions; `value`: a reading's value (see core/window/sliding-window). */
  mode: 'position',
  minSeconds: 60,
  minMetres: 25,
  ttlSeconds: 21_600,
  maxAssets: '',
  persistSeconds: 10,
  assetIdProperty: 'payload.assetId',
  timeProperty: 'payload.ts',
  latProperty: 'payload.lat',
  lonProperty: 'payload.lon',
  /** Value mode: the reading, its deadband (0: any change), and the deadband's unit: `units`, or `percent` of the last admitted value. */
  valueProperty: 'payload.value',
  deadband: 0,
  deadbandUnit: 'units',
  eventFields: '',
  minHeadingDegrees: '',
  headingProperty: 'payload.heading',
  /**
   * The fix's quality (position mode): the no-fix guard (0,0, or a validity
   * property that says so; blank: 0,0 only), and Min satellites and Max
   * HDOP, each off while blank, read from their paths (blank: the default).
   */
  noFix: true,
  validProperty: '',
  satellitesProperty: 'payload.satellites',
  minSatellites: '',
  hdopProperty: 'payload.hdop',
  maxHdop: '',
  accuracyProperty: '',
  /** The jump guard: off while Max speed is blank or 0; Relocate after blank: ten Heartbeats. */
  maxSpeedKmh: '',
  relocateAfterSeconds: '',
  relocateAfterPings: 3,
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
  /** `reading`: deviceField is a path inside each reading; `msg`: a message property (`topic`), one device id for the whole message. */
  deviceFieldType: 'reading',
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

/** dedup-stats: every dedup node (an empty list) or the ones listed by id; the top rows per node. */
export const STATS_DEFAULTS = {
  name: '',
  dedupNodes: [] as readonly string[],
  topRows: 5,
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
