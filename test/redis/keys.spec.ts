/**
 * What the stores leave in Redis: records and readings in buckets (hashes)
 * named by a hash of the id, each starting on a Cluster with its Cluster
 * bucket's tag (so each script call stays in one Cluster slot), as do a
 * device's epoch and, for a slot's epoch key and layout mark, a tag chosen
 * to hash to that slot; every record and reading holds its expiry, and
 * every key but a slot's epoch and layout mark (one each per slot, never
 * more) has a TTL, so a churning fleet cannot leak keys forever.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'child_process';
import { readFileSync } from 'fs';
import { join } from 'path';
import calculateSlot from 'cluster-key-slot';
import type Redis from 'ioredis';
import {
  bucketOf,
  bucketSlot,
  bucketTag,
  CLUSTER_BUCKETS,
  epochKey,
  escapeTagContent,
  fnv1a,
  HASH_BUCKETS,
  HASH_BUCKETS_PER_TAG,
  hashBucketOf,
  layoutMarkKey,
  SEEN_SEGMENT,
  seenBucketKey,
  seenGroupEpochKey,
  seenKey,
  SLOT_COUNT,
  slotTag,
  WINDOW_SEGMENT,
  windowBucketKey,
  windowRecordKey,
} from '../../src/redis/key-names';
import { RedisSeenStore } from '../../src/stores/redis-seen-store';
import { decodeWindowRecord, RedisWindowStore, type WindowRecord } from '../../src/stores/redis-window-store';
import type { SeenSettings } from '../../src/stores/types';
import { newToken, reading } from '../contract/seen-store.contract';
import { LAT, ping } from '../contract/window-store.contract';
import { claim, decide, resetSeen, resetWindow, settle } from '../support/ask';
import { closeRedisClient, newRedisClient, useRedis } from '../support/global-hooks';
import { redisServerAvailable, startRedisServer, type RedisServer } from '../support/redis-server';
import { redisKeySlot } from '../support/redis-slot';
import { fillKeys, scriptedClientPerTest, SEEN_SETTINGS, SETTINGS, storeOptions } from '../support/scripted-redis';

const TTL_SECONDS = 600;
// Not '': an empty id would make an empty tag, which Redis ignores; the nodes reject empty ids (core/parse/fields readId).
const IDS = ['veh-1', 'bin{A}', '}x', 'a%b', 'site:7:bin', 'x*y', '{'];

async function allKeys(client: Redis): Promise<string[]> {
  const keys: string[] = [];
  for await (const batch of client.scanStream({ count: 1000 })) keys.push(...(batch as string[]));
  return keys.sort();
}

/**
 * Writes records, suppressions, late pings, seen keys (pending, confirmed
 * and released in confirm mode) and the resets of each id; with `all`, a
 * reset of everything too.
 */
async function writeEverything(client: Redis, ttlSeconds: number, cluster: boolean, seenSettings: Partial<SeenSettings> = {}, all = false): Promise<void> {
  const options = storeOptions('keys:', { cluster });
  const windows = new RedisWindowStore(client, { minSeconds: 60, minMetres: 25, ttlSeconds }, options);
  const seen = new RedisSeenStore(client, { ttlSeconds, confirm: false, leaseSeconds: 60, ...seenSettings }, options);
  for (const id of IDS) {
    await decide(windows, ping(id, 100));
    await decide(windows, ping(id, 104)); // window: counter incremented
    await decide(windows, ping(id, 50)); // late
    await decide(windows, ping(id, 105, LAT + 0.01)); // moved
    await resetSeen(seen, id);
    const token = newToken();
    const claims = [reading(1, 10, 0, id), reading(2, 20, 0, id), reading(3, 30, 0, id)];
    await claim(seen, { claims, token });
    await settle(seen, { claims: claims.slice(1, 2), token, action: 'confirm' });
    await settle(seen, { claims: claims.slice(2), token, action: 'release' });
  }
  await resetWindow(windows, 'never-seen');
  if (all) await Promise.all([resetWindow(windows), resetSeen(seen)]);
}

describe('redis keys: names', () => {
  it('are the documented shapes', () => {
    assert.equal(windowBucketKey('dedup:', 'veh-1'), 'dedup:sw:#14780');
    assert.equal(seenBucketKey('dedup:', 'bin-A17', 'bin-A17:41:76c73ee2946cc70e'), `dedup:rc:#${fnv1a('bin-A17:41:76c73ee2946cc70e') % HASH_BUCKETS}`);
    assert.equal(layoutMarkKey('dedup:', undefined), 'dedup:layout');
    // The names of earlier builds, still read while a flow moves to the buckets.
    assert.equal(windowRecordKey('dedup:', 'veh-1'), 'dedup:sw:{veh-1}');
    assert.equal(seenKey('dedup:', 'bin-A17', 'bin-A17:41:76c73ee2946cc70e'), 'dedup:rc:{bin-A17}:41:76c73ee2946cc70e');
    assert.equal(seenKey('dedup:', 'order-9', 'order-9'), 'dedup:rc:{order-9}', 'a key that is its own group (key mode property)');
    assert.equal(seenGroupEpochKey('dedup:', 'bin-A17'), 'dedup:rc:{bin-A17}:reset');
    assert.equal(epochKey('dedup:', WINDOW_SEGMENT, undefined), 'dedup:sw:epoch');
    assert.equal(epochKey('dedup:', SEEN_SEGMENT, 5), `dedup:rc:epoch{${slotTag(5)}}`);
    assert.equal(windowRecordKey('p:', 'a{b}%c'), 'p:sw:{a%7Bb%7D%25c}');
  });

  it('on a Cluster put the bucket tag before the same names (the examples of docs/redis.md)', () => {
    assert.equal(seenBucketKey('dedup:', 'bin-A17', 'bin-A17:41:76c73ee2946cc70e', true), 'dedup:rc:{7gz}#1248');
    assert.equal(windowBucketKey('dedup:', 'veh-1', true), `dedup:sw:{7gz}#${fnv1a('veh-1') % HASH_BUCKETS_PER_TAG}`);
    assert.equal(layoutMarkKey('dedup:', bucketSlot(2)), 'dedup:layout{7gz}');
    assert.equal(windowRecordKey('dedup:', 'veh-1', true), 'dedup:sw:{7gz}{veh-1}');
    assert.equal(seenKey('dedup:', 'bin-A17', 'bin-A17:41:76c73ee2946cc70e', true), 'dedup:rc:{7gz}{bin-A17}:41:76c73ee2946cc70e');
    assert.equal(seenGroupEpochKey('dedup:', 'bin-A17', true), 'dedup:rc:{7gz}{bin-A17}:reset');
    assert.equal(epochKey('dedup:', SEEN_SEGMENT, bucketSlot(2)), 'dedup:rc:epoch{7gz}');
    assert.equal(windowRecordKey('p:', 'a{b}%c', true), `p:sw:${bucketTag(bucketOf('a{b}%c'))}{a%7Bb%7D%25c}`);
  });

  it('bucket an id as docs/redis.md says a Python worker does: CRC16 of the escaped id, low 14 bits, modulo 12', () => {
    assert.equal(CLUSTER_BUCKETS, 12);
    // binascii.crc_hqx(b'veh-1', 0) & 0x3FFF = 4502, 4502 % 12 = 2; bin-A17: 1586, 2; bin-A18: 14301, 9. redisKeySlot is the tests' own CRC16.
    assert.equal(bucketOf('veh-1'), 2);
    assert.equal(bucketOf('bin-A17'), 2);
    assert.equal(bucketOf('bin-A18'), 9);
    for (const id of [...IDS, 'ünïcødé', '🚚-7', 'x'.repeat(300)]) {
      assert.equal(bucketOf(id), redisKeySlot(escapeTagContent(id)) % CLUSTER_BUCKETS, id);
    }
  });

  it('are what the Python of docs/redis.md computes for a worker sharing the seen-set, on one server and on a Cluster', function () {
    const python = spawnSync('python3', ['--version']);
    if (python.error !== undefined || python.status !== 0) this.skip(); // no python3 on this machine
    const doc = readFileSync(join(__dirname, '..', '..', 'docs', 'redis.md'), 'utf8');
    const code = /```python\n([\s\S]*?)```/.exec(doc.slice(doc.indexOf('## Cluster: bucketed hash tags')))?.[1];
    assert.ok(code !== undefined, 'docs/redis.md has the Python under "Cluster: bucketed hash tags"');
    const ids = [...IDS, 'bin-A17', 'ünïcødé', '🚚-7', '%7B'];
    const cases = ids.map((id) => [id, `${id}:41:76c73ee2946cc70e`]);
    const script = `${code}\nimport json, sys\nfor d, k in json.load(sys.stdin):\n    for c in (False, True):\n        h, f = seen_location('dedup:', d, k, c)\n        print(h, f.decode('utf-8'))`;
    const run = spawnSync('python3', ['-c', script], { input: JSON.stringify(cases), encoding: 'utf8' });
    assert.equal(run.status, 0, run.stderr);
    const expected = cases.flatMap(([id, key]) => [false, true].map((cluster) => `${seenBucketKey('dedup:', id as string, key as string, cluster)} ${key as string}`));
    assert.deepEqual(run.stdout.trimEnd().split('\n'), expected);
  });

  it('spread the buckets evenly: each tag hashes to its bucket\'s slot, 12 distinct, 4 in each third of the slots', () => {
    const slots = Array.from({ length: CLUSTER_BUCKETS }, (_, b) => calculateSlot(`x${bucketTag(b)}y`));
    assert.deepEqual(slots, Array.from({ length: CLUSTER_BUCKETS }, (_, b) => bucketSlot(b)));
    assert.equal(new Set(slots).size, CLUSTER_BUCKETS);
    // redis-cli --cluster create's three ranges.
    const thirds = [0, 0, 0];
    for (const slot of slots) {
      const third = slot <= 5460 ? 0 : slot <= 10922 ? 1 : 2;
      thirds[third] = (thirds[third] ?? 0) + 1;
    }
    assert.deepEqual(thirds, [4, 4, 4]);
    // And the ids: 12,000 devices land within a few percent of 1,000 per bucket.
    const counts = new Array<number>(CLUSTER_BUCKETS).fill(0);
    for (let i = 0; i < 12_000; i++) {
      const bucket = bucketOf(`bin-${i}`);
      counts[bucket] = (counts[bucket] ?? 0) + 1;
    }
    for (const n of counts) assert.ok(n > 880 && n < 1120, `a bucket of ${n} of 12,000 ids`);
  });

  it('never give two things one key, however the ids are chosen', () => {
    const ids = [...IDS, 'epoch', 'reset', 'bin-A17:reset', 'bin-A17', '{bin-A17}', 'bin-A17}:reset', '%7B', '%257B'];
    const names = new Map<string, string>();
    const add = (name: string, what: string): void => {
      assert.equal(names.get(name), undefined, `${what} and ${names.get(name)} share ${name}`);
      names.set(name, what);
    };
    for (const segment of [WINDOW_SEGMENT, SEEN_SEGMENT]) {
      add(epochKey('p:', segment, undefined), `${segment} epoch`);
      for (let slot = 0; slot < SLOT_COUNT; slot += 97) add(epochKey('p:', segment, slot), `${segment} epoch of slot ${slot}`);
    }
    add(layoutMarkKey('p:', undefined), 'layout mark');
    for (let slot = 0; slot < SLOT_COUNT; slot += 97) add(layoutMarkKey('p:', slot), `layout mark of slot ${slot}`);
    const buckets = new Set<string>();
    for (const cluster of [false, true]) {
      for (const id of ids) {
        buckets.add(windowBucketKey('p:', id, cluster));
        buckets.add(seenBucketKey('p:', id, `${id}:41:76c73ee2946cc70e`, cluster));
      }
    }
    for (const bucket of buckets) add(bucket, `bucket ${bucket}`);
    for (const cluster of [false, true]) {
      for (const id of ids) {
        add(windowRecordKey('p:', id, cluster), `record of ${id}${cluster ? ' on a Cluster' : ''}`);
        add(seenGroupEpochKey('p:', id, cluster), `epoch of group ${id}${cluster ? ' on a Cluster' : ''}`);
        add(seenKey('p:', id, id, cluster), `key ${id} in mode property${cluster ? ' on a Cluster' : ''}`);
        add(seenKey('p:', id, `${id}:41:76c73ee2946cc70e`, cluster), `reading 41 of ${id}${cluster ? ' on a Cluster' : ''}`);
      }
    }
  });

  it('tag each slot\'s epoch key to hash to that slot, for all 16,384 slots', () => {
    for (let slot = 0; slot < SLOT_COUNT; slot++) {
      const key = epochKey('dedup:', WINDOW_SEGMENT, slot);
      assert.equal(calculateSlot(key), slot, key);
      assert.equal(redisKeySlot(key), slot, key);
    }
  });
});

describe('redis keys: buckets, hash tags and TTLs', () => {
  useRedis();
  const client = scriptedClientPerTest();

  /** The KEYS of every script call the client makes from now on, one list per call, window and seen-set apart. */
  function namedKeys(redis: Redis): { window: string[][]; seen: string[][] } {
    const named = { window: [] as string[][], seen: [] as string[][] };
    const window = redis.dedupSlidingWindowBuffer.bind(redis);
    const seen = redis.dedupSeenSet.bind(redis);
    // The stores pass KEYS as one array after their count (ioredis flattens it).
    redis.dedupSlidingWindowBuffer = (numKeys, ...rest) => {
      named.window.push([...(rest[0] as string[])]);
      return window(numKeys, ...rest);
    };
    redis.dedupSeenSet = (numKeys, ...rest) => {
      named.seen.push([...(rest[0] as string[])]);
      return seen(numKeys, ...rest);
    };
    return named;
  }

  it('names in a call the slot\'s epoch and the buckets; while old keys are read, the old keys too, and the layout mark last', async () => {
    // Not empty: the first call marks the slot with its time, and old keys are read for a TTL.
    await fillKeys(client(), 10, (i) => `someone-else:${i}`, () => 'x');
    let now = Date.now();
    const clock = (): number => now;
    const named = namedKeys(client());
    const windows = new RedisWindowStore(client(), SETTINGS, storeOptions('keys:'), clock);
    const seen = new RedisSeenStore(client(), SEEN_SETTINGS, storeOptions('keys:'), clock);
    const claims = [reading(1, 10), reading(2, 20)];
    await Promise.all([decide(windows, ping('veh-1', 0)), decide(windows, ping('veh-2', 0))]);
    await claim(seen, { claims, token: newToken() });
    const windowKeys = ['keys:sw:epoch', windowBucketKey('keys:', 'veh-1'), windowBucketKey('keys:', 'veh-2')];
    const seenKeys = ['keys:rc:epoch', seenGroupEpochKey('keys:', 'bin-A17'), ...claims.map((c) => seenBucketKey('keys:', c.group, c.key))];
    assert.deepEqual(named.window, [[...windowKeys, windowRecordKey('keys:', 'veh-1'), windowRecordKey('keys:', 'veh-2'), 'keys:layout']]);
    // The seen-set's operations name their keys by index: each bucket is followed by its old key.
    const seenWithOld = ['keys:rc:epoch', seenGroupEpochKey('keys:', 'bin-A17'), ...claims.flatMap((c) => [seenBucketKey('keys:', c.group, c.key), seenKey('keys:', c.group, c.key)]), 'keys:layout'];
    assert.deepEqual(named.seen, [seenWithOld]);
    // A TTL on, the replies say no old key can hold anything: the next call names them once more, the one after neither them nor the mark.
    now += SETTINGS.ttlSeconds * 1000;
    for (let i = 0; i < 2; i++) {
      await Promise.all([decide(windows, ping('veh-1', 4000 + i)), decide(windows, ping('veh-2', 4000 + i))]);
      await claim(seen, { claims, token: newToken() });
    }
    assert.equal(named.window.length, 3);
    assert.equal(named.window[1]?.at(-1), 'keys:layout');
    assert.deepEqual(named.window[2], windowKeys);
    assert.equal(named.seen[1]?.at(-1), 'keys:layout');
    assert.deepEqual(named.seen[2], seenKeys);
  });

  it('names no old key and no layout mark after the first call on a database that was empty', async () => {
    const named = namedKeys(client());
    const windows = new RedisWindowStore(client(), SETTINGS, storeOptions('keys:'));
    await decide(windows, ping('veh-1', 0));
    await decide(windows, ping('veh-1', 100));
    assert.deepEqual(named.window.map((keys) => keys.at(-1)), ['keys:layout', windowBucketKey('keys:', 'veh-1')]);
    assert.deepEqual(named.window[1], ['keys:sw:epoch', windowBucketKey('keys:', 'veh-1')]);
  });

  /** The record of an id and the entries of its three readings, decoded, with their buckets' PTTLs. */
  async function written(id: string, cluster: boolean): Promise<{ record: WindowRecord; entries: { expires: number; state: number }[]; pttls: number[] }> {
    const bucket = windowBucketKey('keys:', id, cluster);
    const record = decodeWindowRecord((await client().hgetBuffer(bucket, id)) as Buffer);
    const entries: { expires: number; state: number }[] = [];
    const pttls = [await client().pttl(bucket)];
    for (const seq of [1, 2, 3]) {
      const { key } = reading(seq, seq * 10, 0, id);
      const entryBucket = seenBucketKey('keys:', id, key, cluster);
      const raw = (await client().hgetBuffer(entryBucket, key)) as Buffer;
      // Its expiry and its state in one number (redis/wire SEEN_ENTRY): expiry + state * 2^46.
      const expiresState = raw.readUIntLE(0, 6);
      entries.push({ expires: expiresState % 2 ** 46, state: Math.floor(expiresState / 2 ** 46) });
      pttls.push(await client().pttl(entryBucket));
    }
    return { record, entries, pttls };
  }

  it('keeps each record and reading in its bucket until ttlSeconds after its write, and each bucket at most half a TTL longer', async () => {
    const before = Date.now();
    await writeEverything(client(), TTL_SECONDS, false);
    const after = Date.now();
    for (const id of IDS) {
      const { record, entries, pttls } = await written(id, false);
      for (const { expires } of [record, ...entries]) assert.ok(expires >= before + TTL_SECONDS * 1000 && expires <= after + TTL_SECONDS * 1000, `${id}: expires ${expires - after} ms from now`);
      for (const pttl of pttls) assert.ok(pttl > TTL_SECONDS * 1000 - 2000 && pttl <= TTL_SECONDS * 1500, `${id}: a bucket's PTTL ${pttl}`);
    }
    // Buckets, and per id its device's epoch; the layout mark has no TTL.
    for (const key of await allKeys(client())) {
      if (key === 'keys:layout') continue;
      const ttl = await client().ttl(key);
      assert.ok(ttl > 0 && ttl <= TTL_SECONDS * 1.5, `${key} has TTL ${ttl}`);
    }
  });

  it('keeps a pending reading, and its device\'s epoch, for the longer of TTL and lease; a released one for a lease', async () => {
    const lease = 2 * TTL_SECONDS;
    const before = Date.now();
    await writeEverything(client(), TTL_SECONDS, false, { confirm: true, leaseSeconds: lease });
    const after = Date.now();
    const within = (expires: number, seconds: number): boolean => expires >= before + seconds * 1000 && expires <= after + seconds * 1000;
    for (const id of IDS) {
      const { entries, pttls } = await written(id, false);
      const [pending, confirmed, released] = entries as [{ expires: number; state: number }, { expires: number; state: number }, { expires: number; state: number }];
      assert.deepEqual(entries.map((e) => e.state), [1, 0, 2], `${id}: pending, seen, released`);
      assert.ok(within(pending.expires, lease), `${id}: pending`);
      assert.ok(within(confirmed.expires, TTL_SECONDS), `${id}: confirmed`);
      assert.ok(within(released.expires, lease), `${id}: released`);
      for (const [i, pttl] of pttls.entries()) if (i > 0) assert.ok(pttl >= lease * 1000 - 2000, `${id}: the bucket of a reading a lease long: PTTL ${pttl}`);
      const epoch = await client().ttl(seenGroupEpochKey('keys:', id));
      assert.ok(epoch > lease - 10 && epoch <= lease, `${id}: device epoch ${epoch}`);
    }
  });

  it('rounds a fractional TTL up to whole seconds, never to zero', async () => {
    const before = Date.now();
    await writeEverything(client(), 0.2, false, { leaseSeconds: 0.2 });
    for (const id of IDS) {
      const { record, entries, pttls } = await written(id, false);
      for (const { expires } of [record, ...entries]) assert.ok(expires > before && expires <= Date.now() + 1000, `${id}: expires in ${expires - Date.now()} ms`);
      for (const pttl of pttls) assert.ok(pttl > 0 && pttl <= 1500, `${id}: a bucket's PTTL ${pttl}`);
    }
  });

  it('keeps one epoch key per segment and one layout mark with no TTL on one server: the only keys without one', async () => {
    await writeEverything(client(), TTL_SECONDS, false, {}, true);
    const lasting: string[] = [];
    for (const key of await allKeys(client())) if ((await client().ttl(key)) === -1) lasting.push(key);
    assert.deepEqual(lasting, ['keys:layout', 'keys:rc:epoch', 'keys:sw:epoch']);
  });

  it('puts every record and reading in the bucket its hash names, as hashes in Redis\' compact encoding', async () => {
    await writeEverything(client(), TTL_SECONDS, false);
    const keys = await allKeys(client());
    for (const id of IDS) {
      assert.ok(keys.includes(windowBucketKey('keys:', id)), id);
      assert.equal(windowBucketKey('keys:', id), `keys:sw:#${hashBucketOf(id, false)}`);
    }
    for (const key of keys.filter((k) => k.includes('#'))) {
      assert.equal(await client().type(key), 'hash');
      assert.equal(await client().object('ENCODING', key), 'listpack', key);
    }
  });

  it('on a Cluster puts every key of an id in its bucket\'s slot: its record\'s bucket, its readings\' buckets, its device\'s epoch', async () => {
    await writeEverything(client(), TTL_SECONDS, true);
    for (const id of IDS) {
      const slot = bucketSlot(bucketOf(id));
      const mine = [windowBucketKey('keys:', id, true), seenGroupEpochKey('keys:', id, true), ...[1, 2, 3].map((seq) => seenBucketKey('keys:', id, reading(seq, seq * 10, 0, id).key, true))];
      for (const key of mine) {
        assert.equal(await client().exists(key), 1, key);
        assert.equal(calculateSlot(key), slot, key);
        assert.equal(redisKeySlot(key), slot, key);
      }
      assert.equal(windowBucketKey('keys:', id, true), `keys:sw:${bucketTag(bucketOf(id))}#${hashBucketOf(id, true)}`);
    }
  });

  it('on a Cluster keeps one epoch key per bucket and segment, and one layout mark per bucket, with no TTL after a reset of everything', async () => {
    await writeEverything(client(), TTL_SECONDS, true, {}, true);
    const lasting: string[] = [];
    for (const key of await allKeys(client())) if ((await client().ttl(key)) === -1) lasting.push(key);
    const slots = Array.from({ length: CLUSTER_BUCKETS }, (_, b) => bucketSlot(b));
    const expected = [...[WINDOW_SEGMENT, SEEN_SEGMENT].flatMap((segment) => slots.map((slot) => epochKey('keys:', segment, slot))), ...slots.map((slot) => layoutMarkKey('keys:', slot))];
    assert.deepEqual(lasting, expected.sort());
    for (const key of lasting) assert.ok(slots.includes(calculateSlot(key)), key);
  });
});

describe('redis keys: slots as a real Cluster node computes them', function () {
  let server: RedisServer | undefined;
  let node: Redis | undefined;

  before(async function () {
    if (!redisServerAvailable()) this.skip(); // only reachable with REDIS_URL and no local binary
    server = await startRedisServer(['--cluster-enabled', 'yes']);
    node = newRedisClient({}, server.url);
  });

  after(async () => {
    if (node) await closeRedisClient(node);
    await server?.stop();
  });

  it('agrees with CLUSTER KEYSLOT for every key shape the stores write, and every slot epoch', async () => {
    const cluster: Redis | undefined = node;
    assert.ok(cluster);
    const keyslots = async (keys: string[]): Promise<number[]> => {
      const pipeline = cluster.pipeline();
      for (const key of keys) pipeline.call('CLUSTER', 'KEYSLOT', key);
      return ((await pipeline.exec()) ?? []).map(([error, slot]) => {
        assert.equal(error, null);
        return Number(slot);
      });
    };
    const keys: string[] = [];
    for (const id of [...IDS, '}', '{}', '%7B', 'ünïcødé']) {
      for (const cluster of [false, true]) {
        keys.push(
          windowBucketKey('p:', id, cluster),
          seenBucketKey('p:', id, `${id}:41:76c73ee2946cc70e`, cluster),
          windowRecordKey('p:', id, cluster),
          seenKey('p:', id, `${id}:41:76c73ee2946cc70e`, cluster),
          seenKey('p:', id, id, cluster),
          seenGroupEpochKey('p:', id, cluster),
        );
      }
    }
    const slots = await keyslots(keys);
    keys.forEach((key, i) => {
      assert.equal(redisKeySlot(key), slots[i], key);
      assert.equal(calculateSlot(key), slots[i], key);
    });
    const epochs = Array.from({ length: SLOT_COUNT }, (_, slot) => epochKey('p:', SEEN_SEGMENT, slot));
    assert.deepEqual(await keyslots(epochs), Array.from({ length: SLOT_COUNT }, (_, slot) => slot));
    const marks = Array.from({ length: CLUSTER_BUCKETS }, (_, b) => layoutMarkKey('p:', bucketSlot(b)));
    assert.deepEqual(await keyslots(marks), Array.from({ length: CLUSTER_BUCKETS }, (_, b) => bucketSlot(b)));
    // The reason for the test helper: on an empty tag the package and Redis disagree.
    const awkward = 'p:rc:{}x}:1:h';
    assert.equal(redisKeySlot(awkward), (await keyslots([awkward]))[0]);
  });
});
