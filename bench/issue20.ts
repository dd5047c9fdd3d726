/**
 * Issue 20's table: each figure it sets a target for, from this run's
 * parts, beside the run before's (bench/figures.json, which each run that
 * measured anything rewrites) and the target. A figure whose part was not
 * run is "not run", and the previous one stays in figures.json for the next
 * run to show.
 */
import { existsSync, readFileSync, writeFileSync } from 'fs';
import os from 'os';
import { join } from 'path';
import * as figures from './figures';
import type { FiguresFile, RunData } from './figures';
import { PLACES, type ProfileSummary } from './profile';
import { markdownTable, median } from './stats';


interface Figure {
  id: string;
  label: string;
  unit: string;
  /** `<= 4`: at most; `>= 0.8`: at least. */
  target: { op: '<=' | '>='; value: number };
  value: (data: RunData) => number;
}

const FILE = join(__dirname, 'figures.json');

function scriptUsPerUnit(data: RunData): number {
  return median(figures.okResults(data.trials.get('sw-redis')).flatMap((t) => (t.scriptMs === undefined ? [] : [(t.scriptMs * 1000) / t.units])));
}

/** The working tree's script alone on warm vehicles (script-cost.ts). */
function scriptRow(data: RunData, pingsPerCall: number, build: 'new' | 'floor' = 'new'): { script: number; cpu: number } {
  const row = data.script?.rows.find((r) => r.build === build && r.case === 'warm' && r.pingsPerCall === pingsPerCall);
  return row ? { script: row.scriptUsPerCall / pingsPerCall, cpu: row.cpuUsPerCall / pingsPerCall } : { script: Number.NaN, cpu: Number.NaN };
}

function cpuFit(data: RunData, build: 'new' | 'floor' = 'new'): { fixedUs: number; perPingUs: number } | undefined {
  return data.script?.fits[`${build}:warm`]?.cpu;
}

function p99(data: RunData, line: 'filter' | 'sw-memory' | 'sw-redis', rate: number): number {
  return figures.pacedPhase(data, line, rate)?.latency?.p99 ?? Number.NaN;
}

const FIGURES: Figure[] = [
  { id: 'scriptUsPerDecision', label: 'Redis script time per decision, flat out (throughput line 3, INFO commandstats)', unit: 'µs', target: { op: '<=', value: 4 }, value: scriptUsPerUnit },
  { id: 'scriptAloneUs500', label: 'the same, script alone at 500 pings per call, every rule on', unit: 'µs', target: { op: '<=', value: 4 }, value: (d) => scriptRow(d, 500).script },
  { id: 'redisCpuPerDecision', label: 'Redis CPU per decision, flat out (throughput line 3, INFO cpu)', unit: 'µs', target: { op: '<=', value: 5 }, value: (d) => figures.cpuPerUnit(d.trials.get('sw-redis'), 'redis') },
  { id: 'scriptAloneCpu500', label: 'the same, script alone at 500 pings per call, every rule on', unit: 'µs', target: { op: '<=', value: 5 }, value: (d) => scriptRow(d, 500).cpu },
  { id: 'fixedCpuPerCall', label: 'Redis fixed cost per call (script alone: CPU, 1- against 500-ping calls)', unit: 'µs', target: { op: '<=', value: 8 }, value: (d) => cpuFit(d)?.fixedUs ?? Number.NaN },
  {
    id: 'nodeCpuOverFilter',
    label: "Node-RED CPU per decision, Redis store, minus the filter's",
    unit: 'µs',
    target: { op: '<=', value: 2 },
    value: (d) => figures.cpuPerUnit(d.trials.get('sw-redis'), 'node') - figures.cpuPerUnit(d.trials.get('filter'), 'node'),
  },
  { id: 'redisOverFilter', label: 'project bench: Redis store / filter', unit: 'x', target: { op: '>=', value: 0.8 }, value: (d) => median(figures.ratiosToFilter(d.trials.get('sw-redis'), d.filterSeq)) },
  { id: 'sensorRedisOverMemory', label: 'sensor node: Redis / memory readings per second', unit: 'x', target: { op: '>=', value: 0.8 }, value: (d) => median(figures.ratiosByRound(d.trials.get('sr-redis'), d.trials.get('sr-memory'))) },
  { id: 'pacedRedisP99at20k', label: 'paced p99, Redis store, 20,000 msg/s', unit: 'ms', target: { op: '<=', value: 5 }, value: (d) => p99(d, 'sw-redis', 20_000) },
  { id: 'pacedRedisP99at50k', label: 'paced p99, Redis store, 50,000 msg/s', unit: 'ms', target: { op: '<=', value: 20 }, value: (d) => p99(d, 'sw-redis', 50_000) },
  ...[2_000, 20_000, 50_000].map((rate): Figure => ({
    id: `pacedMemoryOverFilterAt${rate / 1000}k`,
    label: `paced p99, memory store minus filter, ${rate.toLocaleString('en-US')} msg/s`,
    unit: 'ms',
    target: { op: '<=', value: 1 },
    value: (d) => p99(d, 'sw-memory', rate) - p99(d, 'filter', rate),
  })),
];

export function readPreviousFigures(): FiguresFile | undefined {
  if (!existsSync(FILE)) return undefined;
  try {
    return JSON.parse(readFileSync(FILE, 'utf8')) as FiguresFile;
  } catch {
    return undefined;
  }
}

function show(value: number | undefined, unit: string): string {
  if (value === undefined || !Number.isFinite(value)) return '–';
  // Three decimals: a ratio of 0.797 against a target of 0.8 must not read as 0.80x.
  if (unit === 'x') return `${value.toFixed(3)}x`;
  return `${value.toFixed(Math.abs(value) >= 100 ? 0 : Math.abs(value) >= 10 ? 1 : 2)} ${unit}`;
}

function measured(data: RunData): Record<string, number> {
  const out: Record<string, number> = {};
  for (const f of FIGURES) {
    const v = f.value(data);
    if (Number.isFinite(v)) out[f.id] = v;
  }
  return out;
}

export function issue20Section(data: RunData, previous: FiguresFile | undefined): string[] {
  const now = measured(data);
  const rows = FIGURES.map((f) => {
    const v = now[f.id];
    const met = v === undefined ? 'not run' : (f.target.op === '<=' ? v <= f.target.value : v >= f.target.value) ? 'met' : 'MISSED';
    return [f.label, show(v, f.unit), show(previous?.figures[f.id], f.unit), `${f.target.op} ${show(f.target.value, f.unit)}`, met];
  });
  const before = previous ? `the run before: ${previous.run}, commit ${previous.commit}, ${previous.date}, ${previous.machine}` : 'no run before recorded (bench/figures.json)';
  return [
    "## Issue 20's figures",
    '',
    `This run: ${figures.machine()}, commit ${data.commit}; ${before}. CPU per decision is what carries across machines; on a busy machine every figure is higher, CPU less so than time.`,
    '',
    markdownTable(['figure', 'this run', 'run before', 'target', ''], rows),
    '',
    ...inTheWay(data, now),
  ];
}

/** The profile part's summaries of the sliding-window node on each store; undefined when either was not profiled. */
function storeProfiles(data: RunData): { redis: ProfileSummary; memory: ProfileSummary } | undefined {
  const redis = data.profile.find((p) => p.line === 'sw-redis');
  const memory = data.profile.find((p) => p.line === 'sw-memory');
  return redis === undefined || memory === undefined ? undefined : { redis, memory };
}

/** The profile part's split of the Redis store's main-thread cost over the memory store's, as a sentence; '' when not profiled. */
function profiled(data: RunData): string {
  const both = storeProfiles(data);
  if (both === undefined) return '';
  const { redis, memory } = both;
  const diff = PLACES.map((place) => ({ place, us: redis.usPerUnit[place] - memory.usPerUnit[place] })).sort((a, b) => b.us - a.us);
  const total = diff.reduce((sum, d) => sum + d.us, 0);
  const top = diff[0];
  const parts = diff.filter((d) => Math.abs(d.us) >= 0.05).map((d) => `${d.place} ${d.us >= 0 ? '+' : ''}${d.us.toFixed(2)}`);
  return ` Profiled (the main thread, section "Where Node-RED's main thread spends a message"), a message with the Redis store takes ${total >= 0 ? '+' : ''}${total.toFixed(2)} µs over one with the memory store: ${parts.join(', ')} µs. ${top !== undefined && total > 0 && top.us > total / 2 ? `Most of it is ${top.place}.` : 'No one place holds most of it.'}`;
}

/** The garbage collection the profile part charges to the Redis store, for the paced lines' tail; '' when not profiled. */
function gcNote(data: RunData): string {
  const both = storeProfiles(data);
  if (both === undefined) return '';
  const [withRedis, withMemory] = [both.redis.usPerUnit['garbage collection'], both.memory.usPerUnit['garbage collection']];
  const why = withRedis > withMemory ? ': its objects live across the round trip, and every pause holds every message in the process' : ', so in this run garbage collection does not tell the two stores apart';
  return `- **Garbage collection, for the paced lines above.** Profiled flat out, garbage collection took ${withRedis.toFixed(2)} µs of the main thread per Redis-store message against ${withMemory.toFixed(2)} per memory-store one${why}.`;
}

function missed(id: string, now: Record<string, number>): boolean {
  const f = FIGURES.find((x) => x.id === id);
  const v = now[id];
  if (f === undefined || v === undefined) return false;
  return f.target.op === '<=' ? v > f.target.value : v < f.target.value;
}

/**
 * For each target missed, what stands in the way, in this run's own
 * figures: the floor under the script, how the two sides share the cores,
 * where a paced message waits.
 */
function inTheWay(data: RunData, now: Record<string, number>): string[] {
  const us = (x: number): string => `${x.toFixed(2)} µs`;
  const lines: string[] = [];
  const fit = cpuFit(data);
  const floorFit = cpuFit(data, 'floor');
  if (fit && floorFit && (missed('fixedCpuPerCall', now) || missed('scriptUsPerDecision', now))) {
    const floor = floorFit.fixedUs;
    lines.push(
      `- **A call's fixed cost.** The floor, a script that only GETs and SETs each of its keys (bench/floor.ts), costs Redis ${us(floor)} of CPU per call beyond its keys, and ${us(floorFit.perPingUs)} per key; the real script ${us(fit.fixedUs)} per call beyond its pings: ${us(fit.fixedUs - floor)} is the script's own work per call (the epoch's GET, unpacking the rule and the call, its tables), the rest Redis' own for any EVALSHA of this shape. ${floor >= (FIGURES.find((f) => f.id === 'fixedCpuPerCall')?.target.value ?? 8) ? 'The floor alone is over the target, so no change to the script can meet it here; fewer calls can (the tick batcher makes one call per turn, and with its linger one per few turns at a quiet rate: the redis part shows what that does).' : 'The script can come closer to the floor by doing less per call.'} Per ping the script costs ${us(fit.perPingUs)} of CPU alone, at 500 pings per call ${us(scriptRow(data, 500).cpu)} (the floor ${us(scriptRow(data, 500, 'floor').cpu)}).`,
    );
  }
  const node = (line: 'sw-redis' | 'sw-memory' | 'filter' | 'sr-redis' | 'sr-memory'): number => figures.cpuPerUnit(data.trials.get(line), 'node');
  const redisSide = figures.cpuPerUnit(data.trials.get('sw-redis'), 'redis');
  if (missed('redisOverFilter', now) || missed('nodeCpuOverFilter', now)) {
    const [withRedis, memory, filter] = [node('sw-redis'), node('sw-memory'), node('filter')];
    const filterRate = median(figures.rates(data.trials.get('filter')));
    const ceiling = 2 / ((withRedis + redisSide) * 1e-6);
    lines.push(
      `- **Node-RED and Redis on the same cores.** Flat out a decision costs ${us(withRedis)} of Node-RED CPU and ${us(redisSide)} of Redis CPU with the Redis store, ${us(memory)} with the memory store and ${us(filter)} with the filter. The client's part of a Redis decision (packing the call, ioredis, decoding the reply, the message's second turn and the garbage of all of it) is the ${us(withRedis - memory)} over the memory store; the node's own work, common to both stores, the ${us(memory - filter)} of the memory store over the filter. On this machine's ${os.cpus().length} cores, with both sides perfectly overlapped, ${(withRedis + redisSide).toFixed(2)} µs of CPU per decision allow at most ${Math.round(ceiling).toLocaleString('en-US')} decisions a second: ${(ceiling / filterRate).toFixed(2)}x the filter's ${Math.round(filterRate).toLocaleString('en-US')}, before any wait. With Redis on cores of its own the ceiling is Node-RED's side alone.${profiled(data)}`,
    );
  }
  if (missed('sensorRedisOverMemory', now)) {
    lines.push(
      `- **Sensor node.** A reading costs ${us(node('sr-redis'))} of Node-RED CPU and ${us(figures.cpuPerUnit(data.trials.get('sr-redis'), 'redis'))} of Redis CPU with Redis, ${us(node('sr-memory'))} with the memory store: the same cores again carry both sides.`,
    );
  }
  let paced = false;
  for (const rate of [20_000, 50_000]) {
    if (!missed(`pacedRedisP99at${rate / 1000}k`, now)) continue;
    const phase = figures.pacedPhase(data, 'sw-redis', rate);
    if (phase?.batcherWait === undefined || phase.callRoundTrip === undefined) continue;
    const busy = ((phase.nodeCpuUsPerMsg + (phase.redisCpuUsPerMsg ?? 0)) * rate) / 1e6;
    lines.push(
      `- **Paced, ${rate.toLocaleString('en-US')} msg/s.** p99 ${(phase.latency?.p99 ?? Number.NaN).toFixed(1)} ms: a ping waited up to ${phase.batcherWait.p99.toFixed(2)} ms (p99) in the tick batcher and its call's round trip took up to ${phase.callRoundTrip.p99.toFixed(2)} ms (p99), ${(phase.pingsPerCall ?? 0).toFixed(1)} pings per call; the generator itself ran ${(phase.generatorLag?.p99 ?? Number.NaN).toFixed(2)} ms late at p99. Node-RED and Redis together kept ${busy.toFixed(2)} of the ${os.cpus().length} cores busy, with the generator on them too; Node-RED's thread was busy ${(phase.nodeBusy * 100).toFixed(0)} % of the time, and garbage collection paused it ${phase.gcMs.toFixed(0)} ms in all (${phase.gcMaxMs.toFixed(1)} ms at the longest).`,
    );
    paced = true;
  }
  const gc = paced ? gcNote(data) : '';
  if (gc !== '') lines.push(gc);
  for (const rate of [2_000, 20_000, 50_000]) {
    if (!missed(`pacedMemoryOverFilterAt${rate / 1000}k`, now)) continue;
    const [mem, filter] = [figures.pacedPhase(data, 'sw-memory', rate), figures.pacedPhase(data, 'filter', rate)];
    if (mem === undefined || filter === undefined) continue;
    lines.push(
      `- **Memory store, paced ${rate.toLocaleString('en-US')} msg/s.** p99 ${(mem.latency?.p99 ?? Number.NaN).toFixed(2)} ms against the filter's ${(filter.latency?.p99 ?? Number.NaN).toFixed(2)} ms, at ${mem.nodeCpuUsPerMsg.toFixed(1)} and ${filter.nodeCpuUsPerMsg.toFixed(1)} µs of CPU per message; the generator ran ${(mem.generatorLag?.p99 ?? Number.NaN).toFixed(2)} and ${(filter.generatorLag?.p99 ?? Number.NaN).toFixed(2)} ms late at p99 in the two lines: the event loop's own stalls, outside the node, are of the same order as the difference (the run before's difference is in the table).`,
    );
  }
  return lines.length === 0 ? [] : ['### What stands in the way of the targets missed', '', ...lines, ''];
}

/** Keeps this run's figures for the next run, and the previous value of each figure this run did not measure. */
export function writeFigures(data: RunData, previous: FiguresFile | undefined): void {
  const now = measured(data);
  if (Object.keys(now).length === 0) return;
  const file: FiguresFile = {
    commit: data.commit,
    date: new Date().toISOString().slice(0, 16).replace('T', ' ') + ' UTC',
    machine: figures.machine(),
    run: `npm run bench${data.plan.quick ? ' -- --quick' : ''} (parts: ${data.plan.sections.join(', ')})`,
    figures: { ...(previous?.figures ?? {}), ...now },
  };
  writeFileSync(FILE, `${JSON.stringify(file, null, 2)}\n`);
}
