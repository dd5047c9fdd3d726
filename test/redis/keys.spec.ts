/**
 * What the stores leave in Redis: every key carries its asset's or device's
 * hash tag (so each script call stays in one Cluster slot) and a TTL (so a
 * churning fleet cannot leak keys forever).
 */
import assert from 'node:assert/strict';
import calculateSlot from 'cluster-key-slot';
import type Redis from 'ioredis';
import { escapeTagContent, seenKey, windowRecordKey } from '../../src/redis/key-names';
import { RedisSeenStore } from '../../src/stores/redis-seen-store';
import { RedisWindowStore } from '../../src/stores/redis-window-store';
import { LAT, ping } from '../contract/window-store.contract';
import { reading } from '../contract/seen-store.contract';
import { closeRedisClient, newRedisClient } from '../support/global-hooks';
import { redisServerAvailable, startRedisServer, type RedisServer } from '../support/redis-server';
import { redisKeySlot } from '../support/redis-slot';
import { scriptedClientPerTest, storeOptions } from '../support/scripted-redis';

const TTL_SECONDS = 600;
const IDS = ['veh-1', 'bin{A}', '}x', 'a%b', 'site:7:bin', 'x*y'];

async function allKeys(client: Redis): Promise<string[]> {
  const keys: string[] = [];
  for await (const batch of client.scanStream({ count: 1000 })) keys.push(...(batch as string[]));
  return keys.sort();
}

/** Writes records, suppressions, late pings and seen keys for every id. */
async function writeEverything(client: Redis, ttlSeconds: number, cluster: boolean): Promise<void> {
  const options = storeOptions('keys:', { cluster });
  const windows = new RedisWindowStore(client, { minSeconds: 60, minMetres: 25, ttlSeconds }, options);
  const seen = new RedisSeenStore(client, { ttlSeconds }, options);
  for (const id of IDS) {
    await windows.decide(ping(id, 100));
    await windows.decide(ping(id, 104)); // window: counter incremented
    await windows.decide(ping(id, 50)); // late
    await windows.decide(ping(id, 105, LAT + 0.01)); // moved
    await seen.claim([reading(1, 10, 0, id), reading(2, 20, 0, id), reading(1, 10, 0, id)]);
  }
}

describe('redis keys: hash tags and TTLs', () => {
  const client = scriptedClientPerTest();

  it('gives every key it writes a TTL no longer than ttlSeconds', async () => {
    await writeEverything(client(), TTL_SECONDS, false);
    const keys = await allKeys(client());
    assert.equal(keys.length, IDS.length * 3, keys.join('\n'));
    for (const key of keys) {
      const ttl = await client().ttl(key);
      assert.ok(ttl > 0 && ttl <= TTL_SECONDS, `${key} has TTL ${ttl}`);
    }
  });

  it('rounds a fractional TTL up to whole seconds, never to zero', async () => {
    await writeEverything(client(), 0.2, false);
    for (const key of await allKeys(client())) {
      const pttl = await client().pttl(key);
      assert.ok(pttl > 0 && pttl <= 1000, `${key} has PTTL ${pttl}`);
    }
  });

  it('tags every key with its escaped id, so one id maps to one slot', async () => {
    await writeEverything(client(), TTL_SECONDS, true);
    const keys = await allKeys(client());
    for (const id of IDS) {
      const tag = `{${escapeTagContent(id)}}`;
      const mine = keys.filter((key) => key.includes(tag));
      assert.equal(mine.length, 3, `${id}: ${mine.join(', ')}`);
      const slots = new Set(mine.flatMap((key) => [redisKeySlot(key), calculateSlot(key)]));
      assert.equal(slots.size, 1, `${id} spans slots ${[...slots].join(', ')}`);
    }
    const window = keys.filter((key) => key.startsWith('keys:sw:'));
    assert.equal(window.length, IDS.length);
    for (const key of window) assert.equal(await client().type(key), 'string');
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

  it('agrees with CLUSTER KEYSLOT for every key shape the stores write', async () => {
    const cluster: Redis | undefined = node;
    assert.ok(cluster);
    const keyslot = async (key: string): Promise<number> => Number(await cluster.call('CLUSTER', 'KEYSLOT', key));
    for (const id of [...IDS, '{', '}', '{}', '%7B', 'ünïcødé']) {
      for (const key of [windowRecordKey('p:', id), seenKey('p:', id, 41, '76c73ee2946cc70e')]) {
        const slot = await keyslot(key);
        assert.equal(redisKeySlot(key), slot, key);
        assert.equal(calculateSlot(key), slot, key);
      }
    }
    // The reason for the test helper: on an empty tag the package and Redis disagree.
    const awkward = 'p:rc:{}x}:1:h';
    assert.equal(redisKeySlot(awkward), await keyslot(awkward));
  });
});
