/**
 * ioredis resends a command that was in flight when the connection dropped,
 * so a script that already ran can run again with the same arguments. The
 * call token makes the second run report what the first one decided for an
 * admitted ping/reading, instead of suppressing it as a duplicate of itself.
 * Simulated here by sending the identical call twice.
 */
import assert from 'node:assert/strict';
import type Redis from 'ioredis';
import { seenKey, windowRecordKey } from '../../src/redis/key-names';
import { defineDedupScripts } from '../../src/redis/scripts';
import { BASE_SECONDS, LAT, LON } from '../contract/window-store.contract';
import { closeRedisClient, flushRedis, newRedisClient } from '../support/global-hooks';

const T0 = String(BASE_SECONDS * 1000);
const T4 = String((BASE_SECONDS + 4) * 1000);
const RULE_ARGS = ['60', '25', '3600'];

describe('redis scripts: a resent call is recognised by its token', () => {
  let client: Redis;

  beforeEach(async () => {
    await flushRedis();
    client = newRedisClient();
    defineDedupScripts(client);
  });

  afterEach(() => closeRedisClient(client));

  describe('sliding window', () => {
    const key = windowRecordKey('replay:', 'veh-1');
    const call = (token: string, ...pings: string[][]): Promise<string[]> =>
      client.dedupSlidingWindow(pings.length, ...pings.map(() => key), ...RULE_ARGS, token, ...pings.flat());

    it('reports an admitted ping as replayed, not late, and does not count it twice', async () => {
      const first = await call('tok-1', [T0, String(LAT), String(LON)]);
      assert.deepEqual(first, ['first', '', '', '1', '0']);
      const resent = await call('tok-1', [T0, String(LAT), String(LON)]);
      assert.deepEqual(resent, ['replayed', '', '', '1', '0']);
      // A different call with the same ping is a genuine duplicate.
      const other = await call('tok-2', [T0, String(LAT), String(LON)]);
      assert.deepEqual(other.slice(0, 2), ['late', '0']);
      assert.deepEqual(other.slice(3), ['1', '1']);
    });

    it('still suppresses a resent ping that the first run suppressed', async () => {
      await call('tok-1', [T0, String(LAT), String(LON)]);
      const suppressed = await call('tok-2', [T4, String(LAT), String(LON)]);
      assert.equal(suppressed[0], 'window');
      const resent = await call('tok-2', [T4, String(LAT), String(LON)]);
      assert.equal(resent[0], 'window');
    });

    it('recognises every ping the call admitted, when it admitted several of one asset', async () => {
      const T61 = String((BASE_SECONDS + 61) * 1000);
      const T122 = String((BASE_SECONDS + 122) * 1000);
      const pings = [
        [T0, String(LAT), String(LON)], // first
        [T4, String(LAT), String(LON)], // window
        [T61, String(LAT), String(LON)], // elapsed
        [T122, String(LAT), String(LON)], // elapsed
      ];
      const first = await call('tok-5', ...pings);
      assert.deepEqual([first[0], first[5], first[10], first[15]], ['first', 'window', 'elapsed', 'elapsed']);
      const resent = await call('tok-5', ...pings);
      // Pings 1, 3 and 4 were admitted by the first run: none may now be
      // reported as late behind the record that run itself wrote.
      assert.deepEqual([resent[0], resent[10], resent[15]], ['replayed', 'replayed', 'replayed']);
      assert.equal(resent[5], 'late', 'the ping the first run suppressed stays suppressed');
      assert.equal(resent[18], '3', 'accepted is not counted again');
      assert.equal(await client.hget(key, 'id'), 'tok-5.1,3,4');
    });

    it('does not mistake another call whose indices match for this one', async () => {
      await call('tok-6', [T0, String(LAT), String(LON)]);
      // Same index 1, different token: a genuine duplicate, not a replay.
      assert.equal((await call('tok-66', [T0, String(LAT), String(LON)]))[0], 'late');
      assert.equal((await call('tok-', [T0, String(LAT), String(LON)]))[0], 'late');
    });

    it('leaves the record exactly as the first run wrote it', async () => {
      await call('tok-1', [T0, String(LAT), String(LON)]);
      const before = await client.hgetall(key);
      await call('tok-1', [T0, String(LAT), String(LON)]);
      assert.deepEqual(await client.hgetall(key), before);
      assert.equal(before.t, T0);
      assert.equal(before.id, 'tok-1.1');
    });
  });

  describe('seen set', () => {
    const k1 = seenKey('replay:', 'bin-A17', 41, '76c73ee2946cc70e');
    const k2 = seenKey('replay:', 'bin-A17', 42, 'ed9b14ef6ee4c460');

    it('reports claimed keys as admitted again when the same call is resent', async () => {
      assert.deepEqual(await client.dedupSeenSet(2, k1, k2, '3600', 'tok-A'), [1, 1]);
      assert.deepEqual(await client.dedupSeenSet(2, k1, k2, '3600', 'tok-A'), [1, 1]);
      // Another call claiming the same keys: duplicates.
      assert.deepEqual(await client.dedupSeenSet(2, k1, k2, '3600', 'tok-B'), [0, 0]);
    });

    it('keeps an in-burst replay a duplicate when the burst is resent', async () => {
      assert.deepEqual(await client.dedupSeenSet(3, k1, k1, k2, '3600', 'tok-C'), [1, 0, 1]);
      assert.deepEqual(await client.dedupSeenSet(3, k1, k1, k2, '3600', 'tok-C'), [1, 0, 1]);
    });

    it('claims with SET NX EX: the key holds the first call and has a TTL', async () => {
      await client.dedupSeenSet(1, k1, '3600', 'tok-D');
      await client.dedupSeenSet(1, k1, '3600', 'tok-E');
      assert.equal(await client.get(k1), 'tok-D.1', 'first write wins');
      const ttl = await client.ttl(k1);
      assert.ok(ttl > 3590 && ttl <= 3600, String(ttl));
    });
  });
});
