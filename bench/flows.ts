/**
 * One Node-RED flow per benchmark line: a function node that fires the
 * prepared messages (all at once, or paced by the harness), the node under
 * test, and a counter (bench/nodes/bench-counter.js) wired to every output
 * of it. In the confirm lines the admitted messages go through a
 * dedup-confirm node first, and the harness counts that node's done() calls
 * (an onComplete hook: it works whatever outputs the node has).
 *
 * Every dedup node carries this release's config version (a node without
 * one is read as a version-1 flow and migrated: its field names quoted,
 * its clock guard off). Every dedup node has persistSeconds 0: saving to the user directory is
 * measured on its own (bench/saving.ts), not inside the throughput lines.
 */

import { CONFIG_VERSION } from '../src/node-red/migrations';

export type LineId =
  | 'filter'
  | 'passthrough'
  | 'sw-memory'
  | 'sw-redis'
  | 'sw-memory-guards'
  | 'sw-redis-guards'
  | 'naive'
  | 'sr-memory'
  | 'sr-redis'
  | 'sr-memory-confirm'
  | 'sr-redis-confirm'
  | 'sr-nested';

/** Where the Redis lines connect: one server, or a Cluster through its seed list. */
export type RedisTarget = { mode: 'standalone'; port: number } | { mode: 'cluster'; seeds: string };

export interface FlowOptions {
  /** The sliding-window memory store's cap (default 100,000). */
  maxAssets?: number;
}

export const SOURCE_ID = 'bench-source';
export const COUNTER_ID = 'bench-counter';
export const CONFIRM_ID = 'bench-confirm';
const UNDER_TEST_ID = 'bench-under-test';
const REDIS_ID = 'bench-redis';
const TAB_ID = 'bench-tab';

export const SENSOR_LINES: readonly LineId[] = ['sr-memory', 'sr-redis', 'sr-memory-confirm', 'sr-redis-confirm', 'sr-nested'];

export function usesRedis(line: LineId): boolean {
  return line === 'sw-redis' || line === 'sw-redis-guards' || line === 'sr-redis' || line === 'sr-redis-confirm' || line === 'naive';
}

/**
 * The firing function node. The messages are built by the harness before
 * the clock starts (an MQTT-in node would hand them over ready-made too), so
 * the time measured is Node-RED's routing plus the node under test.
 * `node.send(m, false)` skips the function node's defensive clone: these
 * messages are fresh and owned by nobody else.
 */
const FIRE = `const bench = global.get('bench');
const batch = bench.take();
bench.started();
for (let i = 0; i < batch.length; i++) node.send(batch[i], false);
return null;`;

/**
 * The design the seed warns against, for speed only: GET the last accepted
 * ping, decide in JavaScript, SET it back. Two round trips per ping, and
 * nothing stops another ping of the same asset from reading the baseline
 * in between, so it admits pings the window should suppress.
 */
const NAIVE = `const redis = global.get('naiveRedis');
// Marked only so that the harness can count what it let through.
const ADMITTED = { decision: 'admitted', reason: 'get-then-set' };
const SUPPRESSED = { decision: 'suppressed', reason: 'get-then-set' };
const p = msg.payload;
const key = 'naive:sw:' + p.assetId;
redis.get(key).then((raw) => {
  if (raw !== null) {
    const prev = raw.split('|');
    const t0 = Number(prev[0]), lat0 = Number(prev[1]), lon0 = Number(prev[2]);
    const dt = (p.ts - t0) / 1000;
    if (dt <= 0) { msg.dedup = SUPPRESSED; node.send([null, msg]); node.done(); return; }
    const rad = Math.PI / 180;
    const x = (p.lon - lon0) * rad * Math.cos(((p.lat + lat0) * rad) / 2);
    const y = (p.lat - lat0) * rad;
    const metres = 6371000 * Math.sqrt(x * x + y * y);
    if (dt < 60 && metres < 25) { msg.dedup = SUPPRESSED; node.send([null, msg]); node.done(); return; }
  }
  return redis.set(key, p.ts + '|' + p.lat + '|' + p.lon, 'EX', 21600).then(() => {
    msg.dedup = ADMITTED;
    node.send([msg, null]);
    node.done();
  });
}).catch((err) => node.error(err, msg));
return;`;

type FlowNode = Record<string, unknown> & { id: string; type: string };

function underTest(line: LineId, redis: RedisTarget, options: FlowOptions): FlowNode[] {
  const wires2 = [[COUNTER_ID], [COUNTER_ID]];
  const redisConn: FlowNode = {
    id: REDIS_ID,
    type: 'dedup-redis',
    version: CONFIG_VERSION,
    name: 'bench',
    keyPrefix: 'dedup:',
    timeoutMs: 2000,
    ...(redis.mode === 'cluster'
      ? { mode: 'cluster', clusterNodes: redis.seeds }
      : { mode: 'standalone', host: '127.0.0.1', port: redis.port, db: 0 }),
  };
  const window = {
    id: UNDER_TEST_ID,
    type: 'sliding-window-dedup',
    version: CONFIG_VERSION,
    z: TAB_ID,
    minSeconds: 60,
    minMetres: 25,
    ttlSeconds: 21_600,
    maxAssets: options.maxAssets ?? 100_000,
    persistSeconds: 0,
    assetIdProperty: 'payload.assetId',
    timeProperty: 'payload.ts',
    latProperty: 'payload.lat',
    lonProperty: 'payload.lon',
    // Off, as every fleet rule is, so that these lines measure what they did before the rules existed.
    noFix: false,
    onStoreError: 'admit',
    wires: wires2,
  };
  // Every fleet rule of issue 29 on, reading the fields bench/data.ts puts in every ping (bench/guard-cost.ts compares the two).
  const guarded = {
    ...window,
    noFix: true,
    validProperty: 'payload.valid',
    satellitesProperty: 'payload.sats',
    minSatellites: 4,
    hdopProperty: 'payload.hdop',
    maxHdop: 2,
    accuracyProperty: 'payload.accuracy',
    maxSpeedKmh: 150,
  };
  const sensor = {
    id: UNDER_TEST_ID,
    type: 'sensor-reconnect-dedup',
    version: CONFIG_VERSION,
    z: TAB_ID,
    ttlSeconds: 21_600,
    maxKeys: 100_000,
    persistSeconds: 0,
    keyMode: 'reading',
    deviceField: 'device_id',
    seqField: 'seq',
    tsField: 'ts',
    measures: [{ path: 'fill_pct', min: 0, max: 100 }],
    confirm: 'off',
    outputMode: 'burst',
    onStoreError: 'admit',
    wires: wires2,
  };
  // Issue 13: the fields where a LoRaWAN network server puts them (bench/data.ts, nestedReading).
  const nested = {
    ...sensor,
    deviceField: 'end_device_ids.dev_eui',
    seqField: 'uplink_message.f_cnt',
    tsField: 'received_at',
    measures: [{ path: 'uplink_message.decoded_payload.fill_pct', min: 0, max: 100 }],
  };
  // Admitted bursts go to dedup-confirm, which confirms their keys; the audit output is counted as before.
  // All 200,000 readings reach the node before the first confirm does (they are
  // handed over at once), so every admitted key is still pending then: the cap
  // must hold them all, or the oldest pending keys are dropped before their
  // confirm comes (a confirm that then finds its key gone is what the cap means).
  const confirming = { ...sensor, confirm: 'on', maxKeys: 1_000_000, wires: [[CONFIRM_ID], [COUNTER_ID]] };
  const confirmNode: FlowNode = { id: CONFIRM_ID, type: 'dedup-confirm', version: CONFIG_VERSION, z: TAB_ID, action: 'confirm', wires: [] };
  switch (line) {
    case 'filter':
      return [
        {
          id: UNDER_TEST_ID,
          type: 'rbe',
          z: TAB_ID,
          func: 'rbe',
          gap: '',
          start: '',
          inout: 'out',
          septopics: true,
          property: 'payload.seq',
          topi: 'topic',
          wires: [[COUNTER_ID]],
        },
      ];
    case 'passthrough':
      return [{ id: UNDER_TEST_ID, type: 'bench-passthrough', z: TAB_ID, wires: wires2 }];
    case 'sw-memory':
      return [{ ...window, store: 'memory' }];
    case 'sw-redis':
      return [{ ...window, store: 'redis', redis: REDIS_ID }, redisConn];
    case 'sw-memory-guards':
      return [{ ...guarded, store: 'memory' }];
    case 'sw-redis-guards':
      return [{ ...guarded, store: 'redis', redis: REDIS_ID }, redisConn];
    case 'naive':
      return [{ id: UNDER_TEST_ID, type: 'function', z: TAB_ID, func: NAIVE, outputs: 2, wires: wires2 }];
    case 'sr-memory':
      return [{ ...sensor, store: 'memory' }];
    case 'sr-redis':
      return [{ ...sensor, store: 'redis', redis: REDIS_ID }, redisConn];
    case 'sr-memory-confirm':
      return [{ ...confirming, store: 'memory' }, confirmNode];
    case 'sr-redis-confirm':
      return [{ ...confirming, store: 'redis', redis: REDIS_ID }, confirmNode, redisConn];
    case 'sr-nested':
      return [{ ...nested, store: 'memory' }];
  }
}

export function benchFlow(line: LineId, redis: RedisTarget, options: FlowOptions = {}): FlowNode[] {
  // Node-RED tells flow nodes from config nodes by their position on the tab.
  const at = (x: number): { x: number; y: number } => ({ x, y: 100 });
  return [
    { id: TAB_ID, type: 'tab', label: `bench ${line}` },
    { id: SOURCE_ID, type: 'function', z: TAB_ID, name: 'fire', func: FIRE, outputs: 1, wires: [[UNDER_TEST_ID]], ...at(100) },
    ...underTest(line, redis, options).map((n) => (n.z === TAB_ID ? { ...n, ...at(n.id === CONFIRM_ID ? 400 : 300) } : n)),
    { id: COUNTER_ID, type: 'bench-counter', z: TAB_ID, wires: [], ...at(500) },
  ];
}
