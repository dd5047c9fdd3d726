/**
 * bench/results.md: every figure of one `npm run bench` run, as tables,
 * each line next to its baseline and its target, and the checks of the
 * answers the nodes gave. Pure: it formats what bench/run.ts measured.
 */
import { cpus } from 'os';
import { cpuPerUnit, machine, okResults, pacedPhase, rates, ratiosByRound, ratiosToFilter, versions, type RoundLine, type RunData } from './figures';
import type { LineId } from './flows';
import { ENTRIES, type RedisMemory } from './memory';
import type { SavingResult } from './saving';
import type { PacedLine, PacedPhase } from './paced';
import { issue20Section } from './issue20';
import { decidedAlike, issue31Section } from './issue31';
import { guardCostLines } from './guard-cost';
import { metricsCostLines } from './metrics-cost';
import { profileTable } from './profile';
import { scriptCostTable } from './script-cost';
import { sizingFigures, sizingTable } from './sizing';
import { bytes, markdownTable, max, median, micros, millis, min, thousands, times } from './stats';

export const LABELS: Record<LineId, string> = {
  filter: 'core filter node (rbe), keyed on msg.topic',
  passthrough: 'two-output node that only forwards (floor)',
  'sw-memory': 'sliding-window dedup, memory store',
  'sw-redis': 'sliding-window dedup, Redis store',
  'sw-redis-fleet': 'sliding-window dedup, Redis store, every fleet rule on',
  'sw-memory-guards': 'sliding-window dedup, memory store, every fleet rule on',
  'sw-redis-guards': 'sliding-window dedup, Redis store, every fleet rule on',
  naive: 'function node, GET then SET per ping',
  'sr-memory': 'sensor reconnect dedup, memory, bursts of 50',
  'sr-redis': 'sensor reconnect dedup, Redis, bursts of 50',
  'sr-memory-confirm': '5a with confirm on, + dedup-confirm per admitted burst',
  'sr-redis-confirm': '5b with confirm on, + dedup-confirm per admitted burst',
  'sr-nested': '5a with nested paths (LoRaWAN uplink shape)',
};

/** A round's line as the tables name it: an `@today` line is the same node on the baseline commit's build. */
export function roundLabel(data: RunData, line: RoundLine): string {
  const [id, build] = line.split('@') as [keyof typeof LABELS, string | undefined];
  return build === undefined ? LABELS[id] : `${LABELS[id]}, today (${data.builds.find((b) => b.id === 'today')?.label ?? '?'})`;
}

export const PACED_LABELS: Record<PacedLine, string> = {
  filter: 'core filter node (rbe)',
  'sw-memory': 'sliding-window, memory store',
  'sw-redis': 'sliding-window, Redis store',
  'sw-redis-fleet': 'sliding-window, Redis store, every fleet rule on',
  'sr-redis': 'sensor node, Redis store',
  'sr-redis-confirm': 'sensor node, Redis store, confirm on',
};

function verdict(value: number, atLeast: number): string {
  if (!Number.isFinite(value)) return 'no data';
  return value >= atLeast ? 'met' : 'MISSED';
}

function verdictAtMost(value: number, limit: number): string {
  if (!Number.isFinite(value)) return 'no data';
  return value <= limit ? 'met' : 'MISSED';
}

function plural(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? '' : 's'}`;
}

const spread = (values: number[]): string => (values.length ? `${thousands(min(values))} – ${thousands(max(values))}` : '–');
const ratioSpread = (values: number[]): string => (values.length ? `${times(min(values))} – ${times(max(values))}` : '–');
const bytesSpread = (values: number[]): string => (values.length ? `${min(values).toFixed(0)} – ${max(values).toFixed(0)}` : '–');

function throughputSection(data: RunData): string[] {
  const { trials, filterSeq, server } = data;
  const row = (n: string, line: RoundLine, unit: string, ratio: number[] | undefined, target: string, met: string): string[] => {
    const r = rates(trials.get(line));
    return [
      n, roundLabel(data, line), unit, thousands(median(r)), spread(r), ratio ? times(median(ratio)) : '', ratio ? ratioSpread(ratio) : '',
      target, met, micros(cpuPerUnit(trials.get(line), 'node')), micros(cpuPerUnit(trials.get(line), 'redis')),
    ];
  };
  const swMem = ratiosToFilter(trials.get('sw-memory'), filterSeq);
  const swRedis = ratiosToFilter(trials.get('sw-redis'), filterSeq);
  const srRatio = ratiosByRound(trials.get('sr-redis'), trials.get('sr-memory'));
  const nested = rates(trials.get('sr-nested'));
  const table = markdownTable(
    ['#', 'line', 'unit', 'median', 'range of runs', 'ratio (median)', 'ratio range', 'target', '', 'Node-RED CPU µs/unit', 'Redis CPU µs/unit'],
    [
      row('1', 'filter', 'msg/s', undefined, 'baseline', ''),
      row('–', 'passthrough', 'msg/s', ratiosToFilter(trials.get('passthrough'), filterSeq), 'reference', ''),
      row('2', 'sw-memory', 'msg/s', swMem, '>= 0.9x filter', verdict(median(swMem), 0.9)),
      row('3', 'sw-redis', 'msg/s', swRedis, '>= 0.8x filter', verdict(median(swRedis), 0.8)),
      ...(data.builds.some((b) => b.id === 'today')
        ? [
            row('2t', 'sw-memory@today', 'msg/s', ratiosToFilter(trials.get('sw-memory@today'), filterSeq), 'line 2 before: reference', ''),
            row('3t', 'sw-redis@today', 'msg/s', ratiosToFilter(trials.get('sw-redis@today'), filterSeq), 'line 3 before: reference', ''),
          ]
        : []),
      row('4', 'naive', 'msg/s', ratiosToFilter(trials.get('naive'), filterSeq), 'speed only', ''),
      row('5a', 'sr-memory', 'readings/s', undefined, '>= 200,000/s', verdict(median(rates(trials.get('sr-memory'))), 200_000)),
      row('5b', 'sr-redis', 'readings/s', srRatio, '>= 0.5x 5a', verdict(median(srRatio), 0.5)),
      row('5c', 'sr-memory-confirm', 'readings/s', ratiosByRound(trials.get('sr-memory-confirm'), trials.get('sr-memory')), 'x 5a: reference', ''),
      row('5d', 'sr-redis-confirm', 'readings/s', ratiosByRound(trials.get('sr-redis-confirm'), trials.get('sr-redis')), 'x 5b: reference', ''),
      row('5e', 'sr-nested', 'readings/s', ratiosByRound(trials.get('sr-nested'), trials.get('sr-memory')), '>= 200,000/s', verdict(median(nested), 200_000)),
      ...data.plan.serverRuns.map((run) => {
        const results = server.get(run.id) ?? [];
        const r = results.map((x) => x.pingsPerSecond);
        return [run.id, run.label, 'pings/s', thousands(median(r)), spread(r), '', '', 'server limit', '', '', micros(median(results.map((x) => x.redisCpuUsPerPing)))];
      }),
    ],
  );
  const plan = data.plan;
  return [
    '## Throughput (issue 15, line 4: the Redis store against the core filter node)',
    '',
    `${plural(data.roundsRun, 'round')}; each trial a fresh Node-RED process: ${plural(plan.warmups, 'warm-up run')} of ${thousands(plan.warmupUnits)}, then ${thousands(plan.units)} messages handed over at once and timed (sensor lines: ${thousands(plan.units)} readings in ${thousands(plan.units / 50)} bursts of 50, the first 10 of each burst after a sensor's first replaying the last 10 of its previous one); 1,000 vehicles, ${thousands(plan.devices)} sensors. Ratios pair by pair: each dedup trial against the mean of the nearest filter trials before and after it (5b, 5c, 5e: against 5a of the same round; 5d: against 5b); medians. CPU columns: the Node-RED process and redis-server during the timed run, per message or reading.`,
    '',
    table,
    '',
    "2t and 3t are lines 2 and 3 on today's build (the baseline commit, built on its own), in the same rounds: flat-out throughput before and after, each against the filter trials beside it.",
    '',
    '6a and 6b drive the sliding-window script with no Node-RED at all: a small client (bench/eval-load.ts) writes EVALSHA calls with the packed binary arguments on raw sockets, a window of calls at a time, and only counts the replies, so the rate is what redis-server alone serves. The difference between them is the cost of a call itself, paid once per call however many pings it carries.',
    '',
  ];
}

function signedMillis(ms: number): string {
  return `${ms >= 0 ? '+' : ''}${millis(ms)}`;
}

/** A row of the latency table: rate, line, what it achieved, its spread, the p99 against the filter's, the target and verdict, CPU and generator lag. */
function pacedRow(p: PacedPhase, label: string, vsFilter: string, target = '', met = ''): string[] {
  return [
    thousands(p.rate), label, thousands(p.achievedRate), millis(p.latency?.p50 ?? Number.NaN), millis(p.latency?.p99 ?? Number.NaN), millis(p.latency?.max ?? Number.NaN),
    vsFilter, target, met, micros(p.nodeCpuUsPerMsg), micros(p.redisCpuUsPerMsg), `${millis(p.generatorLag?.p99 ?? Number.NaN)} / ${millis(p.generatorLag?.max ?? Number.NaN)}`,
  ];
}

const p99Of = (p: PacedPhase | undefined): number => p?.latency?.p99 ?? Number.NaN;

export function latencySection(data: RunData): string[] {
  if (data.paced.length === 0 && data.redisCost.length === 0) return ['## Latency under steady load (issue 15, line 1)', '', 'Not run.', ''];
  const rows: string[][] = [];
  for (const rate of data.plan.paced.rates) {
    const filter = pacedPhase(data, 'filter', rate);
    for (const line of ['filter', 'sw-memory', 'sw-redis'] as PacedLine[]) {
      const p = pacedPhase(data, line, rate);
      if (p === undefined) {
        rows.push([thousands(rate), PACED_LABELS[line], 'not run', '', '', '', '', '', '', '', '', '']);
        continue;
      }
      const overFilter = p99Of(p) - p99Of(filter);
      // A line whose generator fell behind was not fed at the rate: no verdict on it.
      const fellBehind = (x: PacedPhase | undefined): boolean => x === undefined || x.achievedRate < 0.97 * rate;
      let target = '';
      let met = '';
      if (line === 'sw-memory') {
        target = 'p99 <= filter + 1 ms';
        met = fellBehind(p) || fellBehind(filter) ? 'not fed at the rate' : verdictAtMost(overFilter, 1);
      } else if (line === 'sw-redis' && rate === 50_000) {
        target = 'p99 <= 3 ms';
        met = fellBehind(p) ? 'not fed at the rate' : verdictAtMost(p99Of(p), 3);
      }
      rows.push(pacedRow(p, PACED_LABELS[line], line === 'filter' ? '' : signedMillis(overFilter), target, met));
    }
  }
  for (const rate of data.plan.paced.rates) {
    const p = pacedPhase(data, 'sw-redis', rate, 'cluster');
    if (p !== undefined) rows.push(pacedRow(p, `sliding-window, Redis Cluster (${data.plan.redis.clusterPrimaries} primaries)`, ''));
  }
  const split: string[][] = [];
  for (const target of ['server', 'cluster'] as const) {
    for (const rate of data.plan.paced.rates) {
      const p = pacedPhase(data, 'sw-redis', rate, target);
      if (p?.batcherWait === undefined || p.callRoundTrip === undefined) continue;
      split.push([
        target === 'server' ? 'one server' : 'Cluster', thousands(rate), millis(p.latency?.p50 ?? Number.NaN), millis(p99Of(p)),
        `${millis(p.batcherWait.p50)} / ${millis(p.batcherWait.p99)} / ${millis(p.batcherWait.max)}`,
        `${millis(p.callRoundTrip.p50)} / ${millis(p.callRoundTrip.p99)} / ${millis(p.callRoundTrip.max)}`,
        (p.pingsPerCall ?? Number.NaN).toFixed(1),
      ]);
    }
  }
  const low = pacedPhase(data, 'sw-redis', data.plan.paced.rates[0] ?? 0);
  const lowMem = pacedPhase(data, 'sw-memory', data.plan.paced.rates[0] ?? 0);
  const batching = low?.batcherWait
    ? `The delay the batching adds: at ${thousands(low.rate)} msg/s a ping waited ${millis(low.batcherWait.p50)} ms in the tick batcher at the median before its call was sent, ${millis(low.batcherWait.p99)} ms at p99 and ${millis(low.batcherWait.max)} ms at most, ${(low.pingsPerCall ?? Number.NaN).toFixed(1)} pings per call; the call's round trip to Redis took ${millis(low.callRoundTrip?.p50 ?? Number.NaN)} ms at the median (p99 ${millis(low.callRoundTrip?.p99 ?? Number.NaN)} ms). The batcher sends at the end of the event-loop turn a ping arrived in, or, at a quiet rate, when its linger ends (a few milliseconds; docs/redis.md, "Batching"); at once when a call is full; the memory store's line at the same rate had a median of ${lowMem ? millis(lowMem.latency?.p50 ?? Number.NaN) : '–'} ms.`
    : "The tick batcher's share was not measured in this run (its methods could not be wrapped, or the Redis part did not run).";
  const plan = data.plan.paced;
  return [
    '## Latency under steady load (issue 15, line 1)',
    '',
    `Each line in a fresh Node-RED process, fed at a steady rate: every millisecond the harness makes the messages due by then and fires them (a fleet of ${thousands(plan.assets)} vehicles, first primed with one ping each at ${thousands(plan.primeRate)} msg/s, which also warms up the JIT: no burst comes before); the filter and the memory store ${plan.seconds} s recorded per rate after ${plan.settleSeconds} s unrecorded, the Redis store's rows from the redis part (issue 31: its warm case, the working tree, ${data.plan.redis.seconds} s recorded per rate). Latency: from the making of a message to its arrival at the node after the node under test, every message recorded. Generator lag: how late the making ticks ran behind schedule; when it is large, something held the event loop (the message was not even made yet), and the latency figures understate what a message from outside would have seen; when the achieved rate is more than 3 % short of the rate, the line was not fed at that rate and gets no verdict. CPU: per message at that rate, idle time included (Redis: every primary's). The Cluster rows: ${data.plan.redis.clusterPrimaries} primaries, a call carrying the pings of one of its 12 key buckets.`,
    '',
    markdownTable(['msg/s', 'line', 'achieved', 'p50 ms', 'p99 ms', 'max ms', 'p99 vs filter', 'target', '', 'Node-RED CPU µs/msg', 'Redis CPU µs/msg', 'generator lag p99 / max ms'], rows),
    '',
    ...clusterAgainstServer(data),
    '### Where a Redis-store message waits',
    '',
    split.length > 0
      ? markdownTable(['Redis', 'msg/s', 'p50 ms', 'p99 ms', 'in the tick batcher, p50 / p99 / max ms', 'call round trip, p50 / p99 / max ms', 'pings per call'], split)
      : 'Not measured in this run.',
    '',
    batching,
    '',
  ];
}

/**
 * Issue 21's targets for the Cluster line: at its busiest paced rate, what a
 * decision costs each side on the Cluster against one server at the same
 * rate, and the p99; when one is missed, what stands in the way.
 */
function clusterAgainstServer(data: RunData): string[] {
  const measured = data.plan.paced.rates.filter((r) => pacedPhase(data, 'sw-redis', r, 'cluster') !== undefined && pacedPhase(data, 'sw-redis', r) !== undefined);
  if (measured.length === 0) return [];
  const rate = Math.max(...measured);
  const cluster = pacedPhase(data, 'sw-redis', rate, 'cluster');
  const server = pacedPhase(data, 'sw-redis', rate);
  if (cluster === undefined || server === undefined) return [];
  const node = cluster.nodeCpuUsPerMsg / server.nodeCpuUsPerMsg;
  const redis = (cluster.redisCpuUsPerMsg ?? Number.NaN) / (server.redisCpuUsPerMsg ?? Number.NaN);
  const rows = [
    ['Node-RED CPU per decision, Cluster / one server', `${micros(cluster.nodeCpuUsPerMsg)} / ${micros(server.nodeCpuUsPerMsg)} µs = ${node.toFixed(2)}x`, '<= 1.5x', verdictAtMost(node, 1.5)],
    ['Redis CPU per decision (every primary), Cluster / one server', `${micros(cluster.redisCpuUsPerMsg)} / ${micros(server.redisCpuUsPerMsg)} µs = ${redis.toFixed(2)}x`, '<= 2x', verdictAtMost(redis, 2)],
    ['p99 on the Cluster', `${millis(p99Of(cluster))} ms`, '<= 20 ms', verdictAtMost(p99Of(cluster), 20)],
  ];
  const perCall = cluster.pingsPerCall !== undefined && server.pingsPerCall !== undefined ? ` A Cluster call carried ${cluster.pingsPerCall.toFixed(1)} pings, a call to one server ${server.pingsPerCall.toFixed(1)}: a call's fixed cost (packing it, the ioredis command, its reply and promise on the client; reading it and running the script on the server) is paid that much more often per decision on the Cluster.` : '';
  const missed = node > 1.5 || redis > 2 || p99Of(cluster) > 20;
  return [
    `### The Cluster against one server, ${thousands(rate)} msg/s (issue 21)`,
    '',
    markdownTable(['figure', 'this run', 'target', ''], rows),
    '',
    ...(missed ? [`What stands in the way:${perCall || ' the pings per call were not measured in this run.'}`, ''] : perCall ? [perCall.trim(), ''] : []),
  ];
}

export function fleetSection(data: RunData): string[] {
  if (data.fleet.length === 0) return ['## Cost as the fleet grows (issue 15, line 2)', '', 'Not run.', ''];
  const rows: string[][] = [];
  for (const store of ['memory', 'redis'] as const) {
    const base = data.fleet.find((f) => f.store === store && f.assets === data.plan.fleet.sizes[0]);
    const mid = data.fleet.find((f) => f.store === store && f.assets === 100_000);
    for (const size of data.plan.fleet.sizes) {
      const f = data.fleet.find((x) => x.store === store && x.assets === size);
      if (f === undefined) {
        rows.push([store, thousands(size), 'failed', '', '', '', '', '', '', '', '']);
        continue;
      }
      const vsBase = base === undefined ? Number.NaN : f.perSecond / base.perSecond;
      const flat = mid === undefined || f === mid || size < 100_000 ? '' : verdictAtMost(Math.abs(f.bytesPerAsset / mid.bytesPerAsset - 1), 0.2);
      rows.push([
        store === 'memory' ? 'memory (cap 1,000,000)' : 'Redis', thousands(size), thousands(f.perSecond),
        `${thousands(f.perSecondRange[0])} – ${thousands(f.perSecondRange[1])}`, f === base ? 'baseline' : times(vsBase),
        f === base ? '' : verdict(vsBase, 0.8), bytes(f.bytesPerAsset), flat, micros(f.nodeCpuUsPerMsg), micros(f.redisCpuUsPerMsg),
        Object.entries(f.tally).map(([k, n]) => `${k} ${thousands(n)}`).join(', '),
      ]);
    }
  }
  return [
    '## Cost as the fleet grows (issue 15, line 2)',
    '',
    `Each fleet size in a fresh Node-RED process with the sliding-window node (memory store capped at 1,000,000 assets, or Redis): first one ping of every asset (the memory store through the node, in slices of 100,000; Redis through the same store class and script, called directly, which is quicker and writes the same records), then ${thousands(data.plan.fleet.units)} further pings of the same fleet handed to the node at once and timed, ${data.plan.fleet.batches} times in a row (each time the next pings of the sequence): msg/s is the median batch, beside the slowest and fastest, and the decisions are those of all ${data.plan.fleet.batches} batches. Bytes per asset: for the memory store the whole Node-RED process heap (heapUsed + arrayBuffers after a full GC) before and after the fleet went in, so everything the node keeps per asset: the store, its index and asset-id strings, and the editor sidebar's board of assets (src/telemetry/window-telemetry.ts, which follows up to 100,000 assets per node: a fixed cost once the fleet is larger); for Redis, used_memory. Both include the slack of tables that grow by doubling. At 1,000 assets the bytes are within the noise of a GC. Targets: throughput within 20 % of the 1,000-asset figure; bytes per asset flat (within 20 % of the 100,000 figure).${data.plan.fleet.sizes.includes(1_000_000) ? '' : ' The quick run stops at 100,000 assets; the full run adds 1,000,000.'}`,
    '',
    markdownTable(['store', 'assets', 'msg/s', 'range of batches', 'vs 1,000', 'target >= 0.8x', 'bytes per asset', 'flat', 'Node-RED CPU µs/msg', 'Redis CPU µs/msg', 'decisions'], rows),
    '',
  ];
}

export function horizontalSection(data: RunData): string[] {
  if (data.horizontal.length === 0) return ['## Horizontal (issue 15, line 3)', '', 'Not run.', ''];
  const rows = data.horizontal.map((h) => [
    h.target === 'cluster' ? `Redis Cluster, ${h.primaries} primaries` : 'one Redis server',
    String(h.processes), thousands(h.decisionsPerSecond), h.perProcess.map(thousands).join(' + '),
    micros(h.redisCpuUsPerDecision), micros(h.nodeCpuUsPerDecision),
  ]);
  return [
    '## Horizontal (issue 15, line 3)',
    '',
    `Node-RED processes sharing one fleet of 1,000 vehicles (each takes every n-th message of the same sequence, so every asset is decided from every process), started together after their warm-up; ${thousands(data.plan.horizontal.units)} messages in all, each process's share handed over at once. Decisions/s: all messages over the time from the first start to the last finish. Redis CPU: INFO cpu of every primary over that time, per decision. This machine has ${cpus().length} cores: two Node-RED processes and Redis share them, so the aggregate cannot grow here; the CPU per decision on each side is what the projection in docs/performance.md is built from.`,
    '',
    markdownTable(['Redis', 'Node-RED processes', 'decisions/s', 'per process (msg/s)', 'Redis CPU µs/decision', 'Node-RED CPU µs/decision'], rows),
    '',
  ];
}

function memorySection(data: RunData): string[] {
  const redisMem = (pick: (m: RedisMemory) => number): number[] => data.redisMemory.map(pick);
  const todayMem = (pick: (m: RedisMemory) => number): string => {
    const today = data.redisMemoryToday ?? [];
    return today.length === 0 ? '' : bytes(median(today.map(pick)));
  };
  const m = data.memory;
  const row = (label: string, values: number[], today: string, target: string, limit?: number): string[] => [
    label, today, bytes(median(values)), bytesSpread(values), target, limit === undefined ? '' : verdictAtMost(median(values), limit),
  ];
  const atGoal = data.plan.redisMemoryEntries >= 1_000_000;
  const redisRow = (label: string, pick: (m: RedisMemory) => number, target: string, limit?: number): string[] => row(label, redisMem(pick), todayMem(pick), target, limit);
  const today = data.builds.find((b) => b.id === 'today');
  return [
    '## Memory',
    '',
    markdownTable(
      ['store', `today${today ? ` (${today.label})` : ''}`, `bytes per entry (memory stores at ${thousands(ENTRIES)} entries, Redis at ${thousands(data.plan.redisMemoryEntries)})`, 'range', 'target', ''],
      [
        row('sliding-window, memory: heap per asset', m.window, '', '<= 200 B', 200),
        row('sensor reconnect, memory: heap per key', m.seen, '', '<= 200 B', 200),
        atGoal
          ? redisRow('sliding-window, Redis: used_memory per asset record (issue 31: at 1,000,000)', (x) => x.window, '<= 64 B', 64)
          : redisRow('sliding-window, Redis: used_memory per asset record', (x) => x.window, '<= 160 B', 160),
        redisRow('the same with every fleet rule on (heading, accuracy, events, clock guard; issue 11)', (x) => x.windowFleet, '<= 200 B', 200),
        redisRow('the same in value mode, each record keeping its reading (issue 29)', (x) => x.windowValue, '', undefined),
        redisRow('the same with a jump candidate pending on every asset (issue 29)', (x) => x.windowCandidate, '', undefined),
        atGoal
          ? redisRow('sensor reconnect, Redis: used_memory per key (issue 31: at 1,000,000)', (x) => x.seen, '<= 64 B', 64)
          : redisRow('sensor reconnect, Redis: used_memory per key', (x) => x.seen, '', undefined),
        redisRow('Redis floor: a key of the same name with a TTL and the value 1', (x) => x.floor, 'reference', undefined),
      ],
    ),
    '',
    `Heap = heapUsed + arrayBuffers after a full GC, in a process of its own; Redis = used_memory after its hash tables settle. Today: the same entries written through the baseline build's own store classes (its layout), on the same server in the same run.${atGoal ? '' : ' Issue 31\'s goal of 64 B per asset and per key is at 1,000,000 entries (BENCH_MEMORY_ENTRIES=1000000).'}`,
    '',
  ];
}

function savingSection(data: RunData): string[] {
  if (data.saving.length === 0) return ['## Saving a memory store (issue 9)', '', 'Not run.', ''];
  const med = (pick: (s: SavingResult) => number): number => median(data.saving.map(pick));
  const first = data.saving[0] as SavingResult;
  const loop = markdownTable(
    ['while', 'longest event-loop turn, ms (median)', 'range', 'took, ms', 'bytes written'],
    [
      ['nothing is saved (the probe\'s floor on this machine)', millis(med((s) => s.idle.maxTurnMs)), msSpread(data.saving.map((s) => s.idle.maxTurnMs)), millis(med((s) => s.idle.ms)), ''],
      [`a save after all ${thousands(first.entries)} entries changed (journal append, then the compaction it triggers)`, millis(med((s) => s.fullSave.maxTurnMs)), msSpread(data.saving.map((s) => s.fullSave.maxTurnMs)), millis(med((s) => s.fullSave.ms)), thousands(med((s) => s.fullSave.bytes))],
      [`a compaction alone (snapshot of ${thousands(first.entries)})`, millis(med((s) => s.compaction.maxTurnMs)), msSpread(data.saving.map((s) => s.compaction.maxTurnMs)), millis(med((s) => s.compaction.ms)), thousands(med((s) => s.compaction.bytes))],
      ['reference: the same entries as one JSON document in one go (as Node-RED\'s file context store writes a scope)', millis(med((s) => s.json.maxTurnMs)), msSpread(data.saving.map((s) => s.json.maxTurnMs)), millis(med((s) => s.json.ms)), thousands(med((s) => s.json.bytes))],
    ],
  );
  const gb = med((s) => s.gbPerDay);
  const wear = markdownTable(
    ['admissions/s', 'set', 'simulated', 'bytes per admission', 'bytes per compaction', 'compactions per day', 'GB written per day', 'target', ''],
    [[
      thousands(first.admissionsPerSecond), thousands(first.entries), `${(first.simulatedSeconds / 3600).toFixed(1)} h`,
      med((s) => s.bytesPerAdmission).toFixed(1), thousands(med((s) => s.bytesPerCompaction)),
      (med((s) => s.compactions / s.simulatedSeconds) * 86_400).toFixed(0), gb.toFixed(2), '< 1 GB/day', verdictAtMost(gb, 1),
    ]],
  );
  return [
    '## Saving a memory store (issue 9)',
    '',
    `The sliding-window memory store with ${thousands(first.entries)} assets and the real StateJournal (src/persist/state-journal.ts) writing to a temporary directory, in a process of its own, ${plural(data.saving.length, 'time')}. The event loop: a setImmediate probe keeps the longest gap between two of its turns, i.e. the longest time anything else held the loop.`,
    '',
    loop,
    '',
    `Disk wear at a steady ${first.admissionsPerSecond} admissions a second into the set, each a different asset (the costliest case: every admission is a record in the next save), saved every ${data.plan.saving.saveEverySeconds} s on the store's injected clock:`,
    '',
    wear,
    '',
  ];
}

function msSpread(values: number[]): string {
  return values.length ? `${millis(min(values))} – ${millis(max(values))}` : '–';
}

function confirmSection(data: RunData): string[] {
  const rows = (['memory', 'redis'] as const).map((store) => {
    const off = store === 'memory' ? 'sr-memory' : 'sr-redis';
    const on = store === 'memory' ? 'sr-memory-confirm' : 'sr-redis-confirm';
    const ratio = ratiosByRound(data.trials.get(on), data.trials.get(off));
    return [store, thousands(median(rates(data.trials.get(off)))), thousands(median(rates(data.trials.get(on)))), times(median(ratio)), micros(cpuPerUnit(data.trials.get(on), 'redis'))];
  });
  return [
    '## Confirm mode (issue 10)',
    '',
    'Sensor readings per second with confirm off (the node alone) and on (each admitted burst then confirmed by a dedup-confirm node; timed until every confirmation is done), same data, same rounds:',
    '',
    markdownTable(['store', 'confirm off, readings/s', 'confirm on + dedup-confirm, readings/s', 'on / off', 'Redis CPU µs/reading (on)'], rows),
    '',
  ];
}

/** A part's section: its heading, then what it found, or "Not run." when it was left out. */
function partSection(title: string, body: string[] | undefined): string[] {
  return [`## ${title}`, '', ...(body ?? ['Not run.']), ''];
}

function scriptSection(data: RunData): string[] {
  const s = data.script;
  return partSection('The sliding-window script alone (issue 20)', s && [
    `No Node-RED: EVALSHA calls of the fleet's pings (10,000 vehicles, every rule on: heading, clock guard, event values) through one client, 4 calls in flight, ${thousands(data.plan.scriptPings)} pings per size (a quarter of that at 1 per call) in ${data.plan.scriptRepeats} runs, of which the one with the least Redis CPU is shown. Script time: INFO commandstats, usec_per_call of evalsha (the script and its redis.call()s; wall-clock time, so a script preempted by another process counts the wait). Redis CPU: INFO cpu of the whole server (the script, reading the command, writing the reply). Per ping: per call over pings per call.`,
    '',
    scriptCostTable(s),
  ]);
}

function profileSection(data: RunData): string[] {
  return partSection("Where Node-RED's main thread spends a message (bench/profile.ts)", data.profile.length === 0 ? undefined : [
    `One trial of each line (${thousands(data.plan.units)} messages handed over at once, as in the throughput lines) under V8's sampling profiler, in a process of its own; each sample counted to the place its function's file is in, divided by the messages. The main thread only: the garbage collector's helper threads and Redis are not in it. Profiled trials run slower, so they are not among the throughput figures.`,
    '',
    profileTable(data.profile),
  ]);
}

function metricsSection(data: RunData): string[] {
  const m = data.metrics;
  return partSection('Counting for Prometheus (bench/metrics-cost.ts)', m && [
    "The write every decision makes to the node's telemetry record (src/telemetry), timed with the counting for Prometheus on and off, alternating in one process so that both see the same machine; no Node-RED. The budget is 0.2 µs per message.",
    '',
    '```',
    ...metricsCostLines(m),
    '```',
  ]);
}

function guardsSection(data: RunData): string[] {
  const g = data.guards;
  return partSection("What the fleet rules cost (bench/guard-cost.ts)", g && [
    "Issue 29's rules (the no-fix guard with a validity field, Min satellites 4, Max HDOP 2, the accuracy rule and the jump guard at 150 km/h) all on, against all off, on the same pings: the node's throughput in pairs of trials whose order alternates (the goal: within 10 %), and the store alone, reading and deciding with no Node-RED around it (the rules' own cost, undiluted).",
    '',
    '```',
    ...guardCostLines(g),
    '```',
  ]);
}

function tuneSection(data: RunData): string[] {
  const t = data.tune;
  const head = ['## dedup-tune grid (bench/tune.ts)', ''];
  if (t.status === 'skipped') return [...head, 'Not run (left out with BENCH_ONLY).', ''];
  if (t.status === 'failed') return [...head, `FAILED after ${t.seconds.toFixed(0)} s: ${t.text}`, ''];
  return [...head, `Run as a child process${data.plan.quick ? ' with TUNE_BENCH_PINGS=200000 and TUNE_BENCH_ROUNDS=1 (the quick run)' : ''}; took ${t.seconds.toFixed(0)} s. What it printed:`, '', t.text, ''];
}

function tallyKey(tally: Record<string, number>): string {
  return JSON.stringify(Object.entries(tally).sort(([a], [b]) => a.localeCompare(b)));
}

function checks(data: RunData): string[] {
  const out: string[] = [];
  const failed = [...data.trials].flatMap(([line, ts]) => ts.filter((t) => t.error).map((t) => `${line} (round ${t.round}): ${t.error?.split('\n')[0] ?? ''}`));
  out.push(failed.length === 0 && data.failures.length === 0 ? '- every trial and part completed' : `- FAILED: ${[...failed, ...data.failures].join('; ')}`);

  const tallies = (line: RoundLine): Record<string, number>[] => okResults(data.trials.get(line)).map((t) => t.tally);
  const sw = [...tallies('sw-memory'), ...tallies('sw-redis'), ...tallies('sw-memory@today'), ...tallies('sw-redis@today')];
  const distinct = new Set(sw.map(tallyKey));
  const first = sw[0] ?? {};
  const admitted = (t: Record<string, number>): number => Object.entries(t).filter(([k]) => k.startsWith('admitted:')).reduce((s, [, n]) => s + n, 0);
  const unavailable = sw.some((t) => Object.keys(t).some((k) => k.endsWith(':store-unavailable')));
  if (sw.length > 0) {
    out.push(
      distinct.size === 1 && !unavailable
        ? `- sliding window: memory and Redis${data.builds.length > 1 ? ", on both builds," : ''} made the same ${thousands(data.plan.units)} decisions in every trial (${Object.entries(first).map(([k, n]) => `${k} ${n}`).join(', ')})`
        : `- sliding window: DECISIONS DIFFER between trials or stores (${[...distinct].join(' / ')})`,
    );
  }
  const naive = tallies('naive');
  if (naive.length > 0 && sw.length > 0) {
    const extra = median(naive.map(admitted)) - admitted(first);
    out.push(`- GET then SET admitted ${thousands(median(naive.map(admitted)))} pings where the atomic script admits ${thousands(admitted(first))}: ${thousands(extra)} duplicates let through, because every GET of a burst ran before any SET (the race the seed warns about)`);
  }
  for (const line of ['sr-memory', 'sr-redis', 'sr-memory-confirm', 'sr-redis-confirm', 'sr-nested'] as const) {
    const results = okResults(data.trials.get(line));
    const bad = results.filter((r) => r.tally.unique !== r.expectedUnique || r.tally.rejected !== 0 || (r.tally['confirm-error'] ?? 0) > 0 || Object.keys(r.tally).some((k) => k === 'audit:store-unavailable'));
    const sample = results[0];
    if (sample) {
      out.push(
        bad.length === 0
          ? `- ${LABELS[line]}: admitted exactly the ${thousands(sample.expectedUnique ?? Number.NaN)} unique readings and suppressed the ${thousands(sample.tally.duplicates ?? Number.NaN)} replays, every trial${line.endsWith('confirm') ? ', every confirmation done without error' : ''}`
          : `- ${LABELS[line]}: WRONG COUNTS in ${bad.length} trials (${bad.map((b) => tallyKey(b.tally)).join(' / ')})`,
      );
    }
  }
  const fleetWrong = data.fleet.filter((f) => Object.keys(f.tally).some((k) => k.endsWith(':store-unavailable')));
  if (data.fleet.length > 0) out.push(fleetWrong.length === 0 ? '- fleet lines: no decision fell back to "store unavailable"' : `- fleet lines: STORE UNAVAILABLE in ${fleetWrong.map((f) => `${f.store} ${f.assets}`).join(', ')}`);
  const horizontalWrong = data.horizontal.filter((h) => Object.keys(h.tally).some((k) => k.endsWith(':store-unavailable')));
  if (data.horizontal.length > 0) out.push(horizontalWrong.length === 0 ? '- horizontal lines: no decision fell back to "store unavailable"' : `- horizontal lines: STORE UNAVAILABLE with ${horizontalWrong.map((h) => `${h.target} x${h.processes}`).join(', ')}`);
  const pacedRuns = [...data.paced.map((p) => ({ name: `${p.line}${p.target === 'cluster' ? ' (Cluster)' : ''}`, phases: p.phases })), ...data.redisCost.map((r) => ({ name: `${r.line} ${r.build}${r.target === 'cluster' ? ' (Cluster)' : ''}`, phases: r.phases }))];
  const lag = pacedRuns.flatMap((p) => p.phases.filter((ph) => (ph.generatorLag?.max ?? 0) > 20).map((ph) => `${p.name} at ${thousands(ph.rate)}/s ${ph.case} (${millis(ph.generatorLag?.max ?? Number.NaN)} ms)`));
  if (pacedRuns.length > 0) out.push(lag.length === 0 ? '- paced lines: the generator never ran more than 20 ms behind schedule' : `- paced lines: the generator ran more than 20 ms behind schedule in ${lag.join(', ')}: the event loop was held (GC, or the machine busy); those maxima understate what a message from outside would see`);
  const alike = decidedAlike(data);
  if (alike !== undefined) out.push(alike);
  const rss = [...data.trials.values()].flat().flatMap((t) => (t.result ? [t.result.maxRssMB] : []));
  if (rss.length > 0) out.push(`- peak RSS of a throughput trial process: ${thousands(max(rss))} MB (${thousands(data.plan.units)} messages are queued at once)`);
  return out;
}

export function renderReport(data: RunData): string {
  const figures = sizingFigures(data);
  return [
    '# Benchmark results',
    '',
    `Generated by \`npm run bench${data.plan.quick ? ' -- --quick' : ''}\` on ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC (commit ${data.commit}, with the working tree as it was)${data.plan.quick ? ': the QUICK run, shorter and smaller than the full one; for checking, not for quoting' : ''}.`,
    '',
    `- machine: ${machine()}; load average ${data.loadBefore} at the start, ${data.loadAfter} at the end`,
    `- ${versions(data.redisVersion)}`,
    `- took ${data.seconds.toFixed(0)} s`,
    '',
    ...issue20Section(data, data.previousFigures),
    ...issue31Section(data),
    ...latencySection(data),
    ...fleetSection(data),
    ...horizontalSection(data),
    ...throughputSection(data),
    ...confirmSection(data),
    ...memorySection(data),
    ...savingSection(data),
    ...scriptSection(data),
    ...profileSection(data),
    ...metricsSection(data),
    ...guardsSection(data),
    ...tuneSection(data),
    '## Sizing a deployment',
    '',
    `From the figures above (the Cluster's busy cost as measured at ${thousands(figures.clusterBusyRate)} msg/s, its busiest rate); the reasoning and the assumptions are in docs/performance.md.`,
    '',
    sizingTable(figures),
    '',
    '## Checks',
    '',
    ...checks(data),
    '',
  ].join('\n');
}

