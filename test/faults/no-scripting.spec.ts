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
import { collect, loadPackFlow, node, sleep, until, watchCompletions, type Msg } from '../support/node-red-helper';
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
