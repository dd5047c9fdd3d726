/**
 * Redis dies mid-stream (SIGKILL), stays down for a while, and comes back on
 * the same port, while both nodes keep receiving messages, each node once
 * with the default policy (admit when the store fails) and once with the
 * error policy (hand the message to a Catch node).
 *
 * Proven: no message hangs; each is decided, admitted with reason
 * `store-unavailable`, or caught, within the connection's timeout (plus
 * scheduling slack); the status line turns red during the outage and green
 * after; decisions resume on the restarted server without restarting or
 * redeploying Node-RED; done() is called once per message.
 */
import assert from 'node:assert/strict';
import { LiveStream, runtimeWithRedis, streamFlow, type NodeUnderTest } from '../support/live-stream';
import { loadPackFlow, node, sleep, until } from '../support/node-red-helper';
import { ManagedRedis } from '../support/redis-server';

const TIMEOUT_MS = 500;
const TICK_MS = 25;
const DOWN_MS = 2500;
const BASE = 1_780_000_000;
const NODES = ['o-win-admit', 'o-win-error', 'o-sensor-admit', 'o-sensor-error'] as const;
type NodeId = (typeof NODES)[number];
const UNDER_TEST: NodeUnderTest[] = NODES.map((id) => ({
  id,
  type: id.startsWith('o-win') ? 'sliding-window-dedup' : 'sensor-reconnect-dedup',
  onStoreError: id.endsWith('admit') ? 'admit' : 'error',
}));

describe('faults: Redis stopped mid-stream, then started again', function () {
  this.timeout(60_000);
  const redis = runtimeWithRedis('the Redis outage test', () => ManagedRedis.start());

  it('answers every message within the timeout during the outage, shows it, and resumes after', async function () {
    const server = redis();
    const connection = { host: '127.0.0.1', port: String(server.port), keyPrefix: 'outage:', timeoutMs: String(TIMEOUT_MS) };
    await loadPackFlow(streamFlow('o', connection, UNDER_TEST), { 'o-conn': {} });
    const instances = NODES.map((id) => node(id));
    const stream = new LiveStream('o', UNDER_TEST);

    let i = 0;
    const tick = (): void => {
      const ts = BASE + i * 61;
      const ping = { assetId: `veh-${i % 10}`, ts, lat: 52.5, lon: 13.4 };
      const reading = { device_id: `bin-${i % 10}`, seq: i, ts: new Date(ts * 1000).toISOString(), fill_pct: i % 100 };
      for (const id of NODES) stream.send(id, `${id}#${i}`, id.startsWith('o-win') ? { ...ping } : [{ ...reading }]);
      i++;
    };

    let killedAt = 0;
    let restartedAt = 0;
    let resumedAt = 0;
    await stream.whileSending(TICK_MS, tick, async () => {
      await sleep(1000);
      for (const id of NODES) assert.ok(stream.decidedAfter(id, 0) > 5, `${id} decides before the outage`);
      killedAt = Date.now();
      await server.kill('SIGKILL');
      await sleep(DOWN_MS);
      await server.start();
      restartedAt = Date.now();
      await until(() => NODES.every((id) => stream.decidedAfter(id, restartedAt) >= 5), 'decisions to resume on every node', 15_000);
      resumedAt = stream.firstDecisionSentAfter(restartedAt);
      await sleep(200);
    });
    await stream.expectDoneOnce(10_000, 100);
    // Same node objects: nothing was restarted or redeployed.
    NODES.forEach((id, k) => assert.equal(node(id), instances[k]));

    let worstDuringOutage = 0;
    const outcome: Record<NodeId, { storeUnavailable: number; caught: number }> = {
      'o-win-admit': { storeUnavailable: 0, caught: 0 },
      'o-win-error': { storeUnavailable: 0, caught: 0 },
      'o-sensor-admit': { storeUnavailable: 0, caught: 0 },
      'o-sensor-error': { storeUnavailable: 0, caught: 0 },
    };
    for (const [msgid, sent] of stream.sent) {
      const id = sent.node as NodeId;
      const isSensor = id.startsWith('o-sensor');
      const exit = stream.onlyExit(msgid);
      if (sent.at > killedAt && sent.at < restartedAt) worstDuringOutage = Math.max(worstDuringOutage, exit.at - sent.at);
      if (exit.door === stream.caught) {
        assert.ok(id.endsWith('error'), `${msgid}: only the error policy raises`);
        assert.match(exit.msg.error?.message ?? '', /store could not decide/);
        outcome[id].caught++;
      } else if (exit.msg.dedup?.reason === 'store-unavailable') {
        assert.ok(id.endsWith('admit'), `${msgid}: only the admit policy admits unchecked`);
        assert.equal(exit.msg.dedup?.decision, isSensor ? 'audit' : 'admitted');
        outcome[id].storeUnavailable++;
      }
    }
    assert.ok(outcome['o-win-admit'].storeUnavailable > 10 && outcome['o-sensor-admit'].storeUnavailable > 10, JSON.stringify(outcome));
    assert.ok(outcome['o-win-error'].caught > 10 && outcome['o-sensor-error'].caught > 10, JSON.stringify(outcome));
    assert.ok(worstDuringOutage < TIMEOUT_MS + 1500, `a message waited ${worstDuringOutage} ms during the outage`);

    for (const id of NODES) {
      const mine = stream.statusesOf(id);
      assert.ok(mine.some((s) => s.fill === 'red' && /Redis unavailable|store failed/.test(s.text ?? '')), `${id} showed the outage`);
      assert.equal(mine.at(-1)?.fill, 'green', `${id} is green again: ${mine.at(-1)?.text}`);
    }
    console.log(
      `      down ${restartedAt - killedAt} ms; slowest answer during the outage ${worstDuringOutage} ms (timeout ${TIMEOUT_MS} ms); ` +
        `first normal decision ${resumedAt - restartedAt} ms after the restart\n` +
        `      ${JSON.stringify(outcome)}`,
    );
  });
});
