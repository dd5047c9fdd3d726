/**
 * Payloads and keys as flows carry them (issue 27, item 2), on both stores:
 * a payload still holding its text (a JSON string, a Buffer) is named as
 * such; a number written with a decimal comma is "not a number"; the sensor
 * node keys on a device id from msg.topic (or any msg property), every
 * reading of a burst getting that id; property mode keys on msg.topic
 * whatever the payload is.
 */
import assert from 'node:assert/strict';
import { join } from 'path';
import { useRedis } from '../support/global-hooks';
import { collect, coreNodes, helper, loadDedup, node, packNodes, startServer, stopServer, until, type DedupHarness, type StoreKind } from '../support/node-red-helper';
import { deliver } from '../support/sensor-delivery';

const PARSE_FIRST = ', not an object: parse it first (a json node, or set the mqtt-in node to output a parsed JSON object)';
const STRING_PAYLOAD = `Error: msg.payload is a string${PARSE_FIRST}`;
const BUFFER_PAYLOAD = `Error: msg.payload is a Buffer${PARSE_FIRST}`;
const BASE = 1_780_000_000;
const WINDOW = { minSeconds: '60', minMetres: '25', ttlSeconds: '21600' };

/** Sends a message to the dedup node and waits until it left: on an output, or to Catch. */
async function settle(h: DedupHarness, msg: Record<string, unknown>): Promise<void> {
  const before = h.completed.length + h.caught.length;
  node('dedup').receive(msg);
  await until(() => h.completed.length + h.caught.length > before, 'the message to leave');
}

for (const store of ['memory', 'redis'] as StoreKind[]) {
  describe(`payloads and keys as flows carry them, ${store} store`, function () {
    if (store === 'redis') useRedis();
    before(startServer);
    after(stopServer);
    afterEach(async function () {
      await helper.unload();
    });

    describe('sliding-window dedup', function () {
      it('names a JSON string or a Buffer payload as text to parse, not a missing asset id', async function () {
        const h = await loadDedup('sliding-window-dedup', store, WINDOW);
        const text = JSON.stringify({ assetId: 'veh-1', ts: BASE, lat: 52.52, lon: 13.4 });
        await settle(h, { payload: text });
        await settle(h, { payload: Buffer.from(text) });
        assert.deepEqual(h.caught.map((m) => m.error?.message), [STRING_PAYLOAD, BUFFER_PAYLOAD]);
        assert.equal(h.admitted.length + h.second.length, 0);
        // The same ping parsed is decided.
        await settle(h, { payload: JSON.parse(text) as unknown });
        assert.equal(h.admitted[0]?.dedup?.reason, 'first');
      });

      it('keys on msg.topic with the payload a string when no path reads inside the payload', async function () {
        const h = await loadDedup('sliding-window-dedup', store, { ...WINDOW, assetIdProperty: 'topic', timeProperty: 'time', latProperty: 'lat', lonProperty: 'lon' });
        await settle(h, { topic: 'bus-7', payload: 'raw text kept', time: BASE, lat: 52.52, lon: 13.4 });
        await settle(h, { topic: 'bus-7', payload: 'raw text kept', time: BASE + 2, lat: 52.52, lon: 13.4 });
        assert.deepEqual(h.caught, []);
        assert.deepEqual([h.admitted[0]?.dedup?.assetId, h.admitted[0]?.dedup?.reason, h.second[0]?.dedup?.reason], ['bus-7', 'first', 'window']);
      });

      it('says a decimal comma is not a number, and reads a decimal point in a string', async function () {
        const h = await loadDedup('sliding-window-dedup', store, WINDOW);
        await settle(h, { payload: { assetId: 'veh-2', ts: BASE, lat: '52,52', lon: 13.4 } });
        assert.equal(h.caught[0]?.error?.message, 'Error: msg.payload.lat = "52,52": is not a number');
        await settle(h, { payload: { assetId: 'veh-2', ts: BASE, lat: '52.52', lon: '13.4' } });
        assert.equal(h.admitted[0]?.dedup?.reason, 'first');
      });
    });

    describe('sensor reconnect dedup', function () {
      const reading = { device_id: 'bin-A17', seq: 41, ts: '2026-07-16T09:00:00Z', fill_pct: 62.5 };

      it('names a JSON string or a Buffer payload as text to parse, in key mode reading and on a payload path', async function () {
        const text = JSON.stringify(reading);
        for (const config of [{}, { keyMode: 'property', keyProperty: 'payload.id', keyPropertyType: 'msg' }]) {
          const h = await loadDedup('sensor-reconnect-dedup', store, config);
          assert.match(String((await deliver(h, text, { completes: 0, errors: 1 })).caught[0]?.error?.message), /^Error: msg\.payload is a string, not an object: parse it first/);
          const buffer = await deliver(h, Buffer.from(text), { completes: 0, errors: 1 });
          assert.equal(buffer.caught[0]?.error?.message, BUFFER_PAYLOAD);
          await helper.unload();
        }
      });

      it('drops repeats of any message keyed on msg.topic in property mode, whatever the payload', async function () {
        const h = await loadDedup('sensor-reconnect-dedup', store, { keyMode: 'property', keyProperty: 'topic', keyPropertyType: 'msg' });
        const first = await deliver(h, 'door open', { extra: { topic: 'door-3/evt-88' } });
        const again = await deliver(h, 'door open', { extra: { topic: 'door-3/evt-88' } });
        assert.deepEqual([first.admitted.length, first.admitted[0]?.dedup?.key], [1, 'door-3/evt-88']);
        assert.deepEqual([again.admitted.length, again.second[0]?.dedup?.reason], [0, 'duplicate']);
      });

      it('keys each reading of a burst on the device id in msg.topic, and suppresses the replay', async function () {
        const h = await loadDedup('sensor-reconnect-dedup', store, { version: 2, deviceField: 'topic', deviceFieldType: 'msg' });
        // The readings carry no device id: the message's topic is every reading's.
        const burst = [{ seq: 41, ts: '2026-07-16T09:00:00Z', fill_pct: 62.5 }, { seq: 42, ts: '2026-07-16T09:00:00Z', fill_pct: 71 }];
        const first = await deliver(h, burst, { extra: { topic: 'bin-A17' } });
        // The keys are the reference design's, device id included: bin-A17's readings 41 and 42 (62.5 and 71 at 09:00:00Z).
        assert.deepEqual(first.admitted[0]?.dedup?.keys, ['bin-A17:41:76c73ee2946cc70e', 'bin-A17:42:ed9b14ef6ee4c460']);
        const replay = await deliver(h, burst.map((r) => ({ ...r })), { extra: { topic: 'bin-A17' } });
        assert.equal(replay.admitted.length, 0);
        assert.equal((replay.second[0]?.payload as { duplicates_suppressed?: number }).duplicates_suppressed, 2);
        // Another device's topic: other keys.
        const other = await deliver(h, burst.map((r) => ({ ...r })), { extra: { topic: 'bin-B04' } });
        assert.deepEqual((other.admitted[0]?.payload as unknown[]).length, 2);
        // A device id field inside a reading is not read: the topic decides.
        const single = await deliver(h, { ...reading, device_id: 'ignored' }, { extra: { topic: 'bin-A17' } });
        assert.equal(single.second[0]?.dedup?.reason, 'duplicate');
      });

      it('names msg.topic when the message has no device id there, for each reading of the burst', async function () {
        const h = await loadDedup('sensor-reconnect-dedup', store, { version: 2, deviceField: 'topic', deviceFieldType: 'msg' });
        const outcome = await deliver(h, [{ seq: 1, ts: '2026-07-16T09:00:00Z', fill_pct: 1 }, { seq: 2, ts: '2026-07-16T09:00:00Z', fill_pct: 2 }], { errors: 2 });
        assert.deepEqual(outcome.caught.map((m) => m.error?.message), ['Error: msg.topic = undefined: is missing', 'Error: msg.topic = undefined: is missing']);
        const single = await deliver(h, { seq: 3, ts: '2026-07-16T09:00:00Z', fill_pct: 3 }, { completes: 0, errors: 1, extra: { topic: '' } });
        assert.equal(single.caught[0]?.error?.message, 'Error: msg.topic = "": must not be empty');
      });
    });
  });
}

describe('the sidebar with msg.topic keys: the sample holds the id from where it was read', function () {
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- the compiled plugin, as Node-RED loads it
  const plugin = require(join(__dirname, '..', '..', 'nodes', 'dedup-sidebar.js')) as (red: object) => void;
  interface Reply {
    status: number;
    body: Record<string, unknown>;
  }
  interface Call extends PromiseLike<Reply> {
    send(body: unknown): Call;
  }
  /** supertest on the helper's admin app, which the typing in test/support leaves out. */
  const admin = (): { get(path: string): Call; post(path: string): Call } =>
    (helper as unknown as { request(): { get(path: string): Call; post(path: string): Call } }).request();

  before(startServer);
  after(stopServer);
  afterEach(async function () {
    await helper.unload();
  });

  it('runs the what-if over pings keyed on msg.topic, and the Remember what-if over readings keyed on it', async function () {
    await helper.load([plugin, ...packNodes(['dedup-redis', 'sliding-window-dedup', 'sensor-reconnect-dedup']), ...coreNodes()], [
      { id: 'tab', type: 'tab' },
      { id: 'topic-sw', type: 'sliding-window-dedup', z: 'tab', minSeconds: '60', minMetres: '25', assetIdProperty: 'topic', wires: [['topic-out'], ['topic-out']] },
      { id: 'topic-sr', type: 'sensor-reconnect-dedup', z: 'tab', ttlSeconds: '3600', deviceField: 'topic', deviceFieldType: 'msg', wires: [['topic-out'], ['topic-out']] },
      { id: 'topic-out', type: 'helper', z: 'tab' },
    ]);
    const out = collect('topic-out');
    const t0 = Date.now() - 600_000;
    // Two vans, a ping every 10 s; the payloads carry no id.
    for (let k = 0; k < 20; k++) {
      for (const van of ['van-a', 'van-b']) node('topic-sw').receive({ topic: van, payload: { ts: t0 + k * 10_000, lat: 50 + k * 0.001, lon: 8 } });
    }
    await until(() => out.length === 40, 'every ping decided');
    const whatIf = await admin().post('/dedup-sidebar/nodes/topic-sw/what-if').send({ seconds: '60', metres: '25' });
    assert.equal(whatIf.status, 200, JSON.stringify(whatIf.body));
    const result = whatIf.body.result as { received: number; cells: { admitted: number; suppressed: number }[] };
    assert.equal(result.received, 40);
    const decided = out.filter((m) => m.dedup?.assetId !== undefined);
    assert.deepEqual(new Set(decided.map((m) => m.dedup?.assetId)), new Set(['van-a', 'van-b']));
    assert.equal(result.cells[0]?.admitted, decided.filter((m) => m.dedup?.decision === 'admitted').length, 'the what-if decides as the node did');

    const burst = [0, 1, 2].map((seq) => ({ seq, ts: '2026-07-16T09:00:00Z', fill_pct: 40 + seq }));
    node('topic-sr').receive({ topic: 'bin-1', payload: burst });
    node('topic-sr').receive({ topic: 'bin-1', payload: burst.slice(0, 2) });
    await until(() => out.length === 40 + 3, 'both bursts decided');
    const ttl = await admin().post('/dedup-sidebar/nodes/topic-sr/ttl-what-if').send({});
    assert.equal(ttl.status, 200, JSON.stringify(ttl.body));
    assert.equal(ttl.body.replays, 2);
    const details = await admin().get('/dedup-sidebar/nodes/topic-sr');
    assert.equal((details.body.replays as { device: string }[])[0]?.device, 'bin-1');
  });
});
