/**
 * The metrics in one runtime (the test helper's): the endpoint's text, the
 * copy in prom-client's default registry that another exporter would
 * serve, the settings that turn either off; the failure classes; a sensor
 * burst counted reading by reading.
 */
import assert from 'node:assert/strict';
import { join } from 'path';
import { prepareReadings, settleReadings } from '../../src/core/sensor/burst';
import { CLAIM, LEASE_EXPIRED } from '../../src/core/sensor/seen-codes';
import { SENSOR_DUPLICATE, SENSOR_IN_FLIGHT, SENSOR_NEW, SENSOR_REPLAYED } from '../../src/telemetry/decision-slots';
import { failureCause } from '../../src/telemetry/failure-causes';
import { forgetTelemetry, sensorTelemetry, type telemetryOf } from '../../src/telemetry/records';
import { ReplyError } from 'ioredis';
import { ScriptingUnavailableError, storeCallError, StoreUnreachableError, TimeoutError } from '../../src/redis/store-errors';
import { MemorySeenStore } from '../../src/stores/memory-seen-store';
import { collect, coreNodes, helper, node, packNodes, until, type FlowNode } from '../support/node-red-helper';

/** An error Redis answered with, as ioredis' parser makes it (redis-errors' ReplyError, which ioredis exports untyped). */
const RedisAnswer = ReplyError as new (message: string) => Error;

const ROOT = join(__dirname, '..', '..');
// eslint-disable-next-line @typescript-eslint/no-require-imports -- the compiled plugin, as Node-RED loads it
const plugin = require(join(ROOT, 'nodes', 'dedup-sidebar.js')) as (red: object) => void;
// eslint-disable-next-line @typescript-eslint/no-require-imports -- the compiled exporter the plugin uses (one module instance with it)
const exporter = require(join(ROOT, 'nodes', 'metrics', 'exporter.js')) as { unshareMetrics(registry: object): void };
// eslint-disable-next-line @typescript-eslint/no-require-imports -- the compiled telemetry records, the ones the nodes write to
const records = require(join(ROOT, 'nodes', 'telemetry', 'records.js')) as { telemetryOf: typeof telemetryOf };
// eslint-disable-next-line @typescript-eslint/no-require-imports -- the compiled module the nodes' telemetry counts by
const slots = require(join(ROOT, 'nodes', 'telemetry', 'decision-slots.js')) as { countReasons(on: boolean): void };
// eslint-disable-next-line @typescript-eslint/no-require-imports -- the copy of prom-client the pack resolves, as an exporter of the same userDir would
const promClient = require('prom-client') as { register: { metrics(): Promise<string>; getSingleMetric(name: string): unknown } };

interface Reply {
  status: number;
  text: string;
  headers: Record<string, string>;
}
const admin = (): { get(path: string): PromiseLike<Reply> } => (helper as unknown as { request(): { get(path: string): PromiseLike<Reply> } }).request();

let run = 0;

function flow(): { flow: FlowNode[]; sw: string } {
  run++;
  const sw = `met-sw-${run}`;
  return {
    sw,
    flow: [
      { id: 'tab', type: 'tab', label: 'metrics tab' },
      { id: sw, type: 'sliding-window-dedup', z: 'tab', name: 'vans', wires: [['met-out'], ['met-out']] },
      { id: 'met-out', type: 'helper', z: 'tab' },
    ],
  };
}

/** The value of one series in a text exposition, found by its name and some of its labels. */
function valueOf(text: string, name: string, labels: Record<string, string>): number | undefined {
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`)) continue;
    if (Object.entries(labels).every(([k, v]) => line.includes(`${k}="${v}"`))) return Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return undefined;
}

describe('metrics in one runtime', function () {
  this.timeout(30_000);

  afterEach(async function () {
    await helper.unload();
    helper.settings({});
    slots.countReasons(true);
  });

  async function loadAndSend(): Promise<string> {
    const { flow: nodes, sw } = flow();
    await helper.load([plugin, ...packNodes(['dedup-redis', 'sliding-window-dedup']), ...coreNodes()], nodes);
    const out = collect('met-out');
    const t0 = Date.now() - 3_600_000;
    // Two vans: a first ping each, then one inside the window and one a minute on.
    for (const [assetId, dt] of [['a', 0], ['b', 0], ['a', 10_000], ['a', 70_000]] as const) node(sw).receive({ payload: { assetId, ts: t0 + dt, lat: 50, lon: 8 } });
    await until(() => out.length === 4, 'four decisions');
    return sw;
  }

  it('serves the counts at dedup/metrics and in prom-client\'s default registry', async function () {
    exporter.unshareMetrics(promClient.register);
    const sw = await loadAndSend();
    const reply = await admin().get('/dedup/metrics');
    assert.equal(reply.status, 200);
    const labels = { node: 'vans', node_id: sw, flow: 'metrics tab', store: 'memory' };
    assert.equal(valueOf(reply.text, 'dedup_messages_total', { ...labels, decision: 'admitted', reason: 'first' }), 2);
    assert.equal(valueOf(reply.text, 'dedup_messages_total', { ...labels, decision: 'suppressed', reason: 'window' }), 1);
    assert.equal(valueOf(reply.text, 'dedup_messages_total', { ...labels, decision: 'admitted', reason: 'elapsed' }), 1);
    assert.equal(valueOf(reply.text, 'dedup_store_entries', { node_id: sw }), 2);
    // One scrape of the default registry gets them too.
    const shared = await promClient.register.metrics();
    assert.equal(valueOf(shared, 'dedup_messages_total', { node_id: sw, reason: 'first' }), 2);
  });

  it('counts issue 29\'s reasons by their names in the reason label: the fix\'s quality, jumps, value mode', async function () {
    run++;
    const [pos, bins] = [`met-pos-${run}`, `met-bins-${run}`];
    await helper.load(
      [plugin, ...packNodes(['dedup-redis', 'sliding-window-dedup']), ...coreNodes()],
      [
        { id: 'tab', type: 'tab', label: 'metrics tab' },
        { id: pos, type: 'sliding-window-dedup', z: 'tab', name: 'trucks', minSatellites: '4', maxSpeedKmh: '150', wires: [['met-out'], ['met-out']] },
        { id: bins, type: 'sliding-window-dedup', z: 'tab', name: 'bins', mode: 'value', valueProperty: 'payload.fill_pct', deadband: '5', wires: [['met-out'], ['met-out']] },
        { id: 'met-out', type: 'helper', z: 'tab' },
      ],
    );
    const out = collect('met-out');
    const t0 = Date.now() - 3_600_000;
    const north = (km: number): number => 50 + km / 111.195;
    const pings = [
      { ts: t0, lat: 50, lon: 8 },
      { ts: t0 + 5_000, lat: 0, lon: 0 },
      { ts: t0 + 6_000, lat: 50, lon: 8, satellites: 2 },
      { ts: t0 + 10_000, lat: north(5), lon: 8 },
      { ts: t0 + 20_000, lat: north(5.1), lon: 8 },
      { ts: t0 + 30_000, lat: north(5.2), lon: 8 },
    ];
    for (const p of pings) node(pos).receive({ payload: { assetId: 'truck', ...p } });
    for (const [i, fill] of [40, 41, 47].entries()) node(bins).receive({ payload: { assetId: 'bin', ts: t0 + i * 1000, fill_pct: fill } });
    await until(() => out.length === pings.length + 3, 'every decision');
    const text = (await admin().get('/dedup/metrics')).text;
    const count = (nodeId: string, decision: string, reason: string): number | undefined => valueOf(text, 'dedup_messages_total', { node_id: nodeId, decision, reason });
    assert.deepEqual(
      [count(pos, 'suppressed', 'no-fix'), count(pos, 'suppressed', 'poor-fix'), count(pos, 'suppressed', 'jump'), count(pos, 'admitted', 'relocated')],
      [1, 1, 2, 1],
    );
    assert.deepEqual([count(bins, 'admitted', 'first'), count(bins, 'suppressed', 'unchanged'), count(bins, 'admitted', 'changed')], [1, 1, 1]);
    assert.equal(count(bins, 'suppressed', 'no-fix'), 0, 'every reason exported from the start, at 0 until it happens');
  });

  it('keeps them out of the default registry with dedupMetricsRegistry: false', async function () {
    exporter.unshareMetrics(promClient.register);
    helper.settings({ dedupMetricsRegistry: false });
    await loadAndSend();
    assert.equal(promClient.register.getSingleMetric('dedup_messages_total'), undefined);
    assert.equal((await admin().get('/dedup/metrics')).status, 200);
  });

  it('turns metrics off with dedupMetrics: false (no endpoint, no counting)', async function () {
    helper.settings({ dedupMetrics: false });
    const sw = await loadAndSend();
    assert.equal((await admin().get('/dedup/metrics')).status, 404);
    const counters = records.telemetryOf(sw);
    assert.ok(counters !== undefined && 'decisions' in counters);
    assert.equal(counters.decisions.reduce((a, b) => a + b, 0), 0);
  });

  it('classes store failures by cause, by their type whatever their words', function () {
    assert.equal(failureCause(new TimeoutError(500, 'connect ECONNREFUSED 127.0.0.1:1')), 'timeout');
    assert.equal(failureCause(new StoreUnreachableError('connect ECONNREFUSED 127.0.0.1:1', { cause: new Error('Connection is closed.') })), 'unreachable');
    assert.equal(failureCause(storeCallError(new Error('Connection is closed.'), 'connect ECONNREFUSED 127.0.0.1:1')), 'unreachable');
    const reply = new RedisAnswer('ERR Error running script (call to f_abc): @user_script:1: bad');
    assert.equal(failureCause(storeCallError(reply, undefined)), 'script');
    assert.equal(failureCause(storeCallError(new RedisAnswer('OOM command not allowed when used memory > maxmemory'), undefined)), 'script');
    assert.equal(failureCause(new ScriptingUnavailableError('ERR unknown command', 'no scripting')), 'script');
    assert.equal(failureCause(new Error('Redis is unreachable: words alone do not make it so')), 'other');
    assert.equal(failureCause('something odd'), 'other');
  });

  it('counts a sensor burst reading by reading: new, replayed, duplicate, in-flight, lease expired', function () {
    const sensor = sensorTelemetry({
      id: 'met-sensor',
      type: 'sensor-reconnect-dedup',
      name: '',
      store: 'memory',
      settings: { ttlSeconds: 60, maxKeys: 100, confirm: true, leaseSeconds: 60, keyMode: 'reading', outputMode: 'burst' },
    });
    const keyOf = (raw: unknown): { ok: true; key: string; group: string } => ({ ok: true, key: String(raw), group: 'd' });
    // a, b, c, d claimed; a repeated inside the burst.
    const prepared = prepareReadings(['a', 'b', 'c', 'd', 'a'], true, keyOf);
    const settled = settleReadings(prepared, [CLAIM.admitted, CLAIM.replayed, CLAIM.inFlight, CLAIM.admitted | LEASE_EXPIRED], undefined, true);
    sensor.decided(prepared, settled);
    sensor.rejectedOne();
    sensor.rejectedOne();
    const counters = sensor;
    assert.equal(counters.decisions[SENSOR_NEW], 2, 'a and d');
    assert.equal(counters.decisions[SENSOR_REPLAYED], 1, 'b');
    assert.equal(counters.decisions[SENSOR_IN_FLIGHT], 2, 'c, and the repeat of a (pending with it)');
    assert.equal(counters.decisions[SENSOR_DUPLICATE], 0);
    assert.equal(counters.leaseExpired, 1);
    assert.equal(counters.rejected, 2);
    forgetTelemetry('met-sensor');
  });

  it('counts the keys pending a confirm whose lease still runs', function () {
    let now = 1_000_000;
    const store = new MemorySeenStore({ ttlSeconds: 600, maxKeys: 100, confirm: true, leaseSeconds: 60, keyMode: 'reading' }, () => now);
    const codes: number[][] = [];
    const replies = { value: (c: number[]) => codes.push(c), error: (e: unknown) => assert.fail(String(e)) };
    store.claim({ claims: ['a', 'b', 'c'].map((key) => ({ key, group: 'd' })), token: 7 }, replies, undefined);
    assert.equal(store.pendingKeys(), 3);
    store.settle({ claims: [{ key: 'a', group: 'd' }], token: 7, action: 'confirm' }, replies, undefined);
    store.settle({ claims: [{ key: 'b', group: 'd' }], token: 7, action: 'release' }, replies, undefined);
    assert.equal(store.pendingKeys(), 1, 'c alone: a is seen, b released');
    now += 61_000;
    assert.equal(store.pendingKeys(), 0, 'c\'s lease ran out');
    const seenOnly = new MemorySeenStore({ ttlSeconds: 600, maxKeys: 100, confirm: false, leaseSeconds: 60, keyMode: 'reading' }, () => now);
    seenOnly.claim({ claims: [{ key: 'x', group: 'd' }], token: 1 }, replies, undefined);
    assert.equal(seenOnly.pendingKeys(), 0);
  });

  it('serves dedup_pending_keys for a sensor node in confirm mode', async function () {
    const id = `met-confirm-${++run}`;
    await helper.load([plugin, ...packNodes(['dedup-redis', 'sensor-reconnect-dedup']), ...coreNodes()], [
      { id: 'tab', type: 'tab', label: 'metrics tab' },
      { id, type: 'sensor-reconnect-dedup', z: 'tab', name: 'bins', confirm: 'on', leaseSeconds: '60', outputMode: 'each', wires: [['met-out'], ['met-out']] },
      { id: 'met-out', type: 'helper', z: 'tab' },
    ]);
    const out = collect('met-out');
    for (let seq = 1; seq <= 3; seq++) node(id).receive({ payload: { device_id: 'bin-1', seq, ts: '2026-07-16T09:00:00Z', fill_pct: seq } });
    await until(() => out.length === 3, 'three readings');
    const reply = await admin().get('/dedup/metrics');
    assert.equal(valueOf(reply.text, 'dedup_pending_keys', { node_id: id }), 3);
  });
});
