/**
 * The what-if's speed: 1,000,000 pings through the default 5 × 5 grid
 * (Heartbeat 10, 30, 60, 120, 300 s × Movement 5, 10, 25, 50, 100 m), the
 * target being under 10 s, printed beside a baseline from the same run: the
 * same pings through a bare loop of the rule (core/window/sliding-window's
 * decideWindow and baselineOf over a Map, no store), 25 times.
 *
 *   npx tsx bench/tune.ts        (after npm run build: it times the compiled
 *                                 pack, worker threads and all, as users run it)
 *
 * Lines, each run TUNE_BENCH_ROUNDS times (default 3) in rounds, so a busy
 * machine slows every line of a round alike:
 *   - baseline: the bare loop of the rule;
 *   - the grid in one thread (tune/grid: the node's memory store per cell);
 *   - the grid on every core (tune/threads, what dedup-tune does);
 *   - dedup-tune end to end on the same pings as a 55 MB CSV file (a new
 *     process: reading, the grid on every core, the jitter, the table).
 * The answers are checked too: every cell admits what the bare loop admits.
 *
 * bench/run.ts runs this file as its part `tune` (BENCH_ONLY=tune), a child
 * process that answers over IPC, and shows tuneBenchTable's Markdown in its
 * report.
 */
import { spawnSync } from 'child_process';
import { createWriteStream, existsSync, mkdtempSync, rmSync } from 'fs';
import { cpus, loadavg, tmpdir } from 'os';
import { join } from 'path';
import { pingMessage } from './data';
import { answerParent } from './runtime';
import { markdownTable, max, median, min, thousands, times } from './stats';

const ROOT = join(__dirname, '..');
const NODES = join(ROOT, 'nodes');
const PINGS = Number(process.env.TUNE_BENCH_PINGS ?? 1_000_000);
const ROUNDS = Number(process.env.TUNE_BENCH_ROUNDS ?? 3);
const ASSETS = 1000;
const SECONDS = [10, 30, 60, 120, 300];
const METRES = [5, 10, 25, 50, 100];
const TARGET_S = 10;

/*
 * The compiled pack's modules, typed from their sources: a type-only import is
 * erased, so what runs is still nodes/*.js, as dedup-tune runs it.
 */
type Columns = import('../src/core/window/ping-columns').PingColumns;
type Cell = import('../src/tune/grid').GridCell;
type Baseline = import('../src/core/window/sliding-window').WindowBaseline;
/** What the bare loop counts of a cell. */
type Admitted = Pick<Cell, 'minSeconds' | 'minMetres' | 'admitted'>;
type Pack = typeof import('../src/core/window/sliding-window') &
  typeof import('../src/core/window/ping-columns') &
  typeof import('../src/tune/grid') &
  typeof import('../src/tune/threads') &
  typeof import('../src/tune/grid-spec');

function loadPack(): Pack {
  const file = (path: string): string => join(NODES, path);
  if (!existsSync(file('tune/threads.js'))) throw new Error('nodes/tune is missing: run npm run build first');
  /* eslint-disable @typescript-eslint/no-require-imports -- the compiled pack, as dedup-tune runs it */
  return {
    ...require(file('core/window/sliding-window.js')),
    ...require(file('core/window/ping-columns.js')),
    ...require(file('tune/grid.js')),
    ...require(file('tune/threads.js')),
    ...require(file('tune/grid-spec.js')),
  } as Pack;
  /* eslint-enable @typescript-eslint/no-require-imports */
}

/** The bench's vehicle traffic (bench/data.ts): 1,000 vehicles every 10 s, half parked, every 25th ping a redelivery. */
function fleet(pack: Pack): Columns {
  const builder = new pack.PingColumnsBuilder();
  for (let i = 0; i < PINGS; i++) {
    const { payload } = pingMessage(i, ASSETS, 'veh-');
    builder.add({ assetId: payload.assetId, t: payload.ts, lat: payload.lat, lon: payload.lon, heading: NaN, accuracy: 0, events: 0 }, NaN);
  }
  return builder.build();
}

/** The same pings as the CSV file dedup-tune reads. */
async function writeCsv(path: string): Promise<void> {
  const out = createWriteStream(path);
  let chunk = 'assetId,ts,lat,lon\n';
  for (let i = 0; i < PINGS; i++) {
    const { payload } = pingMessage(i, ASSETS, 'veh-');
    chunk += `${payload.assetId},${payload.ts},${payload.lat},${payload.lon}\n`;
    if (chunk.length > 1 << 20) {
      if (!out.write(chunk)) await new Promise<void>((resolve) => out.once('drain', () => resolve()));
      chunk = '';
    }
  }
  out.end(chunk);
  await new Promise<void>((resolve) => out.once('finish', () => resolve()));
}

/** The baseline: the rule itself in a bare loop, no store, once per cell. */
function bareLoop(pack: Pack, columns: Columns): Admitted[] {
  const cells: Admitted[] = [];
  const ping = pack.blankPing();
  for (const minSeconds of SECONDS) {
    for (const minMetres of METRES) {
      const rule = { minSeconds, minMetres, maxAheadSeconds: 300 };
      const baselines = new Map<string, Baseline>();
      let admitted = 0;
      let now = -Infinity;
      for (let i = 0; i < columns.size; i++) {
        pack.pingAt(columns, i, ping);
        now = Math.max(now, ping.t);
        if (pack.decideWindow(baselines.get(ping.assetId), ping, rule, now).admit) {
          admitted++;
          baselines.set(ping.assetId, pack.baselineOf(ping));
        }
      }
      cells.push({ minSeconds, minMetres, admitted });
    }
  }
  return cells;
}

export interface TuneBenchRow {
  line: string;
  seconds: number[];
  /** Median ratio to the baseline of the same round. */
  ratio: number | undefined;
  target: string;
  met: boolean | undefined;
}

export interface TuneBenchResult {
  pings: number;
  threads: number;
  rows: TuneBenchRow[];
  answersAgree: boolean;
  machine: string;
}

export async function runTuneBench(log: (line: string) => void = () => undefined): Promise<TuneBenchResult> {
  const pack = loadPack();
  const threads = pack.cores();
  const rule = pack.ruleOf({});
  const spec = { seconds: SECONDS, metres: METRES };
  log(`generating ${thousands(PINGS)} pings of ${ASSETS} vehicles…`);
  const columns = fleet(pack);
  const dir = mkdtempSync(join(tmpdir(), 'dedup-tune-bench-'));
  const csv = join(dir, 'pings.csv');
  await writeCsv(csv);
  const timings = { baseline: [] as number[], one: [] as number[], all: [] as number[], command: [] as number[] };
  let answersAgree = true;
  try {
    for (let round = 1; round <= ROUNDS; round++) {
      let start = performance.now();
      const expected = bareLoop(pack, columns);
      timings.baseline.push((performance.now() - start) / 1000);
      start = performance.now();
      const one = pack.runGrid(columns, spec, rule);
      timings.one.push((performance.now() - start) / 1000);
      start = performance.now();
      const all = await pack.runGridThreaded(columns, spec, rule, { threads });
      timings.all.push((performance.now() - start) / 1000);
      start = performance.now();
      const command = spawnSync(process.execPath, [join(ROOT, 'bin', 'dedup-tune.js'), csv, '--format', 'csv'], { encoding: 'utf8', maxBuffer: 1 << 20 });
      timings.command.push((performance.now() - start) / 1000);
      if (command.status !== 0) throw new Error(`dedup-tune failed: ${command.stderr}`);
      const printed = command.stdout.trim().split('\n').slice(1).map((line) => Number(line.split(',')[3]));
      for (let c = 0; c < expected.length; c++) {
        const want = (expected[c] as Admitted).admitted;
        if ((one[c] as Cell).admitted !== want || (all[c] as Cell).admitted !== want || printed[c] !== want) answersAgree = false;
      }
      log(`round ${round}/${ROUNDS}: baseline ${timings.baseline.at(-1)?.toFixed(2)} s, grid ${timings.one.at(-1)?.toFixed(2)} s, grid on ${threads} threads ${timings.all.at(-1)?.toFixed(2)} s, dedup-tune ${timings.command.at(-1)?.toFixed(2)} s`);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const ratio = (values: number[]): number => median(values.map((v, i) => v / (timings.baseline[i] as number)));
  const under = `< ${TARGET_S} s`;
  return {
    pings: PINGS,
    threads,
    answersAgree,
    machine: `${cpus()[0]?.model ?? 'unknown CPU'}, ${cpus().length} cores; load ${loadavg().map((l) => l.toFixed(2)).join(' ')} at the end; Node.js ${process.version}`,
    rows: [
      { line: 'baseline: decideWindow + baselineOf in a bare loop, 25 passes', seconds: timings.baseline, ratio: undefined, target: 'baseline', met: undefined },
      { line: 'the what-if grid, one thread (the node\'s memory store per cell)', seconds: timings.one, ratio: ratio(timings.one), target: 'reference', met: undefined },
      { line: `the what-if grid on ${threads} threads (as dedup-tune runs it)`, seconds: timings.all, ratio: ratio(timings.all), target: under, met: median(timings.all) < TARGET_S },
      { line: 'dedup-tune end to end: read the CSV (55 MB), grid, jitter, print', seconds: timings.command, ratio: ratio(timings.command), target: under, met: median(timings.command) < TARGET_S },
    ],
  };
}

export function tuneBenchTable(result: TuneBenchResult): string {
  const header = ['line', `median s (${thousands(result.pings)} pings × 25 settings)`, 'range of runs', 'pings decided per s', 'ratio to baseline', 'target', ''];
  const rows = result.rows.map((row) => {
    const m = median(row.seconds);
    return [
      row.line,
      m.toFixed(2),
      `${min(row.seconds).toFixed(2)} – ${max(row.seconds).toFixed(2)}`,
      thousands((result.pings * 25) / m),
      row.ratio === undefined ? '' : times(row.ratio),
      row.target,
      row.met === undefined ? '' : row.met ? 'met' : 'MISSED',
    ];
  });
  return `${markdownTable(header, rows)}\n\nAnswers: ${result.answersAgree ? 'every cell of the grid (one thread, threads, dedup-tune) admitted what the bare loop admitted' : 'THE GRID AND THE BARE LOOP DISAGREE'}.\nMachine: ${result.machine}.\n`;
}

if (require.main === module && process.send) answerParent(runTuneBench());
else if (require.main === module) {
  runTuneBench((line) => process.stderr.write(`${line}\n`)).then(
    (result) => {
      process.stdout.write(tuneBenchTable(result));
      if (!result.answersAgree) process.exitCode = 1;
    },
    (error: unknown) => {
      process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
      process.exitCode = 1;
    },
  );
}
