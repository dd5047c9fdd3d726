/**
 * Memory per entry of the stores at 100,000 entries (the Redis stores at any
 * number: redisBytesPerEntry's `entries`).
 *
 * Memory stores: run as a child process of its own (`node --expose-gc`), so
 * that nothing else lives in the heap; heapUsed plus arrayBuffers after a
 * full GC, before and after the entries go in. Each entry's input is made
 * inside the loop and dropped, so the strings the store keeps (asset ids,
 * keys) are counted as the store's, as they are in a running node.
 *
 * Redis stores: used_memory of the benchmark's server before and after, the
 * entries written through the same store classes the nodes use. Their
 * records and readings are fields of hashes, 24,571 buckets per store
 * (src/redis/key-names.ts), so the count of entries is checked by counting
 * the buckets' fields, and the figure depends on how full the buckets are:
 * at 100,000 entries a bucket's own cost (its key, its expiry) is spread
 * over 4, at 1,000,000 (issue 31's goal) over 41.
 */
import Redis from 'ioredis';
import { join } from 'path';
import type { Ping } from '../src/core/window/sliding-window';
import type { Replies, SeenClaim, WindowSettings } from '../src/stores/types';
import { PING_EPOCH_MS, reading, READINGS_PER_BURST, type Reading } from './data';
import { answerParent, drive, heapAfterGc, usedMemory } from './runtime';

// The compiled code in nodes/, which is what Node-RED runs; types from src/.
/* eslint-disable @typescript-eslint/no-require-imports -- the compiled code in nodes/, which is what Node-RED runs; types from src/ */
const { eventFingerprint } = require('../nodes/core/window/event-fingerprint') as typeof import('../src/core/window/event-fingerprint');
const { idempotencyKey } = require('../nodes/core/sensor/idempotency-key') as typeof import('../src/core/sensor/idempotency-key');
const { parseInstant } = require('../nodes/core/parse/instant') as typeof import('../src/core/parse/instant');
const { MemorySeenStore } = require('../nodes/stores/memory-seen-store') as typeof import('../src/stores/memory-seen-store');
const { MemoryWindowStore } = require('../nodes/stores/memory-window-store') as typeof import('../src/stores/memory-window-store');

/** The Redis stores of a build (bench/baseline.ts): the working tree's, or the landed code's, compiled in its own nodes/. */
function redisStoresOf(root: string): {
  defineDedupScripts: typeof import('../src/redis/scripts').defineDedupScripts;
  RedisSeenStore: typeof import('../src/stores/redis-seen-store').RedisSeenStore;
  RedisWindowStore: typeof import('../src/stores/redis-window-store').RedisWindowStore;
} {
  return {
    defineDedupScripts: (require(join(root, 'nodes', 'redis', 'scripts')) as typeof import('../src/redis/scripts')).defineDedupScripts,
    RedisSeenStore: (require(join(root, 'nodes', 'stores', 'redis-seen-store')) as typeof import('../src/stores/redis-seen-store')).RedisSeenStore,
    RedisWindowStore: (require(join(root, 'nodes', 'stores', 'redis-window-store')) as typeof import('../src/stores/redis-window-store')).RedisWindowStore,
  };
}
/* eslint-enable @typescript-eslint/no-require-imports */

export const ENTRIES = 100_000;
const DEVICES = 1000;
const WINDOW = { minSeconds: 60, minMetres: 25, ttlSeconds: 21_600 };
/** Issue 11: every fleet rule on (the pings then carry a heading, an accuracy and event values). */
const FLEET_RULES = { ...WINDOW, minHeadingDegrees: 30, maxAheadSeconds: 300 };
/** Issue 29's value mode: each record keeps the last admitted reading as well. */
const VALUE_MODE = { ...WINDOW, minSeconds: 21_600, minMetres: 0, mode: 'value' as const, deadband: 5 };
/** Issue 29's jump guard, with a jump candidate pending on every asset (its second ping is a jump). */
const JUMP_GUARD = { ...WINDOW, maxSpeedKmh: 150 };

/** What the two pings of an asset carry: the plain rule's, every fleet rule's, a reading each, or a second ping that is a jump. */
type PingKind = 'plain' | 'fleet' | 'value' | 'jump';
const SEEN = { ttlSeconds: WINDOW.ttlSeconds, confirm: false, leaseSeconds: 60 };

/**
 * Two pings per asset, the second suppressed, so that every record holds
 * its accepted and suppressed counts as in steady state. Each is made when
 * it is needed and then dropped (see above). With `fleet`, each ping also
 * has a heading, an accuracy and the fingerprint of two event fields.
 */
function* pingsOfDistinctAssets(kind: PingKind = 'plain', entries = ENTRIES): Generator<Ping> {
  for (let i = 0; i < entries; i++) {
    const assetId = `veh-${String(i).padStart(6, '0')}`;
    const t = PING_EPOCH_MS + i;
    const lat = Math.round((40 + (i % 997) * 0.01 + (i % 7) * 0.000137) * 1e6) / 1e6;
    const lon = Math.round((-3 + (i % 991) * 0.01 + (i % 11) * 0.000113) * 1e6) / 1e6;
    const extra = kind === 'fleet' ? { heading: (i * 37) % 360, accuracy: 3 + (i % 20) * 0.5, events: eventFingerprint([i % 2 === 0, 'ignition-on']) } : {};
    // Value mode: a fill level, then one within the deadband, with no position (0, as the node reads them); the jump guard: 5 km in 4 s.
    if (kind === 'value') {
      yield { assetId, t, lat: 0, lon: 0, value: 40 + (i % 50) };
      yield { assetId, t: t + 4000, lat: 0, lon: 0, value: 41 + (i % 50) };
      continue;
    }
    yield { assetId, t, lat, lon, ...extra };
    yield { assetId, t: t + 4000, lat: kind === 'jump' ? lat + 0.045 : lat, lon, ...extra };
  }
}

/** The claims a sensor node makes for its bursts: 100 seq per device, in bursts of 50, all distinct. */
function* distinctClaimBursts(entries = ENTRIES): Generator<SeenClaim[]> {
  const bursts = entries / READINGS_PER_BURST;
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
  return { key, group: r.device_id };
}

export function memoryStoreBytesPerEntry(kind: 'window' | 'seen'): number {
  if (kind === 'window') {
    const store = new MemoryWindowStore({ ...WINDOW, maxAssets: ENTRIES });
    const before = heapAfterGc();
    for (const ping of pingsOfDistinctAssets()) store.decideNow(ping);
    const after = heapAfterGc();
    if (store.size !== ENTRIES) throw new Error(`window store holds ${store.size} records`);
    return (after - before) / ENTRIES;
  }
  const store = new MemorySeenStore({ ...SEEN, maxKeys: ENTRIES, keyMode: 'reading' });
  const ignore: Replies<number[], undefined> = { value: () => undefined, error: (e) => { throw e; } };
  const before = heapAfterGc();
  let token = 1;
  for (const claims of distinctClaimBursts()) store.claim({ claims, token: token++ }, ignore, undefined);
  const after = heapAfterGc();
  if (store.size !== ENTRIES) throw new Error(`seen store holds ${store.size} keys`);
  return (after - before) / ENTRIES;
}

export interface RedisMemory {
  window: number;
  /** The same records with every fleet rule on (issue 11). */
  windowFleet: number;
  /** Records of value mode (issue 29): each keeps its last admitted reading. */
  windowValue: number;
  /** Records with a jump candidate pending (issue 29's jump guard; the candidate is a field of its own). */
  windowCandidate: number;
  seen: number;
  /** A key of the same name length with a TTL and the smallest value Redis can store. */
  floor: number;
}

/**
 * The records or readings a store holds under `<prefix><segment>:`, in
 * either layout: the fields of its buckets (`#<n>` hashes, less the
 * buckets' own fields, whose first byte is 0xff), or a string key each
 * (the key-per-record layout of builds before issue 31, less the epoch
 * and reset keys, which are no entries).
 */
async function entriesIn(client: Redis, segment: 'sw' | 'rc'): Promise<number> {
  let entries = 0;
  for await (const batch of client.scanStream({ match: `dedup:${segment}:*`, count: 1000 })) {
    const keys = (batch as string[]).filter((key) => key.startsWith(`dedup:${segment}:#`) || (key.startsWith(`dedup:${segment}:{`) && !key.endsWith(':reset')));
    const pipeline = client.pipeline();
    for (const key of keys) pipeline.type(key);
    const types = ((await pipeline.exec()) ?? []).map(([, type]) => type as string);
    const fields = client.pipeline();
    keys.forEach((key, i) => {
      if (types[i] === 'hash') fields.hkeysBuffer(key);
      else if (types[i] === 'string') entries++;
    });
    for (const [, names] of (await fields.exec()) ?? []) for (const name of names as Buffer[]) if (name[0] !== 0xff) entries++;
  }
  return entries;
}

async function windowBytes(
  client: Redis,
  stores: ReturnType<typeof redisStoresOf>,
  settings: WindowSettings,
  kind: PingKind,
  measure: { settleMs: number; entries: number },
): Promise<number> {
  const { settleMs, entries } = measure;
  const options = { keyPrefix: 'dedup:', cluster: false, timeoutMs: 60_000 };
  await client.flushall();
  // Right after FLUSHALL the tables are empty and reset: nothing to wait for.
  const before = await usedMemory(client, 0);
  const store = new stores.RedisWindowStore(client, settings, options);
  await drive(pingsOfDistinctAssets(kind, entries), 5000, (ping, replies) => store.decide(ping, replies, undefined));
  const bytes = ((await usedMemory(client, settleMs)) - before) / entries;
  const records = await entriesIn(client, 'sw');
  if (records !== entries) throw new Error(`window records missing in Redis (${records} of ${entries})`);
  return bytes;
}

/**
 * Bytes of used_memory per entry of the Redis stores, `entries` of each
 * written through the store classes of the build at `root` (the working
 * tree's by default).
 */
export async function redisBytesPerEntry(port: number, settleMs = 1000, entries = ENTRIES, root = join(__dirname, '..')): Promise<RedisMemory> {
  const client = new Redis({ host: '127.0.0.1', port });
  const stores = redisStoresOf(root);
  stores.defineDedupScripts(client);
  const options = { keyPrefix: 'dedup:', cluster: false, timeoutMs: 60_000 };
  const measure = { settleMs, entries };
  try {
    const window = await windowBytes(client, stores, WINDOW, 'plain', measure);
    const windowFleet = await windowBytes(client, stores, FLEET_RULES, 'fleet', measure);
    const windowValue = await windowBytes(client, stores, VALUE_MODE, 'value', measure);
    const windowCandidate = await windowBytes(client, stores, JUMP_GUARD, 'jump', measure);

    await client.flushall();
    let before = await usedMemory(client, 0);
    const seen = new stores.RedisSeenStore(client, SEEN, options);
    let token = 1;
    await drive(distinctClaimBursts(entries), 100, (claims, replies) => seen.claim({ claims, token: token++ }, replies, undefined));
    const seenBytes = ((await usedMemory(client, settleMs)) - before) / entries;
    const readings = await entriesIn(client, 'rc');
    if (readings !== entries) throw new Error(`seen-set readings missing in Redis (${readings} of ${entries})`);

    await client.flushall();
    before = await usedMemory(client, 0);
    for (let i = 0; i < entries; i += 1000) {
      const pipeline = client.pipeline();
      for (let j = i; j < i + 1000; j++) pipeline.set(`dedup:sw:{veh-${String(j).padStart(6, '0')}}`, '1', 'EX', WINDOW.ttlSeconds);
      await pipeline.exec();
    }
    const floor = ((await usedMemory(client, settleMs)) - before) / entries;
    await client.flushall();
    return { window, windowFleet, windowValue, windowCandidate, seen: seenBytes, floor };
  } finally {
    client.disconnect();
  }
}

if (require.main === module) {
  const kind = (JSON.parse(process.argv[2] ?? '{}') as { kind?: string }).kind;
  if (kind !== 'window' && kind !== 'seen') throw new Error('usage: memory.ts \'{"kind":"window"|"seen"}\'');
  answerParent(Promise.resolve(memoryStoreBytesPerEntry(kind)));
}
