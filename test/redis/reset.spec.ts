/**
 * msg.reset in Redis: SCAN + UNLINK over many keys, touching only the keys
 * of this prefix (and of this device), never another node's or another app's.
 */
import assert from 'node:assert/strict';
import type Redis from 'ioredis';
import { deleteMatching } from '../../src/redis/delete-matching';
import { RedisSeenStore } from '../../src/stores/redis-seen-store';
import { RedisWindowStore } from '../../src/stores/redis-window-store';
import { ping } from '../contract/window-store.contract';
import { reading } from '../contract/seen-store.contract';
import { scriptedClientPerTest, SETTINGS, storeOptions } from '../support/scripted-redis';

async function countKeys(client: Redis, pattern: string): Promise<number> {
  let count = 0;
  for await (const batch of client.scanStream({ match: pattern, count: 1000 })) count += (batch as string[]).length;
  return count;
}

describe('redis reset: many keys, only our own', () => {
  const client = scriptedClientPerTest();

  it('reset() removes every record of its prefix over several SCAN pages, and nothing else', async () => {
    const mine = new RedisWindowStore(client(), SETTINGS, storeOptions('mine:'));
    const theirs = new RedisWindowStore(client(), SETTINGS, storeOptions('theirs:'));
    const mineSeen = new RedisSeenStore(client(), SETTINGS, storeOptions('mine:'));
    await Promise.all(Array.from({ length: 2500 }, (_, i) => mine.decide(ping(`veh-${i}`, 0))));
    await Promise.all(Array.from({ length: 10 }, (_, i) => theirs.decide(ping(`veh-${i}`, 0))));
    await mineSeen.claim([reading(1, 1), reading(2, 2)]);
    await client().set('unrelated', 'x');

    await mine.reset();
    assert.equal(await countKeys(client(), 'mine:sw:*'), 0);
    assert.equal(await countKeys(client(), 'theirs:sw:*'), 10);
    assert.equal(await countKeys(client(), 'mine:rc:*'), 2, 'the seen-set is another store');
    assert.equal(await client().get('unrelated'), 'x');
  });

  it('reset(deviceId) removes every key of that device only, over several SCAN pages', async () => {
    const seen = new RedisSeenStore(client(), SETTINGS, storeOptions('p:'));
    const big = Array.from({ length: 2500 }, (_, seq) => reading(seq, 50, 0, 'bin*'));
    await seen.claim(big);
    await seen.claim([reading(1, 1, 0, 'bin-A17'), reading(1, 1, 0, 'bin*x'), reading(1, 1, 0, 'bin')]);
    await seen.reset('bin*');
    assert.equal(await countKeys(client(), 'p:rc:*'), 3);
    assert.deepEqual(await seen.claim([reading(1, 1, 0, 'bin-A17'), reading(7, 50, 0, 'bin*')]), [false, true]);
  });

  it('deleteMatching counts what it deleted and copes with no match', async () => {
    await client().mset('dm:a', '1', 'dm:b', '2', 'other', '3');
    assert.equal(await deleteMatching(client(), 'dm:*'), 2);
    assert.equal(await deleteMatching(client(), 'dm:*'), 0);
    assert.equal(await client().get('other'), '3');
  });
});
