/**
 * One benchmark trial in its own process: a real Node-RED runtime (the
 * embedded API, editor and HTTP off) in a temporary user directory with this
 * pack linked into its node_modules, one flow from bench/flows.ts, warm-up
 * runs, then one timed run. The result goes back to bench/run.ts over IPC.
 *
 * A fresh process per trial keeps the lines from sharing JIT state, heap and
 * store contents, so the order they run in cannot favour one of them.
 */
import { mkdtempSync, mkdirSync, rmSync, symlinkSync, writeFileSync } from 'fs';
import { Session } from 'inspector';
import { tmpdir } from 'os';
import { join, resolve } from 'path';
import { performance } from 'perf_hooks';
import Redis from 'ioredis';
import { burstMessages, pingMessages, uniqueReadings, READINGS_PER_BURST, type BurstMessage, type PingMessage } from './data';
import { benchFlow, COUNTER_ID, SOURCE_ID, type LineId } from './flows';

// tsx (loaded to run this file) turns on source maps, which makes every
// Error's stack dearer; Node-RED as users run it has them off.
process.setSourceMapsEnabled(false);

export interface TrialJob {
  line: LineId;
  redisPort: number;
  /** Messages (ping lines) or readings (sensor lines) in the timed run. */
  units: number;
  assets: number;
  devices: number;
  warmups: number;
  warmupUnits: number;
}

export interface TrialResult {
  line: LineId;
  units: number;
  ms: number;
  perSecond: number;
  /** decision:reason -> messages (ping lines); unique/duplicates/rejected readings (sensor lines). */
  tally: Record<string, number>;
  /** CPU time of this Node-RED process during the timed run. */
  nodeCpuMs: number;
  /** CPU time of redis-server during the timed run (lines that use it). */
  redisCpuMs?: number;
  /** Sensor lines: readings the data holds once; the node must admit exactly these. */
  expectedUnique?: number;
  maxRssMB: number;
}

const ROOT = resolve(__dirname, '..');
const TRIAL_TIMEOUT_MS = 120_000;

/** What the counter node reports to; the firing function node takes its batch from here. */
class Sink {
  private batch: unknown[] = [];
  private expected = 0;
  private count = 0;
  private t0 = 0;
  private finish: ((ms: number) => void) | undefined;
  tally: Record<string, number> = {};

  arm(batch: unknown[], expectedArrivals: number): Promise<number> {
    this.batch = batch;
    this.expected = expectedArrivals;
    this.count = 0;
    this.tally = {};
    return new Promise((resolve) => {
      this.finish = resolve;
    });
  }

  take(): unknown[] {
    const batch = this.batch;
    this.batch = [];
    return batch;
  }

  started(): void {
    this.t0 = performance.now();
  }

  arrived(msg: { dedup?: { decision?: unknown }; payload?: unknown }): void {
    // Kept to one property read per message, the same for every line: the
    // ping lines are tallied after the clock stops, from the messages
    // themselves, and only a sensor burst's audit message is looked into.
    const dedup = msg.dedup;
    if (dedup?.decision === 'audit') {
      const p = msg.payload as { unique: number; duplicates_suppressed: number; rejected: number };
      this.add('unique', p.unique);
      this.add('duplicates', p.duplicates_suppressed);
      this.add('rejected', p.rejected);
      this.add(`audit:${String((dedup as { reason?: unknown }).reason)}`, 1);
    }
    if (++this.count === this.expected) this.finish?.(performance.now() - this.t0);
  }

  /** decision:reason of each ping, as the node under test left it in msg.dedup. */
  tallyPings(batch: readonly unknown[]): void {
    for (const m of batch as { dedup?: { decision: string; reason: string } }[]) {
      this.add(m.dedup === undefined ? 'forwarded' : `${m.dedup.decision}:${m.dedup.reason}`, 1);
    }
  }

  add(key: string, n: number): void {
    this.tally[key] = (this.tally[key] ?? 0) + n;
  }
}

interface NodeRedLike {
  init(settings: Record<string, unknown>): void;
  start(): Promise<void>;
  stop(): Promise<void>;
  nodes: { getNode(id: string): { receive(msg: object): void } | null };
}

function userDirWithPack(): string {
  const dir = mkdtempSync(join(tmpdir(), 'node-red-dedup-bench-'));
  // Node-RED finds packs in <userDir>/node_modules, as after `npm install`.
  const link = join(dir, 'node_modules', '@telemetry-dedup', 'node-red-dedup');
  mkdirSync(join(dir, 'node_modules', '@telemetry-dedup'), { recursive: true });
  symlinkSync(ROOT, link, 'dir');
  return dir;
}

function batches(job: TrialJob, units: number, prefix: string): { batch: unknown[]; arrivals: number; unique?: number } {
  if (job.line === 'sr-memory' || job.line === 'sr-redis') {
    const bursts: BurstMessage[] = burstMessages(Math.ceil(units / READINGS_PER_BURST), job.devices, prefix);
    // Every burst has new readings, so each yields an admitted message and an audit message.
    return { batch: bursts, arrivals: bursts.length * 2, unique: uniqueReadings(bursts) };
  }
  const pings: PingMessage[] = pingMessages(units, job.assets, prefix);
  return { batch: pings, arrivals: pings.length };
}

/**
 * BENCH_PROFILE_DIR=<dir>: a CPU profile of the timed run only (warm-up and
 * start-up left out), written as <dir>/<line>.cpuprofile for Chrome DevTools.
 */
function post(session: Session, method: string, params?: object): Promise<unknown> {
  return new Promise((resolve, reject) => {
    session.post(method, params ?? {}, (error, result) => (error ? reject(error) : resolve(result)));
  });
}

async function startProfiler(): Promise<Session> {
  const session = new Session();
  session.connect();
  await post(session, 'Profiler.enable');
  await post(session, 'Profiler.setSamplingInterval', { interval: 100 });
  await post(session, 'Profiler.start');
  return session;
}

async function stopProfiler(session: Session, file: string): Promise<void> {
  const { profile } = (await post(session, 'Profiler.stop')) as { profile: object };
  writeFileSync(file, JSON.stringify(profile));
  session.disconnect();
}

/** User plus system CPU seconds of the whole redis-server process. */
async function redisCpuSeconds(client: Redis): Promise<number> {
  const info = await client.info('cpu');
  const field = (name: string): number => Number(new RegExp(`^${name}:([\\d.]+)`, 'm').exec(info)?.[1] ?? Number.NaN);
  return field('used_cpu_user') + field('used_cpu_sys');
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

function withTimeout<T>(promise: Promise<T>, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    promise.finally(() => clearTimeout(timer)),
    new Promise<T>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${what}: not every message reached the counter within ${TRIAL_TIMEOUT_MS} ms`)), TRIAL_TIMEOUT_MS);
    }),
  ]);
}

async function runTrial(job: TrialJob): Promise<TrialResult> {
  const gc = (globalThis as { gc?: () => void }).gc ?? (() => undefined);
  const userDir = userDirWithPack();
  const sink = new Sink();
  const usesRedis = job.line === 'sw-redis' || job.line === 'sr-redis' || job.line === 'naive';
  const admin = usesRedis ? new Redis({ host: '127.0.0.1', port: job.redisPort, lazyConnect: true }) : undefined;
  const naive = job.line === 'naive' ? new Redis({ host: '127.0.0.1', port: job.redisPort }) : undefined;
  writeFileSync(join(userDir, 'flows.json'), JSON.stringify(benchFlow(job.line, job.redisPort)));

  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const RED = require('node-red') as NodeRedLike;
  RED.init({
    userDir,
    flowFile: 'flows.json',
    credentialSecret: false,
    httpAdminRoot: false,
    httpNodeRoot: false,
    disableEditor: true,
    nodesDir: [join(__dirname, 'nodes')],
    functionGlobalContext: naive ? { bench: sink, naiveRedis: naive } : { bench: sink },
    logging: { console: { level: 'warn', metrics: false, audit: false } },
    telemetry: { enabled: false, updateNotification: false },
    externalModules: { autoInstall: false, palette: { allowInstall: false } },
    editorTheme: { tours: false },
  });
  try {
    await RED.start();
    for (let i = 0; RED.nodes.getNode(COUNTER_ID) === null; i++) {
      if (i > 200) throw new Error('the benchmark flow did not start');
      await sleep(25);
    }
    const source = RED.nodes.getNode(SOURCE_ID);
    if (source === null) throw new Error('the firing function node is missing');

    for (let w = 0; w < job.warmups; w++) {
      const warm = batches(job, job.warmupUnits, `w${w}-`);
      gc();
      const done = sink.arm(warm.batch, warm.arrivals);
      source.receive({});
      await withTimeout(done, `warm-up ${w + 1} of ${job.line}`);
    }

    const timed = batches(job, job.units, job.line.startsWith('sr-') ? 'bin-' : 'veh-');
    if (admin) await admin.flushall();
    gc();
    await sleep(200);
    const profiler = process.env.BENCH_PROFILE_DIR ? await startProfiler() : undefined;
    const redisCpu0 = admin ? await redisCpuSeconds(admin) : 0;
    const cpu0 = process.cpuUsage();
    const done = sink.arm(timed.batch, timed.arrivals);
    source.receive({});
    const ms = await withTimeout(done, job.line);
    const cpu = process.cpuUsage(cpu0);
    const redisCpuMs = admin ? ((await redisCpuSeconds(admin)) - redisCpu0) * 1000 : undefined;
    if (profiler) await stopProfiler(profiler, join(process.env.BENCH_PROFILE_DIR as string, `${job.line}.cpuprofile`));
    const sensor = job.line.startsWith('sr-');
    if (!sensor) sink.tallyPings(timed.batch);
    const units = sensor ? timed.batch.length * READINGS_PER_BURST : timed.batch.length;
    return {
      line: job.line,
      units,
      ms,
      perSecond: (units / ms) * 1000,
      tally: sink.tally,
      nodeCpuMs: (cpu.user + cpu.system) / 1000,
      ...(redisCpuMs !== undefined ? { redisCpuMs } : {}),
      ...(timed.unique !== undefined ? { expectedUnique: timed.unique } : {}),
      maxRssMB: process.resourceUsage().maxRSS / 1024,
    };
  } finally {
    await RED.stop().catch(() => undefined);
    admin?.disconnect();
    naive?.disconnect();
    rmSync(userDir, { recursive: true, force: true });
  }
}

if (require.main === module) {
  const job = JSON.parse(process.argv[2] ?? '{}') as TrialJob;
  runTrial(job).then(
    (result) => {
      if (process.send) process.send({ ok: true, result });
      else console.log(JSON.stringify(result, null, 2));
      process.exit(0);
    },
    (error: unknown) => {
      process.send?.({ ok: false, error: error instanceof Error ? (error.stack ?? error.message) : String(error) });
      process.exit(1);
    },
  );
}
