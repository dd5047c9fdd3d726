/**
 * What survives what, with the default memory store, in a real Node-RED
 * process driven through its admin API (issue 9): 1,000 sensor keys and
 * 1,000 vehicles seen; then every kind of deploy, a SIGTERM and restart, and
 * a `kill -9` more than one save interval after the last admission and a
 * restart; after each, the same traffic again admits nothing.
 */
import assert from 'node:assert/strict';
import { existsSync, readdirSync } from 'fs';
import { join } from 'path';
import { nodeRedProcess, type NodeRedProcess } from '../support/node-red-process';

const BASE = 1_780_000_000;
const VEHICLES = 1000;
const KEYS = 1000;
const BURST = 50;

interface Stats {
  swAdmitted: number;
  swSuppressed: number;
  srUnique: number;
  srSuppressed: number;
}

/** The flow: HTTP endpoints feed the two dedup nodes (memory store, saving every second) and report counts. */
function flow(dedupName = ''): unknown[] {
  const count = (name: string, expr: string): string => `global.set('${name}', (global.get('${name}') || 0) + (${expr})); return null;`;
  return [
    { id: 'tab', type: 'tab', label: 'what survives' },
    { id: 'in-pings', type: 'http in', z: 'tab', url: '/pings', method: 'post', wires: [['fan-pings', 'ok']] },
    { id: 'fan-pings', type: 'function', z: 'tab', func: 'for (const p of msg.payload) node.send({ payload: p }); return null;', outputs: 1, wires: [['window']] },
    {
      id: 'window', type: 'sliding-window-dedup', z: 'tab', name: dedupName, store: 'memory', minSeconds: '60', minMetres: '25',
      ttlSeconds: '21600', persistSeconds: '1', version: 2, wires: [['sw-admitted'], ['sw-suppressed']],
    },
    { id: 'sw-admitted', type: 'function', z: 'tab', func: count('swAdmitted', '1'), outputs: 0, wires: [] },
    { id: 'sw-suppressed', type: 'function', z: 'tab', func: count('swSuppressed', '1'), outputs: 0, wires: [] },
    { id: 'in-readings', type: 'http in', z: 'tab', url: '/readings', method: 'post', wires: [['fan-readings', 'ok']] },
    { id: 'fan-readings', type: 'function', z: 'tab', func: 'for (const b of msg.payload) node.send({ payload: b }); return null;', outputs: 1, wires: [['sensor']] },
    {
      id: 'sensor', type: 'sensor-reconnect-dedup', z: 'tab', name: dedupName, store: 'memory', ttlSeconds: '21600', persistSeconds: '1', version: 2,
      wires: [['sr-unique'], ['sr-audit']],
    },
    { id: 'sr-unique', type: 'function', z: 'tab', func: count('srUnique', 'msg.payload.length'), outputs: 0, wires: [] },
    { id: 'sr-audit', type: 'function', z: 'tab', func: count('srSuppressed', 'msg.payload.duplicates_suppressed'), outputs: 0, wires: [] },
    { id: 'ok', type: 'change', z: 'tab', rules: [{ t: 'set', p: 'statusCode', pt: 'msg', to: '204', tot: 'num' }], wires: [['respond']] },
    { id: 'in-stats', type: 'http in', z: 'tab', url: '/stats', method: 'get', wires: [['stats']] },
    {
      id: 'stats', type: 'function', z: 'tab', outputs: 1, wires: [['respond']],
      func: "msg.payload = {}; for (const k of ['swAdmitted', 'swSuppressed', 'srUnique', 'srSuppressed']) { msg.payload[k] = global.get(k) || 0; global.set(k, 0); } return msg;",
    },
    { id: 'respond', type: 'http response', z: 'tab' },
  ];
}

/** One ping per vehicle at `seconds`, and KEYS readings of `day`, in bursts. */
function traffic(seconds: number, day: number): { pings: unknown[]; bursts: unknown[][] } {
  const pings = Array.from({ length: VEHICLES }, (_, i) => ({ assetId: `veh-${i}`, ts: BASE + seconds, lat: 52.5 + i * 1e-4, lon: 13.4 }));
  const readings = Array.from({ length: KEYS }, (_, i) => ({ device_id: `bin-${i % 100}`, seq: day * 10_000 + i, ts: `2026-07-${String(day).padStart(2, '0')}T09:00:00Z`, fill_pct: i % 100 }));
  const bursts: unknown[][] = [];
  for (let i = 0; i < readings.length; i += BURST) bursts.push(readings.slice(i, i + BURST));
  return { pings, bursts };
}

async function send(red: NodeRedProcess, t: { pings: unknown[]; bursts: unknown[][] }): Promise<Stats> {
  await red.post('/pings', t.pings).catch((error: unknown) => {
    throw new Error(`${String(error)}\n${red.log().slice(-4000)}`);
  });
  await red.post('/readings', t.bursts);
  const totals: Stats = { swAdmitted: 0, swSuppressed: 0, srUnique: 0, srSuppressed: 0 };
  const deadline = Date.now() + 20_000;
  while (totals.swAdmitted + totals.swSuppressed < VEHICLES || totals.srUnique + totals.srSuppressed < KEYS) {
    if (Date.now() > deadline) throw new Error(`not every message was decided: ${JSON.stringify(totals)}\n${red.log().slice(-3000)}`);
    await new Promise((done) => setTimeout(done, 50));
    const stats = (await red.get('/stats')) as Stats;
    for (const k of Object.keys(totals) as (keyof Stats)[]) totals[k] += stats[k];
  }
  return totals;
}

const NOTHING_NEW: Stats = { swAdmitted: 0, swSuppressed: VEHICLES, srUnique: 0, srSuppressed: KEYS };

describe('what survives what: the memory store across deploys and restarts of a real Node-RED', function () {
  this.timeout(180_000);
  let red: NodeRedProcess;

  before(async function () {
    red = await nodeRedProcess(flow());
    await red.start();
  });

  after(async function () {
    await red?.dispose();
  });

  it('admits nothing twice across every kind of deploy, a restart, and a kill -9 after a save', async function () {
    const day1 = traffic(0, 1);
    assert.deepEqual(await send(red, day1), { swAdmitted: VEHICLES, swSuppressed: 0, srUnique: KEYS, srSuppressed: 0 });

    // The editor's default Deploy ("full") rebuilds every node; so do "modified flows" and
    // "restart flows" for the nodes of a changed flow; "modified nodes" rebuilds the changed nodes.
    await red.deploy(flow(), 'full');
    assert.deepEqual(await send(red, day1), NOTHING_NEW, 'after a full deploy');
    await red.deploy(flow('renamed'), 'flows');
    assert.deepEqual(await send(red, day1), NOTHING_NEW, 'after a modified-flows deploy');
    await red.deploy(flow('renamed again'), 'nodes');
    assert.deepEqual(await send(red, day1), NOTHING_NEW, 'after a modified-nodes deploy');
    await red.deploy(flow('renamed again'), 'reload');
    assert.deepEqual(await send(red, day1), NOTHING_NEW, 'after restart flows');

    // SIGTERM: the close handlers save what changed; the restart loads it.
    await red.stop();
    const dir = join(red.userDir, 'dedup-state');
    assert.deepEqual(readdirSync(dir).sort(), ['sensor', 'window'], 'a state directory per node');
    await red.start();
    assert.deepEqual(await send(red, day1), NOTHING_NEW, 'after SIGTERM and a restart');

    // New traffic, then kill -9 more than one save interval (1 s) after the last admission.
    const day2 = traffic(120, 2);
    assert.deepEqual(await send(red, day2), { swAdmitted: VEHICLES, swSuppressed: 0, srUnique: KEYS, srSuppressed: 0 });
    await new Promise((done) => setTimeout(done, 2500));
    await red.kill();
    await red.start();
    assert.deepEqual(await send(red, day2), NOTHING_NEW, 'after kill -9 and a restart');
    assert.deepEqual(await send(red, day1), NOTHING_NEW, 'the older traffic too');
  });

  it('drops the state and its files when the node is deleted', async function () {
    const dir = join(red.userDir, 'dedup-state');
    assert.ok(existsSync(join(dir, 'window')));
    const withoutWindow = flow().filter((n) => !['window', 'sw-admitted', 'sw-suppressed'].includes((n as { id: string }).id));
    (withoutWindow.find((n) => (n as { id: string }).id === 'fan-pings') as { wires: string[][] }).wires = [[]];
    await red.deploy(withoutWindow, 'full');
    const deadline = Date.now() + 5000;
    while (existsSync(join(dir, 'window')) && Date.now() < deadline) await new Promise((done) => setTimeout(done, 50));
    assert.equal(existsSync(join(dir, 'window')), false, 'the deleted node\'s saved state is gone');
    assert.ok(existsSync(join(dir, 'sensor')), 'the other node keeps its own');
    // Back with the same id, it starts from nothing.
    await red.deploy(flow(), 'full');
    const again = await send(red, traffic(0, 1));
    assert.equal(again.swAdmitted, VEHICLES, 'a new node of the same id starts empty');
    assert.equal(again.srUnique, 0);
  });
});
