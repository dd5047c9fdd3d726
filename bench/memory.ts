/**
 * Memory per entry of the stores at 100,000 entries.
 *
 * Memory stores: run as a child process of its own (`node --expose-gc`), so
 * that nothing else lives in the heap; heapUsed plus arrayBuffers after a
 * full GC, before and after the entries go in. Each entry's input is made
 * inside the loop and dropped, so the strings the store keeps (asset ids,
 * keys) are counted as the store's, as they are in a running node.
 *
 * Redis stores: used_memory of the benchmark's server before and after, the
 * entries written through the same store classes the nodes use.
 */
import Redis from 'ioredis';
import type { SeenClaim } from '../src/stores/types';
import { PING_EPOCH_MS, reading, READINGS_PER_BURST, type Reading } from './data';

// The compiled code in nodes/, which is what Node-RED runs; types from src/.
/* eslint-disable @typescript-eslint/no-require-imports */
const { idempotencyKey } = require('../nodes/core/idempotency-key') as typeof import('../src/core/idempotency-key');
const { parseInstant } = require('../nodes/core/instant') as typeof import('../src/core/instant');
const { defineDedupScripts } = require('../nodes/redis/scripts') as typeof import('../src/redis/scripts');
const { MemorySeenStore } = require('../nodes/stores/memory-seen-store') as typeof import('../src/stores/memory-seen-store');
const { MemoryWindowStore } = require('../nodes/stores/memory-window-store') as typeof import('../src/stores/memory-window-store');
const { RedisSeenStore } = require('../nodes/stores/redis-seen-store') as typeof import('../src/stores/redis-seen-store');
const { RedisWindowStore } = require('../nodes/stores/redis-window-store') as typeof import('../src/stores/redis-window-store');
/* eslint-enable @typescript-eslint/no-require-imports */

export const ENTRIES = 100_000;
const DEVICES = 1000;
const WINDOW = { minSeconds: 60, minMetres: 25, ttlSeconds: 21_600 };

/**
 * Two pings per asset, the second suppressed, so that every record holds
 * its accepted and suppressed counts as in steady state. Each is made when
 * it is needed and then dropped (see above).
 */
function* pingsOfDistinctAssets(): Generator<{ assetId: string; t: number; lat: number; lon: number }> {
  for (let i = 0; i < ENTRIES; i++) {
    const assetId = `veh-${String(i).padStart(6, '0')}`;
    const t = PING_EPOCH_MS + i;
    const lat = Math.round((40 + (i % 997) * 0.01 + (i % 7) * 0.000137) * 1e6) / 1e6;
    const lon = Math.round((-3 + (i % 991) * 0.01 + (i % 11) * 0.000113) * 1e6) / 1e6;
    yield { assetId, t, lat, lon };
    yield { assetId, t: t + 4000, lat, lon };
  }
}

/** The claims a sensor node makes for its bursts: 100 seq per device, in bursts of 50, all distinct. */
function* distinctClaimBursts(): Generator<SeenClaim[]> {
  const bursts = ENTRIES / READINGS_PER_BURST;
  for (let b = 0; b < bursts; b++) {
    const d = b % DEVICES;
    const deviceId = `bin-${String(d).padStart(5, '0')}`;
    const firstSeq = Math.floor(b / DEVICES) * READINGS_PER_BURST;
    const claims: SeenClaim[] = [];
    for (let j = 0; j < READINGS_PER_BURST; j++) claims.push(claimOf(reading(deviceId, d, firstSeq + j)));
    yield claims;
  }
}

function claimOf(r: Reading): SeenClaim {
  const micros = parseInstant(r.ts);
  if (!micros.ok) throw new Error(micros.problem);
  const key = idempotencyKey({ deviceId: r.device_id, seq: r.seq, timeField: 'ts', epochMicros: micros.epochMicros, measures: { fill_pct: r.fill_pct } });
  return { deviceId: r.device_id, seq: r.seq, hash: key.slice(key.lastIndexOf(':') + 1), key };
}

function heapAfterGc(): number {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (gc === undefined) throw new Error('run with node --expose-gc');
  gc();
  gc();
  // Typed-array contents live outside the V8 heap: counted as well.
  const usage = process.memoryUsage();
  return usage.heapUsed + usage.arrayBuffers;
}

export function memoryStoreBytesPerEntry(kind: 'window' | 'seen'): number {
  if (kind === 'window') {
    const store = new MemoryWindowStore({ ...WINDOW, maxAssets: ENTRIES });
    const before = heapAfterGc();
    for (const ping of pingsOfDistinctAssets()) store.decide(ping);
    const after = heapAfterGc();
    if (store.size !== ENTRIES) throw new Error(`window store holds ${store.size} records`);
    return (after - before) / ENTRIES;
  }
  const store = new MemorySeenStore({ ttlSeconds: WINDOW.ttlSeconds, maxKeys: ENTRIES });
  const before = heapAfterGc();
  for (const claims of distinctClaimBursts()) store.claim(claims);
  const after = heapAfterGc();
  if (store.size !== ENTRIES) throw new Error(`seen store holds ${store.size} keys`);
  return (after - before) / ENTRIES;
}

async function usedMemory(client: Redis): Promise<number> {
  // Let the server finish growing its hash tables (incremental rehashing
  // keeps both tables for a while) before reading.
  await new Promise((r) => setTimeout(r, 1000));
  return Number(/used_memory:(\d+)/.exec(await client.info('memory'))?.[1]);
}

export interface RedisMemory {
  window: number;
  seen: number;
  /** A key of the same name length with a TTL and the smallest value Redis can store. */
  floor: number;
}

export async function redisBytesPerEntry(port: number): Promise<RedisMemory> {
  const client = new Redis({ host: '127.0.0.1', port });
  defineDedupScripts(client);
  const options = { keyPrefix: 'dedup:', cluster: false, timeoutMs: 60_000 };
  try {
    await client.flushall();
    let before = await usedMemory(client);
    const window = new RedisWindowStore(client, WINDOW, options);
    let pending: Promise<unknown>[] = [];
    for (const ping of pingsOfDistinctAssets()) {
      pending.push(window.decide(ping));
      if (pending.length === 5000) {
        await Promise.all(pending);
        pending = [];
      }
    }
    await Promise.all(pending);
    const windowBytes = ((await usedMemory(client)) - before) / ENTRIES;
    if ((await client.dbsize()) !== ENTRIES) throw new Error('window records missing in Redis');

    await client.flushall();
    before = await usedMemory(client);
    const seen = new RedisSeenStore(client, { ttlSeconds: WINDOW.ttlSeconds }, options);
    pending = [];
    for (const claims of distinctClaimBursts()) {
      pending.push(seen.claim(claims));
      if (pending.length === 100) {
        await Promise.all(pending);
        pending = [];
      }
    }
    await Promise.all(pending);
    const seenBytes = ((await usedMemory(client)) - before) / ENTRIES;
    if ((await client.dbsize()) !== ENTRIES) throw new Error('seen-set keys missing in Redis');

    await client.flushall();
    before = await usedMemory(client);
    for (let i = 0; i < ENTRIES; i += 1000) {
      const pipeline = client.pipeline();
      for (let j = i; j < i + 1000; j++) pipeline.set(`dedup:sw:{veh-${String(j).padStart(6, '0')}}`, '1', 'EX', WINDOW.ttlSeconds);
      await pipeline.exec();
    }
    const floor = ((await usedMemory(client)) - before) / ENTRIES;
    await client.flushall();
    return { window: windowBytes, seen: seenBytes, floor };
  } finally {
    client.disconnect();
  }
}

if (require.main === module) {
  const kind = process.argv[2];
  if (kind !== 'window' && kind !== 'seen') throw new Error('usage: memory.ts window|seen');
  const bytes = memoryStoreBytesPerEntry(kind);
  if (process.send) process.send({ ok: true, bytes });
  else console.log(kind, bytes.toFixed(1), 'bytes per entry');
}
