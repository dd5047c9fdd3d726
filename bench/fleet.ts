/**
 * Cost as the fleet grows (issue 15, line 2), in a process of its own: a
 * real Node-RED runtime with the sliding-window node (memory store capped
 * at 1,000,000 assets, or Redis), first given one ping of every asset of a
 * fleet of `assets`, then timed on `units` further pings of the same fleet.
 * The memory store is filled through the node (in slices of 100,000, so
 * that the queued messages stay small), since it lives inside it; Redis is
 * filled through the same store class and script the node uses, called
 * directly from this process, which is several times quicker at a million
 * assets and writes the same records.
 *
 * Bytes per asset: for the memory store, this process's heap (heapUsed plus
 * arrayBuffers after a full GC) before and after the fleet went in, i.e.
 * everything the node keeps per asset: the store, its index and asset-id
 * strings, and the editor sidebar's board of assets (src/telemetry/window-telemetry.ts,
 * which follows up to 100,000 of them); for Redis, used_memory before and
 * after. Both include the slack of tables that grow by doubling. The timed
 * pings then reach across the whole fleet: with a million assets each is the
 * asset's second ping, with a thousand its hundredth or so, so the mix of
 * decisions differs a little (in the table).
 *
 * The timing is taken `batches` times, each batch the next `units` pings
 * of the sequence, and the median reported with the range: one batch on two
 * shared cores moved by up to 1.7x between otherwise equal runs, enough to
 * fail or pass the 0.8x target by chance.
 */
import Redis from 'ioredis';
import { pingMessages } from './data';
import { benchFlow } from './flows';
import { answerParent, drive, gc, heapAfterGc, redisCpuSeconds, sleep, startBenchRuntime, usedMemory, withTimeout } from './runtime';
import { Sink } from './worker';

process.setSourceMapsEnabled(false);

/* eslint-disable @typescript-eslint/no-require-imports -- the compiled code in nodes/, which is what Node-RED runs; types from src/ */
const { defineDedupScripts } = require('../nodes/redis/scripts') as typeof import('../src/redis/scripts');
const { RedisWindowStore } = require('../nodes/stores/redis-window-store') as typeof import('../src/stores/redis-window-store');
/* eslint-enable @typescript-eslint/no-require-imports */

export interface FleetJob {
  store: 'memory' | 'redis';
  redisPort: number;
  assets: number;
  units: number;
  batches: number;
  warmupUnits: number;
  /** See runtime.ts, usedMemory. */
  redisSettleMs: number;
}

export interface FleetResult {
  store: 'memory' | 'redis';
  assets: number;
  units: number;
  /** The median batch's rate. */
  perSecond: number;
  /** The slowest and fastest batch. */
  perSecondRange: [number, number];
  /** Heap (memory store) or used_memory (Redis) per asset. */
  bytesPerAsset: number;
  nodeCpuUsPerMsg: number;
  redisCpuUsPerMsg?: number;
  tally: Record<string, number>;
}

const SLICE = 100_000;
const TIMEOUT_MS = 180_000;
export const FLEET_CAP = 1_000_000;

/** The node's rule (bench/flows.ts) with its default clock guard. */
const RULE = { minSeconds: 60, minMetres: 25, ttlSeconds: 21_600, maxAheadSeconds: 300 };
const IN_FLIGHT = 5000;

export async function runFleet(job: FleetJob): Promise<FleetResult> {
  const sink = new Sink();
  const admin = job.store === 'redis' ? new Redis({ host: '127.0.0.1', port: job.redisPort }) : undefined;
  const line = job.store === 'memory' ? 'sw-memory' : 'sw-redis';
  const runtime = await startBenchRuntime(benchFlow(line, { mode: 'standalone', port: job.redisPort }, { maxAssets: FLEET_CAP }), { bench: sink });
  const fire = async (batch: unknown[], what: string): Promise<number> => {
    const done = sink.arm(batch, batch.length);
    runtime.source.receive({});
    return withTimeout(done, TIMEOUT_MS, what);
  };
  try {
    await fire(pingMessages(job.warmupUnits, 1000, 'warm-'), 'warm-up');
    if (admin) await admin.flushall();
    const before = admin ? await usedMemory(admin, 0) : heapAfterGc();

    let filler: InstanceType<typeof RedisWindowStore> | undefined;
    if (admin) {
      defineDedupScripts(admin);
      filler = new RedisWindowStore(admin, RULE, { keyPrefix: 'dedup:', cluster: false, timeoutMs: 60_000 });
    }
    for (let from = 0; from < job.assets; from += SLICE) {
      const slice = pingMessages(Math.min(SLICE, job.assets - from), job.assets, 'veh-', from);
      gc();
      if (filler) {
        await drive(slice, IN_FLIGHT, (ping, replies) => {
          const { assetId, ts, lat, lon } = ping.payload;
          filler.decide({ assetId, t: ts, lat, lon }, replies, undefined);
        });
      } else await fire(slice, `the fleet's first pings from ${from}`);
    }
    const after = admin ? await usedMemory(admin, job.redisSettleMs) : heapAfterGc();

    const rates: number[] = [];
    let cpuMicros = 0;
    let redisCpu = 0;
    const decisions: Record<string, number> = {};
    for (let batch = 0; batch < job.batches; batch++) {
      const timed = pingMessages(job.units, job.assets, 'veh-', job.assets + batch * job.units);
      gc();
      await sleep(200);
      const redis0 = admin ? await redisCpuSeconds(admin) : 0;
      const cpu0 = process.cpuUsage();
      const ms = await fire(timed, `${job.units} pings across ${job.assets} assets`);
      const cpu = process.cpuUsage(cpu0);
      cpuMicros += cpu.user + cpu.system;
      if (admin) redisCpu += (await redisCpuSeconds(admin)) - redis0;
      sink.tallyPings(timed);
      for (const [k, n] of Object.entries(sink.tally)) decisions[k] = (decisions[k] ?? 0) + n;
      rates.push((job.units / ms) * 1000);
    }
    rates.sort((a, b) => a - b);
    const timedUnits = job.units * job.batches;
    return {
      store: job.store,
      assets: job.assets,
      units: job.units,
      perSecond: rates[Math.floor(rates.length / 2)] as number,
      perSecondRange: [rates[0] as number, rates[rates.length - 1] as number],
      bytesPerAsset: (after - before) / job.assets,
      nodeCpuUsPerMsg: cpuMicros / timedUnits,
      ...(admin ? { redisCpuUsPerMsg: (redisCpu * 1e6) / timedUnits } : {}),
      tally: decisions,
    };
  } finally {
    await runtime.stop();
    if (admin) {
      await admin.flushall().catch(() => undefined);
      admin.disconnect();
    }
  }
}

if (require.main === module) answerParent(runFleet(JSON.parse(process.argv[2] ?? '{}') as FleetJob));
