/**
 * A redeploy while Redis is stalled (issue 9, item 5): Redis holds every
 * command (CLIENT PAUSE 4000 ALL), the nodes raise an error when the store
 * fails, a Catch node is scoped to them, and a deploy restarts them while
 * their messages wait. Every message that entered leaves through output 1,
 * output 2 or the Catch node; where the deploy stopped the Catch node too,
 * each undelivered message is logged at error level with its _msgid.
 */
import assert from 'node:assert/strict';
import { closeRedisClient, newRedisClient, sharedRedis, useRedis } from '../support/global-hooks';
import { collect, coreNodes, helper, node, packNodes, sleep, startServer, stopServer, until, type FlowNode } from '../support/node-red-helper';

const ERROR = 20;

function flow(suffix: string): FlowNode[] {
  return [
    { id: 'tab', type: 'tab' },
    { id: 'conn', type: 'dedup-redis', host: '127.0.0.1', port: String(sharedRedis().port), keyPrefix: `stall-${process.pid}:`, timeoutMs: '2000' },
    {
      id: 'win', type: 'sliding-window-dedup', z: 'tab', name: `window ${suffix}`, store: 'redis', redis: 'conn', onStoreError: 'error', version: 2,
      wires: [['out'], ['out']],
    },
    {
      id: 'sensor', type: 'sensor-reconnect-dedup', z: 'tab', name: `sensor ${suffix}`, store: 'redis', redis: 'conn', onStoreError: 'error', version: 2,
      wires: [['out'], ['out']],
    },
    { id: 'out', type: 'helper', z: 'tab' },
    { id: 'catcher', type: 'catch', z: 'tab', scope: ['win', 'sensor'], uncaught: false, wires: [['caught']] },
    { id: 'caught', type: 'helper', z: 'tab' },
  ];
}

function errorsLogged(): string[] {
  return helper
    .log()
    .args.flatMap(([record]) => record ?? [])
    .filter((record) => record.level === ERROR)
    .map((record) => String(record.msg));
}

describe('faults: a redeploy while Redis is stalled', function () {
  this.timeout(30_000);
  useRedis();
  before(startServer);
  after(stopServer);
  afterEach(async function () {
    await helper.unload();
  });

  async function stalledDeploy(type: 'nodes' | 'full'): Promise<{ out: number; caught: string[]; ids: string[] }> {
    await helper.load([...packNodes(['dedup-redis', 'sliding-window-dedup', 'sensor-reconnect-dedup']), ...coreNodes()], flow('a'), { conn: {} });
    const out = collect('out');
    const caught = collect('caught');
    // Warm the connection: the messages below must wait on Redis, not on connecting.
    node('win').receive({ _msgid: 'warm', payload: { assetId: 'warm', ts: 1_780_000_000, lat: 1, lon: 1 } });
    await until(() => out.length === 1, 'the warm-up decision');
    const admin = newRedisClient();
    try {
      await admin.call('CLIENT', 'PAUSE', '4000', 'ALL');
      const ids = ['stalled-ping', 'stalled-burst'];
      node('win').receive({ _msgid: ids[0], payload: { assetId: 'veh-1', ts: 1_780_000_100, lat: 52.5, lon: 13.4 } });
      node('sensor').receive({ _msgid: ids[1], payload: [{ device_id: 'bin-1', seq: 1, ts: '2026-07-16T09:00:00Z', fill_pct: 10 }] });
      await sleep(100);
      // A modified-nodes deploy that renames both nodes restarts them alone; a full deploy restarts the Catch node as well.
      await helper.setFlows(flow('b'), type, { conn: {} });
      await sleep(500);
      return { out: out.length - 1, caught: caught.map((m) => String(m._msgid)), ids };
    } finally {
      await admin.call('CLIENT', 'UNPAUSE').catch(() => undefined);
      await closeRedisClient(admin);
    }
  }

  it('modified nodes: both waiting messages reach the Catch node, which keeps running', async function () {
    const result = await stalledDeploy('nodes');
    assert.equal(result.out, 0, 'nothing was decided while Redis held every command');
    assert.deepEqual([...result.caught].sort(), [...result.ids].sort(), 'each waiting message reached the Catch node');
  });

  it('full deploy: each waiting message the stopped Catch node could not take is logged with its _msgid', async function () {
    const result = await stalledDeploy('full');
    const logged = errorsLogged();
    for (const id of result.ids) {
      const reached = result.caught.includes(id) || logged.some((text) => text.includes(`message ${id} `));
      assert.ok(reached, `${id}: neither caught nor logged; errors logged: ${JSON.stringify(logged)}`);
    }
  });
});
