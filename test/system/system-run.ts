/**
 * One run of the system test: a broker, three Node-RED instances, the Redis
 * store (one server or a Cluster), PostgreSQL, and the fleet publisher, with
 * one fault per window of traffic. Collects what was made, what reached
 * each flow, what the flows decided and what the database holds; the report
 * (system-report.ts) turns that into the tables and the checks.
 */
import { mkdtempSync, readFileSync, realpathSync, rmSync, statSync } from 'fs';
import { tmpdir } from 'os';
import { join } from 'path';
import type Redis from 'ioredis';
import { Client } from 'pg';
import { Mosquitto } from '../support/mosquitto';
import { nodeRedProcess, type NodeRedProcess } from '../support/node-red-process';
import { installPack } from '../support/packed-pack';
import { cpuSecondsOf } from '../support/process-cpu';
import { startPostgres } from '../support/postgres';
import { adminClient } from '../support/redis-sentinel';
import { startReplicatedCluster, type ReplicatedCluster } from '../support/redis-cluster-replicas';
import { HOST, ManagedRedis } from '../support/redis-server';
import { FleetPublisher, type FleetSettings, type MadePing, type MadeReading } from './fleet-publisher';
import { systemFlow, type FlowSettings } from './system-flow';

export type Fault = 'kill -9 a Node-RED' | 'broker restart' | 'Redis paused 3 s' | 'primary failover' | 'slots resharded';

export interface RunOptions {
  redis: 'standalone' | 'cluster';
  faults: readonly Fault[];
  /** Length of each fault's window of traffic. */
  windowMs: number;
  fleet: FleetSettings;
  leaseSeconds: number;
  timeoutMs: number;
  minSeconds: number;
  minMetres: number;
  log: (line: string) => void;
}

/** One line of a record file: what reached a flow, what it decided, what reached a Catch node. */
export interface Record_ {
  k: 'r' | 'p' | 'a' | 's' | 'e' | 'm' | 'x';
  n: string;
  d?: string;
  s?: number;
  a?: string;
  t?: string;
  lat?: number;
  lon?: number;
  why?: string;
  m?: string;
  from?: string;
  at?: number;
}

export interface FaultWindow {
  fault: Fault;
  /** When the fault began and ended (ms since epoch). */
  from: number;
  to: number;
  /** Keys (`device:seq`) in the database just before the window's replay. */
  beforeReplay: Set<string>;
  snapshotAt: number;
  note: string;
}

export interface RunResult {
  options: RunOptions;
  readings: MadeReading[];
  pings: MadePing[];
  readingCopies: number[];
  pingCopies: number[];
  windows: FaultWindow[];
  records: Record_[];
  /** `device:seq` -> rows in readings (0 or 1) */
  inserted: Map<string, number>;
  /** `device:seq` -> insert attempts */
  attempts: Map<string, number>;
  /** The instance that was killed, for the attribution of what it lost. */
  killed: string;
  publisher: { published: number; acknowledged: number; failed: number };
  elapsedMs: number;
  logs: Record<string, string>;
  /** Every insert attempt of a key attempted more than once: `device:seq` -> [node, ms since epoch][] */
  doubleAttempts: Map<string, [string, number][]>;
  /** `device:seq` -> when its first INSERT attempt was made (ms since epoch) */
  firstAttempt: Map<string, number>;
  /** CPU seconds from the start of traffic to the end of the run. */
  cpu: { nodeRedUnkilled: number; unkilled: string[]; redis: number; broker: number };
}

const delay = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
const INSTANCES = 3;
const KILLED = 1;

interface RedisUnderTest {
  flow: FlowSettings['redis'];
  /** CPU seconds used by every server holding data (INFO cpu). */
  cpuSeconds(): Promise<number>;
  pause(ms: number): Promise<void>;
  failover(): Promise<string>;
  reshard(): Promise<string>;
  stop(): Promise<void>;
}

async function standaloneRedis(): Promise<RedisUnderTest> {
  const server = await ManagedRedis.start();
  const admin: Redis = adminClient(server.port);
  return {
    flow: { mode: 'standalone', host: HOST, port: server.port },
    cpuSeconds: async () => redisCpu((await admin.info('cpu'))),
    async pause(ms) {
      await admin.call('CLIENT', 'PAUSE', String(ms), 'ALL');
    },
    failover: () => Promise.reject(new Error('a single server has no replica to fail over to')),
    reshard: () => Promise.reject(new Error('a single server has no slots to move')),
    async stop() {
      admin.disconnect();
      await server.stop();
    },
  };
}

export function redisCpu(info: string): number {
  const field = (name: string): number => Number(new RegExp(`${name}:([\\d.]+)`).exec(info)?.[1] ?? 0);
  return field('used_cpu_user') + field('used_cpu_sys');
}

async function clusterRedis(): Promise<RedisUnderTest> {
  const cluster: ReplicatedCluster = await startReplicatedCluster(3);
  return {
    flow: { mode: 'cluster', clusterNodes: cluster.seedList },
    cpuSeconds: () => cluster.cpuSeconds(),
    pause: (ms) => cluster.pauseAll(ms),
    failover: () => cluster.failover(0),
    reshard: () => cluster.reshard(1000),
    stop: () => cluster.stop(),
  };
}

async function dbKeys(client: Client, table: 'readings' | 'insert_attempts'): Promise<Map<string, number>> {
  const result = await client.query<{ k: string; n: string }>(`SELECT device_id || ':' || seq AS k, count(*) AS n FROM ${table} GROUP BY 1`);
  return new Map(result.rows.map((row) => [row.k, Number(row.n)]));
}

async function doubleAttempts(client: Client): Promise<Map<string, [string, number][]>> {
  const result = await client.query<{ k: string; node: string; at: Date }>(
    `SELECT device_id || ':' || seq AS k, node, at FROM insert_attempts WHERE key IN (SELECT key FROM insert_attempts GROUP BY key HAVING count(*) > 1) ORDER BY at`,
  );
  const out = new Map<string, [string, number][]>();
  for (const row of result.rows) {
    let list = out.get(row.k);
    if (list === undefined) out.set(row.k, (list = []));
    list.push([row.node, row.at.getTime()]);
  }
  return out;
}

function recordSize(file: string): number {
  try {
    return statSync(file).size;
  } catch {
    return 0;
  }
}

function readRecords(file: string): Record_[] {
  let text = '';
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return [];
  }
  const out: Record_[] = [];
  for (const line of text.split('\n')) {
    // A kill -9 can leave half a line at the end of a file.
    if (line === '') continue;
    try {
      out.push(JSON.parse(line) as Record_);
    } catch {
      // the torn last line of a killed instance
    }
  }
  return out;
}

export async function runSystem(options: RunOptions): Promise<RunResult> {
  const { log } = options;
  const dir = mkdtempSync(join(tmpdir(), 'node-red-dedup-system-'));
  const stops: (() => Promise<void>)[] = [];
  const instances: NodeRedProcess[] = [];
  const started = Date.now();
  try {
    const [pg, broker, redis] = await Promise.all([startPostgres(), Mosquitto.start(), options.redis === 'cluster' ? clusterRedis() : standaloneRedis()]);
    stops.push(() => redis.stop(), () => broker.stop(), () => (pg).stop());
    const db = new Client({ connectionString: pg.url });
    await db.connect();
    stops.push(() => db.end());
    await db.query(`
      CREATE TABLE readings (key text PRIMARY KEY, device_id text NOT NULL, seq integer NOT NULL, ts text NOT NULL, fill_pct double precision NOT NULL, node text NOT NULL, at timestamptz NOT NULL DEFAULT clock_timestamp());
      CREATE TABLE insert_attempts (key text NOT NULL, device_id text NOT NULL, seq integer NOT NULL, node text NOT NULL, at timestamptz NOT NULL DEFAULT clock_timestamp());
    `);
    log(`  postgres :${pg.port}, mosquitto :${broker.port}, redis ${options.redis} (${JSON.stringify(redis.flow)})`);

    for (let i = 0; i < INSTANCES; i++) {
      const name = `nr${i + 1}`;
      const flow = systemFlow({
        name,
        clientId: `dedup-system-${name}`,
        brokerPort: broker.port,
        recordFile: join(dir, `${name}.jsonl`),
        pgUrl: pg.url,
        redis: redis.flow,
        leaseSeconds: options.leaseSeconds,
        timeoutMs: options.timeoutMs,
        minSeconds: options.minSeconds,
        minMetres: options.minMetres,
      });
      const nr = await nodeRedProcess(flow, {
        functionExternalModules: true,
        externalModules: { autoInstall: false, palette: { allowInstall: false }, modules: { allowInstall: false } },
        mqttReconnectTime: 500,
      });
      installPack(nr.userDir, ['pg']);
      instances.push(nr);
      stops.push(() => nr.dispose());
    }
    await Promise.all(instances.map((nr) => nr.start()));
    // Each instance's mqtt-in must hold its share before traffic starts.
    for (const nr of instances) {
      const deadline = Date.now() + 20_000;
      while (!/Connected to broker/.test(nr.log())) {
        if (Date.now() > deadline) throw new Error(`${nr.url} did not connect to the broker:\n${nr.log()}`);
        await delay(100);
      }
    }
    await delay(500);

    const publisher = await FleetPublisher.open(broker.url, options.fleet);
    stops.push(() => publisher.close());
    const windows: FaultWindow[] = [];
    const faultsRunning: Promise<void>[] = [];
    const killed = instances[KILLED] as NodeRedProcess;

    const runFault = async (fault: Fault, window: FaultWindow): Promise<void> => {
      window.from = Date.now();
      switch (fault) {
        case 'kill -9 a Node-RED':
          await killed.kill();
          await delay(1000);
          await killed.start();
          window.note = `nr${KILLED + 1} killed, back after ${Date.now() - window.from} ms`;
          break;
        case 'broker restart':
          await broker.restart();
          window.note = `broker back after ${Date.now() - window.from} ms`;
          break;
        case 'Redis paused 3 s':
          await redis.pause(3000);
          await delay(3000);
          window.note = 'CLIENT PAUSE 3000 ALL';
          break;
        case 'primary failover':
          window.note = await redis.failover();
          break;
        case 'slots resharded':
          window.note = await redis.reshard();
          break;
      }
      window.to = Date.now();
      log(`  ${fault}: ${window.note} (${window.to - window.from} ms)`);
    };

    const unkilled = instances.filter((_nr, i) => i !== KILLED);
    const cpuNow = async (): Promise<[number, number, number]> => [
      unkilled.reduce((sum, nr) => sum + cpuSecondsOf(realpathSync(nr.userDir), 'cwd'), 0),
      await redis.cpuSeconds(),
      cpuSecondsOf(broker.configFile),
    ];
    const cpuBefore = await cpuNow();
    publisher.start();
    const t0 = Date.now();
    for (let k = 0; k < options.faults.length; k++) {
      const fault = options.faults[k] as Fault;
      const window: FaultWindow = { fault, from: 0, to: 0, beforeReplay: new Set(), snapshotAt: 0, note: '' };
      windows.push(window);
      await delay(Math.max(0, t0 + k * options.windowMs + 2000 - Date.now()));
      faultsRunning.push(runFault(fault, window));
      await delay(Math.max(0, t0 + (k + 1) * options.windowMs - Date.now()));
      if (k === options.faults.length - 1) publisher.stop();
      // What the database holds just before the bins replay: the readings
      // missing now were lost to the fault, and the replay must bring them.
      window.beforeReplay = new Set((await dbKeys(db, 'readings')).keys());
      window.snapshotAt = Date.now();
      const copies = publisher.replay();
      log(`  window ${k + 1} (${fault}): ${window.beforeReplay.size} readings in the database, ${copies} replayed`);
    }
    await Promise.all(faultsRunning);
    await publisher.flushed(30_000);
    // Quiet: nothing more reaches the database or any flow for 5 s (at most 3 minutes).
    const drainEnd = Date.now() + 180_000;
    let last = '';
    for (let stable = 0; stable < 5 && Date.now() < drainEnd; ) {
      await delay(1000);
      const n = Number((await db.query<{ n: string }>('SELECT count(*) AS n FROM insert_attempts')).rows[0]?.n);
      const sizes = instances.map((_nr, i) => recordSize(join(dir, `nr${i + 1}.jsonl`))).join(',');
      const now = `${n}/${sizes}`;
      stable = now === last ? stable + 1 : 0;
      last = now;
    }
    const cpuAfter = await cpuNow();
    const records = instances.flatMap((_nr, i) => readRecords(join(dir, `nr${i + 1}.jsonl`)));
    const result: RunResult = {
      options,
      readings: publisher.readings,
      pings: publisher.pings,
      readingCopies: publisher.readingCopies,
      pingCopies: publisher.pingCopies,
      windows,
      records,
      inserted: await dbKeys(db, 'readings'),
      attempts: await dbKeys(db, 'insert_attempts'),
      killed: `nr${KILLED + 1}`,
      publisher: { published: publisher.published, acknowledged: publisher.acknowledged, failed: publisher.failed },
      elapsedMs: Date.now() - started,
      doubleAttempts: await doubleAttempts(db),
      firstAttempt: new Map((await db.query<{ k: string; at: Date }>(`SELECT device_id || ':' || seq AS k, min(at) AS at FROM insert_attempts GROUP BY 1`)).rows.map((row) => [row.k, row.at.getTime()])),
      cpu: { nodeRedUnkilled: cpuAfter[0] - cpuBefore[0], unkilled: unkilled.map((_nr, i) => `nr${i === 0 ? 1 : 3}`), redis: cpuAfter[1] - cpuBefore[1], broker: cpuAfter[2] - cpuBefore[2] },
      logs: Object.fromEntries(instances.map((nr, i) => [`nr${i + 1}`, nr.log().slice(-4000)])),
    };
    return result;
  } finally {
    for (const stop of stops.reverse()) await stop().catch(() => undefined);
    rmSync(dir, { recursive: true, force: true });
  }
}
