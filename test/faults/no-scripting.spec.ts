/**
 * A Redis that runs no Lua scripts (issue 30, item 2): a redis-server whose
 * config renames EVALSHA, EVAL or SCRIPT to "" (as a managed Redis with
 * scripting taken away does; a Valkey 9.1 without its Lua module answers
 * the same unknown-command error), one server and a Cluster. At deploy,
 * before any message, every node's status names it in the catalog's words
 * with what the server answered; then each node applies its own
 * store-failure policy (admit: output 1 with reason store-unavailable and
 * the same words in msg.dedup.error; error: the Catch node), every message
 * leaves exactly once, done() is called once per message, and no script ran
 * halfway (the servers hold no key).
 */
import assert from 'node:assert/strict';
import type Redis from 'ioredis';
import { collect, helper, loadPackFlow, node, sleep, until, watchCompletions, type Msg } from '../support/node-red-helper';
import { runtimeWithRedis, streamFlow, type NodeUnderTest } from '../support/live-stream';
import { ManagedRedis } from '../support/redis-server';
import { startRedisCluster } from '../support/redis-cluster';
import { adminClient } from '../support/redis-sentinel';

const BASE = 1_780_000_000;
const NODES: NodeUnderTest[] = [
  { id: 'ns-win-admit', type: 'sliding-window-dedup', onStoreError: 'admit' },
  { id: 'ns-win-error', type: 'sliding-window-dedup', onStoreError: 'error' },
  { id: 'ns-sensor-admit', type: 'sensor-reconnect-dedup', onStoreError: 'admit' },
  { id: 'ns-sensor-error', type: 'sensor-reconnect-dedup', onStoreError: 'error' },
];

/** The catalog's words (nodes/locales/en-US/dedup-redis.json) with the answer of a server that renamed `command` away. */
function expectedText(command: string): string {
  return `this server does not run Lua scripts (ERR unknown command '${command.toLowerCase()}'): the dedup store needs EVALSHA`;
}

interface Servers {
  connection: Record<string, unknown>;
  admins: readonly Redis[];
  stop(): Promise<void>;
}

async function oneServer(command: string): Promise<Servers> {
  const server = await ManagedRedis.start({ args: ['--rename-command', command, ''] });
  const admin = adminClient(server.port);
  return {
    connection: { host: '127.0.0.1', port: String(server.port) },
    admins: [admin],
    async stop() {
      admin.disconnect();
      await server.stop();
    },
  };
}

async function cluster(command: string): Promise<Servers> {
  const handle = await startRedisCluster(3, ['--rename-command', command, '']);
  return { connection: { mode: 'cluster', clusterNodes: handle.seedList }, admins: handle.admins, stop: () => handle.stop() };
}

const TOPOLOGIES: [string, (command: string) => Promise<Servers>][] = [
  ['one server', oneServer],
  ['a Cluster', cluster],
];

for (const [topology, start] of TOPOLOGIES) {
  for (const command of ['EVALSHA', 'EVAL', 'SCRIPT']) {
    describe(`faults: ${command} renamed away, on ${topology}`, function () {
      this.timeout(40_000);
      const servers = runtimeWithRedis(`the no-scripting test (${command}, ${topology})`, () => start(command));

      it('names the server at deploy and in the status, then applies each node\'s policy, every message leaving once', async function () {
        const name = 'ns';
        const connection = { ...servers().connection, keyPrefix: 'noscript:', timeoutMs: '2000' };
        const completions = NODES.map((n) => watchCompletions(n.id));
        await loadPackFlow(streamFlow(name, connection, NODES), { [`${name}-conn`]: {} });
        const statuses = collect(`${name}-statuses`);
        const caught = collect(`${name}-caught`);
        const outputs = new Map(NODES.flatMap((n) => [1, 2].map((port) => [`${n.id}-${port}`, collect(`${n.id}-${port}`)] as const)));
        const text = expectedText(command);

        // At deploy: every node's status says it, before any message.
        const statusOf = (id: string): string[] =>
          statuses.filter((m) => (m.status as { source?: { id?: string } }).source?.id === id).map((m) => String((m.status as { text?: string }).text));
        await until(() => NODES.every((n) => statusOf(n.id).some((s) => s.includes(text))), `every status to say "${text}"`, 15_000);
        for (const n of NODES) {
          const last = statuses.filter((m) => (m.status as { source?: { id?: string } }).source?.id === n.id).at(-1)?.status as { fill?: string } | undefined;
          assert.equal(last?.fill, 'red', `${n.id}'s status is red`);
        }

        // Two messages per node, the second a copy of the first.
        const sent: string[] = [];
        for (const round of [1, 2]) {
          for (const n of NODES) {
            const msgid = `${n.id}-m${round}`;
            sent.push(msgid);
            const payload =
              n.type === 'sliding-window-dedup'
                ? { assetId: 'veh-1', ts: BASE, lat: 52.5, lon: 13.4 }
                : { device_id: 'bin-1', seq: 1, ts: '2026-07-16T09:00:00Z', fill_pct: 40 };
            node(n.id).receive({ _msgid: msgid, payload });
          }
        }
        const exitsOf = (msgid: string): { door: string; msg: Msg }[] => [
          ...caught.filter((m) => m._msgid === msgid).map((msg) => ({ door: 'catch', msg })),
          ...[...outputs].flatMap(([door, msgs]) => msgs.filter((m) => m._msgid === msgid).map((msg) => ({ door, msg }))),
        ];
        await until(() => sent.every((id) => exitsOf(id).length > 0), 'every message out', 10_000);
        await sleep(300);

        for (const msgid of sent) {
          const exits = exitsOf(msgid);
          assert.equal(exits.length, 1, `${msgid} left through ${exits.map((e) => e.door).join(', ')}`);
          const exit = exits[0] as { door: string; msg: Msg };
          if (msgid.includes('-admit-')) {
            assert.equal(exit.door, `${msgid.replace(/-m\d$/, '')}-1`, `${msgid} admitted on output 1`);
            assert.equal(exit.msg.dedup?.reason, 'store-unavailable', msgid);
            assert.equal(exit.msg.dedup?.error, text, msgid);
          } else {
            assert.equal(exit.door, 'catch', `${msgid} at the Catch node`);
            // The Catch node's msg.error.message is the error's toString().
            assert.equal(exit.msg.error?.message.replace(/^Error: /, ''), `The store could not decide: ${text}`, msgid);
          }
        }
        for (const c of completions) {
          assert.ok([...c.perMessage.values()].every((n) => n === 1), 'done() once per message');
          assert.equal(c.total(), 2, 'done() for both messages of each node');
          c.dispose();
        }
        // No script ran, halfway or whole: nothing was written.
        for (const admin of servers().admins) assert.equal(await admin.dbsize(), 0);
      });
    });
  }
}

/**
 * An ACL user the server lets run scripts only partly. Without @scripting,
 * SCRIPT LOAD already answers NOPERM at connect. With every command but
 * EVALSHA, the connect-time probe passes (EVALSHA with too few arguments is
 * rejected for its arity before the ACL is checked) and the first call,
 * ioredis' EVAL of the script's text, decides; the next, EVALSHA, is
 * refused, and that refusal, met in the call path, is named the same way.
 */
describe('faults: an ACL user without scripting', function () {
  this.timeout(30_000);
  let admin: Redis | undefined;
  let server: ManagedRedis | undefined;
  const connectionAs = async (user: string, rules: string[]): Promise<Record<string, unknown>> => {
    await (admin as Redis).call('ACL', 'SETUSER', user, 'reset', 'on', '>pw', '~*', '&*', ...rules);
    return { host: '127.0.0.1', port: String(server?.port), keyPrefix: 'noscript-acl:', timeoutMs: '2000' };
  };
  runtimeWithRedis('the ACL no-scripting test', async () => {
    server = await ManagedRedis.start();
    admin = adminClient(server.port);
    return {
      stop: async () => {
        admin?.disconnect();
        await server?.stop();
      },
    };
  });

  afterEach(async function () {
    await helper.unload();
  });

  it('names SCRIPT LOAD refused by the ACL at deploy', async function () {
    const connection = await connectionAs('no-scripting', ['+@all', '-@scripting']);
    const nodes: NodeUnderTest[] = [{ id: 'acl-win', type: 'sliding-window-dedup', onStoreError: 'error' }];
    await loadPackFlow(streamFlow('acl', connection, nodes), { 'acl-conn': { username: 'no-scripting', password: 'pw' } });
    const statuses = collect('acl-statuses');
    const caught = collect('acl-caught');
    const text = "this server does not run Lua scripts (NOPERM this user has no permissions to run the 'script|load' command): the dedup store needs EVALSHA";
    await until(() => statuses.some((m) => String((m.status as { text?: string }).text).includes(text)), 'the status to name the refusal', 10_000);
    node('acl-win').receive({ _msgid: 'acl-1', payload: { assetId: 'veh-1', ts: BASE, lat: 52.5, lon: 13.4 } });
    await until(() => caught.length === 1, 'the Catch node');
    assert.equal(caught[0]?.error?.message.replace(/^Error: /, ''), `The store could not decide: ${text}`);
  });

  it('names EVALSHA refused in the call path, after the first call (an EVAL) decided', async function () {
    const connection = await connectionAs('no-evalsha', ['+@all', '-evalsha']);
    const nodes: NodeUnderTest[] = [{ id: 'acl2-win', type: 'sliding-window-dedup', onStoreError: 'admit' }];
    await loadPackFlow(streamFlow('acl2', connection, nodes), { 'acl2-conn': { username: 'no-evalsha', password: 'pw' } });
    const admitted = collect('acl2-win-1');
    const statuses = collect('acl2-statuses');
    await until(() => statuses.some((m) => /admitted/.test(String((m.status as { text?: string }).text)) || (m.status as { fill?: string }).fill === 'green'), 'the node ready', 10_000);
    const text = "this server does not run Lua scripts (NOPERM this user has no permissions to run the 'evalsha' command): the dedup store needs EVALSHA";
    node('acl2-win').receive({ _msgid: 'acl2-1', payload: { assetId: 'veh-1', ts: BASE, lat: 52.5, lon: 13.4 } });
    await until(() => admitted.length === 1, 'the first ping');
    assert.equal(admitted[0]?.dedup?.reason, 'first', 'the first call ran as EVAL and decided');
    node('acl2-win').receive({ _msgid: 'acl2-2', payload: { assetId: 'veh-1', ts: BASE + 100, lat: 52.5, lon: 13.4 } });
    node('acl2-win').receive({ _msgid: 'acl2-3', payload: { assetId: 'veh-1', ts: BASE + 200, lat: 52.5, lon: 13.4 } });
    await until(() => admitted.length === 3, 'the other two pings');
    for (const msg of admitted.slice(1)) {
      assert.equal(msg.dedup?.reason, 'store-unavailable');
      assert.equal(msg.dedup?.error, text);
    }
    await until(() => statuses.some((m) => String((m.status as { text?: string }).text).includes(text)), 'the status to name the refusal');
  });
});
