/**
 * npm run bench: throughput and memory of the dedup nodes, side by side with
 * what a Node-RED user would reach for instead. Prints a table and writes it
 * to bench/results.md. Not a test: it asserts nothing, it reports (and says
 * plainly when a check or a target fails).
 *
 * Every throughput trial runs in a fresh process with a real Node-RED
 * runtime (bench/worker.ts). The lines are run in rounds, each line once per
 * round, and every line whose target is a ratio to the core filter node sits
 * between two filter trials: its ratio is taken against the mean of those
 * two, pair by pair, and the table reports medians. A machine that is busy
 * with something else slows both sides of a pair alike, which medians of
 * absolute rates alone would not show.
 *
 * Settings (environment): BENCH_ROUNDS (5), BENCH_N (200000 messages, or
 * readings for the sensor lines), BENCH_BUDGET_S (540: no new round starts
 * that would end past it), BENCH_PROFILE_DIR (a CPU profile of each timed
 * run, see worker.ts).
 */
import { spawn, spawnSync, fork } from 'child_process';
import { readFileSync, writeFileSync } from 'fs';
import { cpus, loadavg, totalmem, type as osType, release } from 'os';
import { join } from 'path';
import Redis from 'ioredis';
import type { LineId } from './flows';
import { redisBytesPerEntry, ENTRIES, type RedisMemory } from './memory';
import { startOwnRedis } from './redis';
import { bytes, markdownTable, max, median, min, thousands, times } from './stats';
import type { TrialJob, TrialResult } from './worker';

const ROOT = join(__dirname, '..');
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const UNITS = Number(process.env.BENCH_N ?? 200_000);
const BUDGET_MS = Number(process.env.BENCH_BUDGET_S ?? 540) * 1000;
const MEMORY_REPEATS = 3;

const JOB = { units: UNITS, assets: 1000, devices: 1000, warmups: 2, warmupUnits: 50_000 };

/** One round, in order: each ratio line sits between two filter trials. */
const ROUND: LineId[] = [
  'filter', 'passthrough', 'filter', 'sw-memory', 'filter', 'sw-redis', 'filter', 'naive', 'filter',
  'sr-memory', 'sr-redis',
];

const LABELS: Record<LineId, string> = {
  filter: 'core filter node (rbe), keyed on msg.topic',
  passthrough: 'two-output node that only forwards (floor)',
  'sw-memory': 'sliding-window dedup, memory store',
  'sw-redis': 'sliding-window dedup, Redis store',
  naive: 'function node, GET then SET per ping',
  'sr-memory': 'sensor reconnect dedup, memory, bursts of 50',
  'sr-redis': 'sensor reconnect dedup, Redis, bursts of 50',
};

/** redis-benchmark runs of the sliding-window script: pings per EVALSHA, pipeline depth, calls. */
const SERVER_RUNS = [
  { id: 'rb-1', pings: 1, pipeline: 64, calls: 200_000, label: 'redis-benchmark EVALSHA, 1 ping per call, pipeline 64' },
  { id: 'rb-500', pings: 500, pipeline: 1, calls: 1_000, label: 'redis-benchmark EVALSHA, 500 pings per call' },
] as const;

type ServerRunId = (typeof SERVER_RUNS)[number]['id'];

interface Trial {
  round: number;
  /** Position in the whole run, for pairing with the filter trials either side. */
  seq: number;
  result?: TrialResult;
  error?: string;
}

function runWorker(job: TrialJob): Promise<TrialResult> {
  return new Promise((resolve, reject) => {
    const child = fork(join(__dirname, 'worker.ts'), [JSON.stringify(job)], {
      cwd: ROOT,
      execArgv: ['--expose-gc', '--require', 'tsx/cjs'],
      stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
    });
    let output = '';
    const keep = (chunk: Buffer): void => {
      output = (output + chunk.toString('utf8')).slice(-4000);
    };
    child.stdout?.on('data', keep);
    child.stderr?.on('data', keep);
    let answer: { ok: boolean; result?: TrialResult; error?: string } | undefined;
    child.on('message', (m) => {
      answer = m as typeof answer;
    });
    child.on('exit', (code) => {
      if (answer?.ok && answer.result) resolve(answer.result);
      else reject(new Error(answer?.error ?? `worker exited with ${code}:\n${output}`));
    });
  });
}

function runChild(script: string, args: string[]): Promise<number> {
  return new Promise((resolve, reject) => {
    const child = fork(join(__dirname, script), args, {
      cwd: ROOT,
      execArgv: ['--expose-gc', '--require', 'tsx/cjs'],
      stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
    });
    let output = '';
    child.stderr?.on('data', (c: Buffer) => (output = (output + c.toString('utf8')).slice(-4000)));
    let value: number | undefined;
    child.on('message', (m) => {
      value = (m as { bytes: number }).bytes;
    });
    child.on('exit', (code) => (value !== undefined ? resolve(value) : reject(new Error(`${script} exited with ${code}:\n${output}`))));
  });
}

/** Runs redis-benchmark and returns pings per second. */
function redisBenchmark(port: number, sha: string, run: (typeof SERVER_RUNS)[number]): Promise<number> {
  // Random assets out of 1000 and random times (whole seconds within 17
  // minutes): about half the pings are late, most of the rest admitted, as
  // in the node lines. The call token is random too, so that a record
  // written by an earlier call is almost never taken for a resend of this one.
  const keys = Array.from({ length: run.pings }, () => 'dedup:sw:{rb-__rand_int__}');
  const pings = Array.from({ length: run.pings }, () => ['__rand_int__000', '52.520008', '13.404954']).flat();
  const args = [
    '-h', '127.0.0.1', '-p', String(port), '-c', '4', '-r', '1000', '-n', String(run.calls), '-P', String(run.pipeline), '--csv',
    'EVALSHA', sha, String(run.pings), ...keys, '60', '25', '21600', 'tok-__rand_int__', ...pings,
  ];
  return new Promise((resolve, reject) => {
    const child = spawn('redis-benchmark', args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString('utf8')));
    child.stderr.on('data', (c: Buffer) => (out += c.toString('utf8')));
    child.on('error', reject);
    child.on('exit', () => {
      // "test","rps",... then one row per test; the command itself is the test name.
      const row = out.trim().split('\n').reverse().find((l) => /^"EVALSHA/.test(l));
      const rps = row === undefined ? Number.NaN : Number(/","([\d.]+)"/.exec(row)?.[1]);
      if (Number.isFinite(rps)) resolve(rps * run.pings);
      else reject(new Error(`could not read redis-benchmark output:\n${out.slice(-2000)}`));
    });
  });
}

function versionOf(pkg: string): string {
  try {
    return (JSON.parse(readFileSync(require.resolve(`${pkg}/package.json`, { paths: [ROOT] }), 'utf8')) as { version: string }).version;
  } catch {
    return '?';
  }
}

function machine(): string {
  const cpu = cpus();
  return `${cpu[0]?.model.trim() ?? '?'}, ${cpu.length} cores, ${(totalmem() / 2 ** 30).toFixed(0)} GiB, ${osType()} ${release()}`;
}

function fmtLoad(): string {
  return loadavg().map((l) => l.toFixed(2)).join(' ');
}

function log(text: string): void {
  process.stderr.write(`${text}\n`);
}

function tallyKey(tally: Record<string, number>): string {
  return JSON.stringify(Object.entries(tally).sort(([a], [b]) => a.localeCompare(b)));
}

async function main(): Promise<void> {
  const t0 = Date.now();
  const loadBefore = fmtLoad();
  const build = spawnSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: ROOT, encoding: 'utf8' });
  const commit = build.status === 0 ? build.stdout.trim() : '?';
  const redis = await startOwnRedis();
  log(`bench: redis-server ${redis.version} on 127.0.0.1:${redis.port}; ${ROUNDS} rounds of ${UNITS.toLocaleString('en-US')}`);

  const trials = new Map<LineId, Trial[]>();
  const server = new Map<ServerRunId, number[]>();
  const memory = { window: [] as number[], seen: [] as number[] };
  const redisMemory: RedisMemory[] = [];
  const filterSeq: { seq: number; rate: number }[] = [];
  let roundsRun = 0;

  try {
    const admin = new Redis({ host: '127.0.0.1', port: redis.port });
    const sha = (await admin.script('LOAD', readFileSync(join(ROOT, 'lua', 'sliding-window.lua'), 'utf8'))) as string;

    // Memory first, on a quiet server and heap.
    for (let i = 0; i < MEMORY_REPEATS; i++) {
      memory.window.push(await runChild('memory.ts', ['window']));
      memory.seen.push(await runChild('memory.ts', ['seen']));
      redisMemory.push(await redisBytesPerEntry(redis.port));
    }
    log(`bench: memory done (${((Date.now() - t0) / 1000).toFixed(0)} s)`);

    let seq = 0;
    for (let round = 1; round <= ROUNDS; round++) {
      const roundStart = Date.now();
      for (const line of ROUND) {
        const trial: Trial = { round, seq: seq++ };
        try {
          trial.result = await runWorker({ line, redisPort: redis.port, ...JOB });
          if (line === 'filter') filterSeq.push({ seq: trial.seq, rate: trial.result.perSecond });
          log(`  round ${round} ${line.padEnd(12)} ${thousands(trial.result.perSecond).padStart(9)} /s`);
        } catch (error) {
          trial.error = error instanceof Error ? error.message : String(error);
          log(`  round ${round} ${line.padEnd(12)} FAILED: ${trial.error.split('\n')[0]}`);
        }
        trials.set(line, [...(trials.get(line) ?? []), trial]);
      }
      for (const run of SERVER_RUNS) {
        await admin.flushall();
        try {
          const rate = await redisBenchmark(redis.port, sha, run);
          server.set(run.id, [...(server.get(run.id) ?? []), rate]);
          log(`  round ${round} ${run.id.padEnd(12)} ${thousands(rate).padStart(9)} pings/s`);
        } catch (error) {
          log(`  round ${round} ${run.id} FAILED: ${error instanceof Error ? error.message : String(error)}`);
        }
      }
      await admin.flushall();
      roundsRun = round;
      const elapsed = Date.now() - t0;
      if (round < ROUNDS && elapsed + (Date.now() - roundStart) > BUDGET_MS) {
        log(`bench: stopping after ${round} rounds to stay within ${BUDGET_MS / 1000} s`);
        break;
      }
    }
    admin.disconnect();
  } finally {
    await redis.stop();
  }

  const report = render({
    trials, server, memory, redisMemory, filterSeq, roundsRun, commit,
    redisVersion: redis.version, loadBefore, loadAfter: fmtLoad(), seconds: (Date.now() - t0) / 1000,
  });
  process.stdout.write(`${report}\n`);
  writeFileSync(join(__dirname, 'results.md'), `${report}\n`);
  log(`bench: written to bench/results.md in ${((Date.now() - t0) / 1000).toFixed(0)} s`);
}

interface ReportInput {
  trials: Map<LineId, Trial[]>;
  server: Map<ServerRunId, number[]>;
  memory: { window: number[]; seen: number[] };
  redisMemory: RedisMemory[];
  filterSeq: { seq: number; rate: number }[];
  roundsRun: number;
  commit: string;
  redisVersion: string;
  loadBefore: string;
  loadAfter: string;
  seconds: number;
}

function rates(trials: readonly Trial[] | undefined): number[] {
  return (trials ?? []).flatMap((t) => (t.result ? [t.result.perSecond] : []));
}

/** Each trial against the mean of the filter trials just before and just after it. */
function ratiosToFilter(trials: readonly Trial[] | undefined, filterSeq: ReportInput['filterSeq']): number[] {
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
function ratiosByRound(a: readonly Trial[] | undefined, b: readonly Trial[] | undefined): number[] {
  const out: number[] = [];
  for (const t of a ?? []) {
    const other = (b ?? []).find((u) => u.round === t.round);
    if (t.result && other?.result) out.push(t.result.perSecond / other.result.perSecond);
  }
  return out;
}

function verdict(value: number, atLeast: number): string {
  if (!Number.isFinite(value)) return 'no data';
  return value >= atLeast ? 'met' : 'MISSED';
}

function verdictAtMost(value: number, limit: number): string {
  if (!Number.isFinite(value)) return 'no data';
  return value <= limit ? 'met' : 'MISSED';
}

function render(input: ReportInput): string {
  const { trials, server, filterSeq } = input;
  const spread = (values: number[]): string => (values.length ? `${thousands(min(values))} – ${thousands(max(values))}` : '–');
  const ratioSpread = (values: number[]): string => (values.length ? `${times(min(values))} – ${times(max(values))}` : '–');

  const swMem = ratiosToFilter(trials.get('sw-memory'), filterSeq);
  const swRedis = ratiosToFilter(trials.get('sw-redis'), filterSeq);
  const srRatio = ratiosByRound(trials.get('sr-redis'), trials.get('sr-memory'));
  const srMemRates = rates(trials.get('sr-memory'));

  const row = (n: string, line: LineId, unit: string, ratio: number[] | undefined, target: string, met: string): string[] => {
    const r = rates(trials.get(line));
    const ok = (trials.get(line) ?? []).flatMap((t) => (t.result ? [t.result] : []));
    const perUnit = (pick: (t: TrialResult) => number | undefined): string => {
      const values = ok.flatMap((t) => {
        const v = pick(t);
        return v === undefined ? [] : [(v * 1000) / t.units];
      });
      return values.length ? median(values).toFixed(1) : '';
    };
    return [
      n, LABELS[line], unit, thousands(median(r)), spread(r), ratio ? times(median(ratio)) : '', ratio ? ratioSpread(ratio) : '',
      target, met, perUnit((t) => t.nodeCpuMs), perUnit((t) => t.redisCpuMs),
    ];
  };
  const throughput = markdownTable(
    ['#', 'line', 'unit', 'median', 'range of runs', 'ratio (median)', 'ratio range', 'target', '', 'Node-RED CPU µs/unit', 'Redis CPU µs/unit'],
    [
      row('1', 'filter', 'msg/s', undefined, 'baseline', ''),
      row('–', 'passthrough', 'msg/s', ratiosToFilter(trials.get('passthrough'), filterSeq), 'reference', ''),
      row('2', 'sw-memory', 'msg/s', swMem, '>= 0.9x filter', verdict(median(swMem), 0.9)),
      row('3', 'sw-redis', 'msg/s', swRedis, '>= 0.8x filter', verdict(median(swRedis), 0.8)),
      row('4', 'naive', 'msg/s', ratiosToFilter(trials.get('naive'), filterSeq), 'speed only', ''),
      row('5a', 'sr-memory', 'readings/s', undefined, '>= 200,000/s', verdict(median(srMemRates), 200_000)),
      row('5b', 'sr-redis', 'readings/s', srRatio, '>= 0.5x 5a', verdict(median(srRatio), 0.5)),
      ...SERVER_RUNS.map((run) => {
        const r = server.get(run.id) ?? [];
        return [run.id === 'rb-1' ? '6a' : '6b', run.label, 'pings/s', thousands(median(r)), spread(r), '', '', 'server limit', '', '', ''];
      }),
    ],
  );

  const redisMem = (pick: (m: RedisMemory) => number): number => median(input.redisMemory.map(pick));
  const memoryTable = markdownTable(
    ['store', 'bytes per entry at 100,000 entries', 'range', 'target', ''],
    [
      ['sliding-window, memory: heap per asset', bytes(median(input.memory.window)), spread(input.memory.window), '<= 200 B', verdictAtMost(median(input.memory.window), 200)],
      ['sensor reconnect, memory: heap per key', bytes(median(input.memory.seen)), spread(input.memory.seen), '<= 200 B', verdictAtMost(median(input.memory.seen), 200)],
      ['sliding-window, Redis: used_memory per asset record', bytes(redisMem((m) => m.window)), spread(input.redisMemory.map((m) => m.window)), '<= 160 B', verdictAtMost(redisMem((m) => m.window), 160)],
      ['sensor reconnect, Redis: used_memory per key', bytes(redisMem((m) => m.seen)), spread(input.redisMemory.map((m) => m.seen)), '', ''],
      ['Redis floor: a key of the same name with a TTL and the value 1', bytes(redisMem((m) => m.floor)), spread(input.redisMemory.map((m) => m.floor)), 'reference', ''],
    ],
  );

  return [
    '# Benchmark results',
    '',
    `Generated by \`npm run bench\` on ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC (commit ${input.commit}, with the working tree as it was).`,
    '',
    `- machine: ${machine()}; load average ${input.loadBefore} at the start, ${input.loadAfter} at the end`,
    `- Node.js ${process.versions.node}, Node-RED ${versionOf('node-red')}, Redis ${input.redisVersion} (loopback, private), ioredis ${versionOf('ioredis')}`,
    `- ${input.roundsRun} rounds; each trial in a fresh Node-RED process: 2 warm-up runs of ${JOB.warmupUnits.toLocaleString('en-US')}, then ${UNITS.toLocaleString('en-US')} messages timed (sensor lines: ${UNITS.toLocaleString('en-US')} readings in ${(UNITS / 50).toLocaleString('en-US')} bursts of 50); ${JOB.assets.toLocaleString('en-US')} vehicles, ${JOB.devices.toLocaleString('en-US')} sensors`,
    `- ratios are taken pair by pair: each dedup trial against the mean of the filter trials run just before and after it (5b: against 5a of the same round); medians of those`,
    `- CPU columns: CPU time of the Node-RED process and of redis-server during the timed run, per message (or reading); medians`,
    `- took ${input.seconds.toFixed(0)} s`,
    '',
    '## Throughput',
    '',
    throughput,
    '',
    '## Memory',
    '',
    memoryTable,
    '',
    '## Checks',
    '',
    ...checks(input),
    '',
  ].join('\n');
}

function checks(input: ReportInput): string[] {
  const out: string[] = [];
  const failed = [...input.trials].flatMap(([line, ts]) => ts.filter((t) => t.error).map((t) => `${line} (round ${t.round}): ${t.error?.split('\n')[0]}`));
  out.push(failed.length === 0 ? '- every trial completed' : `- FAILED trials: ${failed.join('; ')}`);

  const tallies = (line: LineId): Record<string, number>[] => (input.trials.get(line) ?? []).flatMap((t) => (t.result ? [t.result.tally] : []));
  const sw = [...tallies('sw-memory'), ...tallies('sw-redis')];
  const distinct = new Set(sw.map(tallyKey));
  const first = sw[0] ?? {};
  const admitted = (t: Record<string, number>): number => Object.entries(t).filter(([k]) => k.startsWith('admitted:')).reduce((s, [, n]) => s + n, 0);
  const unavailable = sw.some((t) => Object.keys(t).some((k) => k.endsWith(':store-unavailable')));
  out.push(
    distinct.size === 1 && !unavailable
      ? `- sliding window: memory and Redis made the same ${UNITS.toLocaleString('en-US')} decisions in every trial (${Object.entries(first).map(([k, n]) => `${k} ${n}`).join(', ')})`
      : `- sliding window: DECISIONS DIFFER between trials or stores (${[...distinct].join(' / ')})`,
  );
  const naive = tallies('naive');
  if (naive.length > 0 && sw.length > 0) {
    const extra = median(naive.map(admitted)) - admitted(first);
    out.push(`- GET then SET admitted ${thousands(median(naive.map(admitted)))} pings where the atomic script admits ${thousands(admitted(first))}: ${thousands(extra)} duplicates let through, because every GET of a burst ran before any SET (the race the seed warns about)`);
  }
  for (const line of ['sr-memory', 'sr-redis'] as const) {
    const bad = (input.trials.get(line) ?? []).filter((t) => t.result && (t.result.tally.unique !== t.result.expectedUnique || t.result.tally.rejected !== 0 || Object.keys(t.result.tally).some((k) => k === 'audit:store-unavailable')));
    const sample = input.trials.get(line)?.find((t) => t.result)?.result;
    if (sample) {
      out.push(
        bad.length === 0
          ? `- ${LABELS[line]}: admitted exactly the ${thousands(sample.expectedUnique ?? Number.NaN)} unique readings and suppressed the ${thousands(sample.tally.duplicates ?? Number.NaN)} replays, every trial`
          : `- ${LABELS[line]}: WRONG COUNTS in ${bad.length} trials`,
      );
    }
  }
  const rss = [...input.trials.values()].flat().flatMap((t) => (t.result ? [t.result.maxRssMB] : []));
  out.push(`- peak RSS of a trial process: ${thousands(max(rss))} MB (${thousands(UNITS)} messages are queued at once)`);
  out.push(`- memory entries: ${ENTRIES.toLocaleString('en-US')}; heap = heapUsed + arrayBuffers after a full GC; Redis = used_memory after its hash tables settle`);
  return out;
}

main().catch((error: unknown) => {
  log(`bench failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
  process.exitCode = 1;
});
