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
 * Today's figures beside the new ones: the baseline commit (BENCH_BASELINE,
 * bench/baseline.ts) is built on its own, and the script, redis and rounds
 * parts measure it in the same run as the working tree.
 *
 * Settings (environment): BENCH_ROUNDS, BENCH_N (messages, or readings, per
 * throughput trial), BENCH_BUDGET_S (the whole run; rounds stop starting
 * past it), BENCH_LATENCY_S (recorded seconds per rate of the latency part),
 * BENCH_MEMORY_ENTRIES (entries of each kind the Redis stores' memory is
 * measured at), BENCH_COST_S (recorded seconds per paced phase of the redis part),
 * BENCH_LINGER_MS (the working tree's linger in the redis part, instead of
 * its default), BENCH_BASELINE (a commit, or `none`), BENCH_ONLY (a
 * comma-separated list of parts, for working on one of them),
 * BENCH_PROFILE_DIR (a CPU profile of each timed throughput run, see
 * worker.ts), SCRIPT_COST_PINGS, SCRIPT_COST_REPEATS and SCRIPT_COST_LUA
 * (the script part, see script-cost.ts).
 */
import { spawnSync } from 'child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'fs';
import { loadavg, tmpdir } from 'os';
import { join } from 'path';
import Redis from 'ioredis';
import { startRedisCluster, type RedisClusterHandle } from '../test/support/redis-cluster';
import { baselineBuild, workingBuild, type BenchBuild } from './baseline';
import { errorText, runChild, startChild } from './children';
import type { EvalLoadJob, EvalLoadResult } from './eval-load';
import type { RedisCostRun, RoundLine, RunData, Trial } from './figures';
import type { FloorJob, FloorPhase } from './floor';
import type { FleetJob, FleetResult } from './fleet';
import type { LineId, RedisTarget } from './flows';
import { runHorizontal } from './horizontal';
import { readPreviousFigures, writeFigures } from './issue20';
import { GOALS } from './issue31';
import { redisBytesPerEntry } from './memory';
import type { GuardCostJob, GuardCostResult } from './guard-cost';
import type { MetricsCostJob, MetricsCostResult } from './metrics-cost';
import type { PacedJob, PacedLine, PacedPhase, PacedResult, PhaseSpec } from './paced';
import { planFrom, SECTIONS, type Plan, type RedisCostLine, type Section, type ServerRun } from './plan';
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

/**
 * One round, in order: each ratio line sits between two filter trials.
 * The `@today` lines are the same node on the baseline commit's build
 * (left out without one): memory and Redis throughput flat out, before and
 * after, side by side.
 */
const ROUND: RoundLine[] = [
  'filter', 'passthrough', 'filter', 'sw-memory', 'filter', 'sw-redis', 'filter', 'sw-memory@today', 'filter', 'sw-redis@today', 'filter', 'naive', 'filter',
  'sr-memory', 'sr-redis', 'sr-memory-confirm', 'sr-redis-confirm', 'sr-nested',
];

/** The lines the profile part profiles: the filter, and the sliding-window node on each store. */
const PROFILED_LINES: LineId[] = ['filter', 'sw-memory', 'sw-redis'];

/** The quick run's round: the same lines, with a filter trial on one side of each ratio line only. */
const QUICK_ROUND: RoundLine[] = [
  'filter', 'passthrough', 'sw-memory', 'filter', 'sw-redis', 'sw-memory@today', 'filter', 'sw-redis@today', 'naive', 'filter',
  'sr-memory', 'sr-redis', 'sr-memory-confirm', 'sr-redis-confirm', 'sr-nested',
];

/** The latency part's lines; the Redis store's paced figures are the redis part's. */
const PACED_LINES: PacedLine[] = ['filter', 'sw-memory'];

/** A build's config version, from its own compiled migrations (a node without the right one would be migrated). */
function configVersionOf(build: BenchBuild): number {
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- the build's compiled module
  return (require(join(build.root, 'nodes', 'node-red', 'migrations.js')) as { CONFIG_VERSION: number }).CONFIG_VERSION;
}

/** A throughput trial of the line at the plan's size, as the rounds and the profile part run it; an `@today` line on the baseline's build. */
function trialJob(plan: Plan, line: RoundLine, redis: RedisTarget, today: BenchBuild | undefined): TrialJob {
  const [id, build] = line.split('@') as [LineId, string | undefined];
  const pack = build === 'today' && today !== undefined ? { packRoot: today.root, configVersion: configVersionOf(today) } : {};
  return { line: id, redis, units: plan.units, assets: 1000, devices: plan.devices, warmups: plan.warmups, warmupUnits: plan.warmupUnits, ...pack };
}

/** The phases a line of the redis part runs: each rate warm then cold, then its flat-out cases. */
function costPhases(plan: Plan, line: RedisCostLine): PhaseSpec[] {
  const { seconds, settleSeconds, burstUnits } = plan.redis;
  return [
    ...line.rates.flatMap((rate): PhaseSpec[] => (['warm', 'cold'] as const).map((c) => ({ kind: 'paced', rate, case: c, seconds, settleSeconds }))),
    ...line.bursts.map((c): PhaseSpec => ({ kind: 'burst', case: c, units: burstUnits })),
  ];
}

const costLine = (r: RedisCostRun, p: PacedPhase, floor: FloorPhase | undefined): string =>
  `  redis ${r.target.padEnd(7)} ${r.line.padEnd(16)} ${r.build.padEnd(5)} ${p.kind === 'paced' ? `${thousands(p.rate).padStart(6)}/s` : 'flat out'} ${p.case.padEnd(7)} ` +
  `Redis ${(p.redisCpuUsPerMsg ?? Number.NaN).toFixed(1)} µs (floor ${(floor?.redisCpuUsPerMsg ?? Number.NaN).toFixed(1)}${floor?.wake ? `, wake ${floor.wake.redisCpuUsPerMsg.toFixed(1)}` : ''}), script ${(p.scriptUsPerMsg ?? Number.NaN).toFixed(2)} µs, ${(p.pingsPerCall ?? Number.NaN).toFixed(1)}/call` +
  (p.latency ? `, p99 ${p.latency.p99.toFixed(2)} ms` : `, ${thousands(p.achievedRate)}/s`);

const todayOf = (builds: readonly BenchBuild[]): BenchBuild | undefined => builds.find((b) => b.id === 'today');

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
  /** The working tree's build, then the baseline's when there is one. */
  builds: BenchBuild[];
  part: (name: string, work: () => Promise<void>) => Promise<void>;
}

const latencyLine = (label: string, p: PacedPhase, tail: string): string =>
  `  latency ${label} ${thousands(p.rate).padStart(6)}/s  p50 ${(p.latency?.p50 ?? Number.NaN).toFixed(2)} p99 ${(p.latency?.p99 ?? Number.NaN).toFixed(2)} ${tail}`;

const RUNNERS: Record<Section, (b: Bench) => Promise<void>> = {
  async memory({ plan, data, port, builds, part }) {
    for (let i = 0; i < plan.memoryRepeats; i++) {
      await part('memory', async () => {
        data.memory.window.push(await runChild<number>('memory.ts', { kind: 'window' }));
        data.memory.seen.push(await runChild<number>('memory.ts', { kind: 'seen' }));
        data.redisMemory.push(await redisBytesPerEntry(port, plan.redisSettleMs, plan.redisMemoryEntries));
        // The landed code's stores too, on the same server in the same run: the figures before and after a change of layout.
        const today = builds.find((b) => b.id === 'today');
        if (today !== undefined) (data.redisMemoryToday ??= []).push(await redisBytesPerEntry(port, plan.redisSettleMs, plan.redisMemoryEntries, today.root));
      });
    }
  },

  async saving({ plan, data, part }) {
    const job: SavingJob = { ...plan.saving };
    for (let i = 0; i < plan.saving.repeats; i++) await part('saving', async () => void data.saving.push(await runChild<SavingResult>('saving.ts', job)));
  },

  async script({ plan, data, port, builds, part }) {
    await part('script', async () => {
      const job: ScriptCostJob = { port, pings: plan.scriptPings, repeats: plan.scriptRepeats, builds, ...(plan.scriptLua ? { lua: plan.scriptLua } : {}) };
      data.script = await runChild<ScriptCostResult>('script-cost.ts', job);
      for (const r of data.script.rows) {
        log(`  script alone ${r.build.padEnd(5)} ${r.case} ${String(r.pingsPerCall).padStart(3)} pings/call: ${(r.scriptUsPerCall / r.pingsPerCall).toFixed(2)} µs script, ${(r.cpuUsPerCall / r.pingsPerCall).toFixed(2)} µs CPU per ping`);
      }
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

  async latency({ plan, data, standalone, port, part }) {
    const { rates, seconds, settleSeconds, assets, primeRate } = plan.paced;
    for (const line of PACED_LINES) {
      await part(`latency ${line}`, async () => {
        const phases: PhaseSpec[] = rates.map((rate) => ({ kind: 'paced', rate, case: 'warm', seconds, settleSeconds }));
        const job: PacedJob = { line, redis: standalone, redisPorts: [port], assets, primeRate, phases };
        const result = await runChild<PacedResult>('paced.ts', job);
        data.paced.push(result);
        for (const p of result.phases) log(latencyLine(line.padEnd(9), p, `max ${(p.latency?.max ?? Number.NaN).toFixed(1)} ms`));
      });
    }
  },

  async redis({ plan, data, standalone, port, admin, builds, part }) {
    const cost = plan.redis;
    const run = async (target: 'server' | 'cluster', redis: RedisTarget, admins: readonly Redis[], ports: number[]): Promise<void> => {
      for (const line of cost.lines) {
        // Today's build, then the working tree's, line by line: the two see the machine as alike as it gets.
        for (const build of [...builds].reverse()) {
          await part(`redis ${target} ${line.line} ${build.id}`, async () => {
            const job: PacedJob = {
              line: line.line, redis, redisPorts: ports, packRoot: build.root, configVersion: configVersionOf(build),
              ...(build.id === 'new' && cost.lingerMs !== undefined ? { lingerMs: cost.lingerMs } : {}),
              assets: cost.assets, primeRate: cost.primeRate, phases: costPhases(plan, line), schedules: true,
            };
            const result = await runChild<PacedResult>('paced.ts', job);
            await Promise.all(admins.map((a) => a.flushall()));
            const entry: RedisCostRun = { target, line: line.line, build: build.id, label: build.label, phases: result.phases };
            data.redisCost.push(entry);
            try {
              const floorJob: FloorJob = {
                ports, ...(redis.mode === 'cluster' ? { cluster: { seeds: redis.seeds } } : {}), warmKeys: cost.assets, maxInFlight: redis.mode === 'cluster' ? 1 : 8,
                phases: result.phases.map((p, i) => ({
                  kind: p.kind, case: p.case, messages: p.messages, seconds: p.seconds, schedule: result.schedules?.[i] ?? { at: [], size: [], group: [] },
                  // The wake where issue 31's CPU goals are: the quiet rate, warm.
                  wake: p.kind === 'paced' && p.rate === GOALS.quietRate && p.case === 'warm',
                })),
              };
              entry.floor = await runChild<FloorPhase[]>('floor.ts', floorJob);
            } finally {
              await Promise.all(admins.map((a) => a.flushall()));
            }
            result.phases.forEach((p, i) => log(costLine(entry, p, entry.floor?.[i])));
          });
        }
      }
    };
    await run('server', standalone, [admin], [port]);
    if (cost.clusterPrimaries > 0) {
      let cluster: RedisClusterHandle | undefined;
      await part('redis cluster', async () => {
        cluster = await startRedisCluster(cost.clusterPrimaries);
        await run('cluster', { mode: 'cluster', seeds: cluster.seedList }, cluster.admins, cluster.primaries.map((p) => p.port));
      });
      await cluster?.stop();
    }
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
      await on('cluster', { mode: 'cluster', seeds: cluster.seedList }, cluster.admins);
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

  async profile({ plan, data, standalone, admin, builds, part }) {
    const dir = mkdtempSync(join(tmpdir(), 'dedup-bench-profile-'));
    try {
      for (const line of PROFILED_LINES) {
        await part(`profile ${line}`, async () => {
          const result = await startChild<TrialResult>('worker.ts', trialJob(plan, line, standalone, todayOf(builds)), undefined, { ...process.env, BENCH_PROFILE_DIR: dir }).answer;
          data.profile.push(summarizeProfile(join(dir, `${line}.cpuprofile`), line, result.units));
          log(`  profile ${line.padEnd(9)} ${thousands(result.perSecond).padStart(9)} /s (profiled)`);
        });
        await admin.flushall();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  },

  async rounds({ plan, data, standalone, port, admin, sha, builds, part }) {
    const today = todayOf(builds);
    const round = (plan.quick ? QUICK_ROUND : ROUND).filter((line) => today !== undefined || !line.endsWith('@today'));
    let seq = 0;
    for (let r = 1; r <= plan.rounds; r++) {
      const roundStart = Date.now();
      for (const line of round) {
        const trial: Trial = { round: r, seq: seq++ };
        try {
          trial.result = await runChild<TrialResult>('worker.ts', trialJob(plan, line, standalone, today));
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

/** Where a run keeps what it measured, so that BENCH_RENDER can write the reports again without measuring. */
const LAST_RUN = join(tmpdir(), 'node-red-dedup-bench-last-run.json');

function saveRun(data: RunData): void {
  writeFileSync(LAST_RUN, JSON.stringify({ ...data, trials: [...data.trials], server: [...data.server] }));
}

function loadRun(file: string): RunData {
  const raw = JSON.parse(readFileSync(file, 'utf8')) as Omit<RunData, 'trials' | 'server'> & { trials: [RoundLine, Trial[]][]; server: [ServerRun['id'], EvalLoadResult[]][] };
  return { ...raw, trials: new Map(raw.trials), server: new Map(raw.server) };
}

/** bench/results.md, bench/figures.json and docs/performance.md from a run's data. */
/** The reports of a run; the guide (docs/performance.md) only from a run of every part, as it quotes them all. */
function writeReports(data: RunData, everyPart: boolean): void {
  const report = renderReport(data);
  process.stdout.write(`${report}\n`);
  writeFileSync(join(__dirname, 'results.md'), `${report}\n`);
  writeFigures(data, data.previousFigures);
  if (everyPart) {
    mkdirSync(join(ROOT, 'docs'), { recursive: true });
    writeFileSync(join(ROOT, 'docs', 'performance.md'), `${renderPerformanceDoc(data)}\n`);
    log('bench: written to bench/results.md, bench/figures.json and docs/performance.md');
  } else {
    log('bench: written to bench/results.md and bench/figures.json; docs/performance.md is written by a run of every part only');
  }
}

async function main(): Promise<void> {
  const rendering = process.env.BENCH_RENDER;
  if (rendering !== undefined && rendering !== '') {
    // The reports again from a run's data (the last run's: LAST_RUN), for working on them.
    writeReports(loadRun(rendering), process.env.BENCH_ONLY === undefined);
    log(`bench: written from ${rendering}`);
    return;
  }
  const plan = planFrom(process.argv.slice(2));
  // Inherited by every child: see runtime.ts.
  if (plan.quick) process.env.BENCH_LEAN_RUNTIME = '1';
  const loadBefore = fmtLoad();
  const build = spawnSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: ROOT, encoding: 'utf8' });
  const builds: BenchBuild[] = [workingBuild()];
  if (plan.redis.baseline !== undefined && plan.sections.some((s) => s === 'memory' || s === 'script' || s === 'redis' || s === 'rounds')) {
    try {
      builds.push(baselineBuild(plan.redis.baseline, log));
    } catch (error) {
      log(`bench: no baseline (${errorText(error)}); today's figures are left out`);
    }
  }
  const redis = await startOwnRedis();
  log(`bench${plan.quick ? ' --quick' : ''}: redis-server ${redis.version} on 127.0.0.1:${redis.port}; parts: ${plan.sections.join(', ')}; builds: ${builds.map((b) => `${b.id} ${b.label}`).join(', ')}`);

  const data: RunData = {
    plan,
    commit: build.status === 0 ? build.stdout.trim() : '?',
    redisVersion: redis.version,
    loadBefore,
    loadAfter: '',
    seconds: 0,
    trials: new Map(),
    builds: builds.map((b) => ({ id: b.id, label: b.label })),
    redisCost: [],
    filterSeq: [],
    server: new Map(),
    roundsRun: 0,
    memory: { window: [], seen: [] },
    redisMemory: [],
    redisMemoryToday: [],
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
    const bench: Bench = { plan, data, port: redis.port, standalone: { mode: 'standalone', port: redis.port }, admin, sha, builds, part };
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
  saveRun(data);
  writeReports(data, plan.sections.length === SECTIONS.length);
  log(`bench: the data kept in ${LAST_RUN} (BENCH_RENDER=<that file> writes the reports again)`);
}

main().catch((error: unknown) => {
  log(`bench failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
  process.exitCode = 1;
});
