/**
 * The Lua scripts as Redis runs them: the prelude that names the reason and
 * claim codes from the TypeScript tables (issue 14), EVALSHA once a script
 * is cached, and what empties Redis' script cache (SCRIPT FLUSH, a server
 * restart, as after a failover): ioredis answers NOSCRIPT by sending the
 * text again, and the calls must keep their order through it, or a reset
 * could overtake the pings around it (issue 9).
 */
import assert from 'node:assert/strict';
import { createHash } from 'crypto';
import { readFileSync } from 'fs';
import { join } from 'path';
import type Redis from 'ioredis';
import { CLAIM, LEASE_EXPIRED, SETTLE } from '../../src/core/sensor/seen-codes';
import { WINDOW_REASONS, type WindowReason } from '../../src/core/window/window-reasons';
import { codeLocal, defineDedupScripts, reasonLocal, scriptSource, type ScriptName } from '../../src/redis/scripts';
import { windowRecordLayout } from '../../src/redis/wire';
import { MemoryWindowStore } from '../../src/stores/memory-window-store';
import { RedisSeenStore } from '../../src/stores/redis-seen-store';
import { RedisWindowStore } from '../../src/stores/redis-window-store';
import type { WindowOutcome } from '../../src/stores/types';
import { claimNames, newToken, reading } from '../contract/seen-store.contract';
import { ping } from '../contract/window-store.contract';
import { claim, decide, resetSeen, resetWindow } from '../support/ask';
import { closeRedisClient, newRedisClient, useRedis } from '../support/global-hooks';
import { redisServerAvailable, startRedisServer, type RedisServer } from '../support/redis-server';
import { scriptedClientPerTest, SEEN_SETTINGS, SETTINGS, storeOptions } from '../support/scripted-redis';

const OPTIONS = storeOptions('scripts:');
/** One operation per script call, so that every operation is a call of its own on the wire. */
const ONE_PER_CALL = storeOptions('scripts:', { maxBatch: 1 });
const LUA_DIR = join(__dirname, '..', '..', 'lua');

const sha1 = (text: string): string => createHash('sha1').update(text).digest('hex');
const SHAS = [sha1(scriptSource('dedupSlidingWindow')), sha1(scriptSource('dedupSeenSet'))];

function waitForReady(client: Redis): Promise<void> {
  if (client.status === 'ready') return Promise.resolve();
  return new Promise((resolve) => client.once('ready', () => resolve()));
}

/** How many NOSCRIPT errors the server has replied, from INFO errorstats. */
async function noscriptErrors(client: Redis): Promise<number> {
  return Number(/^errorstat_NOSCRIPT:count=(\d+)/m.exec(await client.info('errorstats'))?.[1] ?? 0);
}

/** The first words of the commands the server receives while `work` runs. */
async function commandsDuring(client: Redis, work: () => Promise<unknown>): Promise<string[]> {
  const monitor = await client.monitor();
  const commands: string[] = [];
  monitor.on('monitor', (_time: string, args: string[]) => commands.push(String(args[0]).toLowerCase()));
  await work();
  // MONITOR lines arrive asynchronously; give them a moment.
  await new Promise((resolve) => setTimeout(resolve, 50));
  monitor.disconnect();
  return commands;
}

describe('redis scripts: the codes both sides name', () => {
  useRedis();
  const client = scriptedClientPerTest();

  /** The tables a script's prelude defines, as Lua sees them. */
  async function preludeTables(name: ScriptName, names: string): Promise<unknown> {
    const prelude = scriptSource(name).split('\n')[0] as string;
    return JSON.parse(String(await client().eval(`${prelude}\nreturn cjson.encode({ ${names} })`, 0)));
  }

  it('gives the sliding-window script the reason codes of core/window/window-reasons', async () => {
    const reasons = Object.keys(WINDOW_REASONS) as WindowReason[];
    const codes = Object.fromEntries(reasons.map((reason) => [reason, WINDOW_REASONS[reason].code]));
    assert.deepEqual(await preludeTables('dedupSlidingWindow', reasons.map((r) => `[${JSON.stringify(r)}] = ${reasonLocal(r)}`).join(', ')), codes);
  });

  it('gives the sliding-window script each kind of record\'s format and size, as redis/wire lays them out', async () => {
    // The prelude's lines up to the record formats, then what the script reads out of them for each combination of flags.
    const lines = scriptSource('dedupSlidingWindow').split('\n');
    const upTo = lines.findIndex((line) => line.startsWith('local RECORD_FORMATS,'));
    assert.ok(upTo > 0);
    const read = await client().eval(
      `${lines.slice(0, upTo + 1).join('\n')}
local out = {}
for flags = 0, 63 do
  local at = flags * RECORD_FORMAT_WIDTH
  local format = string.sub(RECORD_FORMATS, at + 1, at + RECORD_FORMAT_WIDTH)
  out[#out + 1] = { format, string.byte(RECORD_SIZES, flags + 1), struct.size(format) }
end
out[#out + 1] = { string.byte(RECORD_SIZES, 65) or 'none' }
return cjson.encode(out)`,
      0,
    );
    const expected: unknown[] = Array.from({ length: 64 }, (_, flags) => {
      const layout = windowRecordLayout(flags);
      assert.ok(layout !== undefined);
      return [layout.format.padEnd(Number(/RECORD_FORMAT_WIDTH[^=]*= '[^']*', (\d+)/.exec(lines[upTo] as string)?.[1]), ' '), layout.bytes, layout.bytes];
    });
    expected.push(['none']);
    assert.deepEqual(JSON.parse(String(read)), expected);
  });

  it('tells the sliding-window script which reasons admit, as core/window/window-reasons does', async () => {
    const prelude = scriptSource('dedupSlidingWindow').split('\n')[0] as string;
    const admitted = await client().eval(`${prelude}\nlocal out = {}\nfor code = 0, 255 do if ADMITS[code] then out[#out + 1] = code end end\nreturn out`, 0);
    const expected = Object.values(WINDOW_REASONS).filter(({ admit }) => admit).map(({ code }) => code);
    assert.deepEqual(admitted, expected.sort((x, y) => x - y));
  });

  it('gives the seen-set script the codes of core/sensor/seen-codes', async () => {
    const fields = (table: 'CLAIM' | 'SETTLE', codes: Record<string, number>): string =>
      Object.keys(codes).map((name) => `${table}_${name} = ${codeLocal(table, name)}`).join(', ');
    const read = (await preludeTables('dedupSeenSet', `LEASE_EXPIRED = LEASE_EXPIRED, ${fields('CLAIM', CLAIM)}, ${fields('SETTLE', SETTLE)}`)) as Record<string, number>;
    assert.deepEqual(read, {
      LEASE_EXPIRED,
      ...Object.fromEntries(Object.entries(CLAIM).map(([name, code]) => [`CLAIM_${name}`, code])),
      ...Object.fromEntries(Object.entries(SETTLE).map(([name, code]) => [`SETTLE_${name}`, code])),
    });
  });

  it('uses, in each script, every code the prelude gives it, and gives none a value itself', () => {
    const code = (file: string): string => readFileSync(join(LUA_DIR, file), 'utf8').replace(/--.*$/gm, '');
    const unused = (file: string, names: string[]): string[] => names.filter((name) => !new RegExp(`\\b${name}\\b`).test(code(file)));
    const reasons = (Object.keys(WINDOW_REASONS) as WindowReason[]).map(reasonLocal);
    const seen = [...Object.keys(CLAIM).map((name) => codeLocal('CLAIM', name)), ...Object.keys(SETTLE).map((name) => codeLocal('SETTLE', name)), 'LEASE_EXPIRED'];
    assert.deepEqual(unused('sliding-window.lua', [...reasons, 'ADMITS']), []);
    assert.deepEqual(unused('seen-set.lua', seen), []);
    for (const file of ['sliding-window.lua', 'seen-set.lua', 'layout-mark.lua']) {
      // Neither the tables of earlier builds nor a local of its own for a code.
      assert.doesNotMatch(code(file), /\b(REASON|CLAIM|SETTLE)\s*[.[]/, `${file} reads a code table`);
      for (const name of [...reasons, ...seen, 'ADMITS']) {
        assert.doesNotMatch(code(file), new RegExp(`^\\s*local\\s+[\\w\\s,]*\\b${name}\\b[\\w\\s,]*=`, 'm'), `${file} gives ${name} a value of its own`);
      }
    }
  });
});

describe('redis scripts survive an empty script cache', () => {
  useRedis();
  const client = scriptedClientPerTest();

  it('sends the text with EVAL on a new connection, and EVALSHA once the script is cached', async () => {
    const windows = new RedisWindowStore(client(), SETTINGS, OPTIONS);
    const first = await commandsDuring(client(), () => decide(windows, ping('veh-2', 0)));
    const later = await commandsDuring(client(), async () => {
      await decide(windows, ping('veh-2', 4));
      await decide(windows, ping('veh-2', 8));
    });
    assert.deepEqual(first.filter((c) => c.startsWith('eval')), ['eval']);
    assert.deepEqual(later.filter((c) => c.startsWith('eval')), ['evalsha', 'evalsha']);
  });

  it('keeps deciding after SCRIPT FLUSH, reloading the scripts', async () => {
    const windows = new RedisWindowStore(client(), SETTINGS, OPTIONS);
    const seen = new RedisSeenStore(client(), SEEN_SETTINGS, OPTIONS);
    assert.equal((await decide(windows, ping('veh-1', 0))).reason, 'first');
    assert.deepEqual(claimNames(await claim(seen, { claims: [reading(1, 10)], token: newToken() })), ['admitted']);
    assert.deepEqual(await client().script('EXISTS', ...SHAS), [1, 1]);

    await client().script('FLUSH');
    assert.deepEqual(await client().script('EXISTS', ...SHAS), [0, 0], 'the cache really is empty');
    const errors = await noscriptErrors(client());

    // The state survived, the scripts did not: the next calls must reload them.
    assert.equal((await decide(windows, ping('veh-1', 4))).reason, 'window');
    assert.deepEqual(claimNames(await claim(seen, { claims: [reading(1, 10), reading(2, 20)], token: newToken() })), ['duplicate', 'admitted']);
    assert.deepEqual(await client().script('EXISTS', ...SHAS), [1, 1]);
    assert.equal(await noscriptErrors(client()), errors + 2, 'each script went through NOSCRIPT once');
  });

  it('keeps a reset between the ping calls around it through NOSCRIPT (issue 9)', async () => {
    const windows = new RedisWindowStore(client(), SETTINGS, ONE_PER_CALL);
    assert.equal((await decide(windows, ping('veh-x', 0))).reason, 'first');
    await client().script('FLUSH');
    const errors = await noscriptErrors(client());
    const before = decide(windows, ping('veh-x', 1));
    const reset = resetWindow(windows, 'veh-x');
    const after = decide(windows, ping('veh-x', 2));
    await reset;
    assert.deepEqual([(await before).reason, (await after).reason], ['window', 'first']);
    assert.equal(await noscriptErrors(client()), errors + 3, 'all three calls were sent before the script was back, and resent');
  });

  it('keeps a device reset between the claim calls around it through NOSCRIPT', async () => {
    const seen = new RedisSeenStore(client(), SEEN_SETTINGS, ONE_PER_CALL);
    const keys = [reading(1, 10)];
    await claim(seen, { claims: keys, token: newToken() });
    await client().script('FLUSH');
    const errors = await noscriptErrors(client());
    const answers = await Promise.all([
      claim(seen, { claims: keys, token: newToken() }),
      resetSeen(seen, 'bin-A17').then(() => []),
      claim(seen, { claims: keys, token: newToken() }),
      claim(seen, { claims: keys, token: newToken() }),
    ]);
    assert.deepEqual(answers.map((codes) => claimNames(codes)), [['duplicate'], [], ['admitted'], ['duplicate']]);
    assert.ok((await noscriptErrors(client())) >= errors + 3);
  });

  it('decides a long run of one-operation calls resent after NOSCRIPT exactly as the memory store does', async () => {
    const windows = new RedisWindowStore(client(), SETTINGS, ONE_PER_CALL);
    const memory = new MemoryWindowStore({ ...SETTINGS, maxAssets: 10 });
    await decide(windows, ping('veh-0', 0));
    memory.decideNow(ping('veh-0', 0));
    await client().script('FLUSH');
    const expected: string[] = [];
    const pending: Promise<WindowOutcome | void>[] = [];
    for (let i = 1; i <= 60; i++) {
      const id = `veh-${i % 3}`;
      if (i % 7 === 0) {
        pending.push(resetWindow(windows, i % 14 === 0 ? undefined : id));
        memory.reset(i % 14 === 0 ? undefined : id, { value: () => undefined, error: () => undefined }, undefined);
        expected.push('reset');
        continue;
      }
      pending.push(decide(windows, ping(id, i * 11)));
      expected.push(memory.decideNow(ping(id, i * 11)).reason);
    }
    assert.deepEqual((await Promise.all(pending)).map((o) => (o === undefined ? 'reset' : o.reason)), expected);
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
    const seen = new RedisSeenStore(client, SEEN_SETTINGS, OPTIONS);
    assert.equal((await decide(windows, ping('veh-9', 0))).reason, 'first');
    assert.equal((await decide(windows, ping('veh-9', 4))).reason, 'window');
    assert.deepEqual(claimNames(await claim(seen, { claims: [reading(7, 70)], token: newToken() })), ['admitted']);

    const pid = await client.info('server').then((info) => /process_id:(\d+)/.exec(info)?.[1]);
    await server.restart();
    await waitForReady(client);
    const newPid = await client.info('server').then((info) => /process_id:(\d+)/.exec(info)?.[1]);
    assert.notEqual(newPid, pid, 'the server really restarted');

    // Without persistence the records are gone, and so is the script cache.
    assert.equal((await decide(windows, ping('veh-9', 8))).reason, 'first');
    assert.equal((await decide(windows, ping('veh-9', 12))).reason, 'window');
    assert.deepEqual(claimNames(await claim(seen, { claims: [reading(7, 70)], token: newToken() })), ['admitted']);
  });
});
