/**
 * Redeploys while thousands of messages are still out at Redis: a full
 * deploy, a "modified nodes" deploy that restarts only the two dedup nodes
 * (the config node and its connection stay), and a "modified nodes" deploy
 * that changes the config node itself (so it and both its users restart).
 * Every message calls done() exactly once, without an error, and the number
 * of connections the pack holds (CLIENT LIST, by client name) is the same
 * after each deploy as before: one, shared by both nodes; zero after unload.
 */
import assert from 'node:assert/strict';
import { closeRedisClient, flushRedis, newRedisClient, sharedRedis, useRedis } from '../support/global-hooks';
import { helper, loadPackFlow, node, sleep, startServer, stopServer, until, watchCompletions, type FlowNode } from '../support/node-red-helper';

const PINGS = 3000;
const BURSTS = 1000;
const BASE = 1_780_000_000;

function flow(changes: { minSeconds?: string; ttlSeconds?: string; timeoutMs?: string } = {}): FlowNode[] {
  return [
    { id: 'rd-tab', type: 'tab' },
    {
      id: 'rd-conn', type: 'dedup-redis', url: sharedRedis().url, keyPrefix: 'redeploy:',
      timeoutMs: changes.timeoutMs ?? '5000',
    },
    {
      id: 'rd-win', type: 'sliding-window-dedup', z: 'rd-tab', store: 'redis', redis: 'rd-conn',
      minSeconds: changes.minSeconds ?? '60', minMetres: '25', wires: [['rd-out'], ['rd-out']],
    },
    {
      id: 'rd-sensor', type: 'sensor-reconnect-dedup', z: 'rd-tab', store: 'redis', redis: 'rd-conn',
      ttlSeconds: changes.ttlSeconds ?? '3600', wires: [['rd-out'], ['rd-out']],
    },
    { id: 'rd-out', type: 'helper', z: 'rd-tab' },
  ];
}

/** Connections of this pack (its client name), per CLIENT LIST. */
async function packConnections(): Promise<number> {
  const probe = newRedisClient();
  try {
    const list = (await probe.client('LIST')) as string;
    return list.split('\n').filter((line) => / name=node-red-dedup /.test(line)).length;
  } finally {
    await closeRedisClient(probe);
  }
}

let round = 0;

/** Sends PINGS pings and BURSTS bursts without waiting; returns their count. */
function flood(): number {
  round++;
  for (let i = 0; i < PINGS; i++) {
    node('rd-win').receive({ _msgid: `r${round}-p${i}`, payload: { assetId: `veh-${i % 300}`, ts: BASE + round * 10_000 + i, lat: 52.5, lon: 13.4 } });
  }
  for (let i = 0; i < BURSTS; i++) {
    const reading = (seq: number): Record<string, unknown> => ({ device_id: `bin-${i % 50}`, seq, ts: '2026-07-16T09:00:00Z', fill_pct: seq % 100 });
    node('rd-sensor').receive({ _msgid: `r${round}-b${i}`, payload: [reading(round * 10_000 + i), reading(round * 10_000 + i + 1)] });
  }
  return PINGS + BURSTS;
}

describe('faults: redeploy with thousands of messages in flight', function () {
  useRedis();
  this.timeout(60_000);

  before(startServer);
  after(async function () {
    await helper.unload();
    await stopServer();
  });
  beforeEach(flushRedis);

  it('calls done() once per message and leaks no connection, on full and modified-nodes deploys', async function () {
    await loadPackFlow(flow(), { 'rd-conn': {} });
    // One decision so the connection is open before counting.
    const completions = [watchCompletions('rd-win'), watchCompletions('rd-sensor')];
    const errors: string[] = [];
    // Node-RED's onComplete hook also reports done(err); count those as failures.
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- Node-RED's hook registry, untyped
    const { hooks } = require('@node-red/util') as { hooks: { add(n: string, h: (e: { error?: Error }) => void): void; remove(n: string): void } };
    hooks.add('onComplete.redeployErrors', (event) => {
      if (event.error) errors.push(event.error.message);
    });
    try {
      node('rd-win').receive({ _msgid: 'warm-up', payload: { assetId: 'w', ts: BASE, lat: 0, lon: 0 } });
      await until(() => completions[0]?.total() === 1, 'the warm-up ping');
      const before = await packConnections();
      assert.equal(before, 1, 'both nodes share one connection');

      const deploys: [string, FlowNode[], 'full' | 'nodes'][] = [
        ['full deploy, same flow', flow(), 'full'],
        ['modified nodes: both dedup nodes changed', flow({ minSeconds: '61', ttlSeconds: '3601' }), 'nodes'],
        ['modified nodes: the config node changed', flow({ minSeconds: '61', ttlSeconds: '3601', timeoutMs: '4000' }), 'nodes'],
      ];
      let expected = 1;
      for (const [what, next, type] of deploys) {
        expected += flood();
        // Nothing has come back from Redis yet: the deploy starts with all of them out.
        const inFlight = expected - completions.reduce((n, c) => n + c.total(), 0);
        assert.ok(inFlight >= PINGS, `${what}: only ${inFlight} in flight`);
        const started = Date.now();
        await helper.setFlows(next, type, { 'rd-conn': {} });
        await until(() => completions.reduce((n, c) => n + c.total(), 0) >= expected, `${what}: done() for every message`, 20_000);
        const drainMs = Date.now() - started;
        // Let any second done() show itself, and the old connection finish closing.
        await sleep(200);
        const perMessage = completions.flatMap((c) => [...c.perMessage.values()]);
        assert.equal(perMessage.length, expected, `${what}: every message completed`);
        assert.ok(perMessage.every((n) => n === 1), `${what}: done() more than once for some message`);
        assert.deepEqual(errors, [], `${what}: messages failed`);
        let after = await packConnections();
        for (let tries = 0; after !== before && tries < 20; tries++) {
          await sleep(100);
          after = await packConnections();
        }
        assert.equal(after, before, `${what}: connections before ${before}, after ${after}`);
        console.log(`      ${what}: ${inFlight} in flight, all done in ${drainMs} ms; connections ${before} -> ${after}`);
      }
      // The redeployed nodes still decide.
      node('rd-win').receive({ _msgid: 'after', payload: { assetId: 'w', ts: BASE + 100_000, lat: 0, lon: 0 } });
      await until(() => completions[0]?.perMessage.has('after') === true, 'a decision after the deploys');
    } finally {
      for (const c of completions) c.dispose();
      hooks.remove('onComplete.redeployErrors');
    }
    await helper.unload();
    let left = await packConnections();
    for (let tries = 0; left !== 0 && tries < 20; tries++) {
      await sleep(100);
      left = await packConnections();
    }
    assert.equal(left, 0, 'the connection closed with its last user');
  });
});
