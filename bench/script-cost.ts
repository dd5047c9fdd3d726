/**
 * The sliding-window script alone, no Node-RED: what a call costs
 * redis-server at 1, 10, 100 and 500 pings per call, so that the fixed cost
 * of a call and the cost of each ping are measured apart.
 *
 * For each size: the fleet's pings (bench/data.ts; 10,000 vehicles, as in
 * issue 20's figures; with a heading, an accuracy and event values so that
 * every rule of the script runs; about half admitted) are sent as EVALSHA calls through ioredis, a
 * few calls in flight so the server never waits for the client. Around
 * them: CONFIG RESETSTAT and INFO commandstats (usec_per_call of evalsha:
 * the script's own time, its redis.call()s included) and INFO cpu (the
 * whole server's user + system time: the script, reading the command and
 * writing the reply). The line through the 1- and the 500-ping calls gives
 * the fixed cost per call and the cost per ping.
 *
 * Every call has a token of its own (a counter, so runs are repeatable), and
 * the replies of the whole run are hashed: two runs of the same traffic on
 * different scripts that print the same digest decided every ping alike.
 *
 * Each size is timed in SCRIPT_COST_REPEATS runs (3) and the run with the
 * least server CPU is reported: on a shared machine other processes only
 * ever add to a run's cost (cache, preemption), so the least is the
 * script's own. Script time is wall-clock time inside the server, so a
 * script preempted by another process counts that wait; Redis CPU does not.
 *
 * The part `script` of npm run bench (BENCH_ONLY=script), on the bench's
 * server: SCRIPT_COST_PINGS sets the pings per size, SCRIPT_COST_REPEATS
 * the runs per size, SCRIPT_COST_LUA a variant of the script to time
 * instead, for profiling.
 */
import { createHash } from 'crypto';
import { readFileSync } from 'fs';
import Redis from 'ioredis';
import type { Ping } from '../src/core/window/sliding-window';
import { decodeOutcomes, encodePings, encodeRule, windowCallKeys } from '../src/stores/redis-window-store';
import { scriptPrelude, scriptSource } from '../src/redis/scripts';
import { WINDOW_REPLY, WINDOW_STATUS } from '../src/redis/wire';
import { pingMessage } from './data';
import { answerParent, redisCpuSeconds } from './runtime';
import { markdownTable, thousands } from './stats';

export interface ScriptCostJob {
  /** The bench's server. */
  port: number;
  /** Pings timed at each size, split over `repeats` runs of which the one with the least CPU counts. */
  pings: number;
  repeats: number;
  /** A Lua file to run instead of lua/sliding-window.lua (with the same prelude): for profiling variants. */
  lua?: string;
  /** Pings per call to time (default SIZES). */
  sizes?: number[];
}

export interface ScriptCostRow {
  pingsPerCall: number;
  calls: number;
  /** INFO commandstats: evalsha usec_per_call. */
  scriptUsPerCall: number;
  /** INFO cpu: used_cpu_user + used_cpu_sys of the server, per call. */
  cpuUsPerCall: number;
  admitted: number;
}

/** One timed run of calls. */
interface RunTiming {
  calls: number;
  scriptUsPerCall: number;
  cpuUsPerCall: number;
  admittedPings: number;
}

export interface ScriptCostResult {
  redisVersion: string;
  rows: ScriptCostRow[];
  /** usec per call = fixed + perPing * pings, through the 1- and the 500-ping calls. */
  script: { fixedUs: number; perPingUs: number };
  cpu: { fixedUs: number; perPingUs: number };
  /** SHA-256 (first 16 hex digits) of every reply, in order. */
  digest: string;
  /**
   * The floor: the same one-ping calls to a script that does no work and
   * returns a reply of the same size (FLOOR_LUA). What Redis charges for
   * any EVALSHA of this shape: reading the command, the script's lookup and
   * its KEYS and ARGV tables, the reply, the socket.
   */
  floor: { scriptUsPerCall: number; cpuUsPerCall: number };
}

/** The floor's script: no reads, no writes, no decision; a reply as long as the real one (a REPLY per ping and the status byte). */
const FLOOR_LUA = `return string.rep('\\0', ${WINDOW_REPLY.bytes} * (#ARGV - 3) + ${WINDOW_STATUS.bytes})`;

export const SIZES = [1, 10, 100, 500];
const ASSETS = 10_000;
const IN_FLIGHT = 4;
const PREFIX = 'sc:';
const ID_PREFIX = 'sc-';

/** The rule: 60 s, 25 m, 30° heading, clock guard 300 s ahead, 6 h TTL: every rule of issue 11 on (packed by the store's own encoder). */
function ruleArgument(): Buffer {
  return encodeRule({ minSeconds: 60, minMetres: 25, minHeadingDegrees: 30, maxAheadSeconds: 300, ttlSeconds: 21_600 });
}

/** Ping i of the fleet, with the fields that bring the heading, accuracy and event rules in. */
function ping(i: number): Ping {
  const { payload } = pingMessage(i, ASSETS, ID_PREFIX);
  const k = Math.floor(i / ASSETS);
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
function fit(rows: readonly ScriptCostRow[], usPerCall: (r: ScriptCostRow) => number): { fixedUs: number; perPingUs: number } {
  const a = rows[0] as ScriptCostRow;
  const b = rows[rows.length - 1] as ScriptCostRow;
  const perPingUs = (usPerCall(b) - usPerCall(a)) / (b.pingsPerCall - a.pingsPerCall);
  return { fixedUs: usPerCall(a) - perPingUs * a.pingsPerCall, perPingUs };
}

async function evalshaUsPerCall(client: Redis): Promise<number> {
  const info = await client.info('commandstats');
  return Number(/^cmdstat_evalsha:.*usec_per_call=([\d.]+)/m.exec(info)?.[1] ?? Number.NaN);
}

class Caller {
  private token = 1;
  private readonly rule = ruleArgument();
  private readonly hash = createHash('sha256');
  admitted = 0;

  constructor(private readonly client: Redis, private readonly sha: string) {}

  /** One call's arguments, built before the clock starts. */
  args(pings: Ping[]): (string | Buffer)[] {
    const call = Buffer.alloc(14);
    call.writeDoubleLE(Date.now(), 0);
    call.writeUIntLE(this.token++, 8, 6);
    const { keys, ids } = windowCallKeys(PREFIX, pings);
    return [String(keys.length), ...keys, this.rule, call, encodePings(pings), ...ids];
  }

  /** The calls, IN_FLIGHT at a time. */
  async run(calls: (string | Buffer)[][]): Promise<void> {
    let next = 0;
    const lane = async (): Promise<void> => {
      while (next < calls.length) {
        const args = calls[next++] as (string | Buffer)[];
        const reply = (await this.client.callBuffer('EVALSHA', [this.sha, ...args])) as Buffer;
        // The decisions only: not the status byte after them (redis/wire WINDOW_STATUS), so that digests compare across layouts.
        this.hash.update(reply.subarray(0, reply.length - WINDOW_STATUS.bytes));
        for (const o of decodeOutcomes(reply)) if (o?.admit === true) this.admitted++;
      }
    };
    await Promise.all(Array.from({ length: IN_FLIGHT }, lane));
  }

  digest(): string {
    return this.hash.digest('hex').slice(0, 16);
  }
}

export async function scriptCost(job: ScriptCostJob, port: number): Promise<ScriptCostResult> {
  const client = new Redis({ host: '127.0.0.1', port });
  try {
    const redisVersion = /redis_version:([^\r\n]+)/.exec(await client.info('server'))?.[1] ?? '?';
    const source = job.lua === undefined ? scriptSource('dedupSlidingWindow') : scriptPrelude('dedupSlidingWindow') + readFileSync(job.lua, 'utf8');
    const sha = (await client.script('LOAD', source)) as string;
    const caller = new Caller(client, sha);
    let seq = 0;
    const callsOf = (pingsPerCall: number, pings: number): (string | Buffer)[][] => {
      const calls: (string | Buffer)[][] = [];
      for (let c = 0; c < Math.max(1, Math.round(pings / pingsPerCall)); c++) {
        const list: Ping[] = [];
        for (let j = 0; j < pingsPerCall; j++) list.push(ping(seq++));
        calls.push(caller.args(list));
      }
      return calls;
    };
    // Every vehicle has a record before anything is timed.
    await caller.run(callsOf(100, 2 * ASSETS));
    /** Times `repeats` runs of fresh calls through `through`, and keeps the one with the least Redis CPU. */
    const leastCpu = async (through: Caller, makeCalls: () => (string | Buffer)[][]): Promise<RunTiming> => {
      let best: RunTiming | undefined;
      for (let r = 0; r < job.repeats; r++) {
        const calls = makeCalls();
        const admitted0 = through.admitted;
        await client.config('RESETSTAT');
        const cpu0 = await redisCpuSeconds(client);
        await through.run(calls);
        const cpu = (await redisCpuSeconds(client)) - cpu0;
        const run = { calls: calls.length, scriptUsPerCall: await evalshaUsPerCall(client), cpuUsPerCall: (cpu * 1e6) / calls.length, admittedPings: through.admitted - admitted0 };
        if (best === undefined || run.cpuUsPerCall < best.cpuUsPerCall) best = run;
      }
      return best as RunTiming;
    };
    const rows: ScriptCostRow[] = [];
    for (const pingsPerCall of job.sizes ?? SIZES) {
      // Fewer pings at one per call: each call is the costly part there.
      const best = await leastCpu(caller, () => callsOf(pingsPerCall, (pingsPerCall === 1 ? job.pings / 4 : job.pings) / job.repeats));
      const { calls, scriptUsPerCall, cpuUsPerCall, admittedPings } = best;
      rows.push({ pingsPerCall, calls, scriptUsPerCall, cpuUsPerCall, admitted: admittedPings / (calls * pingsPerCall) });
    }
    const floorCaller = new Caller(client, (await client.script('LOAD', FLOOR_LUA)) as string);
    const { scriptUsPerCall, cpuUsPerCall } = await leastCpu(floorCaller, () => Array.from({ length: Math.round(job.pings / 4 / job.repeats) }, () => floorCaller.args([ping(seq++)])));
    const written = await client.keys(`${PREFIX}*`);
    if (written.length > 0) await client.del(...written);
    return {
      redisVersion,
      rows,
      script: fit(rows, (r) => r.scriptUsPerCall),
      cpu: fit(rows, (r) => r.cpuUsPerCall),
      digest: caller.digest(),
      floor: { scriptUsPerCall, cpuUsPerCall },
    };
  } finally {
    client.disconnect();
  }
}

/** The part's table, in Markdown. */
export function scriptCostTable(r: ScriptCostResult): string {
  const f = (x: number): string => x.toFixed(2);
  const table = markdownTable(
    ['pings per call', 'calls', 'script µs per call', 'script µs per ping', 'Redis CPU µs per call', 'Redis CPU µs per ping', 'admitted'],
    r.rows.map((row) => [String(row.pingsPerCall), thousands(row.calls), f(row.scriptUsPerCall), f(row.scriptUsPerCall / row.pingsPerCall), f(row.cpuUsPerCall), f(row.cpuUsPerCall / row.pingsPerCall), `${(row.admitted * 100).toFixed(0)} %`]),
  );
  return [
    table,
    '',
    `Through the 1- and the 500-ping calls: script time ${f(r.script.fixedUs)} µs per call + ${f(r.script.perPingUs)} µs per ping; Redis CPU ${f(r.cpu.fixedUs)} µs per call + ${f(r.cpu.perPingUs)} µs per ping (Redis ${r.redisVersion}; digest of the replies ${r.digest}).`,
    '',
    `The floor, the same one-ping calls to a script that does nothing but return a reply of the same size: script time ${f(r.floor.scriptUsPerCall)} µs and Redis CPU ${f(r.floor.cpuUsPerCall)} µs per call. That much of a call's fixed cost is Redis' own for any EVALSHA of this shape (reading the command, looking the script up, building its KEYS and ARGV tables, writing the reply, the socket); the script's own work per call (the epoch's GET, unpacking the rule, its tables) is the rest, ${f(r.cpu.fixedUs - r.floor.cpuUsPerCall)} µs of CPU.`,
  ].join('\n');
}

if (require.main === module) {
  const job = JSON.parse(process.argv[2] ?? '{}') as ScriptCostJob;
  answerParent(scriptCost(job, job.port));
}
