/**
 * Latency under steady load (issue 15, line 1), in a process of its own: a
 * real Node-RED runtime with one flow from bench/flows.ts, fed at a fixed
 * rate rather than in one burst. Every millisecond the harness makes the
 * messages that are due by then (rate x elapsed time, so the rate holds even
 * when a tick comes late), stamps each with the time it made them, and hands
 * them to the firing function node; the counter node after the node under
 * test records how long each took to arrive. The rates run one after the
 * other in the same process, each after a settling period that is not
 * recorded, and each drains before the next starts.
 *
 * Also recorded per rate: how late the generator's ticks ran behind their
 * schedule (a blocked event loop delays the making of messages as well as
 * their delivery: a large lag means the latencies shown understate what a
 * message arriving from outside would see), the CPU time of this process and
 * of redis-server per message, and, for the Redis store, where the time
 * goes: how long a ping waits in the tick batcher before its call is sent
 * (the delay the batching adds) and how long a call takes to come back.
 * That split is measured by wrapping three methods of the compiled
 * TickBatcher in this process; it costs a WeakMap entry per ping.
 *
 * The Redis line also runs against a Cluster (from the horizontal part of
 * bench/run.ts), where a call carries the pings of one hash slot only.
 */
import { performance } from 'perf_hooks';
import Redis from 'ioredis';
import { pingMessage, type PingMessage } from './data';
import { benchFlow, usesRedis, type RedisTarget } from './flows';
import { answerParent, gc, redisCpuSecondsOf, sleep, startBenchRuntime, type BenchRuntime } from './runtime';
import { Sink } from './worker';

process.setSourceMapsEnabled(false);

export type PacedLine = 'filter' | 'sw-memory' | 'sw-redis';

export interface PacedJob {
  line: PacedLine;
  redis: RedisTarget;
  /** The Redis primaries whose CPU is read (and which are flushed after the warm-up): every primary of a Cluster. */
  redisPorts: number[];
  rates: number[];
  /** Recorded seconds per rate. */
  seconds: number;
  /** Unrecorded seconds at each rate before the recording starts. */
  settleSeconds: number;
  assets: number;
  /** A burst of this many messages first, to warm the JIT (as the throughput trials do). */
  warmupUnits: number;
  /**
   * 'burst' (the default): the warm-up above is a burst of tens of
   * thousands. 'small': a few hundred, so the rates are measured without a
   * burst before them (see `calm` in bench/plan.ts).
   */
  warmup?: 'burst' | 'small';
}

export interface Spread {
  p50: number;
  p99: number;
  max: number;
}

export interface PacedPhase {
  rate: number;
  /** Messages made and recorded at this rate, and the rate they were made at. */
  messages: number;
  achievedRate: number;
  /** Milliseconds from the generator to the node after the node under test. */
  latency: Spread & { p999: number; mean: number };
  /** Milliseconds the generator's ticks ran behind schedule. */
  generatorLag: Spread;
  nodeCpuUsPerMsg: number;
  redisCpuUsPerMsg?: number;
  /** Redis store only: milliseconds a ping waited in the tick batcher, and a call's round trip. */
  batcherWait?: Spread;
  callRoundTrip?: Spread;
  pingsPerCall?: number;
}

export interface PacedResult {
  line: PacedLine;
  /** Where the Redis line kept its records. */
  target: 'server' | 'cluster';
  warmup: 'burst' | 'small';
  phases: PacedPhase[];
}

const DRAIN_TIMEOUT_MS = 60_000;

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

type Stamped = PingMessage & { t0: number };

/** The counter's end: a Sink whose batches are filled by the pacer, and which records latencies. */
class PacedSink extends Sink {
  private queue: Stamped[] = [];
  private latencies = new Float64Array(0);
  private recorded = 0;
  private from = Infinity;
  private until = -Infinity;
  arrivals = 0;

  queueUp(msg: Stamped): void {
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

  record(from: number, until: number, capacity: number): void {
    this.from = from;
    this.until = until;
    this.latencies = new Float64Array(capacity);
    this.recorded = 0;
  }

  recordedLatencies(): Float64Array {
    return this.latencies.subarray(0, this.recorded);
  }

  override arrived(msg: { t0?: number; dedup?: { decision?: unknown }; payload?: unknown }): void {
    this.arrivals++;
    const t0 = msg.t0;
    if (t0 === undefined) {
      super.arrived(msg);
      return;
    }
    if (t0 >= this.from && t0 < this.until && this.recorded < this.latencies.length) {
      this.latencies[this.recorded++] = performance.now() - t0;
    }
  }
}

/** The time a ping waited in the tick batcher, and its call's round trip, from two wrapped methods. */
class BatcherProbe {
  private readonly submitted = new WeakMap<object, number>();
  private readonly dispatched = new WeakMap<object, number>();
  waits: number[] = [];
  trips: number[] = [];
  pings = 0;
  calls = 0;
  active = false;

  install(): boolean {
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- the compiled module Node-RED loads
    const { TickBatcher } = require('../nodes/redis/tick-batcher') as typeof import('../src/redis/tick-batcher');
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
    proto.dispatch = function (this: unknown, call: unknown) {
      const now = performance.now();
      const items = (call as { items: object[] }).items;
      let seen = 0;
      for (const item of items) {
        const t = probe.submitted.get(item);
        if (t !== undefined) {
          probe.waits.push(now - t);
          seen++;
        }
      }
      if (seen > 0) {
        probe.dispatched.set(call as object, now);
        probe.pings += seen;
        probe.calls++;
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

  reset(): void {
    this.waits = [];
    this.trips = [];
    this.pings = 0;
    this.calls = 0;
  }
}

interface Pacing {
  lags: number[];
  made: number;
  ms: number;
}

/** Makes `rate` messages a second for `ms`, every millisecond, and resolves when the last is handed over. */
function pace(runtime: BenchRuntime, sink: PacedSink, rate: number, ms: number, next: () => PingMessage): Promise<Pacing> {
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
          const msg = next() as Stamped;
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

async function drained(sink: PacedSink, made: () => number): Promise<void> {
  const deadline = Date.now() + DRAIN_TIMEOUT_MS;
  while (sink.arrivals < made()) {
    if (Date.now() > deadline) throw new Error(`paced run: ${made() - sink.arrivals} messages did not reach the counter`);
    await sleep(5);
  }
}

export async function runPaced(job: PacedJob): Promise<PacedResult> {
  const sink = new PacedSink();
  const probe = new BatcherProbe();
  const probing = job.line === 'sw-redis' && probe.install();
  const admins = usesRedis(job.line) ? job.redisPorts.map((port) => new Redis({ host: '127.0.0.1', port })) : [];
  const runtime = await startBenchRuntime(benchFlow(job.line, job.redis), { bench: sink });
  try {
    // Warm-up: one burst, as in the throughput trials, on assets of its own.
    let made = 0;
    for (let i = 0; i < job.warmupUnits; i++) {
      sink.queueUp({ ...pingMessage(i, job.assets, 'warm-'), t0: -1 });
      made++;
    }
    runtime.source.receive({});
    await drained(sink, () => made);
    await Promise.all(admins.map((a) => a.flushall()));
    gc();
    await sleep(200);

    let index = 0;
    const next = (): PingMessage => pingMessage(index++, job.assets, 'veh-');
    const phases: PacedPhase[] = [];
    for (const rate of job.rates) {
      const settle = await pace(runtime, sink, rate, job.settleSeconds * 1000, next);
      made += settle.made;
      await drained(sink, () => made);
      const from = performance.now();
      sink.record(from, Infinity, Math.ceil(rate * job.seconds * 1.05) + 1000);
      probe.reset();
      probe.active = probing;
      const redis0 = await redisCpuSecondsOf(admins);
      const cpu0 = process.cpuUsage();
      const run = await pace(runtime, sink, rate, job.seconds * 1000, next);
      made += run.made;
      await drained(sink, () => made);
      const cpu = process.cpuUsage(cpu0);
      const redisSeconds = admins.length > 0 ? (await redisCpuSecondsOf(admins)) - redis0 : undefined;
      probe.active = false;
      const latencies = sink.recordedLatencies();
      if (latencies.length !== run.made) throw new Error(`paced run at ${rate}/s: recorded ${latencies.length} of ${run.made} messages`);
      phases.push({
        rate,
        messages: run.made,
        achievedRate: (run.made / run.ms) * 1000,
        latency: spread(latencies),
        generatorLag: plain(spread(run.lags)),
        nodeCpuUsPerMsg: (cpu.user + cpu.system) / run.made,
        ...(redisSeconds !== undefined ? { redisCpuUsPerMsg: (redisSeconds * 1e6) / run.made } : {}),
        ...(probing && probe.calls > 0
          ? { batcherWait: plain(spread(probe.waits)), callRoundTrip: plain(spread(probe.trips)), pingsPerCall: probe.pings / probe.calls }
          : {}),
      });
      gc();
    }
    return { line: job.line, target: job.redis.mode === 'cluster' ? 'cluster' : 'server', warmup: job.warmup ?? 'burst', phases };
  } finally {
    await runtime.stop();
    for (const a of admins) a.disconnect();
  }
}

if (require.main === module) answerParent(runPaced(JSON.parse(process.argv[2] ?? '{}') as PacedJob));
