/**
 * examples/lorawan-uplinks.json does what its comment says: of the recorded
 * The Things Stack v3 uplinks and ChirpStack v4 up events, the copy of an
 * uplink heard by a second gateway (and, for TTS, a broker's redelivery) is
 * suppressed as a duplicate, and the frame counter that restarts at 0 after
 * a rejoin, with new content, is admitted. The recordings are also checked
 * against the message formats the comment claims (the fields the presets
 * read, and the two copies differing only in their radio metadata).
 */
import assert from 'node:assert/strict';
import { until, type Msg } from '../support/node-red-helper';
import { exampleFlow, examplesInThisBlock, type RunningExample } from './example-runtime';

type Json = Record<string, unknown>;

interface Recorded {
  topic: string;
  payload: Json;
}

function recording(injectName: string): Recorded[] {
  const inject = exampleFlow('lorawan-uplinks').find((n) => n.type === 'inject' && n.name === injectName);
  assert.ok(inject, injectName);
  return JSON.parse(String(inject.payload)) as Recorded[];
}

function at(value: unknown, path: string): unknown {
  return path.split('.').reduce<unknown>((v, part) => (v !== null && typeof v === 'object' ? (v as Json)[part] : undefined), value);
}

function without(payload: Json, radio: string): string {
  const copy = structuredClone(payload);
  const parts = radio.split('.');
  const last = parts.pop() as string;
  delete (parts.reduce<Json>((v, p) => v[p] as Json, copy))[last];
  return JSON.stringify(copy);
}

/** Plays one recording and returns what reached each debug node. */
async function play(ex: RunningExample, inject: string, network: 'TTS' | 'ChirpStack', count: number): Promise<{ admitted: Msg[]; suppressed: Msg[] }> {
  const admitted = ex.arrivals(ex.idOf(`${network} admitted`));
  const suppressed = ex.arrivals(ex.idOf(`${network} suppressed`));
  const before = admitted.length + suppressed.length;
  ex.press(inject);
  await until(() => admitted.length + suppressed.length === before + count, `${count} ${network} messages decided`);
  return { admitted: [...admitted], suppressed: [...suppressed] };
}

describe('example: LoRaWAN uplinks', function () {
  this.timeout(30_000);
  const run = examplesInThisBlock();

  it('holds The Things Stack v3 uplinks and ChirpStack v4 up events in their documented shape', function () {
    for (const { topic, payload } of recording('The Things Stack v3 uplinks (recorded)')) {
      assert.match(topic, /^v3\/city-bins@ttn\/devices\/bin-\d+\/up$/);
      for (const path of ['end_device_ids.device_id', 'end_device_ids.dev_eui', 'end_device_ids.application_ids.application_id', 'received_at',
        'uplink_message.f_port', 'uplink_message.f_cnt', 'uplink_message.frm_payload', 'uplink_message.decoded_payload.fill_pct',
        'uplink_message.rx_metadata', 'uplink_message.settings.data_rate.lora.spreading_factor', 'uplink_message.received_at']) {
        assert.notEqual(at(payload, path), undefined, `TTS ${path}`);
      }
      assert.match(String(at(payload, 'end_device_ids.dev_eui')), /^[0-9A-F]{16}$/);
      // frm_payload is what the decoder read: fill %, battery mV.
      const bytes = Buffer.from(String(at(payload, 'uplink_message.frm_payload')), 'base64');
      assert.equal(bytes[0], at(payload, 'uplink_message.decoded_payload.fill_pct'));
      assert.equal(bytes.readUInt16BE(1), at(payload, 'uplink_message.decoded_payload.battery_mv'));
    }
    for (const { topic, payload } of recording('ChirpStack v4 up events (recorded)')) {
      assert.match(topic, /^application\/[0-9a-f-]{36}\/device\/[0-9a-f]{16}\/event\/up$/);
      for (const path of ['deduplicationId', 'time', 'deviceInfo.tenantId', 'deviceInfo.applicationId', 'deviceInfo.deviceName', 'deviceInfo.devEui',
        'devAddr', 'fCnt', 'fPort', 'data', 'object.fill_pct', 'rxInfo', 'txInfo.frequency']) {
        assert.notEqual(at(payload, path), undefined, `ChirpStack ${path}`);
      }
      const bytes = Buffer.from(String(payload.data), 'base64');
      assert.equal(bytes[0], at(payload, 'object.fill_pct'));
    }
    // The copies through a second gateway differ in the radio metadata only.
    const tts = recording('The Things Stack v3 uplinks (recorded)');
    assert.notEqual(JSON.stringify(tts[0]?.payload), JSON.stringify(tts[1]?.payload));
    assert.equal(without(tts[0]?.payload as Json, 'uplink_message.rx_metadata'), without(tts[1]?.payload as Json, 'uplink_message.rx_metadata'));
    const cs = recording('ChirpStack v4 up events (recorded)');
    assert.equal(without(cs[0]?.payload as Json, 'rxInfo'), without(cs[1]?.payload as Json, 'rxInfo'));
  });

  it('suppresses the second gateway\'s copy and the redelivery, and admits the frame counter restarted by a rejoin', async function () {
    const ex = await run('lorawan-uplinks', { manualInjects: true });

    const tts = await play(ex, 'The Things Stack v3 uplinks (recorded)', 'TTS', 8);
    const admittedTts = tts.admitted.map((m) => `${String(at(m.payload, 'end_device_ids.device_id'))}/${String(at(m.payload, 'uplink_message.f_cnt'))}`);
    assert.deepEqual(admittedTts, ['bin-0042/1287', 'bin-0043/0', 'bin-0043/1', 'bin-0042/1288', 'bin-0043/0']);
    // The rejoin's f_cnt 0 has a key of its own: device, counter, new content hash.
    const [, first0, , , rejoin0] = tts.admitted.map((m) => String(m.dedup?.key));
    assert.match(String(first0), /^70B3D57ED005A1B3:0:[0-9a-f]{16}$/);
    assert.match(String(rejoin0), /^70B3D57ED005A1B3:0:[0-9a-f]{16}$/);
    assert.notEqual(first0, rejoin0);
    assert.deepEqual(tts.suppressed.map((m) => m.dedup?.reason), ['duplicate', 'duplicate', 'duplicate']);
    const gatewayOf = (m: Msg): unknown => ((at(m.payload, 'uplink_message.rx_metadata') as Json[])[0]?.gateway_ids as Json).gateway_id;
    assert.deepEqual(tts.suppressed.map(gatewayOf), ['gw-library', 'gw-townhall', 'gw-townhall'], 'the second gateways\' copies and the redelivery');
    assert.equal(tts.admitted[0]?.dedup?.key, tts.suppressed[0]?.dedup?.key, 'the second gateway\'s copy has the first copy\'s key');

    const cs = await play(ex, 'ChirpStack v4 up events (recorded)', 'ChirpStack', 8);
    assert.deepEqual(cs.admitted.map((m) => `${String(at(m.payload, 'deviceInfo.deviceName'))}/${String((m.payload as Json).fCnt)}`), [
      'bin-0107/10', 'bin-0108/0', 'bin-0108/1', 'bin-0107/11', 'bin-0108/0', 'bin-0108/1',
    ]);
    assert.deepEqual(cs.suppressed.map((m) => m.dedup?.reason), ['duplicate', 'duplicate']);

    // The node status lines the comment quotes.
    await until(() => /8 received \/ 6 unique/.test(String(ex?.statuses(ex.idOf('ChirpStack', 'sensor-reconnect-dedup')).at(-1)?.text)), 'the ChirpStack status');
    assert.match(String(ex.statuses(ex.idOf('The Things Stack', 'sensor-reconnect-dedup')).at(-1)?.text), /^8 received \/ 5 unique \/ 3 suppressed \/ 0 rejected$/);
    assert.match(String(ex.statuses(ex.idOf('ChirpStack', 'sensor-reconnect-dedup')).at(-1)?.text), /^8 received \/ 6 unique \/ 2 suppressed \/ 0 rejected$/);

    // Pressed again: everything is a duplicate.
    const again = await play(ex, 'The Things Stack v3 uplinks (recorded)', 'TTS', 8);
    assert.equal(again.admitted.length, 5, 'nothing more admitted');
    assert.equal(again.suppressed.length, 11);
    assert.deepEqual(ex.arrivals(ex.idOf('unreadable uplinks')), []);
    assert.deepEqual(ex.logged(), []);
  });

  it('control: keyed by device and frame counter alone (no content), the rejoin would be lost', async function () {
    const ex = await run('lorawan-uplinks', {
      manualInjects: true,
      edit: (flow) => {
        // Key mode `property` on `<devEui>:<fCnt>`: what a naive dedup does.
        Object.assign(flow.find((n) => n.name === 'ChirpStack') ?? {}, { keyMode: 'property', keyPropertyType: 'jsonata', keyProperty: 'payload.deviceInfo.devEui & ":" & $string(payload.fCnt)' });
      },
    });
    const cs = await play(ex, 'ChirpStack v4 up events (recorded)', 'ChirpStack', 8);
    assert.deepEqual(cs.admitted.map((m) => `${String(at(m.payload, 'deviceInfo.deviceName'))}/${String((m.payload as Json).fCnt)}`), [
      'bin-0107/10', 'bin-0108/0', 'bin-0108/1', 'bin-0107/11',
    ], 'the rejoined frames 0 and 1 are taken for duplicates');
  });
});
