/**
 * One throughput trial in its own process: a real Node-RED runtime
 * (bench/runtime.ts) with one flow from bench/flows.ts, warm-up runs, then
 * one timed run in which every message is handed over at once. The result
 * goes back to bench/run.ts over IPC.
 *
 * A fresh process per trial keeps the lines from sharing JIT state, heap and
 * store contents, so the order they run in cannot favour one of them.
 *
 * Coordinated trials (the horizontal lines, bench/horizontal.ts): several of
 * these processes share one fleet, each taking every n-th message of the
 * same sequence; each warms up, reports `ready`, and starts its timed run
 * only on `go`, so that they run at the same time. Their parent reads the
 * Redis CPU and flushes the servers, since it alone sees all of them.
 */
import { Session } from 'inspector';
import { writeFileSync } from 'fs';
import { join } from 'path';
import { performance } from 'perf_hooks';
import Redis from 'ioredis';
import { burstMessages, nestedBursts, pingMessages, uniqueReadings, READINGS_PER_BURST } from './data';
import { benchFlow, CONFIRM_ID, SENSOR_LINES, usesRedis, type LineId, type RedisTarget } from './flows';
import { answerParent, gc, redisCpuSeconds, scriptStats, sleep, startBenchRuntime, withTimeout, type CompleteEvent } from './runtime';

// tsx (loaded to run this file) turns on source maps, which makes every
// Error's stack dearer; Node-RED as users run it has them off.
process.setSourceMapsEnabled(false);

export interface TrialJob {
  line: LineId;
  redis: RedisTarget;
  /** Messages (ping lines) or readings (sensor lines) in the timed run, before sharing. */
  units: number;
  assets: number;
  devices: number;
  warmups: number;
  warmupUnits: number;
  /** This process takes messages i with i % of === index (the horizontal lines). */
  share?: { index: number; of: number };
  /** Wait for `go` from the parent before the timed run (see above). */
  coordinated?: boolean;
  /** The build Node-RED loads (bench/baseline.ts), and its config version; this checkout's by default. */
  packRoot?: string;
  configVersion?: number;
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
  /** CPU time of redis-server during the timed run (uncoordinated lines that use one server). */
  redisCpuMs?: number;
  /** Redis lines: the scripts' own time (INFO commandstats, eval + evalsha) during the timed run, and their calls. */
  scriptMs?: number;
  scriptCalls?: number;
  /** Sensor lines: readings the data holds once; the node must admit exactly these. */
  expectedUnique?: number;
  maxRssMB: number;
  /** Wall clock of the timed run, epoch ms with fractions: the horizontal lines add up overlapping runs. */
  startedAt: number;
  endedAt: number;
}

/** What the worker says to its parent besides its answer. */
export type WorkerSignal = { type: 'ready' };

const TRIAL_TIMEOUT_MS = 120_000;

/** What the counter node (and the confirm hook) report to; the firing function node takes its batch from here. */
export class Sink {
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

function isSensor(line: LineId): boolean {
  return SENSOR_LINES.includes(line);
}

function batches(job: TrialJob, units: number, prefix: string): { batch: unknown[]; arrivals: number; unique?: number } {
  if (isSensor(job.line)) {
    const bursts = burstMessages(Math.ceil(units / READINGS_PER_BURST), job.devices, prefix);
    // Every burst has new readings, so each yields an admitted message (in
    // the confirm lines: a confirmation) and an audit message.
    const unique = uniqueReadings(bursts);
    return { batch: job.line === 'sr-nested' ? nestedBursts(bursts, job.devices, prefix) : bursts, arrivals: bursts.length * 2, unique };
  }
  let pings: unknown[] = pingMessages(units, job.assets, prefix);
  const share = job.share;
  if (share !== undefined) pings = pings.filter((_, i) => i % share.of === share.index);
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

function waitForGo(): Promise<void> {
  return new Promise((resolve) => {
    const onMessage = (m: unknown): void => {
      if ((m as { type?: string }).type !== 'go') return;
      process.off('message', onMessage);
      resolve();
    };
    process.on('message', onMessage);
    process.send?.({ type: 'ready' } satisfies WorkerSignal);
  });
}

export async function runTrial(job: TrialJob): Promise<TrialResult> {
  const sink = new Sink();
  // The worker reads and flushes the one server itself; coordinated trials leave that to their parent.
  const ownsRedis = usesRedis(job.line) && job.redis.mode === 'standalone' && !job.coordinated;
  const port = job.redis.mode === 'standalone' ? job.redis.port : 0;
  const admin = ownsRedis ? new Redis({ host: '127.0.0.1', port, lazyConnect: true }) : undefined;
  const naive = job.line === 'naive' ? new Redis({ host: '127.0.0.1', port }) : undefined;
  const flow = benchFlow(job.line, job.redis, job.configVersion === undefined ? {} : { configVersion: job.configVersion });
  const runtime = await startBenchRuntime(flow, naive ? { bench: sink, naiveRedis: naive } : { bench: sink }, job.packRoot);
  try {
    if (job.line === 'sr-memory-confirm' || job.line === 'sr-redis-confirm') {
      // A confirmation is done when dedup-confirm calls done(), whether or not it sends anything on.
      runtime.hooks.add('onComplete.bench', (event: CompleteEvent) => {
        if (event.node.id !== CONFIRM_ID) return;
        if (event.error !== undefined) sink.add('confirm-error', 1);
        sink.arrived(event.msg);
      });
    }
    for (let w = 0; w < job.warmups; w++) {
      const warm = batches({ ...job, share: undefined }, job.warmupUnits, `w${w}-${job.share?.index ?? ''}-`);
      gc();
      const done = sink.arm(warm.batch, warm.arrivals);
      runtime.source.receive({});
      await withTimeout(done, TRIAL_TIMEOUT_MS, `warm-up ${w + 1} of ${job.line}`);
    }

    const timed = batches(job, job.units, isSensor(job.line) ? 'bin-' : 'veh-');
    if (admin) await admin.flushall();
    gc();
    await sleep(200);
    if (job.coordinated) await waitForGo();
    const profiler = process.env.BENCH_PROFILE_DIR ? await startProfiler() : undefined;
    // RESETSTAT clears commandstats only: INFO cpu keeps counting.
    if (admin) await admin.config('RESETSTAT');
    const redisCpu0 = admin ? await redisCpuSeconds(admin) : 0;
    const cpu0 = process.cpuUsage();
    const startedAt = performance.timeOrigin + performance.now();
    const done = sink.arm(timed.batch, timed.arrivals);
    runtime.source.receive({});
    const ms = await withTimeout(done, TRIAL_TIMEOUT_MS, job.line);
    const endedAt = performance.timeOrigin + performance.now();
    const cpu = process.cpuUsage(cpu0);
    const redisCpuMs = admin ? ((await redisCpuSeconds(admin)) - redisCpu0) * 1000 : undefined;
    const scripts = admin ? scriptStats(await admin.info('commandstats')) : undefined;
    if (profiler) await stopProfiler(profiler, join(process.env.BENCH_PROFILE_DIR as string, `${job.line}.cpuprofile`));
    const sensor = isSensor(job.line);
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
      ...(scripts !== undefined && scripts.calls > 0 ? { scriptMs: scripts.usec / 1000, scriptCalls: scripts.calls } : {}),
      ...(timed.unique !== undefined ? { expectedUnique: timed.unique } : {}),
      maxRssMB: process.resourceUsage().maxRSS / 1024,
      startedAt,
      endedAt,
    };
  } finally {
    await runtime.stop();
    admin?.disconnect();
    naive?.disconnect();
  }
}

if (require.main === module) answerParent(runTrial(JSON.parse(process.argv[2] ?? '{}') as TrialJob));
