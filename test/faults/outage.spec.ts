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
import {
  collect,
  coreNodes,
  helper,
  node,
  packNodes,
  sleep,
  startServer,
  stopServer,
  until,
  watchCompletions,
  type FlowNode,
  type Msg,
} from '../support/node-red-helper';
import { ManagedRedis, skipLoudlyWithoutRedisServer } from '../support/redis-sentinel';

const TIMEOUT_MS = 500;
const TICK_MS = 25;
const DOWN_MS = 2500;
const BASE = 1_780_000_000;
const NODES = ['o-win-admit', 'o-win-error', 'o-sensor-admit', 'o-sensor-error'] as const;
type NodeId = (typeof NODES)[number];

function flow(port: number): FlowNode[] {
  const nodes: FlowNode[] = [
    { id: 'o-tab', type: 'tab' },
    { id: 'o-conn', type: 'dedup-redis', host: '127.0.0.1', port: String(port), keyPrefix: 'outage:', timeoutMs: String(TIMEOUT_MS) },
    { id: 'o-catch', type: 'catch', z: 'o-tab', scope: [...NODES], uncaught: false, wires: [['o-caught']] },
    { id: 'o-caught', type: 'helper', z: 'o-tab' },
    { id: 'o-status', type: 'status', z: 'o-tab', scope: [...NODES], wires: [['o-statuses']] },
    { id: 'o-statuses', type: 'helper', z: 'o-tab' },
  ];
  for (const id of NODES) {
    nodes.push(
      {
        id, type: id.startsWith('o-win') ? 'sliding-window-dedup' : 'sensor-reconnect-dedup', z: 'o-tab', store: 'redis', redis: 'o-conn',
        onStoreError: id.endsWith('admit') ? 'admit' : 'error', wires: [[`${id}-1`], [`${id}-2`]],
      },
      { id: `${id}-1`, type: 'helper', z: 'o-tab' },
      { id: `${id}-2`, type: 'helper', z: 'o-tab' },
    );
  }
  return nodes;
}

interface Exit {
  at: number;
  door: 'output 1' | 'output 2' | 'catch';
  msg: Msg;
}

describe('faults: Redis stopped mid-stream, then started again', function () {
  this.timeout(60_000);
  let runtimeStarted = false;
  let redis: ManagedRedis | undefined;

  before(async function () {
    skipLoudlyWithoutRedisServer(this, 'the Redis outage test');
    redis = await ManagedRedis.start();
    await startServer();
    runtimeStarted = true;
  });

  after(async function () {
    // Not started when the suite was skipped (or its servers failed to start).
    if (runtimeStarted) {
      await helper.unload();
      await stopServer();
    }
    await redis?.stop();
  });

  it('answers every message within the timeout during the outage, shows it, and resumes after', async function () {
    const server = redis as ManagedRedis;
    await helper.load([...packNodes(), ...coreNodes()], flow(server.port), { 'o-conn': {} });
    const instances = NODES.map((id) => node(id));
    const sentAt = new Map<string, number>();
    const exits = new Map<string, Exit[]>();
    const record = (door: Exit['door']) => (msg: Msg) => {
      const id = String(msg._msgid);
      exits.set(id, [...(exits.get(id) ?? []), { at: Date.now(), door, msg }]);
    };
    for (const id of NODES) {
      node(`${id}-1`).on('input', record('output 1'));
      node(`${id}-2`).on('input', record('output 2'));
    }
    node('o-caught').on('input', record('catch'));
    const statuses = collect('o-statuses');
    const completions = NODES.map((id) => watchCompletions(id));

    let i = 0;
    const tick = (): void => {
      const ts = BASE + i * 61;
      const ping = { assetId: `veh-${i % 10}`, ts, lat: 52.5, lon: 13.4 };
      const reading = { device_id: `bin-${i % 10}`, seq: i, ts: new Date(ts * 1000).toISOString(), fill_pct: i % 100 };
      for (const id of NODES) {
        const msgid = `${id}#${i}`;
        sentAt.set(msgid, Date.now());
        node(id).receive({ _msgid: msgid, payload: id.startsWith('o-win') ? { ...ping } : [{ ...reading }] });
      }
      i++;
    };
    const normalSince = (id: NodeId, since: number): number =>
      [...exits]
        .filter(([msgid]) => msgid.startsWith(`${id}#`))
        .flatMap(([, list]) => list)
        .filter((e) => e.at > since && e.door !== 'catch' && e.msg.dedup?.reason !== 'store-unavailable').length;

    const ticker = setInterval(tick, TICK_MS);
    let killedAt = 0;
    let restartedAt = 0;
    let resumedAt = 0;
    try {
      await sleep(1000);
      for (const id of NODES) assert.ok(normalSince(id, 0) > 5, `${id} decides before the outage`);
      killedAt = Date.now();
      await server.kill('SIGKILL');
      await sleep(DOWN_MS);
      await server.start();
      restartedAt = Date.now();
      await until(() => NODES.every((id) => normalSince(id, restartedAt) >= 5), 'decisions to resume on every node', 15_000);
      resumedAt = Math.min(
        ...[...exits.values()].flat().filter((e) => e.at > restartedAt && e.door !== 'catch' && e.msg.dedup?.reason !== 'store-unavailable').map((e) => e.at),
      );
      await sleep(200);
    } finally {
      clearInterval(ticker);
    }
    try {
      await until(() => completions.reduce((n, c) => n + c.total(), 0) >= sentAt.size, 'done() for every message', 10_000);
      await sleep(100);
      for (const c of completions) assert.ok([...c.perMessage.values()].every((n) => n === 1), 'done() once per message');
    } finally {
      for (const c of completions) c.dispose();
    }
    // Same node objects: nothing was restarted or redeployed.
    NODES.forEach((id, k) => assert.equal(node(id), instances[k]));

    let worstDuringOutage = 0;
    const outcome: Record<NodeId, { storeUnavailable: number; caught: number }> = {
      'o-win-admit': { storeUnavailable: 0, caught: 0 },
      'o-win-error': { storeUnavailable: 0, caught: 0 },
      'o-sensor-admit': { storeUnavailable: 0, caught: 0 },
      'o-sensor-error': { storeUnavailable: 0, caught: 0 },
    };
    for (const [msgid, at] of sentAt) {
      const id = msgid.slice(0, msgid.indexOf('#')) as NodeId;
      const list = exits.get(msgid) ?? [];
      const isSensor = id.startsWith('o-sensor');
      // A sensor burst leaves as its audit (output 2) with its admitted readings (output 1) alongside.
      const doors = list.filter((e) => !(isSensor && e.door === 'output 1'));
      assert.equal(doors.length, 1, `${msgid} left through ${doors.map((e) => e.door).join(', ') || 'nothing'}`);
      const exit = doors[0] as Exit;
      if (at > killedAt && at < restartedAt) worstDuringOutage = Math.max(worstDuringOutage, exit.at - at);
      if (exit.door === 'catch') {
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

    const shown = statuses.map((m) => m.status as { fill?: string; text?: string; source?: { id?: string } });
    for (const id of NODES) {
      const mine = shown.filter((s) => s.source?.id === id);
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
