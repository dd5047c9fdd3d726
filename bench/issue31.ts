/**
 * The Redis part's section (issue 31): what a decision costs Redis, cold
 * and warm, with the options users turn on, paced and flat out, on one
 * server and on the Cluster, for today's build and the working tree, each
 * against the floor measured in the same run; the issue's goals with their
 * verdicts; and, where the 50,000 msg/s tail misses, what the run measured
 * holding it back. Pure: it formats what bench/run.ts measured.
 */
import { cpus } from 'os';
import { costPhase, type RedisCostRun, type RunData } from './figures';
import type { Case, PacedPhase } from './paced';
import type { RedisCostLine } from './plan';
import { markdownTable, millis, thousands } from './stats';

export const COST_LABELS: Record<RedisCostLine['line'], string> = {
  'sw-redis': 'sliding window, default rules (clock guard on)',
  'sw-redis-fleet': 'sliding window, every fleet rule on (clock guard, accuracy, turn, events)',
  'sr-redis': 'sensor node, confirm off, one reading per message',
  'sr-redis-confirm': 'sensor node, confirm on + dedup-confirm, one reading per message',
};

const CASES: Record<Case, string> = {
  warm: 'warm',
  cold: 'cold',
  outside: 'outside run',
};

/** Issue 31's goals for the working tree. */
export const GOALS = {
  quietServerUs: 8,
  quietClusterUs: 12,
  quietP99Ms: 5,
  busyP99Ms: 3,
  quietRate: 2_000,
  busyRate: 50_000,
};

const us = (x: number | undefined): string => (x === undefined || !Number.isFinite(x) ? '–' : x.toFixed(x >= 100 ? 0 : x >= 10 ? 1 : 2));
const ratio = (a: number | undefined, b: number | undefined): string => (a === undefined || b === undefined || !Number.isFinite(a / b) ? '–' : `${(a / b).toFixed(2)}x`);

function phaseName(p: PacedPhase): string {
  return p.kind === 'paced' ? `${thousands(p.rate)} msg/s` : 'flat out';
}

function runOf(data: RunData, target: RedisCostRun['target'], line: RedisCostLine['line'], build: RedisCostRun['build']): RedisCostRun | undefined {
  return data.redisCost.find((r) => r.target === target && r.line === line && r.build === build);
}

/** The table of one target: each line's phases, today beside the working tree, each against its floor. */
function costTable(data: RunData, target: RedisCostRun['target']): string | undefined {
  const rows: string[][] = [];
  for (const line of data.plan.redis.lines) {
    const fresh = runOf(data, target, line.line, 'new');
    const today = runOf(data, target, line.line, 'today');
    const phases = (fresh ?? today)?.phases ?? [];
    phases.forEach((shape) => {
      const q = { target, line: line.line, kind: shape.kind, case: shape.case, rate: shape.rate };
      const n = costPhase(data, { ...q, build: 'new' });
      const t = costPhase(data, { ...q, build: 'today' });
      rows.push([
        line.line, phaseName(shape), CASES[shape.case],
        us(t?.phase.redisCpuUsPerMsg), us(n?.phase.redisCpuUsPerMsg), us(n?.floor?.redisCpuUsPerMsg), ratio(n?.phase.redisCpuUsPerMsg, n?.floor?.redisCpuUsPerMsg),
        ratio(t?.phase.redisCpuUsPerMsg, t?.floor?.redisCpuUsPerMsg),
        `${us(t?.phase.scriptUsPerMsg)} / ${us(n?.phase.scriptUsPerMsg)}`,
        `${us(t?.phase.pingsPerCall)} / ${us(n?.phase.pingsPerCall)}`,
        shape.kind === 'paced' ? `${millis(t?.phase.latency?.p99 ?? Number.NaN)} / ${millis(n?.phase.latency?.p99 ?? Number.NaN)}` : `${thousands(t?.phase.achievedRate ?? Number.NaN)} / ${thousands(n?.phase.achievedRate ?? Number.NaN)}`,
      ]);
    });
  }
  if (rows.length === 0) return undefined;
  const hasToday = data.builds.some((b) => b.id === 'today');
  return markdownTable(
    [
      'line', 'rate', 'case', 'today: Redis CPU µs/decision', 'new: Redis CPU µs/decision', 'floor µs/decision (new\'s calls)', 'new / floor', 'today / its floor',
      'script µs/decision, today / new', 'requests per call, today / new', 'p99 ms (paced) or decisions/s (flat out), today / new',
    ],
    hasToday ? rows : rows.map((r) => r.map((cell, i) => (i === 3 || i === 7 ? '–' : cell))),
  );
}

/** Issue 31's goals and where this run stands. */
function goalsTable(data: RunData): string[][] {
  const { quietRate, busyRate } = GOALS;
  const at = (target: RedisCostRun['target'], build: RedisCostRun['build'], rate: number, c: Case = 'warm') => costPhase(data, { target, line: 'sw-redis', build, kind: 'paced', case: c, rate });
  const verdict = (value: number | undefined, limit: number): string => (value === undefined || !Number.isFinite(value) ? 'not run' : value <= limit ? 'met' : 'MISSED');
  const rows: string[][] = [];
  for (const [target, limit] of [['server', GOALS.quietServerUs], ['cluster', GOALS.quietClusterUs]] as const) {
    for (const c of ['warm', 'cold'] as const) {
      const n = at(target, 'new', quietRate, c);
      const t = at(target, 'today', quietRate, c);
      rows.push([
        `Redis CPU per decision at ${thousands(quietRate)} msg/s, ${target === 'server' ? 'one server' : `${data.plan.redis.clusterPrimaries}-primary Cluster`}, ${c}`,
        `${us(t?.phase.redisCpuUsPerMsg)} µs`, `${us(n?.phase.redisCpuUsPerMsg)} µs`, `${us(n?.floor?.redisCpuUsPerMsg)} µs`, `<= ${limit} µs`, verdict(n?.phase.redisCpuUsPerMsg, limit),
      ]);
    }
    const n = at(target, 'new', quietRate);
    const t = at(target, 'today', quietRate);
    rows.push([
      `p99 input to output at ${thousands(quietRate)} msg/s, ${target === 'server' ? 'one server' : 'Cluster'}, warm`,
      `${millis(t?.phase.latency?.p99 ?? Number.NaN)} ms`, `${millis(n?.phase.latency?.p99 ?? Number.NaN)} ms`, '', `<= ${GOALS.quietP99Ms} ms`, verdict(n?.phase.latency?.p99, GOALS.quietP99Ms),
    ]);
  }
  for (const target of ['server', 'cluster'] as const) {
    const n = at(target, 'new', busyRate);
    const t = at(target, 'today', busyRate);
    if (n === undefined && t === undefined) continue;
    const fed = n !== undefined && n.phase.achievedRate >= 0.97 * busyRate;
    rows.push([
      `p99 input to output at ${thousands(busyRate)} msg/s offered, ${target === 'server' ? 'one server' : 'Cluster'}, warm`,
      `${millis(t?.phase.latency?.p99 ?? Number.NaN)} ms`, `${millis(n?.phase.latency?.p99 ?? Number.NaN)} ms`, '', `<= ${GOALS.busyP99Ms} ms`,
      fed ? verdict(n?.phase.latency?.p99, GOALS.busyP99Ms) : 'not fed at the rate',
    ]);
  }
  return rows;
}

/**
 * What the run measured around a paced phase whose tail is over its goal:
 * the generator, Node-RED's thread and its garbage collection, Redis, the
 * machine. Which of them was saturated (the generator short of the rate,
 * a thread or a core busy 90 % of the time or more) is named first.
 */
export function heldBack(p: PacedPhase, label: string): string {
  const cores = cpus().length;
  const ours = ((p.nodeCpuUsPerMsg + (p.redisCpuUsPerMsg ?? 0)) * p.achievedRate) / 1e6;
  const others = p.machineBusyCores === undefined ? undefined : Math.max(0, p.machineBusyCores - ours);
  const saturated: string[] = [];
  if (p.achievedRate < 0.97 * p.rate) saturated.push(`the generator (it made ${thousands(p.achievedRate)} of the ${thousands(p.rate)} msg/s offered)`);
  if (p.nodeBusy >= 0.9) saturated.push(`Node-RED's thread (busy ${(p.nodeBusy * 100).toFixed(0)} % of the time)`);
  if ((p.redisBusy ?? 0) >= 0.9) saturated.push(`Redis (its busiest primary used ${((p.redisBusy ?? 0) * 100).toFixed(0)} % of a core)`);
  if (p.machineBusyCores !== undefined && p.machineBusyCores >= 0.9 * cores) saturated.push(`the machine (its ${cores} cores ${((p.machineBusyCores / cores) * 100).toFixed(0)} % busy)`);
  const measured = [
    `the generator ran ${millis(p.generatorLag?.p99 ?? Number.NaN)} ms late at p99 (${millis(p.generatorLag?.max ?? Number.NaN)} at most)`,
    `Node-RED's thread was busy ${(p.nodeBusy * 100).toFixed(0)} % of the phase and garbage collection paused it ${millis(p.gcMs)} ms in all, ${millis(p.gcMaxMs)} ms at the longest`,
    ...(p.batcherWait && p.callRoundTrip ? [`a request waited ${millis(p.batcherWait.p99)} ms in the tick batcher at p99 and a call took ${millis(p.callRoundTrip.p99)} ms there and back at p99 (${us(p.pingsPerCall)} requests per call)`] : []),
    `Redis's busiest primary used ${(((p.redisBusy ?? Number.NaN) * 100)).toFixed(0)} % of a core`,
    ...(p.machineBusyCores !== undefined ? [`the machine's ${cores} cores were ${p.machineBusyCores.toFixed(2)} busy on average, ${(others ?? 0).toFixed(2)} of them with other processes`] : []),
  ];
  const lead = saturated.length > 0 ? `saturated: ${saturated.join('; ')}` : 'nothing was saturated: the tail comes from pauses, not from a lack of capacity';
  return `- **${label}**: p99 ${millis(p.latency?.p99 ?? Number.NaN)} ms; ${lead}. Measured: ${measured.join('; ')}.`;
}

/**
 * Where a quiet rate's Redis CPU goal is missed, what the run measured
 * under it: the floor of the same calls (the least work with that
 * batching), the script against it, the requests per call, and the
 * script's cost per call and per ping from the script part.
 */
function cpuHeldBack(data: RunData): string[] {
  const out: string[] = [];
  for (const [target, limit] of [['server', GOALS.quietServerUs], ['cluster', GOALS.quietClusterUs]] as const) {
    const n = costPhase(data, { target, line: 'sw-redis', build: 'new', kind: 'paced', case: 'warm', rate: GOALS.quietRate });
    const cpu = n?.phase.redisCpuUsPerMsg;
    if (n === undefined || cpu === undefined || cpu <= limit) continue;
    const floor = n.floor?.redisCpuUsPerMsg;
    const where = target === 'server' ? 'one server' : 'the Cluster';
    const fit = data.script?.fits['new:warm']?.cpu;
    const floorFit = data.script?.fits['floor:warm']?.cpu;
    const wake = n.floor?.wake;
    // The fewest calls a p99 of quietP99Ms allows: none of a primary's requests waits longer, so each primary is called that often at least.
    const primaries = target === 'server' ? 1 : data.plan.redis.clusterPrimaries;
    const fewestCallsPerS = (1000 / GOALS.quietP99Ms) * primaries;
    const wakeAtFewest = wake === undefined ? undefined : (wake.redisCpuUsPerCall * fewestCallsPerS) / GOALS.quietRate;
    out.push(
      `- **Redis CPU at ${thousands(GOALS.quietRate)} msg/s, ${where}**: ${us(cpu)} µs per decision, ${us(n.phase.pingsPerCall)} pings per call. ` +
        (wake
          ? `The same calls carrying nothing (the wake: one key each, no read or write) cost the server ${us(wake.redisCpuUsPerMsg)} µs per decision, ${us(wake.redisCpuUsPerCall)} µs per call: what this machine charges Redis for waking up to a call, reading it and writing its reply. ` +
            `A p99 of ${GOALS.quietP99Ms} ms allows no fewer than ${thousands(fewestCallsPerS)} calls a second (one per ${GOALS.quietP99Ms} ms ${primaries === 1 ? 'to the server' : `to each of ${primaries} primaries`}); at the cost measured here, for calls closer together than that, they alone would be ${us(wakeAtFewest)} µs per decision${wakeAtFewest !== undefined && wakeAtFewest > limit ? `, over the goal of ${limit} µs before a single read or write: no batching meets both goals on this machine` : ` of the goal's ${limit} µs`}. `
          : '') +
        `The floor of the same calls, one GET and one SET per ping and nothing else, cost ${us(floor)} µs (${floor !== undefined && floor > limit ? 'already over the goal: with this many pings per call, no script can meet it; only more pings per call can' : `${((floor ?? Number.NaN) / limit * 100).toFixed(0)} % of the goal`}), the script ${ratio(cpu, floor)} that. ` +
        (fit && floorFit ? `Alone and pipelined (the script part), a call costs Redis ${us(fit.fixedUs)} µs beyond its pings and ${us(fit.perPingUs)} µs per ping, the floor ${us(floorFit.fixedUs)} and ${us(floorFit.perPingUs)}: the script's own work per ping is the larger part of the gap. ` : '') +
        (target === 'cluster' ? 'On the Cluster each call carries the pings of one of 12 buckets only, so a call carries few pings whatever the linger; fewer buckets per primary would give larger calls, at the price of renaming every key.' : `A longer linger gives larger calls (BENCH_LINGER_MS), at the price of its delay in the p99.`),
    );
  }
  return out;
}

/** The figures the outside run quoted, for the row that has its shape. */
const OUTSIDE = 'an outside run of 200,000 pings of 10,000 vehicles none of which had a record, handed to a Node-RED runtime at once, about 500 pings per call: 7.7–9.2 µs of script time and 7.2–8.6 µs of server CPU per decision';

export function issue31Section(data: RunData): string[] {
  const head = ['## Redis cost per decision (issue 31)', ''];
  if (data.redisCost.length === 0) return [...head, 'Not run.', ''];
  const plan = data.plan.redis;
  const today = data.builds.find((b) => b.id === 'today');
  const fresh = data.builds.find((b) => b.id === 'new');
  const server = costTable(data, 'server');
  const cluster = costTable(data, 'cluster');
  const outside = costPhase(data, { target: 'server', line: 'sw-redis', build: 'new', kind: 'burst', case: 'outside' });
  const outsideToday = costPhase(data, { target: 'server', line: 'sw-redis', build: 'today', kind: 'burst', case: 'outside' });
  const misses: string[] = [...cpuHeldBack(data)];
  for (const target of ['server', 'cluster'] as const) {
    for (const [rate, limit] of [[GOALS.quietRate, GOALS.quietP99Ms], [GOALS.busyRate, GOALS.busyP99Ms]] as const) {
      const n = costPhase(data, { target, line: 'sw-redis', build: 'new', kind: 'paced', case: 'warm', rate });
      if (n?.phase.latency !== undefined && n.phase.latency.p99 > limit) misses.push(heldBack(n.phase, `${thousands(rate)} msg/s, ${target === 'server' ? 'one server' : 'Cluster'}`));
    }
  }
  return [
    ...head,
    `Each line in a fresh Node-RED process per build (${today ? `today: the landed code of ${today.label}, built on its own; ` : ''}new: the working tree${fresh ? `, ${fresh.label}` : ''}${plan.lingerMs !== undefined ? `, its linger set to ${plan.lingerMs} ms` : ', its default linger'}), ${today ? 'today\'s first, line by line, ' : ''}on the bench's own redis-server and on a Cluster of ${plan.clusterPrimaries} primaries (each primary's CPU counted). First a prime: one message for each of ${thousands(plan.assets)} vehicles (or sensors) at ${thousands(plan.primeRate)} msg/s, which also warms up the JIT; no burst comes before the paced phases. Then each rate for ${plan.seconds} s recorded after ${plan.settleSeconds} s unrecorded, warm and cold, then flat out (${thousands(plan.burstUnits)} messages handed over at once). The cases:`,
    '',
    `- **warm**: the ${thousands(plan.assets)}-vehicle fleet (2,000 msg/s is a ping every 5 s each, issue 31's municipal fleet), every vehicle with a record; sensors: replays of readings already seen (suppressed as duplicates, no write).`,
    '- **cold**: every message the first of its vehicle (a record is created); sensors: a new reading (a key is created).',
    `- **outside run**: ${thousands(plan.burstUnits)} pings of 10,000 vehicles none of which has a record, handed over at once: the shape of ${OUTSIDE}. Here: ${us(outside?.phase.scriptUsPerMsg)} µs of script time and ${us(outside?.phase.redisCpuUsPerMsg)} µs of CPU per decision (today ${us(outsideToday?.phase.scriptUsPerMsg)} and ${us(outsideToday?.phase.redisCpuUsPerMsg)}), ${us(outside?.phase.pingsPerCall)} pings per call.`,
    '',
    `Redis CPU: INFO cpu (used_cpu_sys + used_cpu_user of every primary) over the recorded phase, per decision: idle time included, so what a quiet rate costs the server in waking up is in it. Script time: INFO commandstats, usec of EVALSHA and EVAL (the scripts and their redis.call()s). The floor: the least work a decision needs, one GET and one SET of a 44-byte entry with a TTL per decision, replayed with the same calls (when each went out, how many requests, which slot) on the same server right after the line (bench/floor.ts); new / floor is the working tree's cost as a multiple of it, today / its floor today's against the floor of today's own calls. The wake (at ${thousands(GOALS.quietRate)} msg/s, warm): the same calls once more, each carrying nothing (one key for the slot, a script that returns at once), what being called at those moments alone costs the server. Requests per call: what the tick batcher put in a call (pings; sensor keys, confirms included). p99: from the making of a message to the node after the dedup node (for the admitted readings of the confirm line, to dedup-confirm's done()).`,
    '',
    '### Goals',
    '',
    markdownTable(['goal', 'today', 'new', 'floor (new)', 'target', ''], goalsTable(data)),
    '',
    ...(misses.length > 0 ? ['What holds the goals missed back, as measured in this run:', '', ...misses, ''] : []),
    '### One server',
    '',
    server ?? 'Not run.',
    '',
    `### Redis Cluster, ${plan.clusterPrimaries} primaries`,
    '',
    cluster ?? 'Not run (or failed: see the checks).',
    '',
    "On a Cluster a script call carries the keys of one hash slot only; the store groups an instance's keys into 12 bucket slots (docs/redis.md), so a turn sends a call per bucket it has keys of.",
    '',
  ];
}

/** The check that both builds decided every phase alike; undefined without today's build. */
export function decidedAlike(data: RunData): string | undefined {
  if (!data.builds.some((b) => b.id === 'today')) return undefined;
  const differ: string[] = [];
  let compared = 0;
  for (const run of data.redisCost.filter((r) => r.build === 'new')) {
    const other = runOf(data, run.target, run.line, 'today');
    if (other === undefined) continue;
    run.phases.forEach((p, i) => {
      const o = other.phases[i];
      if (o === undefined) return;
      compared++;
      if (JSON.stringify(p.tally) !== JSON.stringify(o.tally)) differ.push(`${run.target} ${run.line} ${phaseName(p)} ${p.case}: today ${JSON.stringify(o.tally)}, new ${JSON.stringify(p.tally)}`);
    });
  }
  return differ.length === 0
    ? `- redis part: today's build and the working tree made the same decisions in every one of ${compared} phases`
    : `- redis part: DECISIONS DIFFER between today's build and the working tree in ${differ.join('; ')}`;
}
