/**
 * One run's measurements (RunData) and the readings of them that the
 * results, the sizing guide and issue 20's figures all take: medians of CPU
 * per unit, ratios to the filter line, a latency phase, the machine. Below
 * report.ts, sizing.ts and issue20.ts, which import it and not each other.
 */
import { cpus, release, totalmem, type as osType } from 'os';
import { readFileSync } from 'fs';
import type { EvalLoadResult } from './eval-load';
import type { FleetResult } from './fleet';
import type { LineId } from './flows';
import type { HorizontalResult } from './horizontal';
import type { RedisMemory } from './memory';
import type { GuardCostResult } from './guard-cost';
import type { MetricsCostResult } from './metrics-cost';
import type { BenchBuild } from './baseline';
import type { FloorPhase } from './floor';
import type { Case, PacedLine, PacedPhase, PacedResult } from './paced';
import type { Plan, RedisCostLine } from './plan';
import { ROOT } from './runtime';
import type { SavingResult } from './saving';
import type { ScriptCostResult } from './script-cost';
import type { ProfileSummary } from './profile';
import { median } from './stats';
import type { TrialResult } from './worker';

/** bench/figures.json: issue 20's figures of the run before, kept for the next run to compare with. */
export interface FiguresFile {
  commit: string;
  /** ISO date of the run. */
  date: string;
  machine: string;
  /** What the run was: `npm run bench`, `--quick`, the parts. */
  run: string;
  figures: Record<string, number>;
}

/** A line of the rounds: a line of bench/flows.ts, on the working tree, or on the baseline commit's build (`@today`). */
export type RoundLine = LineId | 'sw-memory@today' | 'sw-redis@today';

/** One line of the Redis part (issue 31) on one build and target: its phases, and the floor of each. */
export interface RedisCostRun {
  target: 'server' | 'cluster';
  line: RedisCostLine['line'];
  build: BenchBuild['id'];
  label: string;
  phases: PacedPhase[];
  /** One per phase: the floor replayed with the same calls (bench/floor.ts); undefined when it failed. */
  floor?: FloorPhase[];
}

export interface Trial {
  round: number;
  /** Position in the whole run, for pairing with the filter trials either side. */
  seq: number;
  result?: TrialResult;
  error?: string;
}

export type TuneOutcome =
  | { status: 'skipped' }
  | { status: 'failed'; seconds: number; text: string }
  | { status: 'ran'; seconds: number; text: string };

export interface RunData {
  plan: Plan;
  commit: string;
  redisVersion: string;
  loadBefore: string;
  loadAfter: string;
  seconds: number;
  trials: Map<RoundLine, Trial[]>;
  /** The builds measured: the working tree, and the baseline commit's when there is one. */
  builds: Pick<BenchBuild, 'id' | 'label'>[];
  filterSeq: { seq: number; rate: number }[];
  server: Map<'6a' | '6b', EvalLoadResult[]>;
  roundsRun: number;
  memory: { window: number[]; seen: number[] };
  redisMemory: RedisMemory[];
  /** The same, through the baseline build's stores (bench/baseline.ts); empty without one. Absent in the data of runs before it. */
  redisMemoryToday?: RedisMemory[];
  saving: SavingResult[];
  paced: PacedResult[];
  /** The Redis part (issue 31). */
  redisCost: RedisCostRun[];
  fleet: FleetResult[];
  horizontal: HorizontalResult[];
  tune: TuneOutcome;
  /** The script alone (script-cost.ts); undefined when not run. */
  script: ScriptCostResult | undefined;
  /** Where Node-RED's main thread spends a message (profile.ts); empty when not run. */
  profile: ProfileSummary[];
  /** What counting for Prometheus adds (metrics-cost.ts); undefined when not run. */
  metrics: MetricsCostResult | undefined;
  /** What the fleet rules cost (guard-cost.ts); undefined when not run. */
  guards: GuardCostResult | undefined;
  /** The figures of the run before (bench/figures.json), for issue 20's table. */
  previousFigures: FiguresFile | undefined;
  /** Parts that failed as a whole (a trial's failure is kept with the trial). */
  failures: string[];
}

function versionOf(pkg: string): string {
  try {
    return (JSON.parse(readFileSync(require.resolve(`${pkg}/package.json`, { paths: [ROOT] }), 'utf8')) as { version: string }).version;
  } catch {
    return '?';
  }
}

export function machine(): string {
  const cpu = cpus();
  return `${cpu[0]?.model.trim() ?? '?'}, ${cpu.length} cores, ${(totalmem() / 2 ** 30).toFixed(0)} GiB, ${osType()} ${release()}`;
}

export function versions(redisVersion: string): string {
  return `Node.js ${process.versions.node}, Node-RED ${versionOf('node-red')}, Redis ${redisVersion} (loopback, private), ioredis ${versionOf('ioredis')}`;
}

export function rates(trials: readonly Trial[] | undefined): number[] {
  return (trials ?? []).flatMap((t) => (t.result ? [t.result.perSecond] : []));
}

export function okResults(trials: readonly Trial[] | undefined): TrialResult[] {
  return (trials ?? []).flatMap((t) => (t.result ? [t.result] : []));
}

/** Median CPU µs per unit of the trials of a line: Node-RED's, or redis-server's. */
export function cpuPerUnit(trials: readonly Trial[] | undefined, side: 'node' | 'redis'): number {
  return median(
    okResults(trials).flatMap((t) => {
      const ms = side === 'node' ? t.nodeCpuMs : t.redisCpuMs;
      return ms === undefined ? [] : [(ms * 1000) / t.units];
    }),
  );
}

/** Each trial against the mean of the filter trials just before and just after it. */
export function ratiosToFilter(trials: readonly Trial[] | undefined, filterSeq: RunData['filterSeq']): number[] {
  const out: number[] = [];
  for (const t of trials ?? []) {
    if (!t.result) continue;
    const before = [...filterSeq].reverse().find((f) => f.seq < t.seq);
    const after = filterSeq.find((f) => f.seq > t.seq);
    const sides = [before, after].filter((f): f is { seq: number; rate: number } => f !== undefined);
    if (sides.length > 0) out.push(t.result.perSecond / (sides.reduce((s, f) => s + f.rate, 0) / sides.length));
  }
  return out;
}

/** a[i] / b[i] for the trials of the same round. */
export function ratiosByRound(a: readonly Trial[] | undefined, b: readonly Trial[] | undefined): number[] {
  const out: number[] = [];
  for (const t of a ?? []) {
    const other = (b ?? []).find((u) => u.round === t.round);
    if (t.result && other?.result) out.push(t.result.perSecond / other.result.perSecond);
  }
  return out;
}

/** A paced phase at `rate` of the latency part's lines, or, for the Redis store, of the Redis part's warm fleet (the working tree). */
export function pacedPhase(data: RunData, line: PacedLine, rate: number, target: 'server' | 'cluster' = 'server'): PacedPhase | undefined {
  if (line === 'sw-redis') return costPhase(data, { target, line, build: 'new', kind: 'paced', case: 'warm', rate })?.phase;
  return data.paced.find((p) => p.line === line && p.target === target)?.phases.find((p) => p.kind === 'paced' && p.rate === rate);
}

export interface CostQuery {
  target: 'server' | 'cluster';
  line: RedisCostLine['line'];
  build: BenchBuild['id'];
  kind: 'paced' | 'burst';
  case: Case;
  /** Paced phases: the rate. */
  rate?: number;
}

/** A phase of the Redis part, with its floor. */
export function costPhase(data: RunData, q: CostQuery): { phase: PacedPhase; floor: FloorPhase | undefined } | undefined {
  const run = data.redisCost.find((r) => r.target === q.target && r.line === q.line && r.build === q.build);
  if (run === undefined) return undefined;
  const index = run.phases.findIndex((p) => p.kind === q.kind && p.case === q.case && (q.kind === 'burst' || p.rate === q.rate));
  const phase = run.phases[index];
  return phase === undefined ? undefined : { phase, floor: run.floor?.[index] };
}
