/**
 * What the fleet rules of issue 29 (the no-fix guard with a validity field,
 * Min satellites, Max HDOP, the accuracy rule and the jump guard) cost on
 * the hot path: the same pings read (readPing) and decided by the same
 * store, once by a rule with every one of them on and once with all of them
 * off, alternating in one run so that both see the same machine. The goal
 * is a throughput with the guards on within 10 % of the one without.
 *
 * Two measures, each on the memory and the Redis store:
 *
 * - THE NODE: the throughput lines sw-memory / sw-memory-guards and
 *   sw-redis / sw-redis-guards of bench/flows.ts, a real Node-RED runtime
 *   each (bench/worker.ts), in pairs whose order alternates; the ratio is
 *   taken pair by pair. This is the goal's measure: what a flow gets.
 * - THE STORE ALONE: reading (readPing) and deciding the same pings, with
 *   no Node-RED around them, alternating in this process. Routing a message
 *   costs several times a memory decision, so this is the stricter figure:
 *   the rules' own cost, undiluted. Here one ping in 100 has no fix (0,0)
 *   and one in 100 leaps 50 km, so the guards' own reasons are taken too;
 *   the rest are the node trials' pings (bench/data.ts: half parked, half
 *   driving, 10 s apart, one fix in 50 too poor). The pings carry every field the guards read in both runs, so
 *   the difference is the reading and judging of them, and the candidate
 *   the jump guard keeps. Its Redis side fires every ping of a run at once
 *   through one store and waits for every answer; the server CPU per
 *   decision is INFO cpu's difference over the run.
 *
 * The part `guards` of npm run bench (BENCH_ONLY=guards), its lines in
 * bench/results.md; alone (after npm run build: the node trials load
 * nodes/):
 *
 *   node --expose-gc --require tsx/cjs bench/guard-cost.ts [pings] [node trial messages]
 */
import Redis from 'ioredis';
import { readPing, type PingReadRule, type RawPing } from '../src/core/window/ping';
import type { Ping } from '../src/core/window/sliding-window';
import { defineDedupScripts } from '../src/redis/scripts';
import { MemoryWindowStore, type MemoryWindowSettings } from '../src/stores/memory-window-store';
import { RedisWindowStore } from '../src/stores/redis-window-store';
import type { Replies, WindowOutcome } from '../src/stores/types';
import { runChild } from './children';
import { pingMessage, PING_EPOCH_MS } from './data';
import type { LineId } from './flows';
import { startOwnRedis } from './redis';
import { answerParent, drive, gc, redisCpuSeconds } from './runtime';
import { median } from './stats';
import type { TrialJob, TrialResult } from './worker';

export interface GuardCostJob {
  /** Pings per timing of the store alone. */
  pings: number;
  /** Whether to time the Redis store too (it needs a redis-server). */
  redis: boolean;
  /** The node trials: messages per timed run, warm-up runs and their size; absent: the store alone only. */
  node?: { units: number; warmups: number; warmupUnits: number; pairs: number };
}

/** Node trials of one store: rates of each pair, guards off then on. */
export interface GuardNodePairs {
  off: number[];
  on: number[];
}

export interface GuardCostSide {
  /** Pings per second, median of the rounds. */
  off: number;
  on: number;
  /** Redis only: server CPU per decision, µs, median of the rounds. */
  cpuOff?: number;
  cpuOn?: number;
}

export interface GuardCostResult {
  pings: number;
  rounds: number;
  memory: GuardCostSide;
  redis?: GuardCostSide;
  /** The node trials, by store. */
  node?: { memory: GuardNodePairs; redis?: GuardNodePairs; units: number };
  /** The reasons the guarded rule gave in its last memory run, to show that the guards were taken. */
  reasons: Record<string, number>;
}

const ROUNDS = 7;
const ASSETS = 1_000;

const OFF: MemoryWindowSettings = { minSeconds: 60, minMetres: 25, ttlSeconds: 21_600, maxAssets: 100_000, noFix: false };
const ON: MemoryWindowSettings = {
  ...OFF,
  noFix: true,
  minSatellites: 4,
  maxHdop: 2,
  maxSpeedKmh: 150,
};
/** What reading a ping applies of each rule: the accuracy is read by both (a rule of long standing), the fix's fields by ON only. */
const READ_OFF: PingReadRule = { mode: 'position', noFix: false };
const READ_ON: PingReadRule = { mode: 'position', noFix: true, minSatellites: 4, maxHdop: 2 };

/** Ping i of the bench's fleet (bench/data.ts), as the fields a node would have found in its message, with the bad fixes and leaps above. */
function rawPing(i: number): RawPing {
  const { payload } = pingMessage(i, ASSETS, 'van-');
  // By asset and step, so that each asset has its bad fixes and its leaps now and then, not always.
  const odd = ((i % ASSETS) + Math.floor(i / ASSETS)) % 100;
  const noFix = odd === 37;
  return {
    assetId: payload.assetId,
    time: payload.ts,
    lat: noFix ? 0 : odd === 71 ? payload.lat + 0.45 : payload.lat,
    lon: noFix ? 0 : payload.lon,
    accuracy: payload.accuracy,
    valid: noFix ? 'V' : payload.valid,
    satellites: payload.sats,
    hdop: payload.hdop,
  };
}

function rawPings(n: number): RawPing[] {
  const out = new Array<RawPing>(n);
  for (let i = 0; i < n; i++) out[i] = rawPing(i);
  return out;
}

function read(raw: RawPing, rule: PingReadRule): Ping {
  const result = readPing(raw, rule);
  if (!result.ok) throw new Error(`the bench's ping ${JSON.stringify(raw)} is unreadable: ${result.problem}`);
  return result.ping;
}

/** µs per ping of reading and deciding every ping on a fresh memory store; counts the reasons into `reasons` when given. */
function timeMemory(raws: readonly RawPing[], settings: MemoryWindowSettings, readRule: PingReadRule, reasons?: Record<string, number>): number {
  const store = new MemoryWindowStore(settings, () => PING_EPOCH_MS);
  const replies: Replies<WindowOutcome, undefined> = {
    value: reasons === undefined ? () => undefined : (outcome) => void (reasons[outcome.reason] = (reasons[outcome.reason] ?? 0) + 1),
    error: (error) => {
      throw error;
    },
  };
  const start = process.hrtime.bigint();
  for (let i = 0; i < raws.length; i++) store.decide(read(raws[i] as RawPing, readRule), replies, undefined);
  return Number(process.hrtime.bigint() - start) / 1000 / raws.length;
}

function measureMemory(raws: readonly RawPing[], reasons: Record<string, number>): GuardCostSide {
  // Warm up both paths so that neither is timed while being optimised.
  for (const on of [true, false, true, false]) timeMemory(raws.slice(0, raws.length / 4), on ? ON : OFF, on ? READ_ON : READ_OFF);
  const off: number[] = [];
  const on: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    for (const guarded of round % 2 === 0 ? [true, false] : [false, true]) {
      gc();
      (guarded ? on : off).push(timeMemory(raws, guarded ? ON : OFF, guarded ? READ_ON : READ_OFF, guarded && round === ROUNDS - 1 ? reasons : undefined));
    }
  }
  return { off: 1e6 / median(off), on: 1e6 / median(on) };
}

/** Seconds and server CPU seconds of reading and deciding every ping on a fresh Redis store. */
async function timeRedis(client: Redis, admin: Redis, raws: readonly RawPing[], settings: MemoryWindowSettings, readRule: PingReadRule, prefix: string): Promise<{ seconds: number; cpu: number }> {
  const store = new RedisWindowStore(client, settings, { keyPrefix: prefix, cluster: false, timeoutMs: 30_000 }, () => PING_EPOCH_MS);
  const cpuBefore = await redisCpuSeconds(admin);
  const start = process.hrtime.bigint();
  await drive(raws, 20_000, (raw, replies) => store.decide(read(raw, readRule), replies, undefined));
  const seconds = Number(process.hrtime.bigint() - start) / 1e9;
  const cpu = (await redisCpuSeconds(admin)) - cpuBefore;
  return { seconds, cpu };
}

async function measureRedis(raws: readonly RawPing[]): Promise<GuardCostSide> {
  const own = await startOwnRedis();
  const client = new Redis({ host: '127.0.0.1', port: own.port, maxRetriesPerRequest: 1 });
  const admin = new Redis({ host: '127.0.0.1', port: own.port });
  defineDedupScripts(client);
  try {
    const secondsOff: number[] = [];
    const secondsOn: number[] = [];
    const cpuOff: number[] = [];
    const cpuOn: number[] = [];
    let run = 0;
    for (let round = -1; round < ROUNDS; round++) {
      for (const guarded of round % 2 === 0 ? [true, false] : [false, true]) {
        await admin.flushall();
        gc();
        const timed = await timeRedis(client, admin, raws, guarded ? ON : OFF, guarded ? READ_ON : READ_OFF, `guards-${run++}:`);
        if (round < 0) continue; // the warm-up round
        (guarded ? secondsOn : secondsOff).push(timed.seconds);
        (guarded ? cpuOn : cpuOff).push(timed.cpu);
      }
    }
    const perDecision = (cpu: number[]): number => (median(cpu) * 1e6) / raws.length;
    return { off: raws.length / median(secondsOff), on: raws.length / median(secondsOn), cpuOff: perDecision(cpuOff), cpuOn: perDecision(cpuOn) };
  } finally {
    client.disconnect();
    admin.disconnect();
    await own.stop();
  }
}

/** Node trials of a pair of lines, in pairs whose order alternates. */
async function nodePairs(off: LineId, on: LineId, port: number, node: NonNullable<GuardCostJob['node']>): Promise<GuardNodePairs> {
  const pairs: GuardNodePairs = { off: [], on: [] };
  for (let pair = 0; pair < node.pairs; pair++) {
    for (const line of pair % 2 === 0 ? [on, off] : [off, on]) {
      const job: TrialJob = { line, redis: { mode: 'standalone', port }, units: node.units, assets: 1000, devices: 1000, warmups: node.warmups, warmupUnits: node.warmupUnits };
      const result = await runChild<TrialResult>('worker.ts', job);
      (line === on ? pairs.on : pairs.off).push(result.perSecond);
    }
  }
  return pairs;
}

async function measureNode(node: NonNullable<GuardCostJob['node']>, redis: boolean): Promise<NonNullable<GuardCostResult['node']>> {
  const own = redis ? await startOwnRedis() : undefined;
  try {
    const memory = await nodePairs('sw-memory', 'sw-memory-guards', own?.port ?? 0, node);
    const onRedis = own ? await nodePairs('sw-redis', 'sw-redis-guards', own.port, node) : undefined;
    return { memory, ...(onRedis ? { redis: onRedis } : {}), units: node.units };
  } finally {
    await own?.stop();
  }
}

export async function guardCost(job: GuardCostJob): Promise<GuardCostResult> {
  const nodeTrials = job.node ? await measureNode(job.node, job.redis) : undefined;
  const raws = rawPings(job.pings);
  const reasons: Record<string, number> = {};
  const memory = measureMemory(raws, reasons);
  const redis = job.redis ? await measureRedis(raws) : undefined;
  return { pings: job.pings, rounds: ROUNDS, memory, ...(redis ? { redis } : {}), ...(nodeTrials ? { node: nodeTrials } : {}), reasons };
}

const rate = (perSecond: number): string => `${Math.round(perSecond).toLocaleString('en')}/s`;
const share = (on: number, off: number): string => `${((on / off) * 100).toFixed(1)} %`;

/** A node line: the medians, and the median and range of the pairs' ratios. */
function nodeLine(label: string, pairs: GuardNodePairs): string {
  const ratios = pairs.on.map((on, i) => on / (pairs.off[i] ?? Number.NaN));
  const pct = (x: number): string => `${(x * 100).toFixed(1)} %`;
  return `${label} guards off ${rate(median(pairs.off))}   every guard on ${rate(median(pairs.on))}   on/off ${pct(median(ratios))} (pairs ${pct(Math.min(...ratios))} to ${pct(Math.max(...ratios))})`;
}

/** What the part prints, alone and in bench/results.md. */
export function guardCostLines(r: GuardCostResult): string[] {
  const lines: string[] = [];
  if (r.node) {
    lines.push(`the node (goal: on within 10 % of off): ${r.node.units.toLocaleString('en')} messages per trial, ${r.node.memory.on.length} pairs per store, alternating order`);
    lines.push(nodeLine('memory store  ', r.node.memory));
    if (r.node.redis) lines.push(nodeLine('Redis store   ', r.node.redis));
  }
  lines.push(
    `the store alone: ${r.pings.toLocaleString('en')} pings of ${ASSETS.toLocaleString('en')} assets read and decided per timing, median of ${r.rounds}, alternating on/off`,
    `memory store   guards off ${rate(r.memory.off)}   every guard on ${rate(r.memory.on)}   on/off ${share(r.memory.on, r.memory.off)}`,
  );
  if (r.redis) {
    const cpu = r.redis.cpuOff !== undefined && r.redis.cpuOn !== undefined ? `   Redis CPU per decision ${r.redis.cpuOff.toFixed(2)} / ${r.redis.cpuOn.toFixed(2)} µs` : '';
    lines.push(`Redis store    guards off ${rate(r.redis.off)}   every guard on ${rate(r.redis.on)}   on/off ${share(r.redis.on, r.redis.off)}${cpu}`);
  }
  const reasons = Object.entries(r.reasons)
    .sort((a, b) => b[1] - a[1])
    .map(([reason, count]) => `${reason} ${count.toLocaleString('en')}`)
    .join(', ');
  lines.push(`reasons with every guard on (memory, one run): ${reasons}`);
  return lines;
}

if (require.main === module) {
  const arg = process.argv[2] ?? '200000';
  const units = Number(process.argv[3] ?? '100000');
  if (arg.startsWith('{')) answerParent(guardCost(JSON.parse(arg) as GuardCostJob));
  else
    guardCost({ pings: Number(arg), redis: true, node: { units, warmups: 2, warmupUnits: Math.min(units, 20_000), pairs: 5 } }).then(
      (result) => console.log(guardCostLines(result).join('\n')),
      (error: unknown) => {
        console.error(error);
        process.exitCode = 1;
      },
    );
}
