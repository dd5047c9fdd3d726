/**
 * npm run bench [-- --quick]: throughput, latency, cost and memory of the
 * dedup nodes, side by side with what a Node-RED user would reach for
 * instead, in one run. Prints the tables and writes them to
 * bench/results.md, issue 20's figures to bench/figures.json, and the sizing
 * guide built from them to docs/performance.md. Not a test: it asserts
 * nothing, it reports (and says plainly when a check or a target fails).
 *
 * The parts (bench/plan.ts, PARTS: what each measures, in which child
 * process, and how big it is in the full and the quick run) run one after
 * the other, each in processes of its own; RUNNERS below is how each is
 * driven and where its results go. In the rounds, a line whose target is a
 * ratio to the core filter node sits between two filter trials: its ratio
 * is taken against the mean of those two, pair by pair, and the table
 * reports medians. A machine that is busy with something else slows both
 * sides of a pair alike, which medians of absolute rates alone would not show.
 *
 * Settings (environment): BENCH_ROUNDS, BENCH_N (messages, or readings, per
 * throughput trial), BENCH_BUDGET_S (the whole run; rounds stop starting
 * past it), BENCH_LATENCY_S (recorded seconds per rate), BENCH_MEMORY_ENTRIES
 * (entries of each kind the Redis stores' memory is measured at), BENCH_ONLY (a
 * comma-separated list of parts, for working on one of them),
 * BENCH_PROFILE_DIR (a CPU profile of each timed throughput run, see
 * worker.ts), SCRIPT_COST_PINGS, SCRIPT_COST_REPEATS and SCRIPT_COST_LUA
 * (the script part, see script-cost.ts).
 */
import { spawnSync } from 'child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'fs';
import { loadavg, tmpdir } from 'os';
import { join } from 'path';
import Redis from 'ioredis';
import { startRedisCluster, type RedisClusterHandle } from '../test/support/redis-cluster';
import { errorText, runChild, startChild } from './children';
import type { EvalLoadJob, EvalLoadResult } from './eval-load';
import type { RunData, Trial } from './figures';
import type { FleetJob, FleetResult } from './fleet';
import type { LineId, RedisTarget } from './flows';
import { runHorizontal } from './horizontal';
import { readPreviousFigures, writeFigures } from './issue20';
import { redisBytesPerEntry } from './memory';
import type { GuardCostJob, GuardCostResult } from './guard-cost';
import type { MetricsCostJob, MetricsCostResult } from './metrics-cost';
import type { PacedJob, PacedLine, PacedPhase, PacedResult } from './paced';
import { planFrom, SECTIONS, type Plan, type Section } from './plan';
import { summarizeProfile } from './profile';
import { startOwnRedis } from './redis';
import { renderReport } from './report';
import { ROOT } from './runtime';
import type { SavingJob, SavingResult } from './saving';
import type { ScriptCostJob, ScriptCostResult } from './script-cost';
import { renderPerformanceDoc } from './performance-doc';
import { median, thousands } from './stats';
import { tuneBenchTable, type TuneBenchResult } from './tune';
import type { TrialJob, TrialResult } from './worker';

/* eslint-disable-next-line @typescript-eslint/no-require-imports -- the compiled code in nodes/, which is what Node-RED runs; types from src/ */
const { scriptSource } = require('../nodes/redis/scripts') as typeof import('../src/redis/scripts');

/** One round, in order: each ratio line sits between two filter trials. */
const ROUND: LineId[] = [
  'filter', 'passthrough', 'filter', 'sw-memory', 'filter', 'sw-redis', 'filter', 'naive', 'filter',
  'sr-memory', 'sr-redis', 'sr-memory-confirm', 'sr-redis-confirm', 'sr-nested',
];

/** The lines the profile part profiles: the filter, and the sliding-window node on each store. */
const PROFILED_LINES: LineId[] = ['filter', 'sw-memory', 'sw-redis'];

/** The quick run's round: the same lines, with a filter trial on one side of each ratio line only. */
const QUICK_ROUND: LineId[] = [
  'filter', 'passthrough', 'sw-memory', 'filter', 'sw-redis', 'naive', 'filter',
  'sr-memory', 'sr-redis', 'sr-memory-confirm', 'sr-redis-confirm', 'sr-nested',
];

const PACED_LINES: PacedLine[] = ['filter', 'sw-memory', 'sw-redis'];

/** A throughput trial of the line at the plan's size, as the rounds and the profile part run it. */
function trialJob(plan: Plan, line: LineId, redis: RedisTarget): TrialJob {
  return { line, redis, units: plan.units, assets: 1000, devices: plan.devices, warmups: plan.warmups, warmupUnits: plan.warmupUnits };
}

const started = Date.now();

/** Progress on stderr, each line with the seconds since the start. */
function log(text: string): void {
  process.stderr.write(`${String(Math.round((Date.now() - started) / 1000)).padStart(4)} s ${text}\n`);
}

function fmtLoad(): string {
  return loadavg().map((l) => l.toFixed(2)).join(' ');
}

/** What every part is handed: the run's plan and data, the bench's own redis-server, and `part`, which keeps one failure from stopping the rest. */
interface Bench {
  plan: Plan;
  data: RunData;
  port: number;
  standalone: RedisTarget;
  admin: Redis;
  /** The sliding-window script's SHA on the bench's server (the rounds' server lines). */
  sha: string;
  part: (name: string, work: () => Promise<void>) => Promise<void>;
}

const latencyLine = (label: string, p: PacedPhase, tail: string): string => `  latency ${label} ${thousands(p.rate).padStart(6)}/s  p50 ${p.latency.p50.toFixed(2)} p99 ${p.latency.p99.toFixed(2)} ${tail}`;

const RUNNERS: Record<Section, (b: Bench) => Promise<void>> = {
  async memory({ plan, data, port, part }) {
    for (let i = 0; i < plan.memoryRepeats; i++) {
      await part('memory', async () => {
        data.memory.window.push(await runChild<number>('memory.ts', { kind: 'window' }));
        data.memory.seen.push(await runChild<number>('memory.ts', { kind: 'seen' }));
        data.redisMemory.push(await redisBytesPerEntry(port, plan.redisSettleMs, plan.redisMemoryEntries));
      });
    }
  },

  async saving({ plan, data, part }) {
    const job: SavingJob = { ...plan.saving };
    for (let i = 0; i < plan.saving.repeats; i++) await part('saving', async () => void data.saving.push(await runChild<SavingResult>('saving.ts', job)));
  },

  async script({ plan, data, port, part }) {
    await part('script', async () => {
      const job: ScriptCostJob = { port, pings: plan.scriptPings, repeats: plan.scriptRepeats, ...(plan.scriptLua ? { lua: plan.scriptLua } : {}) };
      data.script = await runChild<ScriptCostResult>('script-cost.ts', job);
      for (const r of data.script.rows) log(`  script alone ${String(r.pingsPerCall).padStart(3)} pings/call: ${(r.scriptUsPerCall / r.pingsPerCall).toFixed(2)} µs script, ${(r.cpuUsPerCall / r.pingsPerCall).toFixed(2)} µs CPU per ping`);
    });
  },

  async metrics({ plan, data, part }) {
    await part('metrics', async () => {
      const job: MetricsCostJob = { messages: plan.metricsMessages };
      data.metrics = await runChild<MetricsCostResult>('metrics-cost.ts', job);
      for (const r of data.metrics.rows) log(`  metrics ${r.report.padEnd(38)} adds ${(r.with - r.without).toFixed(4)} µs/msg`);
    });
  },

  async guards({ plan, data, part }) {
    await part('guards', async () => {
      const job: GuardCostJob = { pings: plan.guards.pings, redis: true, node: plan.guards.node };
      data.guards = await runChild<GuardCostResult>('guard-cost.ts', job);
      const pct = (on: number[], off: number[]): string => `${((median(on) / median(off)) * 100).toFixed(1)} %`;
      const node = data.guards.node;
      if (node) log(`  guards on/off, the node: memory ${pct(node.memory.on, node.memory.off)}${node.redis ? `, Redis ${pct(node.redis.on, node.redis.off)}` : ''}`);
    });
  },

  async latency({ plan, data, standalone, port, admin, part }) {
    for (const line of PACED_LINES) {
      await part(`latency ${line}`, async () => {
        const job: PacedJob = { line, redis: standalone, redisPorts: [port], assets: 1000, ...plan.paced };
        const result = await runChild<PacedResult>('paced.ts', job);
        data.paced.push(result);
        for (const p of result.phases) log(latencyLine(line.padEnd(9), p, `max ${p.latency.max.toFixed(1)} ms`));
      });
      await admin.flushall();
    }
    await part('latency sw-redis, no burst before', async () => {
      const job: PacedJob = { line: 'sw-redis', redis: standalone, redisPorts: [port], assets: 1000, ...plan.paced, rates: plan.calm.rates, warmupUnits: plan.calm.warmupUnits, warmup: 'small' };
      const result = await runChild<PacedResult>('paced.ts', job);
      data.paced.push(result);
      for (const p of result.phases) log(latencyLine('sw-redis (no burst)', p, `max ${p.latency.max.toFixed(1)} ms`));
    });
    await admin.flushall();
  },

  async fleet({ plan, data, port, admin, part }) {
    for (const store of ['memory', 'redis'] as const) {
      for (const assets of plan.fleet.sizes) {
        await part(`fleet ${store} ${assets}`, async () => {
          const job: FleetJob = { store, redisPort: port, assets, units: plan.fleet.units, batches: plan.fleet.batches, warmupUnits: plan.fleet.warmupUnits, redisSettleMs: plan.redisSettleMs };
          const result = await runChild<FleetResult>('fleet.ts', job);
          data.fleet.push(result);
          log(`  fleet ${store.padEnd(6)} ${thousands(assets).padStart(9)} assets ${thousands(result.perSecond).padStart(8)} msg/s (${thousands(result.perSecondRange[0])} – ${thousands(result.perSecondRange[1])}) ${result.bytesPerAsset.toFixed(0)} B/asset`);
        });
      }
    }
    await admin.flushall();
  },

  async horizontal({ plan, data, standalone, admin, part }) {
    const setup = { units: plan.horizontal.units, assets: 1000, warmups: plan.horizontal.warmups, warmupUnits: plan.horizontal.warmupUnits };
    const on = async (target: 'server' | 'cluster', redis: RedisTarget, admins: readonly Redis[]): Promise<void> => {
      for (const processes of plan.horizontal.processes) {
        await part(`horizontal ${target} ${processes}`, async () => {
          const r = await runHorizontal({ ...setup, redis, admins }, processes);
          data.horizontal.push(r);
          log(`  horizontal ${target.padEnd(7)} x${processes} ${thousands(r.decisionsPerSecond).padStart(8)} decisions/s, Redis ${r.redisCpuUsPerDecision.toFixed(1)} µs each`);
        });
      }
    };
    await on('server', standalone, [admin]);
    await admin.flushall();
    let cluster: RedisClusterHandle | undefined;
    await part('horizontal cluster', async () => {
      cluster = await startRedisCluster(plan.horizontal.primaries);
      const redis: RedisTarget = { mode: 'cluster', seeds: cluster.seedList };
      await on('cluster', redis, cluster.admins);
      // The Redis line at steady rates on the Cluster: what a decision
      // costs there when calls carry one slot's pings.
      const ports = cluster.primaries.map((p) => p.port);
      await part('latency on the cluster', async () => {
        const job: PacedJob = { ...plan.paced, seconds: plan.pacedClusterSeconds, rates: plan.pacedClusterRates, line: 'sw-redis', redis, redisPorts: ports, assets: 1000 };
        const result = await runChild<PacedResult>('paced.ts', job);
        data.paced.push(result);
        for (const p of result.phases) log(latencyLine('cluster  ', p, `ms, Redis ${(p.redisCpuUsPerMsg ?? Number.NaN).toFixed(1)} µs each`));
      });
    });
    await cluster?.stop();
  },

  // Smaller in the quick run (TUNE_BENCH_PINGS, TUNE_BENCH_ROUNDS), and stopped past tuneTimeoutMs.
  async tune({ plan, data }) {
    const env = { ...process.env, ...(plan.quick ? { TUNE_BENCH_PINGS: '200000', TUNE_BENCH_ROUNDS: '1' } : {}) };
    const child = startChild<TuneBenchResult>('tune.ts', {}, undefined, env);
    let killed = false;
    const timer = setTimeout(() => (killed = child.process.kill('SIGKILL')), plan.tuneTimeoutMs);
    const t0 = Date.now();
    try {
      const result = await child.answer;
      data.tune = { status: 'ran', seconds: (Date.now() - t0) / 1000, text: tuneBenchTable(result).trim() };
    } catch (error) {
      const why = killed ? `stopped after ${plan.tuneTimeoutMs / 1000} s: ` : '';
      data.tune = { status: 'failed', seconds: (Date.now() - t0) / 1000, text: `${why}${errorText(error).trim().split('\n').slice(-3).join(' / ')}` };
    } finally {
      clearTimeout(timer);
    }
    log(`  tune ${data.tune.status}`);
  },

  async profile({ plan, data, standalone, admin, part }) {
    const dir = mkdtempSync(join(tmpdir(), 'dedup-bench-profile-'));
    try {
      for (const line of PROFILED_LINES) {
        await part(`profile ${line}`, async () => {
          const result = await startChild<TrialResult>('worker.ts', trialJob(plan, line, standalone), undefined, { ...process.env, BENCH_PROFILE_DIR: dir }).answer;
          data.profile.push(summarizeProfile(join(dir, `${line}.cpuprofile`), line, result.units));
          log(`  profile ${line.padEnd(9)} ${thousands(result.perSecond).padStart(9)} /s (profiled)`);
        });
        await admin.flushall();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  },

  async rounds({ plan, data, standalone, port, admin, sha, part }) {
    const round = plan.quick ? QUICK_ROUND : ROUND;
    let seq = 0;
    for (let r = 1; r <= plan.rounds; r++) {
      const roundStart = Date.now();
      for (const line of round) {
        const trial: Trial = { round: r, seq: seq++ };
        try {
          trial.result = await runChild<TrialResult>('worker.ts', trialJob(plan, line, standalone));
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
          const serverJob: EvalLoadJob = { port, sha, pingsPerCall: run.pingsPerCall, pipeline: run.pipeline, calls: run.calls, connections: 4 };
          const result = await runChild<EvalLoadResult>('eval-load.ts', serverJob);
          if (result.errors > 0) throw new Error(`${result.errors} calls failed: ${result.firstError ?? ''}`);
          data.server.set(run.id, [...(data.server.get(run.id) ?? []), result]);
          log(`  round ${r} ${run.id.padEnd(17)} ${thousands(result.pingsPerSecond).padStart(9)} pings/s`);
        });
      }
      await admin.flushall();
      data.roundsRun = r;
      // The budget is the whole run's: the parts before the rounds spent part of it.
      const spent = Date.now() - started;
      if (r < plan.rounds && spent + (Date.now() - roundStart) > plan.budgetMs) {
        log(`bench: stopping after ${r} rounds to stay within ${plan.budgetMs / 1000} s`);
        break;
      }
    }
  },
};

async function main(): Promise<void> {
  const plan = planFrom(process.argv.slice(2));
  // Inherited by every child: see runtime.ts.
  if (plan.quick) process.env.BENCH_LEAN_RUNTIME = '1';
  const loadBefore = fmtLoad();
  const build = spawnSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: ROOT, encoding: 'utf8' });
  const redis = await startOwnRedis();
  log(`bench${plan.quick ? ' --quick' : ''}: redis-server ${redis.version} on 127.0.0.1:${redis.port}; parts: ${plan.sections.join(', ')}`);

  const data: RunData = {
    plan,
    commit: build.status === 0 ? build.stdout.trim() : '?',
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
    profile: [],
    metrics: undefined,
    guards: undefined,
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

  const admin = new Redis({ host: '127.0.0.1', port: redis.port });
  try {
    const sha = (await admin.script('LOAD', scriptSource('dedupSlidingWindow'))) as string;
    const bench: Bench = { plan, data, port: redis.port, standalone: { mode: 'standalone', port: redis.port }, admin, sha, part };
    for (const section of plan.sections) {
      await RUNNERS[section](bench);
      log(`bench: ${section} done`);
    }
  } finally {
    admin.disconnect();
    await redis.stop();
  }

  data.loadAfter = fmtLoad();
  data.seconds = (Date.now() - started) / 1000;
  const report = renderReport(data);
  process.stdout.write(`${report}\n`);
  writeFileSync(join(__dirname, 'results.md'), `${report}\n`);
  writeFigures(data, data.previousFigures);
  // The guide quotes every part: a run of some of them (BENCH_ONLY) would
  // write it with most of its figures missing.
  if (plan.sections.length === SECTIONS.length) {
    mkdirSync(join(ROOT, 'docs'), { recursive: true });
    writeFileSync(join(ROOT, 'docs', 'performance.md'), `${renderPerformanceDoc(data)}\n`);
    log('bench: written to bench/results.md, bench/figures.json and docs/performance.md');
  } else {
    log('bench: written to bench/results.md and bench/figures.json; docs/performance.md is written by a run of every part only');
  }
}

main().catch((error: unknown) => {
  log(`bench failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
  process.exitCode = 1;
});
