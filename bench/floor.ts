/**
 * The floor (issue 31): what the least work a decision needs costs the same
 * server, batched the same way, measured in the same run. The least work is
 * one read and one write of the entry per decision: FLOOR_LUA, a script that
 * GETs each of its keys and SETs it again (a value the size of a window
 * record, with a TTL) and replies a byte per key. The same batching: the
 * calls the project made in a phase (bench/paced.ts records when each went
 * out, how many requests it carried and for which group), replayed with this
 * script at the same moments, with the same sizes, to the same primaries,
 * flat-out phases as fast as the server answers with the batcher's calls in
 * flight (8, one per group on a Cluster). What the project costs per
 * decision over what this costs is its ratio to the floor.
 *
 * Keys: the warm case reads and writes keys written before the phase (as
 * many as the warm fleet has assets), the cold case a new key each time,
 * the outside case 10,000 keys none of which exists at first; on a Cluster
 * each call's keys carry a hash tag of the slot the project's call was for.
 * Each replay runs in this child process, alone with the server: nothing
 * else calls it meanwhile.
 *
 * The wake: for the paced phases asked for (`wake`), the same calls once
 * more, each carrying nothing (WAKE_LUA, one key for the slot and no read
 * or write): what it costs the server only to be called at those moments,
 * its waking up, reading the call and writing the reply. Where that alone
 * is over a goal, no script and no floor can meet it with those calls.
 */
import calculateSlot from 'cluster-key-slot';
import { performance } from 'perf_hooks';
import Redis, { Cluster } from 'ioredis';
import type { CallSchedule, Case } from './paced';
import { answerParent, jobFromArgv, redisCpuSeconds, scriptStatsOf } from './runtime';

/** One read and one write of each key; a reply of one byte per key. */
export const FLOOR_LUA = `local value = ARGV[1]
local ttl = ARGV[2]
local call_redis = redis.call
for i = 1, #KEYS do
  call_redis('GET', KEYS[i])
  call_redis('SET', KEYS[i], value, 'EX', ttl)
end
return string.rep('0', #KEYS)`;

/** A call that does nothing: its one key routes it to the slot's primary. */
export const WAKE_LUA = "return ''";

/** A window record's size (lua/sliding-window.lua). */
const VALUE = 'x'.repeat(44);
const TTL = '21600';

export interface FloorPhaseJob {
  kind: 'paced' | 'burst';
  case: Case;
  /** The project's decisions in the phase: the floor is per decision of it. */
  messages: number;
  /** Paced phases: how long the project's phase ran. */
  seconds: number;
  schedule: CallSchedule;
  /** Paced phases: replay the calls once more carrying nothing (the wake). */
  wake?: boolean;
}

export interface FloorJob {
  /** Every primary's port; `seeds` for a Cluster. */
  ports: number[];
  cluster?: { seeds: string };
  /** The warm case's keys (the warm fleet's assets). */
  warmKeys: number;
  maxInFlight: number;
  phases: FloorPhaseJob[];
}

export interface FloorPhase {
  redisCpuUsPerMsg: number;
  scriptUsPerMsg: number;
  calls: number;
  requests: number;
  /** The same calls carrying nothing (WAKE_LUA), where the phase asked for it. */
  wake?: { redisCpuUsPerMsg: number; redisCpuUsPerCall: number };
}

/** A short tag hashing to the slot, found by counting (a Cluster needs at most a few dozen). */
const tags = new Map<number, string>();
function tagOf(slot: number): string {
  let tag = tags.get(slot);
  if (tag !== undefined) return tag;
  for (let i = 0; ; i++) {
    const candidate = `t${i}`;
    const at = calculateSlot(candidate);
    if (!tags.has(at)) tags.set(at, candidate);
    if (at === slot) return (tag = candidate);
  }
}

/** The keys of one case, per group: the warm pool, new ones, or the outside run's 10,000. */
class Keys {
  private readonly next = new Map<number, number>();
  constructor(
    private readonly name: string,
    private readonly cluster: boolean,
    /** Keys per group before they come round again; Infinity: always new. */
    private readonly pool: number,
  ) {}

  key(group: number, index: number): string {
    return this.cluster ? `floor:${this.name}:{${tagOf(group)}}${index}` : `floor:${this.name}:${index}`;
  }

  take(group: number, n: number): string[] {
    let at = this.next.get(group) ?? 0;
    const keys = new Array<string>(n);
    for (let i = 0; i < n; i++, at++) keys[i] = this.key(group, Number.isFinite(this.pool) ? at % this.pool : at);
    this.next.set(group, at);
    return keys;
  }
}

export async function runFloor(job: FloorJob): Promise<FloorPhase[]> {
  const admins = job.ports.map((port) => new Redis({ host: '127.0.0.1', port }));
  const client: Redis | Cluster = job.cluster
    ? new Cluster(job.cluster.seeds.split(',').map((s) => ({ host: s.trim().split(':')[0] ?? '127.0.0.1', port: Number(s.trim().split(':')[1]) })), {
        // The batcher's calls of one turn go out in one write per primary (src/redis/turn-writes): so do these.
        enableAutoPipelining: true,
      })
    : new Redis({ host: '127.0.0.1', port: job.ports[0] ?? 6379 });
  try {
    let sha = '';
    let wakeSha = '';
    for (const admin of admins) {
      sha = (await admin.script('LOAD', FLOOR_LUA)) as string;
      wakeSha = (await admin.script('LOAD', WAKE_LUA)) as string;
    }
    const cluster = job.cluster !== undefined;
    const out: FloorPhase[] = [];
    let run = 0;
    for (const phase of job.phases) {
      run++;
      const groups = [...new Set(phase.schedule.group)];
      const keys = new Keys(`${run}${phase.case}`, cluster, phase.case === 'warm' ? Math.ceil(job.warmKeys / Math.max(1, groups.length)) : phase.case === 'outside' ? Math.ceil(10_000 / Math.max(1, groups.length)) : Infinity);
      if (phase.case === 'warm') {
        // The warm pool exists before the phase, as the warm fleet's records do.
        for (const group of groups) {
          const pool = keys.take(group, Math.ceil(job.warmKeys / Math.max(1, groups.length)));
          for (let i = 0; i < pool.length; i += 500) await client.evalsha(sha, Math.min(500, pool.length - i), ...pool.slice(i, i + 500), VALUE, TTL);
        }
      }
      const call = (i: number): Promise<unknown> => {
        const size = phase.schedule.size[i] as number;
        return client.evalsha(sha, size, ...keys.take(phase.schedule.group[i] as number, size), VALUE, TTL);
      };
      await Promise.all(admins.map((a) => a.config('RESETSTAT')));
      const cpu0 = await Promise.all(admins.map((a) => redisCpuSeconds(a)));
      if (phase.kind === 'paced') await replayPaced(phase, call);
      else await replayFlatOut(phase, call, job.maxInFlight);
      const cpu = (await Promise.all(admins.map((a) => redisCpuSeconds(a)))).reduce((s, v, i) => s + v - (cpu0[i] ?? 0), 0);
      const scripts = await scriptStatsOf(admins);
      const calls = phase.schedule.size.length;
      const row: FloorPhase = {
        redisCpuUsPerMsg: (cpu * 1e6) / phase.messages,
        scriptUsPerMsg: scripts.usec / phase.messages,
        calls,
        requests: phase.schedule.size.reduce((s, v) => s + v, 0),
      };
      if (phase.wake === true && phase.kind === 'paced' && calls > 0) {
        const wake0 = await Promise.all(admins.map((a) => redisCpuSeconds(a)));
        await replayPaced(phase, (i) => client.evalsha(wakeSha, 1, keys.key(phase.schedule.group[i] as number, 0)));
        const wakeCpu = (await Promise.all(admins.map((a) => redisCpuSeconds(a)))).reduce((s, v, i) => s + v - (wake0[i] ?? 0), 0);
        row.wake = { redisCpuUsPerMsg: (wakeCpu * 1e6) / phase.messages, redisCpuUsPerCall: (wakeCpu * 1e6) / calls };
      }
      out.push(row);
      await Promise.all(admins.map((a) => a.flushall()));
    }
    return out;
  } finally {
    client.disconnect();
    for (const a of admins) a.disconnect();
  }
}

/** Each call at its moment (a tick every millisecond, as the project's generator), then every answer, and the rest of the phase's time. */
function replayPaced(phase: FloorPhaseJob, call: (i: number) => Promise<unknown>): Promise<void> {
  return new Promise((resolve, reject) => {
    const answers: Promise<unknown>[] = [];
    const start = performance.now();
    const n = phase.schedule.at.length;
    let next = 0;
    const timer = setInterval(() => {
      const now = performance.now() - start;
      for (; next < n && (phase.schedule.at[next] as number) <= now; next++) answers.push(call(next));
      if (next >= n && now >= phase.seconds * 1000) {
        clearInterval(timer);
        Promise.all(answers).then(() => resolve(), reject);
      }
    }, 1);
  });
}

/** Every call in order, as fast as the server answers, at most `inFlight` out per group. */
async function replayFlatOut(phase: FloorPhaseJob, call: (i: number) => Promise<unknown>, inFlight: number): Promise<void> {
  const byGroup = new Map<number, number[]>();
  phase.schedule.group.forEach((group, i) => {
    const list = byGroup.get(group);
    if (list) list.push(i);
    else byGroup.set(group, [i]);
  });
  await Promise.all(
    [...byGroup.values()].map(async (calls) => {
      let next = 0;
      const lane = async (): Promise<void> => {
        while (next < calls.length) await call(calls[next++] as number);
      };
      await Promise.all(Array.from({ length: Math.min(inFlight, calls.length) }, lane));
    }),
  );
}

if (require.main === module) answerParent(runFloor(jobFromArgv<FloorJob>()));
