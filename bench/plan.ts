/**
 * How big each part of `npm run bench` is: the full run (about an hour on
 * 2 cores, for the figures that get quoted; the redis part, with today's
 * build beside the working tree on one server and on a Cluster, is half of
 * it) or `--quick` (about 10 minutes, for checking that every line still
 * runs and roughly where it lands). Environment variables override single figures (see README of the
 * bench in bench/run.ts).
 */

import { baselineCommit } from './baseline';

/**
 * The parts of a run, in the order they run (BENCH_ONLY names them): what
 * each measures and the child process it runs (bench/run.ts says how). Their
 * sizes in the full and the quick run are the Plan's fields below.
 */
export const PARTS = [
  { name: 'memory', runs: 'memory.ts', measures: 'bytes per entry of each store at 100,000 entries, first, on a quiet server and heap' },
  { name: 'saving', runs: 'saving.ts', measures: "the memory store's saved state (issue 9)" },
  { name: 'script', runs: 'script-cost.ts', measures: 'the sliding-window script alone, no Node-RED, at 1 to 500 pings per call, warm and cold, each build, beside the floor' },
  { name: 'metrics', runs: 'metrics-cost.ts', measures: 'what counting for Prometheus adds to each decision report' },
  { name: 'guards', runs: 'guard-cost.ts, worker.ts', measures: "what issue 29's fleet rules cost: every one on against all off, the node and the store alone, on both stores" },
  { name: 'latency', runs: 'paced.ts', measures: 'the core filter node and the memory store at steady 2,000, 20,000 and 50,000 msg/s' },
  {
    name: 'redis',
    runs: 'paced.ts, floor.ts',
    measures:
      "Redis script time and CPU per decision, cold and warm, with the options users turn on, paced and flat out, on one server and on a 3-primary Cluster, for today's build and the working tree, beside the floor (one GET and one SET per decision, batched the same way)",
  },
  { name: 'fleet', runs: 'fleet.ts', measures: '1,000 to 1,000,000 assets' },
  { name: 'horizontal', runs: 'horizontal.ts', measures: '1 and 2 Node-RED processes on one server and on a 3-primary Cluster' },
  { name: 'tune', runs: 'tune.ts', measures: 'the dedup-tune grid line' },
  { name: 'profile', runs: 'worker.ts', measures: "where Node-RED's main thread spends a message: one profiled trial each of the filter and the sliding-window node on both stores" },
  {
    name: 'rounds',
    runs: 'worker.ts, eval-load.ts',
    measures: 'the throughput lines and what redis-server alone serves, in rounds until the time budget is spent; each line whose target is a ratio to the core filter node sits between two filter trials',
  },
] as const;

export type Section = (typeof PARTS)[number]['name'];

export const SECTIONS: readonly Section[] = PARTS.map((p) => p.name);

export interface ServerRun {
  id: '6a' | '6b';
  label: string;
  pingsPerCall: number;
  pipeline: number;
  calls: number;
}

/** A line of the Redis part and the phases it runs: its paced rates (warm and cold each) and its flat-out cases. */
export interface RedisCostLine {
  line: 'sw-redis' | 'sw-redis-fleet' | 'sr-redis' | 'sr-redis-confirm';
  rates: number[];
  bursts: ('warm' | 'cold' | 'outside')[];
}

export interface RedisCostPlan {
  lines: RedisCostLine[];
  /** Recorded seconds per paced phase, after settleSeconds unrecorded. */
  seconds: number;
  settleSeconds: number;
  /** Messages per flat-out phase (the outside case: 200,000 pings of 10,000 vehicles, as that run). */
  burstUnits: number;
  /** The warm fleet: 10,000 vehicles (issue 31's municipal fleet, 2,000 msg/s at a ping every 5 s), or sensors. */
  assets: number;
  primeRate: number;
  /** Where: one server, and a Cluster of this many primaries (0: none). */
  clusterPrimaries: number;
  /** BENCH_LINGER_MS: the working tree's linger instead of its default (for tuning it). */
  lingerMs: number | undefined;
  /** The baseline commit (bench/baseline.ts), or undefined for none. */
  baseline: string | undefined;
}

export interface Plan {
  /** The quick run also leaves unused core nodes unloaded (see runtime.ts). */
  quick: boolean;
  sections: readonly Section[];
  /** The whole run; throughput rounds stop starting once the next would end past it. */
  budgetMs: number;
  rounds: number;
  /** Messages (or readings) per timed throughput trial. */
  units: number;
  warmups: number;
  warmupUnits: number;
  /** Sensors in the sensor lines: each sends units / 50 / devices bursts, each after the first replaying 10 readings. */
  devices: number;
  memoryRepeats: number;
  /** How long Redis is left to finish rehashing before used_memory is read. */
  redisSettleMs: number;
  /** Entries of each kind the Redis stores' memory is measured at (BENCH_MEMORY_ENTRIES; issue 31's goal is at 1,000,000). */
  redisMemoryEntries: number;
  serverRuns: ServerRun[];
  /** Pings timed at each call size of the script-alone part (script-cost.ts). */
  scriptPings: number;
  scriptRepeats: number;
  /** A variant of the sliding-window script to time in the script part instead, for profiling. */
  scriptLua: string | undefined;
  /** Reports timed per on/off timing of the metrics part (metrics-cost.ts). */
  metricsMessages: number;
  /** The guards part (guard-cost.ts): pings per timing of the store alone, and its node trials. */
  guards: { pings: number; node: { units: number; warmups: number; warmupUnits: number; pairs: number } };
  /** The latency part: the filter and the memory store at steady rates, after a prime of `assets` messages at primeRate. */
  paced: { rates: number[]; seconds: number; settleSeconds: number; assets: number; primeRate: number };
  /** The Redis part (issue 31): see RedisCostPlan. */
  redis: RedisCostPlan;
  /** batches: how many times the timed pings are sent, for a median and a range (fleet.ts). */
  fleet: { sizes: number[]; units: number; batches: number; warmupUnits: number };
  horizontal: { processes: number[]; units: number; warmups: number; warmupUnits: number; primaries: number };
  saving: { repeats: number; entries: number; admissionsPerSecond: number; saveEverySeconds: number; simulatedSeconds: number };
  tuneTimeoutMs: number;
}

function numberFrom(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw.trim() === '') return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value <= 0) throw new Error(`${name} must be a positive number, not ${JSON.stringify(raw)}`);
  return value;
}

function sectionsFrom(raw: string | undefined): readonly Section[] {
  if (raw === undefined || raw.trim() === '') return SECTIONS;
  const wanted = raw.split(',').map((s) => s.trim()).filter((s) => s !== '');
  for (const s of wanted) {
    if (!SECTIONS.includes(s as Section)) throw new Error(`BENCH_ONLY: unknown section ${JSON.stringify(s)} (known: ${SECTIONS.join(', ')})`);
  }
  return SECTIONS.filter((s) => wanted.includes(s));
}

/**
 * The redis part's lines, narrowed for working on one of them:
 * BENCH_COST_LINES (lines), BENCH_COST_RATES (paced rates),
 * BENCH_COST_FLAT=0 (no flat-out phases) and BENCH_COST_CLUSTER=0 (one
 * server only).
 */
function narrowed(lines: RedisCostLine[]): RedisCostLine[] {
  const only = (process.env.BENCH_COST_LINES ?? '').split(',').map((s) => s.trim()).filter((s) => s !== '');
  const rates = (process.env.BENCH_COST_RATES ?? '').split(',').map((s) => s.trim()).filter((s) => s !== '').map(Number);
  if (rates.some((r) => !Number.isFinite(r) || r <= 0)) throw new Error(`BENCH_COST_RATES must list rates, not ${JSON.stringify(process.env.BENCH_COST_RATES)}`);
  return lines
    .filter((l) => only.length === 0 || only.includes(l.line))
    .map((l) => (rates.length === 0 ? l : { ...l, rates }))
    .map((l) => (process.env.BENCH_COST_FLAT === '0' ? { ...l, bursts: [] } : l));
}

export function planFrom(argv: readonly string[]): Plan {
  const unknown = argv.filter((a) => a !== '--quick');
  if (unknown.length > 0) throw new Error(`unknown arguments ${unknown.join(' ')} (the only one is --quick)`);
  const quick = argv.includes('--quick');
  const units = numberFrom('BENCH_N', quick ? 30_000 : 200_000);
  return {
    quick,
    sections: sectionsFrom(process.env.BENCH_ONLY),
    budgetMs: numberFrom('BENCH_BUDGET_S', quick ? 600 : 3600) * 1000,
    rounds: numberFrom('BENCH_ROUNDS', quick ? 1 : 5),
    units,
    warmups: quick ? 1 : 2,
    warmupUnits: quick ? 10_000 : 50_000,
    // Four bursts per sensor either way, so that the quick run has replays too.
    devices: Math.max(1, Math.round(units / 50 / 4)),
    memoryRepeats: quick ? 1 : 2,
    redisSettleMs: quick ? 300 : 1000,
    redisMemoryEntries: numberFrom('BENCH_MEMORY_ENTRIES', 100_000),
    serverRuns: [
      { id: '6a', label: 'redis-server alone: EVALSHA, 1 ping per call, pipeline 64, 4 connections', pingsPerCall: 1, pipeline: 64, calls: quick ? 30_000 : 200_000 },
      { id: '6b', label: 'redis-server alone: EVALSHA, 500 pings per call, 4 connections', pingsPerCall: 500, pipeline: 1, calls: quick ? 150 : 1_000 },
    ],
    scriptPings: numberFrom('SCRIPT_COST_PINGS', quick ? 50_000 : 200_000),
    scriptRepeats: numberFrom('SCRIPT_COST_REPEATS', 3),
    scriptLua: process.env.SCRIPT_COST_LUA || undefined,
    metricsMessages: quick ? 200_000 : 1_000_000,
    guards: { pings: quick ? 50_000 : 200_000, node: { units: quick ? 30_000 : 200_000, warmups: quick ? 1 : 2, warmupUnits: quick ? 10_000 : 50_000, pairs: quick ? 2 : 5 } },
    paced: {
      rates: [2_000, 20_000, 50_000],
      seconds: numberFrom('BENCH_LATENCY_S', quick ? 1.5 : 20),
      settleSeconds: quick ? 0.3 : 2,
      assets: 10_000,
      primeRate: 20_000,
    },
    redis: {
      lines: narrowed(quick
        ? [
            { line: 'sw-redis', rates: [2_000, 50_000], bursts: ['warm', 'cold', 'outside'] },
            { line: 'sr-redis-confirm', rates: [2_000], bursts: ['warm', 'cold'] },
          ]
        : [
            { line: 'sw-redis', rates: [2_000, 20_000, 50_000], bursts: ['warm', 'cold', 'outside'] },
            { line: 'sw-redis-fleet', rates: [2_000], bursts: ['warm', 'cold'] },
            { line: 'sr-redis', rates: [2_000], bursts: ['warm', 'cold'] },
            { line: 'sr-redis-confirm', rates: [2_000], bursts: ['warm', 'cold'] },
          ]),
      seconds: numberFrom('BENCH_COST_S', quick ? 1.5 : 8),
      settleSeconds: quick ? 0.3 : 1,
      burstUnits: quick ? 30_000 : 200_000,
      assets: 10_000,
      primeRate: 20_000,
      clusterPrimaries: process.env.BENCH_COST_CLUSTER === '0' ? 0 : 3,
      lingerMs: process.env.BENCH_LINGER_MS === undefined || process.env.BENCH_LINGER_MS === '' ? undefined : Number(process.env.BENCH_LINGER_MS),
      baseline: baselineCommit(),
    },
    fleet: { sizes: quick ? [1_000, 100_000] : [1_000, 100_000, 1_000_000], units: quick ? 30_000 : 200_000, batches: 3, warmupUnits: quick ? 10_000 : 20_000 },
    horizontal: { processes: [1, 2], units: quick ? 30_000 : 200_000, warmups: 1, warmupUnits: quick ? 10_000 : 50_000, primaries: 3 },
    saving: { repeats: quick ? 1 : 3, entries: 100_000, admissionsPerSecond: 100, saveEverySeconds: 10, simulatedSeconds: quick ? 5_400 : 10_800 },
    tuneTimeoutMs: quick ? 60_000 : 300_000,
  };
}
