/**
 * msg.reset in Redis (issue 9): an epoch per slot (reset everything) and per
 * device (reset one device's readings) that the scripts compare with what a
 * record or entry was written in. A reset is O(1) on the server however
 * many keys exist (counted here in the commands Redis runs for it, which a
 * clock could not show reliably), deletes nothing, touches nothing of
 * another prefix, and on a Cluster is made slot by slot, each slot's epoch
 * key tagged to hash to that slot.
 */
import assert from 'node:assert/strict';
import calculateSlot from 'cluster-key-slot';
import type Redis from 'ioredis';
import { bucketSlot, CLUSTER_BUCKETS, epochKey, SEEN_SEGMENT, seenGroupEpochKey, WINDOW_SEGMENT, windowBucketKey, windowRecordKey } from '../../src/redis/key-names';
import { RedisSeenStore } from '../../src/stores/redis-seen-store';
import { RedisWindowStore } from '../../src/stores/redis-window-store';
import { claimNames, newToken, reading } from '../contract/seen-store.contract';
import { ping } from '../contract/window-store.contract';
import { claim, decide, resetSeen, resetWindow } from '../support/ask';
import { useRedis } from '../support/global-hooks';
import { redisKeySlot } from '../support/redis-slot';
import { decodeEpoch, fillKeys, scriptedClientPerTest, SEEN_SETTINGS, SETTINGS, storeOptions } from '../support/scripted-redis';

const MANY = 200_000;

/** Calls per command Redis has run (scripts' own commands included), from INFO commandstats. */
async function commandCalls(client: Redis): Promise<Map<string, number>> {
  const calls = new Map<string, number>();
  for (const match of (await client.info('commandstats')).matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)) calls.set(match[1] as string, Number(match[2]));
  return calls;
}

/** The data commands Redis ran while `work` did: what a script called, not the EVALSHA itself or INFO. */
async function commandsDuring(client: Redis, work: () => Promise<unknown>): Promise<Record<string, number>> {
  const before = await commandCalls(client);
  await work();
  const after = await commandCalls(client);
  const ran: Record<string, number> = {};
  for (const [name, count] of after) {
    const more = count - (before.get(name) ?? 0);
    if (more > 0 && !['info', 'eval', 'evalsha'].includes(name)) ran[name] = more;
  }
  return ran;
}

async function keysMatching(client: Redis, pattern: string): Promise<string[]> {
  const keys: string[] = [];
  for await (const batch of client.scanStream({ match: pattern, count: 5000 })) keys.push(...(batch as string[]));
  return keys;
}

describe('redis reset: epochs', () => {
  useRedis();
  const client = scriptedClientPerTest();

  it('resets every asset with two commands, however many records exist, and deletes none', async function () {
    this.slow(4000);
    const windows = new RedisWindowStore(client(), SETTINGS, storeOptions('mine:'));
    const ids = ['veh-1', 'veh-2', 'veh-3'];
    for (const id of ids) await decide(windows, ping(id, 0));
    const record = Buffer.alloc(44);
    await fillKeys(client(), MANY, (i) => windowRecordKey('mine:', `other-${i}`), () => record);
    const size = await client().dbsize();

    const started = process.hrtime.bigint();
    const ran = await commandsDuring(client(), () => resetWindow(windows));
    const ms = Number(process.hrtime.bigint() - started) / 1e6;
    assert.deepEqual(ran, { get: 1, set: 1 }, 'read the epoch, write it: O(1)');
    assert.equal(await client().dbsize(), size + 1, 'nothing deleted; one epoch key written');
    assert.deepEqual(decodeEpoch(await client().getBuffer(epochKey('mine:', WINDOW_SEGMENT, undefined)))?.count, 1);
    for (const id of ids) assert.equal((await decide(windows, ping(id, 4))).reason, 'first', id);
    // Printed for the record; the assertion is the command count.
    console.log(`      reset of every asset among ${MANY.toLocaleString('en-US')} records: ${ms.toFixed(1)} ms`);
  });

  it('resets one asset by deleting its record, and nothing else', async () => {
    const windows = new RedisWindowStore(client(), SETTINGS, storeOptions('mine:'));
    await decide(windows, ping('veh-1', 0));
    await decide(windows, ping('veh-2', 0));
    assert.deepEqual(await commandsDuring(client(), () => resetWindow(windows, 'veh-1')), { get: 1, hget: 1, hdel: 1 }, 'the epoch and the record read, the record deleted');
    assert.equal(await client().hexists(windowBucketKey('mine:', 'veh-1'), 'veh-1'), 0);
    assert.equal((await decide(windows, ping('veh-2', 4))).reason, 'window');
  });

  it('resets every key, or one device\'s, with two commands, however many keys exist, and deletes none', async function () {
    this.slow(4000);
    const seen = new RedisSeenStore(client(), SEEN_SETTINGS, storeOptions('mine:'));
    const mine = [reading(1, 1), reading(2, 2), reading(1, 1, 0, 'bin-B')];
    await claim(seen, { claims: mine, token: newToken() });
    const entry = Buffer.alloc(11);
    await fillKeys(client(), MANY, (i) => `mine:rc:{other-${i % 1000}}:${i}:0123456789abcdef`, () => entry);
    const size = await client().dbsize();

    assert.deepEqual(await commandsDuring(client(), () => resetSeen(seen, 'bin-A17')), { get: 1, set: 1 }, 'a device: its epoch read and raised');
    assert.deepEqual(claimNames(await claim(seen, { claims: mine, token: newToken() })), ['admitted', 'admitted', 'duplicate']);
    assert.deepEqual(await commandsDuring(client(), () => resetSeen(seen)), { get: 1, set: 1 }, 'everything: the slot epoch read and raised');
    assert.deepEqual(claimNames(await claim(seen, { claims: mine, token: newToken() })), ['admitted', 'admitted', 'admitted']);
    assert.equal(await client().dbsize(), size + 2, 'nothing deleted; two epoch keys written');
  });

  it('keeps a device\'s epoch for as long as any entry written in it may live', async () => {
    const settings = { ...SEEN_SETTINGS, ttlSeconds: 100, confirm: true, leaseSeconds: 300 };
    const seen = new RedisSeenStore(client(), settings, storeOptions('mine:'));
    const epoch = seenGroupEpochKey('mine:', 'bin-A17');
    await resetSeen(seen, 'bin-A17');
    const atReset = await client().pttl(epoch);
    assert.ok(atReset > 299_000 && atReset <= 300_000, `PTTL ${atReset}: the longer of TTL and lease`);
    await client().pexpire(epoch, 5000);
    await claim(seen, { claims: [reading(1, 1)], token: newToken() });
    const afterClaim = await client().pttl(epoch);
    assert.ok(afterClaim > 299_000, `PTTL ${afterClaim}: a write in the epoch extends it`);
  });

  it('touches nothing of another prefix, another store, or another application', async () => {
    const mine = new RedisWindowStore(client(), SETTINGS, storeOptions('mine:'));
    const theirs = new RedisWindowStore(client(), SETTINGS, storeOptions('theirs:'));
    const mineSeen = new RedisSeenStore(client(), SEEN_SETTINGS, storeOptions('mine:'));
    await Promise.all([decide(mine, ping('veh-1', 0)), decide(theirs, ping('veh-1', 0))]);
    await claim(mineSeen, { claims: [reading(1, 1)], token: newToken() });
    await client().set('unrelated', 'x');

    await resetWindow(mine);
    assert.equal((await decide(mine, ping('veh-1', 4))).reason, 'first');
    assert.equal((await decide(theirs, ping('veh-1', 4))).reason, 'window', 'another prefix');
    assert.deepEqual(claimNames(await claim(mineSeen, { claims: [reading(1, 1)], token: newToken() })), ['duplicate'], 'the seen-set is another store');
    assert.equal(await client().get('unrelated'), 'x');
  });

  it('with Cluster grouping, raises one epoch per bucket in one call per bucket, each key tagged to hash to its bucket\'s slot', async function () {
    this.slow(6000);
    const options = storeOptions('mine:', { cluster: true });
    const windows = new RedisWindowStore(client(), SETTINGS, options);
    const seen = new RedisSeenStore(client(), SEEN_SETTINGS, options);
    const ids = Array.from({ length: 50 }, (_, i) => `veh-${i}`);
    await Promise.all(ids.map((id) => decide(windows, ping(id, 0))));
    const readings = ids.map((id) => reading(1, 1, 0, id));
    await claim(seen, { claims: readings, token: newToken() });

    const scripts = async (): Promise<number> => {
      const calls = await commandCalls(client());
      return (calls.get('eval') ?? 0) + (calls.get('evalsha') ?? 0);
    };
    const before = await scripts();
    await Promise.all([resetWindow(windows), resetSeen(seen)]);
    assert.equal((await scripts()) - before, 2 * CLUSTER_BUCKETS, 'one script call per bucket and store');
    const bucketSlots = Array.from({ length: CLUSTER_BUCKETS }, (_, b) => bucketSlot(b));
    for (const segment of [WINDOW_SEGMENT, SEEN_SEGMENT]) {
      const keys = await keysMatching(client(), `mine:${segment}epoch*`);
      assert.equal(keys.length, CLUSTER_BUCKETS, `${segment}: one epoch key per bucket`);
      assert.deepEqual(keys.map((key) => calculateSlot(key)).sort((a, b) => a - b), bucketSlots, `${segment}: each in its bucket's slot`);
      for (const key of keys) assert.equal(redisKeySlot(key), calculateSlot(key), key);
      for (const slot of bucketSlots) {
        assert.equal(calculateSlot(epochKey('mine:', segment, slot)), slot);
        assert.deepEqual(decodeEpoch(await client().getBuffer(epochKey('mine:', segment, slot)))?.count, 1);
      }
    }
    assert.equal(await client().exists(epochKey('mine:', WINDOW_SEGMENT, undefined)), 0, 'no single-server epoch key on a Cluster');
    assert.deepEqual(new Set(await Promise.all(ids.map((id) => decide(windows, ping(id, 4)).then((o) => o.reason)))), new Set(['first']));
    assert.deepEqual(new Set(claimNames(await claim(seen, { claims: readings, token: newToken() }))), new Set(['admitted']));
  });

  it('with Cluster grouping, a reset of one asset or device touches only its own slot', async () => {
    const options = storeOptions('mine:', { cluster: true });
    const windows = new RedisWindowStore(client(), SETTINGS, options);
    const seen = new RedisSeenStore(client(), SEEN_SETTINGS, options);
    await decide(windows, ping('veh-1', 0));
    await claim(seen, { claims: [reading(1, 1)], token: newToken() });
    const ran = await commandsDuring(client(), () => Promise.all([resetWindow(windows, 'veh-1'), resetSeen(seen, 'bin-A17')]));
    // The window's epoch and record read, the record deleted; the device's epoch read and raised.
    assert.deepEqual(ran, { get: 2, hget: 1, hdel: 1, set: 1 });
    assert.deepEqual(await keysMatching(client(), 'mine:*epoch*'), []);
  });
});
