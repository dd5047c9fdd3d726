/**
 * The sensor reconnect node on real uplinks (issue 13): readings nested the
 * way LoRaWAN network servers deliver them, read through property paths
 * with array indexes, a valid range per measured field, the migration of a
 * flow saved with one range, the presets' paths for The Things Stack v3 and
 * ChirpStack v4, and key mode `property`; on both stores.
 */
import assert from 'node:assert/strict';
import { idempotencyKey } from '../../src/core/sensor/idempotency-key';
import { SENSOR_PRESETS } from '../../src/node-red/editor-settings';
import { useRedis } from '../support/global-hooks';
import { helper, loadDedup, startServer, stopServer, until, type StoreKind } from '../support/node-red-helper';
import { deliver, type Outcome } from '../support/sensor-delivery';

const RECEIVED = '2026-07-16T09:00:00.123456Z';

/** A The Things Stack v3 uplink message, as its MQTT integration publishes it (.../devices/<id>/up). */
function ttsUplink(fCnt: number, fill: number, gateway = 'gw-east', received = RECEIVED): Record<string, unknown> {
  return {
    end_device_ids: {
      device_id: 'bin-a17',
      application_ids: { application_id: 'city-bins' },
      dev_eui: '70B3D57ED005A17A',
      dev_addr: '260B1234',
    },
    correlation_ids: ['as:up:01J0000000000000000000000'],
    received_at: received,
    uplink_message: {
      f_port: 2,
      f_cnt: fCnt,
      frm_payload: 'AD4=',
      decoded_payload: { fill_pct: fill, battery_v: 3.61 },
      rx_metadata: [{ gateway_ids: { gateway_id: gateway }, rssi: -97, snr: 7.5, received_at: received }],
      settings: { data_rate: { lora: { bandwidth: 125000, spreading_factor: 7 } }, frequency: '868100000' },
      received_at: received,
    },
  };
}

/** A ChirpStack v4 `up` event, as its MQTT integration publishes it (.../device/<devEui>/event/up). */
function chirpstackUp(fCnt: number, fill: number, gateway = '0016c001ff10a235', time = RECEIVED): Record<string, unknown> {
  return {
    deduplicationId: '3ac7e3c4-4401-4b8d-9386-a5c902f9202d',
    time,
    deviceInfo: {
      tenantId: '52f14cd4-c6f1-4fbd-8f87-4025e1d49242',
      applicationId: 'ca739e26-7b67-4f14-b69e-d568c22a5a75',
      deviceName: 'bin-b04',
      devEui: '0101010101010101',
    },
    devAddr: '00189440',
    fCnt,
    fPort: 2,
    data: 'AA8=',
    object: { fill_pct: fill },
    rxInfo: [{ gatewayId: gateway, rssi: -101, snr: 4.2 }],
  };
}

const TTS = {
  deviceField: 'end_device_ids.dev_eui',
  seqField: 'uplink_message.f_cnt',
  tsField: 'uplink_message.received_at',
  measures: [{ path: 'uplink_message.decoded_payload.fill_pct', name: '', min: 0, max: 100 }],
  version: 2,
};

const CHIRPSTACK = {
  deviceField: 'deviceInfo.devEui',
  seqField: 'fCnt',
  tsField: 'time',
  measures: [{ path: 'object.fill_pct', name: '', min: 0, max: 100 }],
  version: 2,
};

/** A preset's fields as a node config, its measured field moved under the decoded payload as the dialog does. */
function preset(name: string): Record<string, unknown> {
  const p = SENSOR_PRESETS[name];
  assert.ok(p, name);
  return { deviceField: p.deviceField, seqField: p.seqField, tsField: p.tsField, measures: [{ path: `${p.under}fill_pct`, name: '', min: 0, max: 100 }], version: 2 };
}

/** A reading as a buffering sensor's codec decodes it: its own counter and clock, as the reference's SensorReading has them. */
interface DeviceReading {
  seq: number;
  ts: string;
  fill_pct: number;
}

function ttsCarrying(fCnt: number, received: string, reading: DeviceReading): Record<string, unknown> {
  const uplink = ttsUplink(fCnt, reading.fill_pct, 'gw-east', received);
  (uplink.uplink_message as Record<string, unknown>).decoded_payload = { ...reading, battery_v: 3.6 };
  return uplink;
}

function chirpstackCarrying(fCnt: number, time: string, reading: DeviceReading): Record<string, unknown> {
  return { ...chirpstackUp(fCnt, reading.fill_pct, '0016c001ff10a235', time), object: { ...reading } };
}

/** Three readings buffered while the sensor was offline. */
const BUFFERED: DeviceReading[] = [
  { seq: 17, ts: '2026-07-16T08:45:00Z', fill_pct: 58.5 },
  { seq: 18, ts: '2026-07-16T09:00:00Z', fill_pct: 60 },
  { seq: 19, ts: '2026-07-16T09:15:00Z', fill_pct: 61.25 },
];

/**
 * The buffer sent once, one reading per frame, then again after a
 * reconnect: the same readings in new frames, with new frame counters and
 * receive times. Returns the decisions of the second sending.
 */
async function bufferedReplay(h: Awaited<ReturnType<typeof loadDedup>>, network: 'tts' | 'chirpstack'): Promise<string[]> {
  const frame = (fCnt: number, minute: number, reading: DeviceReading): Record<string, unknown> => {
    const received = `2026-07-16T09:${String(minute).padStart(2, '0')}:07.250000Z`;
    return network === 'tts' ? ttsCarrying(fCnt, received, reading) : chirpstackCarrying(fCnt, received, reading);
  };
  const first: string[] = [];
  for (const [i, reading] of BUFFERED.entries()) first.push(...decisions(await deliver(h, frame(300 + i, 20 + i, reading))));
  assert.deepEqual(first, ['admitted:new', 'admitted:new', 'admitted:new']);
  const again: string[] = [];
  for (const [i, reading] of BUFFERED.entries()) again.push(...decisions(await deliver(h, frame(303 + i, 40 + i, reading))));
  return again;
}

function decisions(d: Outcome): string[] {
  return [...d.admitted, ...d.second].map((m) => `${String(m.dedup?.decision)}:${String(m.dedup?.reason)}`);
}

function storeSuite(store: StoreKind): void {
  describe(`sensor reconnect dedup on LoRaWAN uplinks, ${store} store`, function () {
    if (store === 'redis') useRedis();
    before(startServer);
    after(stopServer);
    afterEach(async function () {
      await helper.unload();
    });

    it('The Things Stack v3: the same uplink through two gateways is one reading; its key is device EUI, frame counter, hash', async function () {
      const h = await loadDedup('sensor-reconnect-dedup', store, TTS);
      const first = await deliver(h, ttsUplink(42, 62.5, 'gw-east'));
      assert.deepEqual(decisions(first), ['admitted:new']);
      const key = first.admitted[0]?.dedup?.key;
      // The same key the flat reading of the same content gets: the timestamp is `ts` in the hashed JSON, whatever its path.
      assert.equal(
        key,
        idempotencyKey({ deviceId: '70B3D57ED005A17A', seq: 42, timeField: 'ts', epochMicros: Date.parse('2026-07-16T09:00:00.123Z') * 1000 + 456, measures: { fill_pct: 62.5 } }),
      );
      const second = await deliver(h, ttsUplink(42, 62.5, 'gw-west'));
      assert.deepEqual(decisions(second), ['suppressed:duplicate']);
      assert.equal(second.second[0]?.dedup?.key, key);
    });

    it('keys a The Things Stack uplink and a ChirpStack event as the reference idempotency_key keys their SensorReading (ts named ts)', async function () {
      // The expected keys were computed apart from this code, with the reference's
      // idempotency_key in Python: sha256 of json.dumps({"ts": ts.isoformat(), "fill_pct": float(fill)},
      // sort_keys=True, separators=(",", ":")), first 16 hex digits.
      const cases: [string, Record<string, unknown>, string][] = [
        // The frame-counter presets: seq = f_cnt / fCnt, ts = the network's receive time.
        ['tts-frame', ttsCarrying(1287, '2026-07-16T09:00:03.412871Z', { seq: 0, ts: '2026-07-16T00:00:00Z', fill_pct: 61 }), '70B3D57ED005A17A:1287:bd1d4e0d09f58c56'],
        ['chirpstack-frame', chirpstackCarrying(11, '2026-07-16T09:31:12.660412+00:00', { seq: 0, ts: '2026-07-16T00:00:00Z', fill_pct: 47 }), '0101010101010101:11:ccb840bb22dc9103'],
        // The device-counter presets: seq and ts from the decoded payload.
        ['tts-device', ttsCarrying(1290, '2026-07-16T09:20:07.250000Z', BUFFERED[0] as DeviceReading), '70B3D57ED005A17A:17:a0a3e465d24fdea9'],
        ['chirpstack-device', chirpstackCarrying(512, '2026-07-16T09:20:07.250000Z', { seq: 204, ts: '2026-07-16T08:40:00+00:00', fill_pct: 44 }), '0101010101010101:204:745e0683ca9bc22f'],
      ];
      for (const [name, uplink, expected] of cases) {
        const h = await loadDedup('sensor-reconnect-dedup', store, preset(name));
        const out = await deliver(h, uplink);
        assert.equal(out.admitted[0]?.dedup?.key, expected, name);
        await helper.unload();
      }
    });

    it('device-counter presets: a buffered replay after a reconnect (new frames, new counters) is suppressed', async function () {
      for (const network of ['tts', 'chirpstack'] as const) {
        const h = await loadDedup('sensor-reconnect-dedup', store, preset(`${network}-device`));
        assert.deepEqual(await bufferedReplay(h, network), ['suppressed:duplicate', 'suppressed:duplicate', 'suppressed:duplicate'], network);
        await helper.unload();
      }
    });

    it('frame-counter presets, as documented: a buffered replay in new frames is not caught', async function () {
      for (const network of ['tts', 'chirpstack'] as const) {
        const h = await loadDedup('sensor-reconnect-dedup', store, preset(`${network}-frame`));
        assert.deepEqual(await bufferedReplay(h, network), ['admitted:new', 'admitted:new', 'admitted:new'], network);
        await helper.unload();
      }
    });

    it('ChirpStack v4: the same up event twice is one reading', async function () {
      const h = await loadDedup('sensor-reconnect-dedup', store, CHIRPSTACK);
      assert.deepEqual(decisions(await deliver(h, chirpstackUp(10, 15))), ['admitted:new']);
      assert.deepEqual(decisions(await deliver(h, chirpstackUp(10, 15, 'ff00aa00ff00aa00'))), ['suppressed:duplicate']);
    });

    it('admits new data after a rejoin restarts the frame counter: the content hash tells them apart', async function () {
      const h = await loadDedup('sensor-reconnect-dedup', store, TTS);
      const before = await deliver(h, [ttsUplink(0, 40), ttsUplink(1, 41, 'gw-east', '2026-07-16T09:10:00Z')]);
      assert.equal(before.admitted[0]?.dedup?.unique, 2);
      // Rejoined: f_cnt starts at 0 again, a day later, with another fill level.
      const after = await deliver(h, [ttsUplink(0, 73, 'gw-east', '2026-07-17T07:00:00Z'), ttsUplink(0, 40)]);
      const audit = after.second[0]?.payload as Record<string, unknown>;
      assert.equal(audit.unique, 1, 'the new reading after the rejoin is admitted');
      assert.equal(audit.duplicates_suppressed, 1, 'the replay of the old frame 0 is still a duplicate');
      assert.deepEqual((after.admitted[0]?.payload as Record<string, unknown>[]).map((u) => (u.uplink_message as { decoded_payload: { fill_pct: number } }).decoded_payload.fill_pct), [73]);
    });

    it('reads array indexes, and names a missing nested field by its full path in the Catch', async function () {
      const h = await loadDedup('sensor-reconnect-dedup', store, {
        ...TTS,
        measures: [
          { path: 'uplink_message.decoded_payload.fill_pct', name: '', min: 0, max: 100 },
          { path: 'uplink_message.rx_metadata[0].rssi', name: 'rssi', min: -150, max: 0 },
        ],
      });
      assert.deepEqual(decisions(await deliver(h, ttsUplink(7, 50))), ['admitted:new']);
      const bad = ttsUplink(8, 50);
      delete ((bad.uplink_message as Record<string, unknown>).decoded_payload as Record<string, unknown>).fill_pct;
      const burst = await deliver(h, [ttsUplink(9, 51), bad], { errors: 1 });
      assert.equal(
        burst.caught[0]?.error?.message,
        'Error: msg.payload[1].uplink_message.decoded_payload.fill_pct = undefined: is missing',
      );
      assert.equal((burst.second[0]?.payload as Record<string, unknown>).rejected, 1);
      const single = await deliver(h, { ...ttsUplink(10, 52), uplink_message: { ...(ttsUplink(10, 52).uplink_message as object), rx_metadata: [] } }, { completes: 0, errors: 1 });
      assert.equal(single.caught[0]?.error?.message, 'Error: msg.payload.uplink_message.rx_metadata[0].rssi = undefined: is missing');
    });

    it('checks each measured field against its own range', async function () {
      const h = await loadDedup('sensor-reconnect-dedup', store, {
        version: 2,
        measures: [
          { path: 'fill_pct', name: '', min: 0, max: 100 },
          { path: 'meta.temp_c', name: '', min: -40, max: '' },
        ],
      });
      const reading = (fill: number, temp: number, seq: number): Record<string, unknown> => ({ device_id: 'bin-1', seq, ts: RECEIVED, fill_pct: fill, meta: { temp_c: temp } });
      const out = await deliver(h, [reading(50, -5, 1), reading(50, -60, 2), reading(101, 20, 3), reading(0, 500, 4)], { errors: 2 });
      const audit = out.second[0]?.payload as Record<string, unknown>;
      assert.equal(audit.unique, 2, 'fill 50 at -5 C and fill 0 at 500 C (no upper bound on the temperature) pass');
      assert.deepEqual(
        out.caught.map((m) => m.error?.message),
        ['Error: msg.payload[1].meta.temp_c = -60: must be at least -40', 'Error: msg.payload[2].fill_pct = 101: must be between 0 and 100'],
      );
    });

    it('runs a flow saved with one valid range (config version 1) as it ran then: the range on every measured field, the same keys', async function () {
      // Version 1: top-level names, one range for all; "meta.temp" was a key with a dot in it.
      const h = await loadDedup('sensor-reconnect-dedup', store, { version: 1, contentFields: 'fill_pct, meta.temp', valueMin: '0', valueMax: '100' });
      const reading = { device_id: 'bin-1', seq: 3, ts: RECEIVED, fill_pct: 20, 'meta.temp': 21.5 };
      const out = await deliver(h, reading);
      assert.equal(
        out.admitted[0]?.dedup?.key,
        idempotencyKey({ deviceId: 'bin-1', seq: 3, timeField: 'ts', epochMicros: Date.parse('2026-07-16T09:00:00.123Z') * 1000 + 456, measures: { fill_pct: 20, 'meta.temp': 21.5 } }),
      );
      const outOfRange = await deliver(h, { ...reading, seq: 4, 'meta.temp': 120 }, { completes: 0, errors: 1 });
      assert.equal(outOfRange.caught[0]?.error?.message, 'Error: msg.payload["meta.temp"] = 120: must be between 0 and 100');
    });

    it('refuses two measured fields with one name, naming both', async function () {
      const h = await loadDedup('sensor-reconnect-dedup', store, {
        version: 2,
        measures: [{ path: 'a.fill_pct' }, { path: 'b.fill_pct' }],
      });
      const out = await deliver(h, { device_id: 'x', seq: 1, ts: RECEIVED }, { completes: 0, errors: 1 });
      assert.match(out.caught[0]?.error?.message ?? '', /Invalid configuration: the measured fields "a.fill_pct" and "b.fill_pct" have one name, "fill_pct"/);
    });

    it('refuses a measured field named ts, or the timestamp itself as a measured field: the timestamp is ts in the hashed JSON', async function () {
      const cases: [Record<string, unknown>, RegExp][] = [
        [{ tsField: 'time', measures: [{ path: 'meta.ts' }] }, /the measured field "meta.ts" has the timestamp's name in the hashed JSON, "ts"/],
        [{ tsField: 'meta.time', measures: [{ path: 'meta["time"]' }] }, /the measured field "meta\[\\"time\\"\]" is already the device, seq or timestamp field/],
      ];
      for (const [config, pattern] of cases) {
        const h = await loadDedup('sensor-reconnect-dedup', store, { version: 2, ...config });
        const out = await deliver(h, { device_id: 'x', seq: 1, time: RECEIVED, meta: { ts: 1, time: RECEIVED } }, { completes: 0, errors: 1 });
        assert.match(out.caught[0]?.error?.message ?? '', pattern);
        await helper.unload();
      }
    });

    it('key mode property: drops what it saw within the TTL, with the same audit and outputs', async function () {
      const h = await loadDedup('sensor-reconnect-dedup', store, { version: 2, keyMode: 'property', keyProperty: 'payload.id', keyPropertyType: 'msg' });
      assert.deepEqual(decisions(await deliver(h, { id: 'order-1', anything: true })), ['admitted:new']);
      const again = await deliver(h, { id: 'order-1', anything: false });
      assert.deepEqual(decisions(again), ['suppressed:duplicate']);
      assert.equal(again.second[0]?.dedup?.key, 'order-1');
      const burst = await deliver(h, [{ id: 'order-2' }, { id: 'order-1' }, { id: 'order-2' }, { nothing: 1 }], { errors: 1 });
      const audit = burst.second[0]?.payload as Record<string, unknown>;
      assert.deepEqual([audit.received, audit.unique, audit.duplicates_suppressed, audit.rejected], [4, 1, 2, 1]);
      assert.equal(burst.caught[0]?.error?.message, 'Error: msg.payload[3].id = undefined: is missing');
      // A reset of one key forgets that key only.
      const before = h.completed.length;
      h.send(undefined, { reset: 'order-1' });
      await until(() => h.completed.length === before + 1, 'the reset done');
      assert.deepEqual(decisions(await deliver(h, { id: 'order-1' })), ['admitted:new']);
      assert.deepEqual(decisions(await deliver(h, { id: 'order-2' })), ['suppressed:duplicate']);
    });

    it('key mode property with a JSONata expression, in order with a reset', async function () {
      const h = await loadDedup('sensor-reconnect-dedup', store, { version: 2, keyMode: 'property', keyProperty: 'payload.a & "/" & payload.b', keyPropertyType: 'jsonata' });
      assert.deepEqual(decisions(await deliver(h, { a: 'x', b: 1 })), ['admitted:new']);
      // Three messages at once: the reset between the two copies takes effect between them.
      h.send({ a: 'x', b: 1 });
      h.send(undefined, { reset: true });
      h.send({ a: 'x', b: 1 });
      await until(() => h.completed.length === 4, 'all four done');
      assert.deepEqual(
        [...h.admitted, ...h.second].slice(1).map((m) => `${String(m.dedup?.decision)}:${String(m.dedup?.key)}`).sort(),
        ['admitted:x/1', 'suppressed:x/1'],
      );
      assert.equal(h.second.at(-1)?.dedup?.decision, 'suppressed', 'the copy before the reset was the duplicate');
      assert.equal(h.admitted.at(-1)?.dedup?.decision, 'admitted');
    });
  });
}

storeSuite('memory');
storeSuite('redis');
