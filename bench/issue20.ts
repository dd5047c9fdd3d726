/**
 * Issue 20's table: each figure it sets a target for, from this run's
 * parts, beside the run before's (bench/figures.json, which each run that
 * measured anything rewrites) and the target. A figure whose part was not
 * run is "not run", and the previous one stays in figures.json for the next
 * run to show.
 */
import { existsSync, readFileSync, writeFileSync } from 'fs';
import { join } from 'path';
import * as figures from './figures';
import type { FiguresFile, RunData } from './figures';
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

function scriptRow(data: RunData, pingsPerCall: number): { script: number; cpu: number } {
  const row = data.script?.rows.find((r) => r.pingsPerCall === pingsPerCall);
  return row ? { script: row.scriptUsPerCall / pingsPerCall, cpu: row.cpuUsPerCall / pingsPerCall } : { script: Number.NaN, cpu: Number.NaN };
}

function p99(data: RunData, line: 'filter' | 'sw-memory' | 'sw-redis', rate: number): number {
  return figures.pacedPhase(data, line, rate)?.latency.p99 ?? Number.NaN;
}

const FIGURES: Figure[] = [
  { id: 'scriptUsPerDecision', label: 'Redis script time per decision, flat out (throughput line 3, INFO commandstats)', unit: 'µs', target: { op: '<=', value: 4 }, value: scriptUsPerUnit },
  { id: 'scriptAloneUs500', label: 'the same, script alone at 500 pings per call, every rule on', unit: 'µs', target: { op: '<=', value: 4 }, value: (d) => scriptRow(d, 500).script },
  { id: 'redisCpuPerDecision', label: 'Redis CPU per decision, flat out (throughput line 3, INFO cpu)', unit: 'µs', target: { op: '<=', value: 5 }, value: (d) => figures.cpuPerUnit(d.trials.get('sw-redis'), 'redis') },
  { id: 'scriptAloneCpu500', label: 'the same, script alone at 500 pings per call, every rule on', unit: 'µs', target: { op: '<=', value: 5 }, value: (d) => scriptRow(d, 500).cpu },
  { id: 'fixedCpuPerCall', label: 'Redis fixed cost per call (script alone: CPU, 1- against 500-ping calls)', unit: 'µs', target: { op: '<=', value: 8 }, value: (d) => d.script?.cpu.fixedUs ?? Number.NaN },
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
  ];
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
