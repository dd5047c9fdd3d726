/**
 * examples/mqtt-scale-out.json: the recipe of docs/running-at-scale.md as a
 * flow to import. It needs a broker, Redis and a database, so it is not run
 * with the memory-only examples (examples.spec.ts): here its dedup path is
 * checked against the flow the system test runs (test/system), and it is
 * loaded in the test helper against a real mosquitto and the test Redis,
 * its INSERT node replaced by a stand-in table in memory (the system test
 * runs the real one against PostgreSQL): copies and replays of a reading
 * reach the table once and are confirmed; a vehicle's copies pass once.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'fs';
import { join } from 'path';
import mqtt from 'mqtt';
import { loadFlow } from '../confirm/confirm-harness';
import { sharedRedis, useRedis, flushRedis } from '../support/global-hooks';
import { Mosquitto, mosquittoAvailable } from '../support/mosquitto';
import { helper, packNodes, until, type FlowNode, type Msg } from '../support/node-red-helper';
import { systemFlow } from '../system/system-flow';

const ROOT = join(__dirname, '..', '..');
const CORE = join(ROOT, 'node_modules', '@node-red', 'nodes', 'core');
const flow = JSON.parse(readFileSync(join(ROOT, 'examples', 'mqtt-scale-out.json'), 'utf8')) as FlowNode[];

const byName = (name: string, type?: string): FlowNode => {
  const found = flow.filter((n) => n.name === name && (type === undefined || n.type === type));
  assert.equal(found.length, 1, `one node named "${name}"`);
  return found[0] as FlowNode;
};
const wiresOf = (n: FlowNode): string[][] => n.wires ?? [];

describe('example mqtt-scale-out', function () {
  this.timeout(30_000);

  it('says what it is and what to set up, in a comment node', function () {
    const comment = flow.find((n) => n.type === 'comment') as { name?: string; info?: string } | undefined;
    assert.ok((comment?.name ?? '').length > 10);
    for (const words of [/\$share/, /DEDUP_CLIENT_ID/, /QoS 1/, /persistence/, /functionExternalModules/, /CREATE TABLE readings/, /look for/i]) assert.match(String(comment?.info), words);
  });

  it('is the dedup path the system test runs: shared QoS 1 subscriptions, a persistent session, confirm after the INSERT, Catch -> release', function () {
    const tested = systemFlow({
      name: 'x', clientId: 'x', brokerPort: 1883, recordFile: '', pgUrl: '', redis: { mode: 'standalone', host: '127.0.0.1', port: 6379 },
      leaseSeconds: 60, timeoutMs: 5000, minSeconds: 30, minMetres: 100,
    });
    const testedNode = (id: string): FlowNode => tested.find((n) => n.id === id) as FlowNode;
    const broker = flow.find((n) => n.type === 'mqtt-broker') as FlowNode;
    assert.equal(broker.cleansession, testedNode('sys-broker').cleansession);
    assert.equal(broker.clientid, '${DEDUP_CLIENT_ID}', 'a client id of its own in every instance, from its environment');
    for (const [name, id] of [['bin readings', 'bins-in'], ['vehicle pings', 'fleet-in']] as const) {
      const input = byName(name, 'mqtt in');
      assert.equal(input.topic, testedNode(id).topic);
      assert.equal(input.qos, '1');
      assert.equal(input.datatype, 'json');
    }
    const sensor = byName('bins (confirm delivery)');
    const fleet = byName('fleet');
    for (const option of ['store', 'confirm', 'outputMode', 'onStoreError', 'keyMode', 'deviceField', 'seqField', 'tsField', 'measures']) {
      assert.deepEqual(sensor[option], testedNode('bins-dedup')[option], `sensor option ${option}`);
    }
    for (const option of ['store', 'minSeconds', 'minMetres', 'onStoreError', 'assetIdProperty', 'timeProperty', 'latProperty', 'lonProperty']) {
      assert.deepEqual(fleet[option], testedNode('fleet-dedup')[option], `sliding window option ${option}`);
    }
    assert.equal(byName('shared Redis').timeoutMs, '5000');
    const insert = byName('INSERT reading');
    assert.deepEqual(insert.libs, [{ var: 'pg', module: 'pg' }]);
    assert.match(String(insert.func), /ON CONFLICT \(key\) DO NOTHING/);
    assert.deepEqual(wiresOf(byName('bin readings')), [[sensor.id]]);
    assert.deepEqual(wiresOf(sensor)[0], [insert.id]);
    assert.deepEqual(wiresOf(insert), [[byName('confirm').id]]);
    assert.equal(byName('confirm').action, 'confirm');
    const insertFailed = byName('INSERT failed');
    assert.deepEqual(insertFailed.scope, [insert.id]);
    assert.deepEqual(wiresOf(insertFailed), [[byName('release').id]]);
    assert.equal(byName('release').action, 'release');
    assert.deepEqual(wiresOf(byName('vehicle pings')), [[fleet.id]]);
  });

  describe('loaded in Node-RED with a real broker and Redis', function () {
    useRedis();
    let broker: Mosquitto | undefined;

    before(async function () {
      if (!mosquittoAvailable()) {
        process.stderr.write('\n!! SKIPPED: mosquitto 2 is not installed (Debian: apt-get install mosquitto)\n\n');
        this.skip();
      }
      broker = await Mosquitto.start();
    });
    after(async function () {
      await broker?.stop();
    });
    beforeEach(flushRedis);
    afterEach(async function () {
      await helper.unload();
      delete process.env.DEDUP_CLIENT_ID;
    });

    it('writes a reading once for its copies and its replay, confirms it, and passes a vehicle\'s copied ping once', async function () {
      const running = broker as Mosquitto;
      const redis = sharedRedis();
      process.env.DEDUP_CLIENT_ID = 'example-test-instance';
      const tab = 'example-tab';
      const table: string[] = [];
      const loaded: FlowNode[] = [
        { id: tab, type: 'tab', label: 'mqtt-scale-out' },
        ...flow.map((n): FlowNode => {
          if (n.type === 'mqtt-broker') return { ...n, broker: '127.0.0.1', port: String(running.port) };
          if (n.type === 'dedup-redis') return { ...n, host: redis.host, port: String(redis.port) };
          if (n.name === 'INSERT reading') {
            // The stand-in table: the system test runs the real INSERT against PostgreSQL.
            return { ...n, z: tab, libs: [], initialize: '', finalize: '', func: "global.get('table').push(msg.dedup.key);\nreturn msg;" };
          }
          return { ...n, z: tab };
        }),
      ];
      const core = ['network/10-mqtt.js', 'function/10-function.js', 'common/25-catch.js', 'common/21-debug.js', 'common/90-comment.js'].map(
        // eslint-disable-next-line @typescript-eslint/no-require-imports -- Node-RED's own CommonJS nodes
        (file) => require(join(CORE, file)),
      );
      helper.settings({ functionGlobalContext: { table } });
      try {
        await loadFlow([...packNodes(['dedup-redis', 'sliding-window-dedup', 'sensor-reconnect-dedup', 'dedup-confirm']), ...core], loaded);
      } finally {
        helper.settings({});
      }
      const seen = (name: string): Msg[] => {
        const list: Msg[] = [];
        const target = helper.getNode(byName(name, 'debug').id);
        assert.ok(target !== null, `${name} started`);
        target.on('input', (msg: Msg) => list.push(msg));
        return list;
      };
      const written = seen('written');
      const pings = seen('admitted pings');
      const errors = seen('dedup errors');
      const connected = (): boolean => {
        const input = helper.getNode(byName('bin readings').id) as unknown as { brokerConn?: { connected?: boolean } };
        return input.brokerConn?.connected === true;
      };
      await until(connected, 'the example\'s broker node to connect', 10_000);
      // The subscription is sent right after the connection.
      await new Promise((resolve) => setTimeout(resolve, 300));

      const client = await mqtt.connectAsync(running.url, { clientId: 'example-test-publisher' });
      try {
        const reading = { device_id: 'bin-A17', seq: 41, ts: '2026-07-16T09:00:00Z', fill_pct: 62.5 };
        await client.publishAsync('bins/bin-A17', JSON.stringify(reading), { qos: 1 });
        await client.publishAsync('bins/bin-A17', JSON.stringify(reading), { qos: 1 });
        await until(() => written.length === 1, 'the reading confirmed after its INSERT', 10_000);
        await client.publishAsync('bins/bin-A17', JSON.stringify([reading]), { qos: 1 });
        const ping = { assetId: 'veh-1', ts: new Date().toISOString(), lat: 52.1, lon: 4.3 };
        await client.publishAsync('fleet/veh-1', JSON.stringify(ping), { qos: 1 });
        await client.publishAsync('fleet/veh-1', JSON.stringify(ping), { qos: 1 });
        await until(() => pings.length === 1, 'the ping admitted', 10_000);
        await new Promise((resolve) => setTimeout(resolve, 500));
      } finally {
        await client.endAsync();
      }
      assert.deepEqual(table, ['bin-A17:41:76c73ee2946cc70e'], 'the reading reached the table once, with the key of the reference design');
      assert.equal(written.length, 1);
      assert.equal(written[0]?.dedup?.key, 'bin-A17:41:76c73ee2946cc70e');
      assert.equal(pings.length, 1);
      assert.deepEqual(errors.map((m) => m.error?.message), []);
    });
  });
});
