/**
 * What one asset's window record and one seen reading cost in Redis, so that
 * operators can size the server (README, "Running at scale"): 20,000 of each
 * written through the stores into a fresh redis-server, measured as the
 * growth of used_memory, and each record's TTL checked.
 */
import assert from 'node:assert/strict';
import type Redis from 'ioredis';
import { seenKey, windowRecordKey } from '../../src/redis/key-names';
import { defineDedupScripts } from '../../src/redis/scripts';
import { RedisSeenStore } from '../../src/stores/redis-seen-store';
import { decodeWindowRecord, RedisWindowStore } from '../../src/stores/redis-window-store';
import { adminClient } from '../support/redis-sentinel';
import { ManagedRedis, skipLoudlyWithoutRedisServer } from '../support/redis-server';

const COUNT = 20_000;
const PREFIX = 'dedup:';
const TTL = 21_600;
const NOW = 1_780_000_000_000;

async function usedMemory(client: Redis): Promise<number> {
  const info = await client.info('memory');
  return Number(/^used_memory:(\d+)/m.exec(info)?.[1]);
}

describe('memory: Redis bytes per asset and per seen reading', function () {
  this.timeout(60_000);
  let redis: ManagedRedis | undefined;
  let client: Redis | undefined;

  before(async function () {
    skipLoudlyWithoutRedisServer(this, 'the Redis footprint measurement');
    redis = await ManagedRedis.start();
    client = adminClient(redis.port);
    defineDedupScripts(client);
  });

  after(async function () {
    client?.disconnect();
    await redis?.stop();
  });

  it('measures a window record and a seen key, both with their TTL', async function () {
    const c = client as Redis;
    const options = { keyPrefix: PREFIX, cluster: false, timeoutMs: 10_000 };
    const windows = new RedisWindowStore(c, { minSeconds: 60, minMetres: 25, ttlSeconds: TTL }, options);
    const seen = new RedisSeenStore(c, { ttlSeconds: TTL }, options);

    const before = await usedMemory(c);
    const decisions: Promise<unknown>[] = [];
    for (let i = 0; i < COUNT; i++) {
      // Ids of a realistic length, and two accepted pings each so the counters are set.
      const assetId = `veh-${String(i).padStart(6, '0')}`;
      decisions.push(Promise.resolve(windows.decide({ assetId, t: NOW, lat: 52.520008, lon: 13.404954 })));
      decisions.push(Promise.resolve(windows.decide({ assetId, t: NOW + 61_000, lat: 52.520108, lon: 13.404954 })));
    }
    await Promise.all(decisions);
    const afterWindows = await usedMemory(c);
    const claims: Promise<unknown>[] = [];
    for (let i = 0; i < COUNT; i++) {
      const deviceId = `bin-${String(i % 2000).padStart(5, '0')}`;
      const hash = (i * 2654435761 >>> 0).toString(16).padStart(8, '0') + i.toString(16).padStart(8, '0');
      claims.push(Promise.resolve(seen.claim([{ deviceId, seq: i, hash, key: `${deviceId}:${i}:${hash}` }])));
    }
    await Promise.all(claims);
    const afterSeen = await usedMemory(c);

    const perRecord = Math.round((afterWindows - before) / COUNT);
    const perKey = Math.round((afterSeen - afterWindows) / COUNT);
    assert.equal(await c.dbsize(), 2 * COUNT);
    // Generous ceilings; the point is the printed numbers.
    assert.ok(perRecord > 0 && perRecord < 1024, `${perRecord} bytes per window record`);
    assert.ok(perKey > 0 && perKey < 1024, `${perKey} bytes per seen key`);

    const record = windowRecordKey(PREFIX, 'veh-000042');
    const key = seenKey(PREFIX, 'bin-00042', 42, (42 * 2654435761 >>> 0).toString(16).padStart(8, '0') + (42).toString(16).padStart(8, '0'));
    for (const k of [record, key]) {
      const ttl = await c.ttl(k);
      assert.ok(ttl > TTL - 60 && ttl <= TTL, `${k}: TTL ${ttl}`);
    }
    const sampleRecord = Number(await c.call('MEMORY', 'USAGE', record));
    const sampleKey = Number(await c.call('MEMORY', 'USAGE', key));
    console.log(
      `      window record: ${perRecord} bytes (used_memory / ${COUNT}), MEMORY USAGE ${sampleRecord}: ` +
        `${JSON.stringify(decodeWindowRecord((await c.getBuffer(record)) as Buffer))}\n` +
        `      seen key:      ${perKey} bytes (used_memory / ${COUNT}), MEMORY USAGE ${sampleKey}: ${key} = ${String(await c.get(key))}`,
    );
  });
});
