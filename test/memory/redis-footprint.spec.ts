/**
 * What one asset's window record and one seen reading cost in Redis, so that
 * operators can size the server (docs/redis.md, "Sizing Redis"): 1,000,000
 * of each written through the stores into a fresh redis-server, measured as
 * the growth of used_memory once Redis has finished rehashing, with each
 * record's and entry's expiry checked.
 *
 * Records and entries are fields of hashes, one per bucket of ids
 * (src/redis/key-names.ts): a million of them fill the 24,571 buckets about
 * 41 deep, which is where the layout is meant to be measured (a few
 * thousand would mostly measure the buckets' own keys). The bounds are
 * issue 31's goal, 64 B per asset and per reading (with the ids and keys
 * of these lengths: `veh-000042`, `bin-00042:41:<16 hex>`), and for a
 * record with every fleet rule on 80 B (issue 11's budget was 200 B); and
 * a lower bound no layout can beat, each field's own bytes, so that a broken
 * measurement fails rather than passes. Every bucket must have stayed in
 * Redis' compact encoding (listpack): one that turned into a hash table
 * would cost about twice as much per field.
 */
import assert from 'node:assert/strict';
import type Redis from 'ioredis';
import type { SeenClaim } from '../../src/core/sensor/burst';
import { eventFingerprint } from '../../src/core/window/event-fingerprint';
import type { Ping, WindowRule } from '../../src/core/window/sliding-window';
import { HASH_BUCKETS, seenBucketKey, windowBucketKey } from '../../src/redis/key-names';
import { defineDedupScripts } from '../../src/redis/scripts';
import { RedisSeenStore } from '../../src/stores/redis-seen-store';
import { decodeWindowRecord, RedisWindowStore } from '../../src/stores/redis-window-store';
import type { Replies } from '../../src/stores/types';
import { adminClient } from '../support/redis-sentinel';
import { ManagedRedis, skipLoudlyWithoutRedisServer } from '../support/redis-server';

const COUNT = 1_000_000;
const PREFIX = 'dedup:';
const TTL = 21_600;
const NOW = 1_780_000_000_000;
/** Issue 31: at most this much used_memory per asset and per remembered reading. */
const GOAL = 64;
/** A record with every fleet rule on (heading, accuracy, event values: 10 bytes more). */
const FLEET_BOUND = 80;

/**
 * used_memory less what is not the data: client buffers (they grow and
 * shrink with the size of the calls in flight) and the script cache.
 */
async function dataMemory(client: Redis): Promise<number> {
  // Wait for serverCron to finish any incremental rehash, so that both of a
  // dict's tables are not counted (a fixed wait was not always enough on a
  // loaded machine).
  for (let tries = 0; /rehashing target/.test(String(await client.call('DEBUG', 'HTSTATS', '0'))); tries++) {
    if (tries >= 300) throw new Error('Redis did not finish rehashing its keys within 30 s');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  const info = await client.info('memory');
  const field = (name: string): number => Number(new RegExp(`^${name}:(\\d+)`, 'm').exec(info)?.[1] ?? NaN);
  const stats = (await client.call('MEMORY', 'STATS')) as unknown[];
  const clients = Number(stats[stats.indexOf('clients.normal') + 1]);
  return field('used_memory') - clients - field('used_memory_scripts');
}

const assetOf = (i: number): string => `veh-${String(i).padStart(6, '0')}`;
/** A realistic v1 key: `<device>:<seq>:<16 hex>`, 2,000 devices. */
function claimOf(i: number): SeenClaim {
  const device = `bin-${String(i % 2000).padStart(5, '0')}`;
  const hash = ((i * 2654435761) >>> 0).toString(16).padStart(8, '0') + i.toString(16).padStart(8, '0');
  return { key: `${device}:${i}:${hash}`, group: device };
}

/**
 * Makes `count` requests through `ask`, at most `inFlight` unanswered at a
 * time (a million promises at once would measure the test, not Redis).
 */
function drive(count: number, inFlight: number, ask: (i: number, replies: Replies<unknown, undefined>) => void): Promise<void> {
  return new Promise((resolve, reject) => {
    let next = 0;
    let answered = 0;
    let failed = false;
    const replies: Replies<unknown, undefined> = {
      value: () => {
        answered++;
        if (answered === count) resolve();
        else if (next < count) ask(next++, replies);
      },
      error: (error) => {
        if (!failed) reject(error instanceof Error ? error : new Error(String(error)));
        failed = true;
      },
    };
    while (next < Math.min(count, inFlight)) ask(next++, replies);
  });
}

describe('memory: Redis bytes per asset and per seen reading, a million of each', function () {
  this.timeout(600_000);
  let redis: ManagedRedis | undefined;
  let client: Redis | undefined;

  before(async function () {
    skipLoudlyWithoutRedisServer(this, 'the Redis footprint measurement');
    // DEBUG HTSTATS tells when a rehash is over (see dataMemory).
    redis = await ManagedRedis.start({ args: ['--enable-debug-command', 'local'] });
    client = adminClient(redis.port);
    defineDedupScripts(client);
    // The slowlog keeps the arguments of slow calls (a batch of 1,000 pings
    // is one): memory that is not the data, and that varies run to run.
    await client.config('SET', 'slowlog-log-slower-than', '-1');
  });

  after(async function () {
    client?.disconnect();
    await redis?.stop();
  });

  const options = { keyPrefix: PREFIX, cluster: false, timeoutMs: 60_000, maxBatch: 2000 };

  /** The data memory of `write` per entry, from an empty database. */
  async function bytesPerEntry(c: Redis, write: () => Promise<unknown>): Promise<number> {
    await c.flushall('SYNC');
    const before = await dataMemory(c);
    await write();
    const bytes = ((await dataMemory(c)) - before) / COUNT;
    // Every bucket, and the layout mark.
    assert.equal(await c.dbsize(), HASH_BUCKETS + 1);
    return bytes;
  }

  /** Whether every bucket is still in the compact encoding. */
  async function listpacks(c: Redis, bucketOf: (i: number) => string): Promise<void> {
    const seen = new Set<string>();
    for (let i = 0; i < COUNT; i += 997) seen.add(bucketOf(i));
    const pipeline = c.pipeline();
    for (const key of seen) pipeline.object('ENCODING', key);
    const encodings = new Set(((await pipeline.exec()) ?? []).map(([, encoding]) => encoding));
    assert.deepEqual([...encodings], ['listpack'], `encodings of ${seen.size} buckets`);
  }

  async function windowBytes(c: Redis, rule: WindowRule, fleet: boolean): Promise<number> {
    const windows = new RedisWindowStore(c, { ...rule, ttlSeconds: TTL }, options, () => NOW + 61_000);
    return bytesPerEntry(c, () =>
      // Two admitted pings each, so the counts are set; with `fleet`, each with a heading, an accuracy and event values.
      drive(2 * COUNT, 20_000, (n, replies) => {
        const i = n >> 1;
        const extra = fleet ? { heading: 271.5, accuracy: 4.2, events: eventFingerprint([i % 2 === 0]) } : {};
        const ping: Ping = { assetId: assetOf(i), t: n % 2 === 0 ? NOW : NOW + 61_000, lat: n % 2 === 0 ? 52.520008 : 52.520108, lon: 13.404954, ...extra };
        windows.decide(ping, replies, undefined);
      }),
    );
  }

  it('costs at most 64 B per asset, and per seen reading, in compact buckets; 80 B per asset with every fleet rule on', async function () {
    const c = client as Redis;
    const f = (n: number): string => n.toFixed(1).padStart(6);

    const perAsset = await windowBytes(c, { minSeconds: 60, minMetres: 25 }, false);
    await listpacks(c, (i) => windowBucketKey(PREFIX, assetOf(i)));
    const record = decodeWindowRecord((await c.hgetBuffer(windowBucketKey(PREFIX, assetOf(42)), assetOf(42))) as Buffer);

    const perFleetAsset = await windowBytes(c, { minSeconds: 60, minMetres: 25, minHeadingDegrees: 10, maxAheadSeconds: 300 }, true);
    await listpacks(c, (i) => windowBucketKey(PREFIX, assetOf(i)));
    const fleetRecord = (await c.hgetBuffer(windowBucketKey(PREFIX, assetOf(42)), assetOf(42))) as Buffer;

    const seen = new RedisSeenStore(c, { ttlSeconds: TTL, confirm: false, leaseSeconds: 30 }, options, () => NOW);
    const perReading = await bytesPerEntry(c, () => drive(COUNT, 20_000, (i, replies) => seen.claim({ claims: [claimOf(i)], token: i + 1 }, replies, undefined)));
    await listpacks(c, (i) => seenBucketKey(PREFIX, claimOf(i).group, claimOf(i).key));
    const entry = (await c.hgetBuffer(seenBucketKey(PREFIX, claimOf(42).group, claimOf(42).key), claimOf(42).key)) as Buffer;

    console.log(
      `      window record: ${f(perAsset)} B/asset, ${f(perFleetAsset)} B/asset with every fleet rule on (record ${fleetRecord.length} B)\n` +
        `                     ${JSON.stringify(record)}\n` +
        `      seen key:      ${f(perReading)} B/reading (entry ${entry.length} B, key ${claimOf(42).key.length} B)`,
    );

    // The expiries the layout keeps in each record and entry: ttlSeconds after the write, by the stores' clocks.
    assert.equal(record.expires, NOW + 61_000 + TTL * 1000);
    assert.equal(entry.readUIntLE(0, 6), NOW + TTL * 1000);
    assert.equal(fleetRecord.length, 49);
    assert.equal(entry.length, 16);

    assert.ok(perAsset <= GOAL, `${f(perAsset)} B per asset, goal ${GOAL} B`);
    assert.ok(perReading <= GOAL, `${f(perReading)} B per reading, goal ${GOAL} B`);
    assert.ok(perFleetAsset <= FLEET_BOUND, `${f(perFleetAsset)} B per asset with every fleet rule on, bound ${FLEET_BOUND} B`);
    // No layout stores a field in less than its name and value.
    assert.ok(perAsset >= assetOf(42).length + 39, `${f(perAsset)} B per asset: less than its field and record? the measurement is broken`);
    assert.ok(perReading >= claimOf(42).key.length + 16, `${f(perReading)} B per reading: less than its field and entry? the measurement is broken`);
  });
});
