/**
 * npm run bench [-- --quick]: throughput, latency, cost and memory of the
 * dedup nodes, side by side with what a Node-RED user would reach for
 * instead, in one run. Prints the tables and writes them to
 * bench/results.md, and the sizing guide built from them to
 * docs/performance.md. Not a test: it asserts nothing, it reports (and says
 * plainly when a check or a target fails).
 *
 * Each part runs in processes of its own, one after the other (bench/plan.ts
 * says how big each is in the full and the quick run):
 * - memory: bytes per entry of each store at 100,000 entries (memory.ts);
 * - saving: the memory store's saved state, issue 9 (saving.ts);
 * - script: the sliding-window script alone, no Node-RED, at 1 to 500
 *   pings per call (script-cost.ts);
 * - latency: steady load at 2,000, 20,000 and 50,000 msg/s (paced.ts);
 * - fleet: 1,000 to 1,000,000 assets (fleet.ts);
 * - horizontal: 1 and 2 Node-RED processes on one server and on a
 *   3-primary Cluster (horizontal.ts);
 * - tune: the dedup-tune grid line (tune.ts);
 * - rounds: the throughput lines (worker.ts) and what redis-server alone
 *   serves (eval-load.ts), in rounds until the time budget is spent.
 *   Every line whose target is a ratio to the core filter node sits
 *   between two filter trials: its ratio is taken against the mean of
 *   those two, pair by pair, and the table reports medians. A machine
 *   that is busy with something else slows both sides of a pair alike,
 *   which medians of absolute rates alone would not show.
 *
 * Settings (environment): BENCH_ROUNDS, BENCH_N (messages, or readings, per
 * throughput trial), BENCH_BUDGET_S (the whole run; rounds stop starting
 * past it), BENCH_LATENCY_S (recorded seconds per rate), BENCH_ONLY (a
 * comma-separated list of the parts above, for working on one of them),
 * BENCH_PROFILE_DIR (a CPU profile of each timed throughput run, see
 * worker.ts).
 */
import { spawn, spawnSync } from 'child_process';
import { mkdirSync, writeFileSync } from 'fs';
import { loadavg } from 'os';
import { join } from 'path';
import Redis from 'ioredis';
import { startRedisCluster, type RedisClusterHandle } from '../test/support/redis-cluster';
import { errorText, runChild } from './children';
import type { EvalLoadJob, EvalLoadResult } from './eval-load';
import type { FleetJob, FleetResult } from './fleet';
import type { LineId } from './flows';
import { runHorizontal } from './horizontal';
import { redisBytesPerEntry } from './memory';
import type { PacedJob, PacedLine, PacedResult } from './paced';
import { planFrom, type Plan, type ServerRun } from './plan';
import { startOwnRedis } from './redis';
import { readPreviousFigures, writeFigures } from './issue20';
import type { RunData, Trial } from './figures';
import { renderReport } from './report';
import { ROOT } from './runtime';
import type { SavingJob, SavingResult } from './saving';
import type { ScriptCostJob, ScriptCostResult } from './script-cost';
import { renderPerformanceDoc } from './performance-doc';
import { thousands } from './stats';
import type { TrialJob, TrialResult } from './worker';

/* eslint-disable-next-line @typescript-eslint/no-require-imports -- the compiled code in nodes/, which is what Node-RED runs; types from src/ */
const { scriptSource } = require('../nodes/redis/scripts') as typeof import('../src/redis/scripts');

/** One round, in order: each ratio line sits between two filter trials. */
const ROUND: LineId[] = [
  'filter', 'passthrough', 'filter', 'sw-memory', 'filter', 'sw-redis', 'filter', 'naive', 'filter',
  'sr-memory', 'sr-redis', 'sr-memory-confirm', 'sr-redis-confirm', 'sr-nested',
];

/** The quick run's round: the same lines, with a filter trial on one side of each ratio line only. */
const QUICK_ROUND: LineId[] = [
  'filter', 'passthrough', 'sw-memory', 'filter', 'sw-redis', 'naive', 'filter',
  'sr-memory', 'sr-redis', 'sr-memory-confirm', 'sr-redis-confirm', 'sr-nested',
];

const PACED_LINES: PacedLine[] = ['filter', 'sw-memory', 'sw-redis'];

const started = Date.now();

/** Progress on stderr, each line with the seconds since the start. */
function log(text: string): void {
  process.stderr.write(`${String(Math.round((Date.now() - started) / 1000)).padStart(4)} s ${text}\n`);
}

function fmtLoad(): string {
  return loadavg().map((l) => l.toFixed(2)).join(' ');
}

/**
 * bench/tune.ts (the dedup-tune grid line) is another part's: it is run as
 * a child, smaller in the quick run (TUNE_BENCH_PINGS, TUNE_BENCH_ROUNDS),
 * and what it prints to stdout (a Markdown table and a few lines about it)
 * is shown as it is.
 */
function runTune(plan: Plan): Promise<RunData['tune']> {
  const script = join(__dirname, 'tune.ts');
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--require', 'tsx/cjs', script], {
      cwd: ROOT,
      env: { ...process.env, ...(plan.quick ? { TUNE_BENCH_PINGS: '200000', TUNE_BENCH_ROUNDS: '1' } : {}) },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString('utf8')));
    child.stderr.on('data', (c: Buffer) => (err = (err + c.toString('utf8')).slice(-2000)));
    const timer = setTimeout(() => child.kill('SIGKILL'), plan.tuneTimeoutMs);
    const t0 = Date.now();
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      const seconds = (Date.now() - t0) / 1000;
      const lines = out.trim().split('\n');
      const table = lines.some((l) => l.startsWith('|'));
      const why = signal === 'SIGKILL' ? `stopped after ${plan.tuneTimeoutMs / 1000} s` : `exited with ${code ?? signal}`;
      if (!table && code !== 0) {
        resolve({ status: 'failed', seconds, text: `${why}: ${(err || out).trim().split('\n').slice(-3).join(' / ')}` });
        return;
      }
      // A table is shown even when the script then failed (its answers disagreed, say): it says so itself.
      const text = table ? out.trim() : lines.slice(-15).join('\n');
      resolve({ status: 'ran', seconds, text: code === 0 ? text : `${text}\n\n(bench/tune.ts ${why})`, table });
    });
  });
}

async function main(): Promise<void> {
  const plan = planFrom(process.argv.slice(2));
  // Inherited by every child: see runtime.ts.
  if (plan.quick) process.env.BENCH_LEAN_RUNTIME = '1';
  const t0 = Date.now();
  const loadBefore = fmtLoad();
  const build = spawnSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: ROOT, encoding: 'utf8' });
  const commit = build.status === 0 ? build.stdout.trim() : '?';
  const redis = await startOwnRedis();
  const standalone = { mode: 'standalone', port: redis.port } as const;
  log(`bench${plan.quick ? ' --quick' : ''}: redis-server ${redis.version} on 127.0.0.1:${redis.port}; parts: ${plan.sections.join(', ')}`);

  const data: RunData = {
    plan,
    commit,
    redisVersion: redis.version,
    loadBefore,
    loadAfter: '',
    seconds: 0,
    trials: new Map(),
    filterSeq: [],
    server: new Map(),
    roundsRun: 0,
    memory: { window: [], seen: [] },
    redisMemory: [],
    saving: [],
    paced: [],
    fleet: [],
    horizontal: [],
    tune: { status: 'skipped' },
    script: undefined,
    previousFigures: readPreviousFigures(),
    failures: [],
  };
  const part = async (name: string, work: () => Promise<void>): Promise<void> => {
    try {
      await work();
    } catch (error) {
      data.failures.push(`${name}: ${errorText(error).split('\n')[0] ?? ''}`);
      log(`  ${name} FAILED: ${errorText(error)}`);
    }
  };
  const wants = (s: Plan['sections'][number]): boolean => plan.sections.includes(s);

  const admin = new Redis({ host: '127.0.0.1', port: redis.port });
  try {
    const sha = (await admin.script('LOAD', scriptSource('dedupSlidingWindow'))) as string;

    if (wants('memory')) {
      // First, on a quiet server and heap.
      for (let i = 0; i < plan.memoryRepeats; i++) {
        await part('memory', async () => {
          data.memory.window.push(await runChild<number>('memory.ts', { kind: 'window' }));
          data.memory.seen.push(await runChild<number>('memory.ts', { kind: 'seen' }));
          data.redisMemory.push(await redisBytesPerEntry(redis.port, plan.redisSettleMs));
        });
      }
      log('bench: memory done');
    }

    if (wants('saving')) {
      const job: SavingJob = { ...plan.saving };
      for (let i = 0; i < plan.saving.repeats; i++) await part('saving', async () => void data.saving.push(await runChild<SavingResult>('saving.ts', job)));
      log('bench: saving done');
    }

    if (wants('script')) {
      await part('script', async () => {
        const job: ScriptCostJob = { port: redis.port, pings: plan.scriptPings, repeats: 3 };
        const result = await runChild<ScriptCostResult>('script-cost.ts', job);
        data.script = result;
        for (const r of result.rows) log(`  script alone ${String(r.pingsPerCall).padStart(3)} pings/call: ${(r.scriptUsPerCall / r.pingsPerCall).toFixed(2)} µs script, ${(r.cpuUsPerCall / r.pingsPerCall).toFixed(2)} µs CPU per ping`);
      });
      log('bench: script done');
    }

    if (wants('latency')) {
      for (const line of PACED_LINES) {
        await part(`latency ${line}`, async () => {
          const job: PacedJob = { line, redis: standalone, redisPorts: [redis.port], assets: 1000, ...plan.paced };
          const result = await runChild<PacedResult>('paced.ts', job);
          data.paced.push(result);
          for (const p of result.phases) log(`  latency ${line.padEnd(9)} ${thousands(p.rate).padStart(6)}/s  p50 ${p.latency.p50.toFixed(2)} p99 ${p.latency.p99.toFixed(2)} max ${p.latency.max.toFixed(1)} ms`);
        });
        await admin.flushall();
      }
      log('bench: latency done');
    }

    if (wants('fleet')) {
      for (const store of ['memory', 'redis'] as const) {
        for (const assets of plan.fleet.sizes) {
          await part(`fleet ${store} ${assets}`, async () => {
            const job: FleetJob = { store, redisPort: redis.port, assets, units: plan.fleet.units, batches: plan.fleet.batches, warmupUnits: plan.fleet.warmupUnits, redisSettleMs: plan.redisSettleMs };
            const result = await runChild<FleetResult>('fleet.ts', job);
            data.fleet.push(result);
            log(`  fleet ${store.padEnd(6)} ${thousands(assets).padStart(9)} assets ${thousands(result.perSecond).padStart(8)} msg/s (${thousands(result.perSecondRange[0])} – ${thousands(result.perSecondRange[1])}) ${result.bytesPerAsset.toFixed(0)} B/asset`);
          });
        }
      }
      await admin.flushall();
      log('bench: fleet done');
    }

    if (wants('horizontal')) {
      const setup = { units: plan.horizontal.units, assets: 1000, warmups: plan.horizontal.warmups, warmupUnits: plan.horizontal.warmupUnits };
      for (const processes of plan.horizontal.processes) {
        await part(`horizontal server ${processes}`, async () => {
          const r = await runHorizontal({ ...setup, redis: standalone, admins: [admin] }, processes);
          data.horizontal.push(r);
          log(`  horizontal server  x${processes} ${thousands(r.decisionsPerSecond).padStart(8)} decisions/s, Redis ${r.redisCpuUsPerDecision.toFixed(1)} µs each`);
        });
      }
      await admin.flushall();
      let cluster: RedisClusterHandle | undefined;
      await part('horizontal cluster', async () => {
        cluster = await startRedisCluster(plan.horizontal.primaries);
        for (const processes of plan.horizontal.processes) {
          await part(`horizontal cluster ${processes}`, async () => {
            const handle = cluster as RedisClusterHandle;
            const r = await runHorizontal({ ...setup, redis: { mode: 'cluster', seeds: handle.seedList }, admins: handle.admins }, processes);
            data.horizontal.push(r);
            log(`  horizontal cluster x${processes} ${thousands(r.decisionsPerSecond).padStart(8)} decisions/s, Redis ${r.redisCpuUsPerDecision.toFixed(1)} µs each`);
          });
        }
        // The Redis line at steady rates on the Cluster: what a decision
        // costs there when calls carry one slot's pings.
        await part('latency on the cluster', async () => {
          const handle = cluster as RedisClusterHandle;
          const job: PacedJob = {
            ...plan.paced,
            seconds: plan.pacedClusterSeconds,
            rates: plan.pacedClusterRates,
            line: 'sw-redis',
            redis: { mode: 'cluster', seeds: handle.seedList },
            redisPorts: handle.primaries.map((p) => p.port),
            assets: 1000,
          };
          const result = await runChild<PacedResult>('paced.ts', job);
          data.paced.push(result);
          for (const p of result.phases) log(`  latency cluster   ${thousands(p.rate).padStart(6)}/s  p50 ${p.latency.p50.toFixed(2)} p99 ${p.latency.p99.toFixed(2)} ms, Redis ${(p.redisCpuUsPerMsg ?? Number.NaN).toFixed(1)} µs each`);
        });
      });
      await cluster?.stop();
      log('bench: horizontal done');
    }

    if (wants('tune')) {
      data.tune = await runTune(plan);
      log(`bench: tune ${data.tune.status}`);
    }

    if (wants('rounds')) {
      const round = plan.quick ? QUICK_ROUND : ROUND;
      const job = { units: plan.units, assets: 1000, devices: plan.devices, warmups: plan.warmups, warmupUnits: plan.warmupUnits };
      let seq = 0;
      for (let r = 1; r <= plan.rounds; r++) {
        const roundStart = Date.now();
        for (const line of round) {
          const trial: Trial = { round: r, seq: seq++ };
          try {
            const trialJob: TrialJob = { line, redis: standalone, ...job };
            trial.result = await runChild<TrialResult>('worker.ts', trialJob);
            if (line === 'filter') data.filterSeq.push({ seq: trial.seq, rate: trial.result.perSecond });
            log(`  round ${r} ${line.padEnd(17)} ${thousands(trial.result.perSecond).padStart(9)} /s`);
          } catch (error) {
            trial.error = errorText(error);
            log(`  round ${r} ${line.padEnd(17)} FAILED: ${trial.error.split('\n')[0] ?? ''}`);
          }
          data.trials.set(line, [...(data.trials.get(line) ?? []), trial]);
        }
        for (const run of plan.serverRuns) {
          await admin.flushall();
          await part(`server ${run.id}`, async () => {
            const result = await serverRun(redis.port, sha, run);
            data.server.set(run.id, [...(data.server.get(run.id) ?? []), result]);
            log(`  round ${r} ${run.id.padEnd(17)} ${thousands(result.pingsPerSecond).padStart(9)} pings/s`);
          });
        }
        await admin.flushall();
        data.roundsRun = r;
        const spent = Date.now() - t0;
        if (r < plan.rounds && spent + (Date.now() - roundStart) > plan.budgetMs) {
          log(`bench: stopping after ${r} rounds to stay within ${plan.budgetMs / 1000} s`);
          break;
        }
      }
    }
  } finally {
    admin.disconnect();
    await redis.stop();
  }

  data.loadAfter = fmtLoad();
  data.seconds = (Date.now() - t0) / 1000;
  const report = renderReport(data);
  process.stdout.write(`${report}\n`);
  writeFileSync(join(__dirname, 'results.md'), `${report}\n`);
  writeFigures(data, data.previousFigures);
  mkdirSync(join(ROOT, 'docs'), { recursive: true });
  writeFileSync(join(ROOT, 'docs', 'performance.md'), `${renderPerformanceDoc(data)}\n`);
  log('bench: written to bench/results.md, bench/figures.json and docs/performance.md');
}

async function serverRun(port: number, sha: string, run: ServerRun): Promise<EvalLoadResult> {
  const job: EvalLoadJob = { port, sha, pingsPerCall: run.pingsPerCall, pipeline: run.pipeline, calls: run.calls, connections: 4 };
  const result = await runChild<EvalLoadResult>('eval-load.ts', job);
  if (result.errors > 0) throw new Error(`${result.errors} calls failed: ${result.firstError ?? ''}`);
  return result;
}

main().catch((error: unknown) => {
  log(`bench failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
  process.exitCode = 1;
});
