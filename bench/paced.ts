/**
 * The paced harness, in a process of its own: a real Node-RED runtime with
 * one flow from bench/flows.ts, fed at fixed rates and then flat out, with
 * what each phase cost measured on both sides. The latency part (issue 15)
 * and the Redis-cost part (issue 31) of bench/run.ts both run it.
 *
 * Feeding. Every millisecond the harness makes the messages due by then
 * (rate x elapsed time, so the rate holds even when a tick comes late),
 * stamps each with the time it made them, and hands them to the firing
 * function node; the counter node after the node under test (or, for the
 * admitted readings of the confirm line, the dedup-confirm node's done())
 * records how long each took. A message per tick is what an MQTT client
 * reading a busy socket hands Node-RED too: at 2,000 msg/s a turn brings two
 * or three messages. A flat-out phase hands every message over at once.
 *
 * Phases, in the order the job lists them, after a prime: one message for
 * each asset of the warm fleet (`assets`, 10,000 vehicles or sensors), at a
 * steady rate, which also warms up the JIT; so no burst comes before the
 * paced phases. Each paced phase runs `settleSeconds` unrecorded, then
 * `seconds` recorded, then drains. The cases:
 * - warm: the warm fleet, every asset with a record (sensors: replays of
 *   readings already seen, each suppressed as a duplicate);
 * - cold: every message the first of its asset (sensors: a new reading);
 * - outside: the shape of the outside run quoted in issue 31, 200,000 pings
 *   of 10,000 vehicles none of which has a record, handed over at once
 *   (the first ping of each is cold, the other 19 warm).
 *
 * Measured per phase: latency (paced phases), how late the generator's
 * ticks ran, Node-RED's CPU and how busy its thread was (event-loop
 * utilisation) and how long garbage collection paused it, every primary's
 * CPU (INFO cpu) and script time (INFO commandstats, EVAL and EVALSHA
 * usec), how busy the busiest primary was, the machine's cores (/proc/stat:
 * on a shared machine other processes take their part), and, for the Redis
 * store, how long a request waited in the tick batcher before its call was
 * sent, a call's round trip and the requests per call, from three wrapped
 * methods of the build's compiled TickBatcher. With `schedules`, each
 * phase's calls (when, how many requests, which group) are kept, for the
 * floor to replay (bench/floor.ts).
 *
 * The build (`packRoot`): Node-RED loads the pack from there (the working
 * tree, or the baseline commit of bench/baseline.ts), and the probe wraps
 * that copy's batcher.
 */
import { readFileSync, realpathSync } from 'fs';
import { cpus } from 'os';
import { join } from 'path';
import { PerformanceObserver, performance } from 'perf_hooks';
import Redis from 'ioredis';
import { COLD_FLEET, fleetPingMessage, pingMessage, readingMessage } from './data';
import { benchFlow, CONFIRM_ID, usesRedis, type LineId, type RedisTarget } from './flows';
import { answerParent, gc, jobFromArgv, redisCpuSeconds, ROOT, scriptStatsOf, sleep, startBenchRuntime, type BenchRuntime, type CompleteEvent } from './runtime';
import { Sink } from './worker';

process.setSourceMapsEnabled(false);

export type PacedLine = Extract<LineId, 'filter' | 'sw-memory' | 'sw-redis' | 'sw-redis-fleet' | 'sr-redis' | 'sr-redis-confirm'>;

export type Case = 'warm' | 'cold' | 'outside';

export type PhaseSpec =
  | { kind: 'paced'; rate: number; case: 'warm' | 'cold'; seconds: number; settleSeconds: number }
  | { kind: 'burst'; case: Case; units: number };

export interface PacedJob {
  line: PacedLine;
  redis: RedisTarget;
  /** The Redis primaries whose CPU and script time are read: every primary of a Cluster. */
  redisPorts: number[];
  /** The build Node-RED loads (bench/baseline.ts); this checkout by default. */
  packRoot?: string;
  /** The config version its nodes carry (the build's own). */
  configVersion?: number;
  /** The dedup-redis connection's linger (BENCH_LINGER_MS); the build's default when absent. */
  lingerMs?: number;
  /** The warm fleet: vehicles, or sensors. */
  assets: number;
  /** The prime's rate (one message per asset of the warm fleet). */
  primeRate: number;
  phases: PhaseSpec[];
  /** Keep each phase's calls for the floor (bench/floor.ts). */
  schedules?: boolean;
}

export interface Spread {
  p50: number;
  p99: number;
  max: number;
}

/** The calls of one phase: when each was sent (ms from the phase's start), its requests, its group (a Cluster slot; 0 on one server). */
export interface CallSchedule {
  at: number[];
  size: number[];
  group: number[];
}

export interface PacedPhase {
  kind: 'paced' | 'burst';
  case: Case;
  /** The rate offered (0 for a flat-out phase). */
  rate: number;
  /** Messages recorded: one decision each (a ping, or one reading). */
  messages: number;
  seconds: number;
  /** Messages made per second (paced), or decided per second (flat out). */
  achievedRate: number;
  /** Milliseconds from the generator to the node after the node under test (paced phases). */
  latency?: Spread & { p999: number; mean: number };
  /** Milliseconds the generator's ticks ran behind schedule (paced phases). */
  generatorLag?: Spread;
  nodeCpuUsPerMsg: number;
  /** Node-RED's main thread: the share of the phase it was busy (event-loop utilisation), and garbage collection's pauses. */
  nodeBusy: number;
  gcMs: number;
  gcMaxMs: number;
  /** The machine's cores busy on average (/proc/stat), of `cores`; undefined off Linux. */
  machineBusyCores?: number;
  /** Redis (every primary): CPU and script time per decision, script calls, and the busiest primary's share of a core. */
  redisCpuUsPerMsg?: number;
  scriptUsPerMsg?: number;
  scriptCalls?: number;
  redisBusy?: number;
  /** Redis store: milliseconds a request waited in the tick batcher, a call's round trip, requests per call. */
  batcherWait?: Spread;
  callRoundTrip?: Spread;
  pingsPerCall?: number;
  /** decision:reason -> messages, to tell that two builds decided alike. */
  tally: Record<string, number>;
}

export interface PacedResult {
  line: PacedLine;
  /** Where the Redis lines kept their records. */
  target: 'server' | 'cluster';
  phases: PacedPhase[];
  /** One per phase when the job asked for them. */
  schedules?: CallSchedule[];
}

const DRAIN_TIMEOUT_MS = 120_000;

/** Sorted-array quantiles; the arrays here hold at most a few million numbers. */
function spread(values: Float64Array | number[]): Spread & { p999: number; mean: number } {
  const sorted = Float64Array.from(values).sort();
  const at = (q: number): number => (sorted.length === 0 ? Number.NaN : (sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] as number));
  let sum = 0;
  for (const v of sorted) sum += v;
  return { p50: at(0.5), p99: at(0.99), p999: at(0.999), max: sorted.length ? (sorted[sorted.length - 1] as number) : Number.NaN, mean: sum / sorted.length };
}

function plain(s: Spread): Spread {
  return { p50: s.p50, p99: s.p99, max: s.max };
}

type Stamped = { t0: number; payload: unknown };

/** The counter's end: a Sink whose batches are filled by the pacer, and which records latencies and decisions. */
class PacedSink extends Sink {
  private queue: unknown[] = [];
  private latencies = new Float64Array(0);
  private recorded = 0;
  private from = Infinity;
  decisions = new Map<string, number>();
  arrivals = 0;

  queueUp(msg: unknown): void {
    this.queue.push(msg);
  }

  override take(): unknown[] {
    const batch = this.queue;
    this.queue = [];
    return batch;
  }

  override started(): void {
    // The clock of a paced message starts when it is made.
  }

  /** Records the latency of every message made from `from` on, and counts decisions afresh. */
  record(from: number, capacity: number): void {
    this.from = from;
    this.latencies = new Float64Array(capacity);
    this.recorded = 0;
    this.decisions = new Map();
  }

  recordedLatencies(): Float64Array {
    return this.latencies.subarray(0, this.recorded);
  }

  override arrived(msg: { t0?: number; dedup?: { decision?: unknown; reason?: unknown } }): void {
    this.arrivals++;
    const t0 = msg.t0;
    if (t0 === undefined || t0 < this.from) return;
    if (this.recorded < this.latencies.length) this.latencies[this.recorded++] = performance.now() - t0;
    const dedup = msg.dedup;
    const key = dedup === undefined ? 'forwarded' : `${String(dedup.decision)}:${String(dedup.reason)}`;
    this.decisions.set(key, (this.decisions.get(key) ?? 0) + 1);
  }
}

/** Requests in one item of a batcher's call: a ping or reset is one, a sensor request as many as its keys. */
function requestsIn(item: unknown): number {
  const claims = (item as { claims?: unknown[] }).claims;
  return Array.isArray(claims) ? Math.max(1, claims.length) : 1;
}

/** The time a request waited in the tick batcher, its call's round trip and the calls themselves, from three wrapped methods. */
class BatcherProbe {
  private readonly submitted = new WeakMap<object, number>();
  private readonly dispatched = new WeakMap<object, number>();
  waits: number[] = [];
  trips: number[] = [];
  requests = 0;
  calls = 0;
  active = false;
  from = 0;
  schedule: CallSchedule = { at: [], size: [], group: [] };

  /** Wraps the TickBatcher of the build Node-RED loads (its compiled module, by its real path, as Node-RED requires it). */
  install(packRoot: string): boolean {
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- the build's compiled module, the one Node-RED loads
    const { TickBatcher } = require(join(realpathSync(packRoot), 'nodes', 'redis', 'tick-batcher.js')) as typeof import('../src/redis/tick-batcher');
    // The private methods of the compiled class; if they are renamed, the split is not measured.
    const proto = TickBatcher.prototype as unknown as Record<string, (...args: unknown[]) => unknown>;
    const { submit, dispatch, finish } = proto;
    if (typeof submit !== 'function' || typeof dispatch !== 'function' || typeof finish !== 'function') return false;
    // eslint-disable-next-line @typescript-eslint/no-this-alias -- the patched methods need both their own this (the batcher) and the probe
    const probe = this;
    proto.submit = function (this: unknown, item: unknown, ...rest: unknown[]) {
      if (probe.active && typeof item === 'object' && item !== null) probe.submitted.set(item, performance.now());
      return submit.call(this, item, ...rest);
    };
    proto.dispatch = function (this: { options?: { groupOf?: (item: unknown) => number } }, call: unknown) {
      const now = performance.now();
      const items = (call as { items: object[] }).items;
      let seen = 0;
      let size = 0;
      for (const item of items) {
        const t = probe.submitted.get(item);
        if (t === undefined) continue;
        probe.waits.push(now - t);
        seen++;
        size += requestsIn(item);
      }
      if (seen > 0) {
        probe.dispatched.set(call as object, now);
        probe.requests += size;
        probe.calls++;
        probe.schedule.at.push(now - probe.from);
        probe.schedule.size.push(size);
        probe.schedule.group.push(probe.groupOf(this, items[0]));
      }
      return dispatch.call(this, call);
    };
    proto.finish = function (this: unknown, call: unknown, ...rest: unknown[]) {
      const t = probe.dispatched.get(call as object);
      if (t !== undefined) {
        probe.trips.push(performance.now() - t);
        probe.dispatched.delete(call as object);
      }
      return finish.call(this, call, ...rest);
    };
    return true;
  }

  private groupOf(batcher: { options?: { groupOf?: (item: unknown) => number } }, item: unknown): number {
    try {
      return batcher.options?.groupOf?.(item) ?? 0;
    } catch {
      return 0;
    }
  }

  start(): void {
    this.waits = [];
    this.trips = [];
    this.requests = 0;
    this.calls = 0;
    this.schedule = { at: [], size: [], group: [] };
    this.from = performance.now();
    this.active = true;
  }
}

interface Pacing {
  lags: number[];
  made: number;
  ms: number;
}

/** Makes `rate` messages a second for `ms`, every millisecond, and resolves when the last is handed over. */
function pace(runtime: BenchRuntime, sink: PacedSink, rate: number, ms: number, next: () => Stamped): Promise<Pacing> {
  return new Promise((resolve) => {
    const total = Math.round((rate * ms) / 1000);
    const lags: number[] = [];
    const start = performance.now();
    let made = 0;
    const timer = setInterval(() => {
      const now = performance.now();
      const due = Math.min(total, Math.floor(((now - start) * rate) / 1000));
      if (due > made) {
        lags.push(now - (start + (made * 1000) / rate));
        for (; made < due; made++) {
          const msg = next();
          msg.t0 = now;
          sink.queueUp(msg);
        }
        runtime.source.receive({});
      }
      if (made >= total) {
        clearInterval(timer);
        resolve({ lags, made, ms: performance.now() - start });
      }
    }, 1);
  });
}

async function drained(sink: PacedSink, made: number): Promise<void> {
  const deadline = Date.now() + DRAIN_TIMEOUT_MS;
  while (sink.arrivals < made) {
    if (Date.now() > deadline) throw new Error(`paced run: ${made - sink.arrivals} messages did not reach the counter`);
    await sleep(2);
  }
}

/** The machine's busy and total jiffies over all cores (/proc/stat); undefined off Linux. */
function machineJiffies(): { busy: number; total: number } | undefined {
  try {
    const fields = (readFileSync('/proc/stat', 'utf8').split('\n')[0] ?? '').trim().split(/\s+/).slice(1).map(Number);
    const total = fields.reduce((s, v) => s + v, 0);
    const idle = (fields[3] ?? 0) + (fields[4] ?? 0);
    return { busy: total - idle, total };
  } catch {
    return undefined;
  }
}

/** The messages of a line: the warm fleet's next, a cold one, or the outside run's. */
class Messages {
  private warm = 0;
  private cold = 0;
  private outside = 0;
  private outsideRuns = 0;
  private readonly sensor: boolean;
  private readonly fleet: boolean;

  constructor(
    line: PacedLine,
    private readonly assets: number,
  ) {
    this.sensor = line === 'sr-redis' || line === 'sr-redis-confirm';
    this.fleet = line === 'sw-redis-fleet';
  }

  private ping(i: number, assets: number, prefix: string): Stamped {
    return (this.fleet ? fleetPingMessage(i, assets, prefix) : pingMessage(i, assets, prefix)) as unknown as Stamped;
  }

  /** The prime: the first message of each asset of the warm fleet (sensors: the readings the warm phases replay). */
  readonly prime = (): Stamped => {
    const i = this.warm++;
    return this.sensor ? (readingMessage(i, this.assets, 'bin-') as unknown as Stamped) : this.ping(i, this.assets, 'veh-');
  };

  readonly warmNext = (): Stamped => {
    if (this.sensor) return readingMessage(this.warm++ % this.assets, this.assets, 'bin-') as unknown as Stamped;
    return this.ping(this.warm++, this.assets, 'veh-');
  };

  readonly coldNext = (): Stamped => {
    const i = this.cold++;
    // Sensors: readings after the prime's, each new; vehicles: each the first of its own.
    return this.sensor ? (readingMessage(this.assets + i, this.assets, 'bin-') as unknown as Stamped) : this.ping(i, COLD_FLEET, 'new-');
  };

  /** A new outside run: 10,000 vehicles none of which has a record. */
  outsideRun(): () => Stamped {
    const prefix = `out${this.outsideRuns++}-`;
    this.outside = 0;
    return () => this.ping(this.outside++, 10_000, prefix);
  }

  of(c: Case): () => Stamped {
    return c === 'warm' ? this.warmNext : c === 'cold' ? this.coldNext : this.outsideRun();
  }
}

interface Meters {
  cpu: NodeJS.CpuUsage;
  elu: ReturnType<typeof performance.eventLoopUtilization>;
  redis: number[];
  machine: ReturnType<typeof machineJiffies>;
  wall: number;
}

export async function runPaced(job: PacedJob): Promise<PacedResult> {
  const packRoot = job.packRoot ?? ROOT;
  const sink = new PacedSink();
  const probe = new BatcherProbe();
  const redisLine = usesRedis(job.line);
  const probing = redisLine && probe.install(packRoot);
  const admins = redisLine ? job.redisPorts.map((port) => new Redis({ host: '127.0.0.1', port })) : [];
  const flowOptions = { ...(job.configVersion === undefined ? {} : { configVersion: job.configVersion }), ...(job.lingerMs === undefined ? {} : { lingerMs: job.lingerMs }) };
  const runtime = await startBenchRuntime(benchFlow(job.line, job.redis, flowOptions), { bench: sink }, packRoot);
  // Garbage collection's pauses of the main thread, while a phase is recorded.
  let gcMs = 0;
  let gcMaxMs = 0;
  let recording = false;
  const gcWatch = new PerformanceObserver((list) => {
    if (!recording) return;
    for (const entry of list.getEntries()) {
      gcMs += entry.duration;
      gcMaxMs = Math.max(gcMaxMs, entry.duration);
    }
  });
  gcWatch.observe({ entryTypes: ['gc'] });
  try {
    if (job.line === 'sr-redis-confirm') {
      // An admitted reading is done when dedup-confirm calls done().
      runtime.hooks.add('onComplete.bench', (event: CompleteEvent) => {
        if (event.node.id === CONFIRM_ID) sink.arrived(event.msg);
      });
    }
    const messages = new Messages(job.line, job.assets);
    let made = 0;
    const primed = await pace(runtime, sink, job.primeRate, (job.assets / job.primeRate) * 1000, messages.prime);
    made += primed.made;
    await drained(sink, made);
    gc();
    await sleep(200);

    const meters = async (): Promise<Meters> => {
      await Promise.all(admins.map((a) => a.config('RESETSTAT')));
      return {
        redis: await Promise.all(admins.map((a) => redisCpuSeconds(a))),
        machine: machineJiffies(),
        cpu: process.cpuUsage(),
        elu: performance.eventLoopUtilization(),
        wall: performance.now(),
      };
    };
    const phases: PacedPhase[] = [];
    const schedules: CallSchedule[] = [];
    for (const spec of job.phases) {
      const next = messages.of(spec.case);
      if (spec.kind === 'paced') {
        const settle = await pace(runtime, sink, spec.rate, spec.settleSeconds * 1000, next);
        made += settle.made;
        await drained(sink, made);
      }
      const from = performance.now();
      const units = spec.kind === 'paced' ? Math.round(spec.rate * spec.seconds) : spec.units;
      sink.record(from, units + 1000);
      const before = await meters();
      gcMs = 0;
      gcMaxMs = 0;
      recording = true;
      if (probing) probe.start();
      let pacing: Pacing | undefined;
      if (spec.kind === 'paced') {
        pacing = await pace(runtime, sink, spec.rate, spec.seconds * 1000, next);
        made += pacing.made;
      } else {
        const t0 = performance.now();
        for (let i = 0; i < spec.units; i++) {
          const msg = next();
          msg.t0 = t0;
          sink.queueUp(msg);
        }
        made += spec.units;
        runtime.source.receive({});
      }
      await drained(sink, made);
      const wall = (performance.now() - before.wall) / 1000;
      const cpu = process.cpuUsage(before.cpu);
      const busy = performance.eventLoopUtilization(before.elu).utilization;
      recording = false;
      probe.active = false;
      const afterMachine = machineJiffies();
      const redisAfter = await Promise.all(admins.map((a) => redisCpuSeconds(a)));
      const { usec: scriptUsec, calls: scriptCalls } = await scriptStatsOf(admins);
      const latencies = sink.recordedLatencies();
      const count = spec.kind === 'paced' ? (pacing as Pacing).made : spec.units;
      if (latencies.length !== count) throw new Error(`${spec.kind} ${spec.case} phase: recorded ${latencies.length} of ${count} messages`);
      const redisSeconds = redisAfter.map((after, i) => after - (before.redis[i] ?? 0));
      const redisTotal = redisSeconds.reduce((s, v) => s + v, 0);
      const machineBusyCores =
        before.machine !== undefined && afterMachine !== undefined && afterMachine.total > before.machine.total
          ? ((afterMachine.busy - before.machine.busy) / (afterMachine.total - before.machine.total)) * cpus().length
          : undefined;
      phases.push({
        kind: spec.kind,
        case: spec.case,
        rate: spec.kind === 'paced' ? spec.rate : 0,
        messages: count,
        seconds: wall,
        achievedRate: pacing !== undefined ? (pacing.made / pacing.ms) * 1000 : count / wall,
        ...(pacing !== undefined ? { latency: spread(latencies), generatorLag: plain(spread(pacing.lags)) } : {}),
        nodeCpuUsPerMsg: (cpu.user + cpu.system) / count,
        nodeBusy: busy,
        gcMs,
        gcMaxMs,
        ...(machineBusyCores !== undefined ? { machineBusyCores } : {}),
        ...(redisLine
          ? {
              redisCpuUsPerMsg: (redisTotal * 1e6) / count,
              scriptUsPerMsg: scriptUsec / count,
              scriptCalls,
              redisBusy: Math.max(...redisSeconds) / wall,
            }
          : {}),
        ...(probing && probe.calls > 0
          ? { batcherWait: plain(spread(probe.waits)), callRoundTrip: plain(spread(probe.trips)), pingsPerCall: probe.requests / probe.calls }
          : {}),
        tally: Object.fromEntries([...sink.decisions].sort(([a], [b]) => a.localeCompare(b))),
      });
      if (job.schedules) schedules.push(probe.schedule);
      gc();
    }
    return { line: job.line, target: job.redis.mode === 'cluster' ? 'cluster' : 'server', phases, ...(job.schedules ? { schedules } : {}) };
  } finally {
    gcWatch.disconnect();
    await runtime.stop();
    for (const a of admins) a.disconnect();
  }
}

if (require.main === module) answerParent(runPaced(jobFromArgv<PacedJob>()));
