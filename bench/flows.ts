/**
 * One Node-RED flow per benchmark line: a function node that fires the
 * prepared messages in a tight loop, the node under test, and a counter
 * (bench/nodes/bench-counter.js) wired to every output of it.
 */

export type LineId = 'filter' | 'passthrough' | 'sw-memory' | 'sw-redis' | 'naive' | 'sr-memory' | 'sr-redis';

export const SOURCE_ID = 'bench-source';
export const COUNTER_ID = 'bench-counter';
const UNDER_TEST_ID = 'bench-under-test';
const REDIS_ID = 'bench-redis';
const TAB_ID = 'bench-tab';

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

function underTest(line: LineId, redisPort: number): FlowNode[] {
  const wires2 = [[COUNTER_ID], [COUNTER_ID]];
  const redisConn: FlowNode = {
    id: REDIS_ID,
    type: 'dedup-redis',
    name: 'bench',
    mode: 'standalone',
    host: '127.0.0.1',
    port: redisPort,
    db: 0,
    keyPrefix: 'dedup:',
    timeoutMs: 2000,
  };
  const window = {
    id: UNDER_TEST_ID,
    type: 'sliding-window-dedup',
    z: TAB_ID,
    minSeconds: 60,
    minMetres: 25,
    ttlSeconds: 21_600,
    maxAssets: 100_000,
    assetIdProperty: 'payload.assetId',
    timeProperty: 'payload.ts',
    latProperty: 'payload.lat',
    lonProperty: 'payload.lon',
    onStoreError: 'admit',
    wires: wires2,
  };
  const sensor = {
    id: UNDER_TEST_ID,
    type: 'sensor-reconnect-dedup',
    z: TAB_ID,
    ttlSeconds: 21_600,
    maxKeys: 100_000,
    deviceField: 'device_id',
    seqField: 'seq',
    tsField: 'ts',
    contentFields: 'fill_pct',
    outputMode: 'burst',
    onStoreError: 'admit',
    wires: wires2,
  };
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
    case 'naive':
      return [{ id: UNDER_TEST_ID, type: 'function', z: TAB_ID, func: NAIVE, outputs: 2, wires: wires2 }];
    case 'sr-memory':
      return [{ ...sensor, store: 'memory' }];
    case 'sr-redis':
      return [{ ...sensor, store: 'redis', redis: REDIS_ID }, redisConn];
  }
}

export function benchFlow(line: LineId, redisPort: number): FlowNode[] {
  // Node-RED tells flow nodes from config nodes by their position on the tab.
  const at = (x: number): { x: number; y: number } => ({ x, y: 100 });
  return [
    { id: TAB_ID, type: 'tab', label: `bench ${line}` },
    { id: SOURCE_ID, type: 'function', z: TAB_ID, name: 'fire', func: FIRE, outputs: 1, wires: [[UNDER_TEST_ID]], ...at(100) },
    ...underTest(line, redisPort).map((n) => (n.z === TAB_ID ? { ...n, ...at(300) } : n)),
    { id: COUNTER_ID, type: 'bench-counter', z: TAB_ID, wires: [], ...at(500) },
  ];
}
