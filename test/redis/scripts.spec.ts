/**
 * The Lua scripts outlive what empties Redis' script cache: SCRIPT FLUSH and
 * a server restart (as after a failover). ioredis' defineCommand sends
 * EVALSHA and falls back to EVAL on NOSCRIPT; these tests prove that path.
 */
import assert from 'node:assert/strict';
import { createHash } from 'crypto';
import type Redis from 'ioredis';
import { defineDedupScripts, scriptSource } from '../../src/redis/scripts';
import { RedisSeenStore } from '../../src/stores/redis-seen-store';
import { RedisWindowStore } from '../../src/stores/redis-window-store';
import { ping } from '../contract/window-store.contract';
import { reading } from '../contract/seen-store.contract';
import { closeRedisClient, newRedisClient } from '../support/global-hooks';
import { redisServerAvailable, startRedisServer, type RedisServer } from '../support/redis-server';
import { scriptedClientPerTest, SETTINGS, storeOptions } from '../support/scripted-redis';

const OPTIONS = storeOptions('scripts:');

const sha1 = (text: string): string => createHash('sha1').update(text).digest('hex');

function waitForReady(client: Redis): Promise<void> {
  if (client.status === 'ready') return Promise.resolve();
  return new Promise((resolve) => client.once('ready', () => resolve()));
}

describe('redis scripts survive an empty script cache', () => {
  const client = scriptedClientPerTest();

  it('keeps deciding after SCRIPT FLUSH, reloading the scripts', async () => {
    const windows = new RedisWindowStore(client(), SETTINGS, OPTIONS);
    const seen = new RedisSeenStore(client(), SETTINGS, OPTIONS);
    const shas = [sha1(scriptSource('dedupSlidingWindow')), sha1(scriptSource('dedupSeenSet'))];

    assert.equal((await windows.decide(ping('veh-1', 0))).reason, 'first');
    assert.deepEqual(await seen.claim([reading(1, 10)]), [true]);
    assert.deepEqual(await client().script('EXISTS', ...shas), [1, 1]);

    await client().script('FLUSH');
    assert.deepEqual(await client().script('EXISTS', ...shas), [0, 0], 'the cache really is empty');

    // The state survived, the scripts did not: the next calls must reload them.
    assert.equal((await windows.decide(ping('veh-1', 4))).reason, 'window');
    assert.deepEqual(await seen.claim([reading(1, 10), reading(2, 20)]), [false, true]);
    assert.deepEqual(await client().script('EXISTS', ...shas), [1, 1]);
  });

  it('sends EVALSHA, not the script text, once the script is cached', async () => {
    const windows = new RedisWindowStore(client(), SETTINGS, OPTIONS);
    await windows.decide(ping('veh-2', 0));
    const monitor = await client().monitor();
    const commands: string[] = [];
    monitor.on('monitor', (_time: string, args: string[]) => commands.push(String(args[0]).toLowerCase()));
    await windows.decide(ping('veh-2', 4));
    await windows.decide(ping('veh-2', 8));
    // MONITOR lines arrive asynchronously; give them a moment.
    await new Promise((resolve) => setTimeout(resolve, 50));
    monitor.disconnect();
    assert.deepEqual(commands.filter((c) => c.startsWith('eval')), ['evalsha', 'evalsha']);
  });
});

describe('redis scripts survive a server restart', function () {
  let server: RedisServer | undefined;
  let client: Redis | undefined;

  before(async function () {
    // A private server: restarting the shared one would pull it from under other tests.
    if (!redisServerAvailable()) {
      if (process.env.REDIS_URL) this.skip(); // REDIS_URL without a local redis-server binary
      throw new Error('redis-server is needed for the restart test');
    }
    server = await startRedisServer();
  });

  after(async () => {
    if (client) await closeRedisClient(client);
    await server?.stop();
  });

  it('reloads the scripts on the restarted server and decides from an empty state', async () => {
    assert.ok(server);
    client = newRedisClient({ retryStrategy: () => 50 }, server.url);
    defineDedupScripts(client);
    const windows = new RedisWindowStore(client, SETTINGS, OPTIONS);
    const seen = new RedisSeenStore(client, SETTINGS, OPTIONS);
    assert.equal((await windows.decide(ping('veh-9', 0))).reason, 'first');
    assert.equal((await windows.decide(ping('veh-9', 4))).reason, 'window');
    assert.deepEqual(await seen.claim([reading(7, 70)]), [true]);

    const pid = await client.info('server').then((info) => /process_id:(\d+)/.exec(info)?.[1]);
    await server.restart();
    await waitForReady(client);
    const newPid = await client.info('server').then((info) => /process_id:(\d+)/.exec(info)?.[1]);
    assert.notEqual(newPid, pid, 'the server really restarted');

    // Without persistence the records are gone, and so is the script cache.
    assert.equal((await windows.decide(ping('veh-9', 8))).reason, 'first');
    assert.equal((await windows.decide(ping('veh-9', 12))).reason, 'window');
    assert.deepEqual(await seen.claim([reading(7, 70), reading(7, 70)]), [true, false]);
  });
});
