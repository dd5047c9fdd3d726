/**
 * Flows written by a script and deployed through the admin API
 * (`POST /flows` on a real Node-RED process), with no `version` in them, as
 * a script writes them: they mean the current schema and every documented
 * default (issue 27, item 1). On the memory store and on Redis, through a
 * dedup-redis config node that has no version either.
 *
 * Each HTTP request is one message: both outputs of a dedup node, and a
 * Catch node, answer it, so the response is the node's decision or error.
 */
import assert from 'node:assert/strict';
import { nodeRedProcess, type NodeRedProcess } from '../support/node-red-process';
import { flushRedis, sharedRedis, useRedis } from '../support/global-hooks';

type Store = 'memory' | 'redis';
const STORES: readonly Store[] = ['memory', 'redis'];

interface Answer {
  decision?: string;
  reason?: string;
  error?: string;
}

/** The flow a script would write: only the options it cares about, no version anywhere. */
function scriptedFlow(redisPort: number): unknown[] {
  const answer = {
    type: 'function',
    z: 'tab',
    outputs: 1,
    func: 'msg.payload = { decision: msg.dedup.decision, reason: msg.dedup.reason }; return msg;',
    wires: [['respond']],
  };
  const nodes: unknown[] = [
    { id: 'tab', type: 'tab', label: 'written by a script' },
    { id: 'conn', type: 'dedup-redis', host: '127.0.0.1', port: String(redisPort), keyPrefix: 'admin-api-deploy:' },
    { id: 'respond', type: 'http response', z: 'tab', wires: [] },
    { id: 'answer', ...answer },
    {
      id: 'on-error', type: 'catch', z: 'tab', uncaught: false, wires: [['error-answer']],
      scope: STORES.flatMap((store) => [`window-${store}`, `sensor-${store}`]),
    },
    {
      id: 'error-answer', type: 'function', z: 'tab', outputs: 1, wires: [['respond']],
      func: 'msg.statusCode = 422; msg.payload = { error: msg.error.message }; return msg;',
    },
  ];
  for (const store of STORES) {
    const redis = store === 'redis' ? { store: 'redis', redis: 'conn' } : {};
    nodes.push(
      { id: `in-ping-${store}`, type: 'http in', z: 'tab', url: `/ping-${store}`, method: 'post', wires: [[`window-${store}`]] },
      // Heartbeat 60 s, Movement 25 m, the default paths, and no clock guard option: it is on by default (300 s).
      { id: `window-${store}`, type: 'sliding-window-dedup', z: 'tab', minSeconds: '60', minMetres: '25', ...redis, wires: [['answer'], ['answer']] },
      { id: `in-uplink-${store}`, type: 'http in', z: 'tab', url: `/uplink-${store}`, method: 'post', wires: [[`sensor-${store}`]] },
      // The Things Stack v3 uplink, its frame counter and receive time: nested paths.
      {
        id: `sensor-${store}`, type: 'sensor-reconnect-dedup', z: 'tab', ...redis,
        deviceField: 'end_device_ids.dev_eui', seqField: 'uplink_message.f_cnt', tsField: 'uplink_message.received_at',
        measures: [{ path: 'uplink_message.decoded_payload.fill_pct', min: 0, max: 100 }],
        wires: [['answer'], ['answer']],
      },
    );
  }
  return nodes;
}

describe('a flow without a version, deployed through the admin API, means the current defaults', function () {
  this.timeout(120_000);
  useRedis();
  let red: NodeRedProcess;

  before(async function () {
    await flushRedis();
    red = await nodeRedProcess([]);
    await red.start();
    const flow = scriptedFlow(sharedRedis().port);
    for (const node of flow) assert.equal((node as { version?: unknown }).version, undefined);
    await red.deploy(flow, 'full');
  });

  after(async function () {
    await red?.dispose();
  });

  async function post(path: string, body: unknown): Promise<Answer> {
    const response = await fetch(red.url + path, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
    const text = await response.text();
    try {
      return JSON.parse(text) as Answer;
    } catch {
      throw new Error(`POST ${path}: HTTP ${response.status} ${text}\n${red.log().slice(-3000)}`);
    }
  }

  for (const store of STORES) {
    it(`sliding-window, ${store} store: first, a ping an hour ahead suppressed as ahead, then elapsed and moved`, async function () {
      // The clock guard compares with this host's clock: pings around now.
      const t0 = Math.floor(Date.now() / 1000) - 600;
      const ping = (ts: number, lat: number): unknown => ({ assetId: `veh-${store}`, ts, lat, lon: 13.4 });
      assert.deepEqual(await post(`/ping-${store}`, ping(t0, 52.52)), { decision: 'admitted', reason: 'first' });
      // 1.1 km away and an hour ahead of the host: never a baseline.
      assert.deepEqual(await post(`/ping-${store}`, ping(t0 + 600 + 3600, 52.53)), { decision: 'suppressed', reason: 'ahead' });
      // Had the ping ahead become the baseline, these two would be `late`.
      assert.deepEqual(await post(`/ping-${store}`, ping(t0 + 70, 52.52)), { decision: 'admitted', reason: 'elapsed' });
      assert.deepEqual(await post(`/ping-${store}`, ping(t0 + 80, 52.53)), { decision: 'admitted', reason: 'moved' });
    });

    it(`sensor, ${store} store: a The Things Stack uplink keyed on end_device_ids.dev_eui is admitted once, its copy suppressed`, async function () {
      const uplink = {
        end_device_ids: { device_id: `bin-${store}`, dev_eui: store === 'memory' ? '70B3D57ED005A1B7' : '70B3D57ED005A1B8' },
        uplink_message: { f_cnt: 41, received_at: '2026-07-16T09:00:00.123456Z', decoded_payload: { fill_pct: 62.5 } },
      };
      assert.deepEqual(await post(`/uplink-${store}`, uplink), { decision: 'admitted', reason: 'new' });
      assert.deepEqual(await post(`/uplink-${store}`, uplink), { decision: 'suppressed', reason: 'duplicate' });
    });
  }
});
