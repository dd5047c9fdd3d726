/**
 * The sliding-window script alone, no Node-RED: what a call costs
 * redis-server at 1, 10, 100 and 500 pings per call, so that the fixed cost
 * of a call and the cost of each ping are measured apart; for warm vehicles
 * (each with a record) and cold ones (each ping the first of its vehicle);
 * for each build of the run (the working tree, and the baseline commit's,
 * bench/baseline.ts); beside the floor at the same call sizes (bench/floor.ts,
 * FLOOR_LUA: one GET and one SET per ping).
 *
 * Each build is driven through its own compiled RedisWindowStore, with
 * maxBatch set to the call size and no linger, so that every call carries
 * exactly that many pings, whatever the build's key layout and arguments:
 * the store packs the call as a node's would. Four calls are kept in flight,
 * so the server never waits for the client. The fleet's pings (bench/data.ts;
 * 10,000 vehicles, as in issue 20's figures; with a heading, an accuracy and
 * event values, and every rule on, so that every rule of the script runs;
 * about half admitted). Around each run: CONFIG RESETSTAT and INFO
 * commandstats (usec of EVALSHA and EVAL: the script's own time, its
 * redis.call()s included) and INFO cpu (the whole server's user + system
 * time: the script, reading the command and writing the reply). The line
 * through the 1- and the 500-ping calls gives the fixed cost per call and
 * the cost per ping.
 *
 * Every call has a token of its own (the store's), and the decisions of a
 * whole run are hashed: two builds that print the same digest for a case
 * decided every ping alike.
 *
 * Each size is timed in SCRIPT_COST_REPEATS runs (3) of each build and of
 * the floor, taking turns (the order reversed every other repeat, so that a
 * slow spell falls on all of them alike), and the run with the least server
 * CPU is reported: on a shared machine other processes only
 * ever add to a run's cost (cache, preemption), so the least is the
 * script's own. Script time is wall-clock time inside the server, so a
 * script preempted by another process counts that wait; Redis CPU does not.
 *
 * The part `script` of npm run bench (BENCH_ONLY=script), on the bench's
 * server: SCRIPT_COST_PINGS sets the pings per size, SCRIPT_COST_REPEATS
 * the runs per size, SCRIPT_COST_LUA a variant of the working tree's script
 * to time instead (with the same prelude), for profiling.
 */
import { createHash } from 'crypto';
import { readFileSync, realpathSync } from 'fs';
import { join } from 'path';
import Redis from 'ioredis';
import type { Ping } from '../src/core/window/sliding-window';
import type { WindowOutcome } from '../src/stores/types';
import type { BenchBuild } from './baseline';
import { pingMessage } from './data';
import { FLOOR_LUA } from './floor';
import { answerParent, redisCpuSeconds, scriptStats } from './runtime';
import { markdownTable, thousands } from './stats';

export type ScriptCase = 'warm' | 'cold';

export interface ScriptCostJob {
  /** The bench's server. */
  port: number;
  /** Pings timed at each size, split over `repeats` runs of which the one with the least CPU counts. */
  pings: number;
  repeats: number;
  builds: BenchBuild[];
  /** A Lua file to run instead of the working tree's lua/sliding-window.lua (with the same prelude): for profiling variants. */
  lua?: string;
  /** Pings per call to time (default SIZES). */
  sizes?: number[];
}

export interface ScriptCostRow {
  /** A build's id, or `floor`. */
  build: BenchBuild['id'] | 'floor';
  case: ScriptCase;
  pingsPerCall: number;
  calls: number;
  /** INFO commandstats: EVALSHA and EVAL usec per call. */
  scriptUsPerCall: number;
  /** INFO cpu: used_cpu_user + used_cpu_sys of the server, per call. */
  cpuUsPerCall: number;
  admitted: number;
}

/** usec per call = fixed + perPing * pings, through the 1- and the 500-ping calls. */
export interface Fit {
  fixedUs: number;
  perPingUs: number;
}

export interface ScriptCostResult {
  redisVersion: string;
  builds: { id: BenchBuild['id']; label: string }[];
  rows: ScriptCostRow[];
  /** Per build and case, and the floor's per case: `${build}:${case}` -> the fits of script time and of CPU. */
  fits: Record<string, { script: Fit; cpu: Fit }>;
  /** SHA-256 (first 16 hex digits) of every decision, in order: `${build}:${case}` -> digest. */
  digests: Record<string, string>;
}

export const SIZES = [1, 10, 100, 500];
const ASSETS = 10_000;
const IN_FLIGHT = 4;
const ID_PREFIX = 'sc-';

/** Every rule on: 60 s, 25 m, 30° heading, clock guard 300 s ahead, 6 h TTL. */
const SETTINGS = { minSeconds: 60, minMetres: 25, minHeadingDegrees: 30, maxAheadSeconds: 300, ttlSeconds: 21_600 };

/** Ping i of the fleet, with the fields that bring the heading, accuracy and event rules in; `cold`: vehicle i's first. */
function ping(i: number, cold: boolean): Ping {
  const { payload } = pingMessage(i, cold ? 1e12 : ASSETS, cold ? 'cold-' : ID_PREFIX);
  const k = cold ? 0 : Math.floor(i / ASSETS);
  return {
    assetId: payload.assetId,
    t: payload.ts,
    lat: payload.lat,
    lon: payload.lon,
    // 3° more each ping: a turn of 30° admits about one ping in ten of a mover.
    heading: ((i % ASSETS) * 13 + k * 3) % 360,
    accuracy: 3 + (i % 5),
    // A change of event values every 40th ping of a vehicle.
    events: Math.floor(k / 40) % 3,
  };
}

/**
 * The line through the smallest and the largest call: per ping, the slope;
 * fixed, what a one-ping call costs beyond its ping. (A least-squares line
 * through all four lets the 500-ping calls' noise swing the intercept by
 * more than the fixed cost itself on a busy machine.)
 */
function fit(rows: readonly ScriptCostRow[], usPerCall: (r: ScriptCostRow) => number): Fit {
  const a = rows[0] as ScriptCostRow;
  const b = rows[rows.length - 1] as ScriptCostRow;
  const perPingUs = (usPerCall(b) - usPerCall(a)) / (b.pingsPerCall - a.pingsPerCall);
  return { fixedUs: usPerCall(a) - perPingUs * a.pingsPerCall, perPingUs };
}

/** Sends calls of one size and waits for them, IN_FLIGHT at a time; counts and hashes what was decided. */
interface Caller {
  run(calls: Ping[][]): Promise<void>;
  admitted: number;
  digest(): string;
  close(): void;
}

type StoreModule = typeof import('../src/stores/redis-window-store');
type ScriptsModule = typeof import('../src/redis/scripts');

/** A build's own RedisWindowStore on a client of its own, each call exactly `size` pings. */
function storeCaller(build: BenchBuild, port: number, size: number, prefix: string, lua: string | undefined): Caller {
  const root = realpathSync(build.root);
  /* eslint-disable @typescript-eslint/no-require-imports -- the build's compiled modules, as Node-RED would load them */
  const { RedisWindowStore } = require(join(root, 'nodes', 'stores', 'redis-window-store.js')) as StoreModule;
  const scripts = require(join(root, 'nodes', 'redis', 'scripts.js')) as ScriptsModule;
  /* eslint-enable @typescript-eslint/no-require-imports */
  const client = new Redis({ host: '127.0.0.1', port });
  if (lua === undefined) scripts.defineDedupScripts(client);
  else {
    // The prelude the loader puts before the file, then the variant.
    const source = scripts.scriptSource('dedupSlidingWindow');
    const file = readFileSync(join(root, 'lua', 'sliding-window.lua'), 'utf8');
    scripts.defineDedupScripts(client);
    client.defineCommand('dedupSlidingWindow', { lua: source.slice(0, source.length - file.length) + readFileSync(lua, 'utf8') });
  }
  const store = new RedisWindowStore(client, SETTINGS, { keyPrefix: prefix, cluster: false, timeoutMs: 120_000, maxBatch: size });
  const hash = createHash('sha256');
  const caller: Caller = {
    admitted: 0,
    digest: () => hash.copy().digest('hex').slice(0, 16),
    close: () => client.disconnect(),
    run: (calls) =>
      new Promise((resolve, reject) => {
        let next = 0;
        let open = 0;
        // Per call, its outcomes in order: a call's replies come back together, in order.
        const send = (): void => {
          while (open < IN_FLIGHT && next < calls.length) {
            const pings = calls[next++] as Ping[];
            const outcomes: string[] = [];
            open++;
            const replies = {
              value: (o: WindowOutcome) => {
                outcomes.push(`${o.reason},${o.accepted},${o.suppressed}`);
                if (o.admit) caller.admitted++;
                if (outcomes.length === pings.length) {
                  hash.update(outcomes.join(';'));
                  open--;
                  if (next >= calls.length && open === 0) resolve();
                  else send();
                }
              },
              error: (error: unknown) => reject(error instanceof Error ? error : new Error(String(error))),
            };
            // maxBatch is the call's size: its last ping sends it, at once.
            for (const p of pings) store.decide(p, replies, undefined);
          }
        };
        send();
      }),
  };
  return caller;
}

/** FLOOR_LUA at the same call sizes, on the same keys. */
function floorCaller(port: number, prefix: string, sha: () => string): Caller {
  const client = new Redis({ host: '127.0.0.1', port });
  const caller: Caller = {
    admitted: 0,
    digest: () => '',
    close: () => client.disconnect(),
    run: async (calls) => {
      let next = 0;
      const lane = async (): Promise<void> => {
        while (next < calls.length) {
          const pings = calls[next++] as Ping[];
          await client.evalsha(sha(), pings.length, ...pings.map((p) => `${prefix}${p.assetId}`), 'x'.repeat(44), '21600');
        }
      };
      await Promise.all(Array.from({ length: IN_FLIGHT }, lane));
    },
  };
  return caller;
}

export async function scriptCost(job: ScriptCostJob): Promise<ScriptCostResult> {
  const admin = new Redis({ host: '127.0.0.1', port: job.port });
  try {
    const redisVersion = /redis_version:([^\r\n]+)/.exec(await admin.info('server'))?.[1] ?? '?';
    const floorSha = (await admin.script('LOAD', FLOOR_LUA)) as string;
    const rows: ScriptCostRow[] = [];
    const digests: Record<string, string> = {};
    const sides: { id: BenchBuild['id'] | 'floor'; caller: (size: number, prefix: string) => Caller }[] = [
      ...job.builds.map((build) => ({ id: build.id, caller: (size: number, prefix: string) => storeCaller(build, job.port, size, prefix, build.id === 'new' ? job.lua : undefined) })),
      { id: 'floor' as const, caller: (_size: number, prefix: string) => floorCaller(job.port, prefix, () => floorSha) },
    ];
    // Case by case and size by size, every side in turn (the order
    // alternating from one repeat to the next), so that a slow spell of a
    // shared machine falls on the builds alike rather than on one of them.
    for (const c of ['warm', 'cold'] as ScriptCase[]) {
      const lanes = sides.map((side) => ({ side, prefix: `sc-${side.id}-${c}:`, seq: 0, hash: createHash('sha256') }));
      const callsOf = (lane: (typeof lanes)[number], pingsPerCall: number, pings: number): Ping[][] => {
        const calls: Ping[][] = [];
        for (let n = 0; n < Math.max(1, Math.round(pings / pingsPerCall)); n++) {
          const list: Ping[] = [];
          for (let j = 0; j < pingsPerCall; j++) list.push(ping(lane.seq++, c === 'cold'));
          calls.push(list);
        }
        return calls;
      };
      if (c === 'warm') {
        // Every vehicle has a record before anything is timed.
        for (const lane of lanes) {
          const warming = lane.side.caller(100, lane.prefix);
          await warming.run(callsOf(lane, 100, 2 * ASSETS));
          lane.hash.update(warming.digest());
          warming.close();
        }
      }
      for (const pingsPerCall of job.sizes ?? SIZES) {
        const callers = lanes.map((lane) => lane.side.caller(pingsPerCall, lane.prefix));
        const best: (ScriptCostRow | undefined)[] = lanes.map(() => undefined);
        // Fewer pings at one per call: each call is the costly part there.
        const perRun = (pingsPerCall === 1 ? job.pings / 4 : job.pings) / job.repeats;
        for (let r = 0; r < job.repeats; r++) {
          const order = lanes.map((_, i) => i);
          if (r % 2 === 1) order.reverse();
          for (const i of order) {
            const lane = lanes[i] as (typeof lanes)[number];
            const caller = callers[i] as Caller;
            const calls = callsOf(lane, pingsPerCall, perRun);
            const admitted0 = caller.admitted;
            await admin.config('RESETSTAT');
            const cpu0 = await redisCpuSeconds(admin);
            await caller.run(calls);
            const cpu = (await redisCpuSeconds(admin)) - cpu0;
            const row: ScriptCostRow = {
              build: lane.side.id,
              case: c,
              pingsPerCall,
              calls: calls.length,
              scriptUsPerCall: scriptStats(await admin.info('commandstats')).usec / calls.length,
              cpuUsPerCall: (cpu * 1e6) / calls.length,
              admitted: (caller.admitted - admitted0) / (calls.length * pingsPerCall),
            };
            const kept = best[i];
            if (kept === undefined || row.cpuUsPerCall < kept.cpuUsPerCall) best[i] = row;
          }
        }
        lanes.forEach((lane, i) => {
          const caller = callers[i] as Caller;
          lane.hash.update(caller.digest());
          caller.close();
          rows.push(best[i] as ScriptCostRow);
        });
      }
      for (const lane of lanes) {
        if (lane.side.id !== 'floor') digests[`${lane.side.id}:${c}`] = lane.hash.digest('hex').slice(0, 16);
        const written = await admin.keys(`${lane.prefix}*`);
        for (let i = 0; i < written.length; i += 1000) await admin.del(...written.slice(i, i + 1000));
      }
    }
    // The table reads build by build, case by case, size by size.
    const sideAt = (id: ScriptCostRow['build']): number => sides.findIndex((side) => side.id === id);
    const caseAt = (c: ScriptCase): number => (c === 'warm' ? 0 : 1);
    rows.sort((a, b) => sideAt(a.build) - sideAt(b.build) || caseAt(a.case) - caseAt(b.case) || a.pingsPerCall - b.pingsPerCall);
    const fits: ScriptCostResult['fits'] = {};
    for (const side of sides) {
      for (const c of ['warm', 'cold'] as ScriptCase[]) {
        const mine = rows.filter((r) => r.build === side.id && r.case === c);
        if (mine.length >= 2) fits[`${side.id}:${c}`] = { script: fit(mine, (r) => r.scriptUsPerCall), cpu: fit(mine, (r) => r.cpuUsPerCall) };
      }
    }
    return { redisVersion, builds: job.builds.map((b) => ({ id: b.id, label: b.label })), rows, fits, digests };
  } finally {
    admin.disconnect();
  }
}

/** The part's table, in Markdown. */
export function scriptCostTable(r: ScriptCostResult): string {
  const f = (x: number | undefined): string => (x === undefined || !Number.isFinite(x) ? '–' : x.toFixed(2));
  const name = (id: ScriptCostRow['build']): string => (id === 'floor' ? 'floor' : `${id} (${r.builds.find((b) => b.id === id)?.label ?? '?'})`);
  const table = markdownTable(
    ['build', 'case', 'pings per call', 'calls', 'script µs per call', 'script µs per ping', 'Redis CPU µs per call', 'Redis CPU µs per ping', 'floor CPU µs per ping', 'CPU / floor', 'admitted'],
    r.rows.map((row) => {
      const floor = r.rows.find((x) => x.build === 'floor' && x.case === row.case && x.pingsPerCall === row.pingsPerCall);
      const perPing = row.cpuUsPerCall / row.pingsPerCall;
      const floorPerPing = floor === undefined ? Number.NaN : floor.cpuUsPerCall / floor.pingsPerCall;
      return [
        name(row.build), row.case, String(row.pingsPerCall), thousands(row.calls), f(row.scriptUsPerCall), f(row.scriptUsPerCall / row.pingsPerCall), f(row.cpuUsPerCall), f(perPing),
        row.build === 'floor' ? '' : f(floorPerPing), row.build === 'floor' ? '' : `${(perPing / floorPerPing).toFixed(2)}x`, row.build === 'floor' ? '' : `${(row.admitted * 100).toFixed(0)} %`,
      ];
    }),
  );
  const fits = Object.entries(r.fits).map(([key, { script, cpu }]) => {
    const [id, c] = key.split(':') as [ScriptCostRow['build'], ScriptCase];
    return `- ${name(id)}, ${c}: script time ${f(script.fixedUs)} µs per call + ${f(script.perPingUs)} µs per ping; Redis CPU ${f(cpu.fixedUs)} µs per call + ${f(cpu.perPingUs)} µs per ping`;
  });
  const alike = ['warm', 'cold'].map((c) => {
    const values = r.builds.map((b) => r.digests[`${b.id}:${c}`]);
    return `${c} ${values.join(' / ')}${values.length > 1 ? (new Set(values).size === 1 ? ' (alike)' : ' (DIFFERENT)') : ''}`;
  });
  return [
    table,
    '',
    `Through the 1- and the 500-ping calls (Redis ${r.redisVersion}):`,
    '',
    ...fits,
    '',
    `Digests of the decisions, ${r.builds.map((b) => name(b.id)).join(' / ')}: ${alike.join('; ')}.`,
  ].join('\n');
}

if (require.main === module) answerParent(scriptCost(JSON.parse(process.argv[2] ?? '{}') as ScriptCostJob));
