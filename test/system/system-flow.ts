/**
 * The flow each Node-RED instance of the system test runs, as an integrator
 * builds it (examples/mqtt-scale-out.json is the same flow for the editor):
 *
 *   mqtt in ($share/dedup/bins/+, QoS 1) -> sensor reconnect dedup (Redis,
 *   confirm on, one message per reading) -> INSERT (a function node with
 *   `pg`) -> dedup confirm; Catch (INSERT) -> dedup confirm (release)
 *
 *   mqtt in ($share/dedup/fleet/+, QoS 1) -> sliding-window dedup (Redis)
 *
 * plus what the test needs to tell where a message was lost: a function
 * right after each mqtt in that writes what reached the flow to a file
 * (one synchronous write per message, so it survives kill -9), the same
 * for the vehicle decisions, and for what reached a Catch node.
 */
import type { FlowNode } from '../support/node-red-helper';

export interface FlowSettings {
  name: string;
  clientId: string;
  brokerPort: number;
  recordFile: string;
  pgUrl: string;
  redis: { mode: 'standalone'; host: string; port: number } | { mode: 'cluster'; clusterNodes: string };
  leaseSeconds: number;
  timeoutMs: number;
  minSeconds: number;
  minMetres: number;
}

export const TAB = 'sys-tab';

/** Opens the record file once per flow start; each line is one JSON record. */
const OPEN_RECORD = "context.set('fd', fs.openSync(env.get('RECORD_FILE'), 'a'));";
const CLOSE_RECORD = "const fd = context.get('fd'); if (fd !== undefined) fs.closeSync(fd);";

function recorder(id: string, name: string, body: string, wires: string[][]): FlowNode {
  return {
    id, type: 'function', z: TAB, name,
    func: `const fd = context.get('fd');\nconst who = env.get('NR_NAME');\n${body}`,
    outputs: wires.length, timeout: 0, noerr: 0,
    initialize: OPEN_RECORD, finalize: CLOSE_RECORD,
    libs: [{ var: 'fs', module: 'fs' }],
    wires,
  };
}

export function systemFlow(s: FlowSettings): FlowNode[] {
  const redis =
    s.redis.mode === 'standalone'
      ? { mode: 'standalone', host: s.redis.host, port: String(s.redis.port), clusterNodes: '' }
      : { mode: 'cluster', host: '127.0.0.1', port: '6379', clusterNodes: s.redis.clusterNodes };
  return [
    {
      id: TAB, type: 'tab', label: 'system test', disabled: false, info: '',
      env: [
        { name: 'NR_NAME', value: s.name, type: 'str' },
        { name: 'RECORD_FILE', value: s.recordFile, type: 'str' },
        { name: 'PG_URL', value: s.pgUrl, type: 'str' },
      ],
    },
    {
      id: 'sys-broker', type: 'mqtt-broker', name: 'broker', broker: '127.0.0.1', port: String(s.brokerPort),
      clientid: s.clientId, autoConnect: true, usetls: false, protocolVersion: '4', keepalive: '15',
      // A persistent session: what the broker holds for this member while it
      // restarts is delivered when it is back, under the same client id.
      cleansession: false, autoUnsubscribe: false,
      birthTopic: '', birthQos: '0', birthPayload: '', closeTopic: '', closeQos: '0', closePayload: '', willTopic: '', willQos: '0', willPayload: '',
    },
    { id: 'sys-redis', type: 'dedup-redis', name: 'redis', ...redis, db: '0', tls: false, sentinels: '', masterName: 'mymaster', keyPrefix: 'sys:', timeoutMs: String(s.timeoutMs), version: 2 },

    { id: 'bins-in', type: 'mqtt in', z: TAB, name: 'bins', topic: '$share/dedup/bins/+', qos: '1', datatype: 'json', broker: 'sys-broker', nl: false, rap: true, rh: 0, inputs: 0, wires: [['bins-seen']] },
    recorder('bins-seen', 'reached the flow', "const list = Array.isArray(msg.payload) ? msg.payload : [msg.payload];\nlet text = '';\nfor (const r of list) text += JSON.stringify({ k: 'r', n: who, d: r && r.device_id, s: r && r.seq, at: Date.now() }) + '\\n';\nfs.writeSync(fd, text);\nreturn msg;", [['bins-dedup']]),
    {
      id: 'bins-dedup', type: 'sensor-reconnect-dedup', z: TAB, name: 'bins', store: 'redis', redis: 'sys-redis',
      ttlSeconds: '3600', maxKeys: '', persistSeconds: '10', keyMode: 'reading', keyProperty: 'payload.id', keyPropertyType: 'msg',
      deviceField: 'device_id', seqField: 'seq', tsField: 'ts', measures: [{ path: 'fill_pct', name: '', min: '0', max: '100' }],
      confirm: 'on', leaseSeconds: String(s.leaseSeconds), outputMode: 'each', onStoreError: 'error', version: 2,
      wires: [['bins-admitted'], ['bins-suppressed']],
    },
    recorder('bins-admitted', 'admitted', "fs.writeSync(fd, JSON.stringify({ k: 'm', n: who, d: msg.payload.device_id, s: msg.payload.seq, why: msg.dedup.reason, at: Date.now() }) + '\\n');\nreturn msg;", [['bins-insert']]),
    recorder('bins-suppressed', 'suppressed', "const p = msg.payload;\nconst list = Array.isArray(p && p.suppressed) ? p.suppressed.map((x) => ({ r: x.reading, why: x.reason })) : [{ r: p, why: msg.dedup && msg.dedup.reason }];\nlet text = '';\nfor (const x of list) text += JSON.stringify({ k: 'x', n: who, d: x.r && x.r.device_id, s: x.r && x.r.seq, why: x.why }) + '\\n';\nif (text !== '') fs.writeSync(fd, text);\nreturn null;", [[]]),
    {
      id: 'bins-insert', type: 'function', z: TAB, name: 'INSERT reading',
      func: [
        "const pool = context.get('pool');",
        'const r = msg.payload;',
        "const who = env.get('NR_NAME');",
        '// Every attempt is counted, even one the primary key makes a no-op.',
        "pool.query('INSERT INTO insert_attempts (key, device_id, seq, node) VALUES ($1, $2, $3, $4)', [msg.dedup.key, r.device_id, r.seq, who])",
        "    .then(() => pool.query('INSERT INTO readings (key, device_id, seq, ts, fill_pct, node) VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (key) DO NOTHING', [msg.dedup.key, r.device_id, r.seq, r.ts, r.fill_pct, who]))",
        '    .then(() => node.send(msg), (err) => node.error(err, msg));',
        'return null;',
      ].join('\n'),
      outputs: 1, timeout: 0, noerr: 0,
      initialize: "const pool = new pg.Pool({ connectionString: env.get('PG_URL'), max: 4 });\npool.on('error', (err) => node.warn(err.message));\ncontext.set('pool', pool);",
      finalize: "const pool = context.get('pool');\nif (pool) pool.end().catch(() => {});",
      libs: [{ var: 'pg', module: 'pg' }],
      wires: [['bins-confirm']],
    },
    { id: 'bins-confirm', type: 'dedup-confirm', z: TAB, name: 'confirm', action: 'confirm', version: 2, wires: [[]] },
    { id: 'insert-failed', type: 'catch', z: TAB, name: 'INSERT failed', scope: ['bins-insert'], uncaught: false, wires: [['bins-release']] },
    { id: 'bins-release', type: 'dedup-confirm', z: TAB, name: 'release', action: 'release', version: 2, wires: [[]] },

    { id: 'fleet-in', type: 'mqtt in', z: TAB, name: 'fleet', topic: '$share/dedup/fleet/+', qos: '1', datatype: 'json', broker: 'sys-broker', nl: false, rap: true, rh: 0, inputs: 0, wires: [['fleet-seen']] },
    recorder('fleet-seen', 'reached the flow', "fs.writeSync(fd, JSON.stringify({ k: 'p', n: who, a: msg.payload.assetId, t: msg.payload.ts }) + '\\n');\nreturn msg;", [['fleet-dedup']]),
    {
      id: 'fleet-dedup', type: 'sliding-window-dedup', z: TAB, name: 'fleet', store: 'redis', redis: 'sys-redis',
      minSeconds: String(s.minSeconds), minMetres: String(s.minMetres), ttlSeconds: '3600', maxAssets: '', persistSeconds: '10',
      assetIdProperty: 'payload.assetId', timeProperty: 'payload.ts', latProperty: 'payload.lat', lonProperty: 'payload.lon',
      eventFields: '', minHeadingDegrees: '', headingProperty: 'payload.heading', accuracyProperty: '', maxAheadSeconds: '300', sampleSize: '10000',
      onStoreError: 'error', version: 2,
      wires: [['fleet-admitted'], ['fleet-suppressed']],
    },
    recorder('fleet-admitted', 'admitted', "fs.writeSync(fd, JSON.stringify({ k: 'a', n: who, a: msg.payload.assetId, t: msg.payload.ts, lat: msg.payload.lat, lon: msg.payload.lon, why: msg.dedup && msg.dedup.reason }) + '\\n');\nreturn null;", [[]]),
    recorder('fleet-suppressed', 'suppressed', "fs.writeSync(fd, JSON.stringify({ k: 's', n: who, a: msg.payload.assetId, t: msg.payload.ts, why: msg.dedup && msg.dedup.reason }) + '\\n');\nreturn null;", [[]]),

    { id: 'errors', type: 'catch', z: TAB, name: 'errors', scope: ['bins-dedup', 'bins-confirm', 'bins-release', 'fleet-dedup'], uncaught: false, wires: [['errors-seen']] },
    recorder('errors-seen', 'caught', "const p = msg.payload || {};\nconst list = Array.isArray(p) ? p : [p];\nfor (const r of list) fs.writeSync(fd, JSON.stringify({ k: 'e', n: who, from: msg.error && msg.error.source && msg.error.source.id, m: msg.error && msg.error.message, d: r.device_id, s: r.seq, a: r.assetId, t: r.ts }) + '\\n');\nreturn null;", [[]]),
  ];
}
