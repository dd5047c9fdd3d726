/**
 * The dedup sidebar's runtime half (nodes/dedup-sidebar.js, the plugin) in a
 * real Node-RED runtime under the test helper, with real dedup nodes: what
 * it pushes over RED.comms, and what its admin endpoints answer. (The
 * helper grants every permission; test/tune/sidebar-auth.spec.ts checks
 * them against a Node-RED with adminAuth.)
 */
import assert from 'node:assert/strict';
import { createServer, request as httpRequest, type Server } from 'http';
import type { AddressInfo } from 'net';
import { join } from 'path';
import { Readable } from 'stream';
import { readUpload } from '../../src/tune/upload';
import { collect, coreNodes, helper, node, packNodes, until, type FlowNode } from '../support/node-red-helper';

const ROOT = join(__dirname, '..', '..');
// eslint-disable-next-line @typescript-eslint/no-require-imports -- the compiled plugin, as Node-RED loads it
const plugin = require(join(ROOT, 'nodes', 'dedup-sidebar.js')) as (red: object) => void;
// eslint-disable-next-line @typescript-eslint/no-require-imports -- Node-RED's event bus, where RED.comms.publish goes
const { events } = require('@node-red/util') as { events: { on(e: string, f: (m: { topic: string; data: unknown }) => void): void; removeListener(e: string, f: unknown): void } };

/** supertest over the helper's admin app; the helper ships no types. */
interface Supertest {
  get(path: string): Call;
  post(path: string): Call;
}
interface Call extends PromiseLike<Reply> {
  send(body: unknown): Call;
  set(field: string, value: string): Call;
  query(q: Record<string, string>): Call;
}
interface Reply {
  status: number;
  body: Record<string, unknown> & { error?: { code: string; message: string } };
}
/** The helper's request() (supertest on its admin app), which its typing in test/support leaves out. */
const admin = (): Supertest => (helper as unknown as { request(): Supertest }).request();

const T0 = Date.now() - 3_600_000;

/**
 * New node ids for every test: the memory stores and the sidebar's data are
 * held by node id across deploys, as they are meant to be.
 */
let run = 0;
let SW = '';
let SR = '';

function flow(): FlowNode[] {
  run++;
  SW = `side-sw-${run}`;
  SR = `side-sr-${run}`;
  return [
    { id: 'tab', type: 'tab' },
    { id: SW, type: 'sliding-window-dedup', z: 'tab', name: 'vans', minSeconds: '60', minMetres: '25', wires: [['side-adm'], ['side-sup']] },
    { id: 'side-adm', type: 'helper', z: 'tab' },
    { id: 'side-sup', type: 'helper', z: 'tab' },
    { id: SR, type: 'sensor-reconnect-dedup', z: 'tab', name: 'bins', ttlSeconds: '3600', wires: [['side-unique'], ['side-audit']] },
    { id: 'side-unique', type: 'helper', z: 'tab' },
    { id: 'side-audit', type: 'helper', z: 'tab' },
    { id: `side-unsampled-${run}`, type: 'sliding-window-dedup', z: 'tab', sampleSize: '0', wires: [[], []] },
    { id: `side-turning-${run}`, type: 'sliding-window-dedup', z: 'tab', minHeadingDegrees: '30', wires: [[], []] },
    {
      id: `side-bins-${run}`,
      type: 'sliding-window-dedup',
      z: 'tab',
      mode: 'value',
      assetIdProperty: 'topic',
      valueProperty: 'payload.fill_pct',
      deadband: '5',
      minSeconds: '21600',
      ttlSeconds: '86400',
      wires: [['side-bins-out'], ['side-bins-out']],
    },
    { id: 'side-bins-out', type: 'helper', z: 'tab' },
  ];
}

/** Parked and driving vans every 10 s, and one re-sending a cached fix. */
function pings(): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  for (let k = 0; k < 40; k++) {
    for (let a = 0; a < 6; a++) {
      const parked = a % 2 === 0;
      out.push({ assetId: `van-${a}`, ts: T0 + k * 10_000, lat: 50 + a * 0.01 + (parked ? Math.sin(k + a) * 0.00005 : k * 0.0007), lon: 8 });
    }
    out.push({ assetId: 'stuck', ts: T0, lat: 50.5, lon: 8.5 });
  }
  return out;
}

describe('the dedup sidebar plugin: pushes and admin endpoints', function () {
  this.timeout(30_000);
  let sent: Record<string, unknown>[];
  let admitted: unknown[];
  let suppressed: unknown[];

  beforeEach(async function () {
    await helper.load([plugin, ...packNodes(['dedup-redis', 'sliding-window-dedup', 'sensor-reconnect-dedup']), ...coreNodes()], flow());
    admitted = collect('side-adm');
    suppressed = collect('side-sup');
    sent = pings();
    for (const payload of sent) node(SW).receive({ payload });
    await until(() => admitted.length + suppressed.length === sent.length, 'the node to decide every ping');
  });

  afterEach(async function () {
    await helper.unload();
  });

  it('lists the running dedup nodes with their store, totals and rates', async function () {
    const reply = await admin().get('/dedup-sidebar/nodes');
    assert.equal(reply.status, 200);
    const nodes = reply.body.nodes as { id: string; type: string; name: string; store: { kind: string }; totals: Record<string, number>; rates: { admitted: number[] } }[];
    const vans = nodes.find((n) => n.id === SW);
    assert.ok(vans && nodes.some((n) => n.id === SR), JSON.stringify(nodes.map((n) => n.id)));
    assert.equal(vans.name, 'vans');
    assert.equal(vans.store.kind, 'memory');
    assert.deepEqual(vans.totals, { admitted: admitted.length, suppressed: suppressed.length, rejected: 0 });
    assert.equal(vans.rates.admitted.reduce((a, b) => a + b, 0), admitted.length);
  });

  it('pushes the same list over RED.comms every two seconds', async function () {
    let pushed: { nodes: { id: string }[] } | undefined;
    const listener = (message: { topic: string; data: unknown }): void => {
      if (message.topic === 'telemetry-dedup/insight') pushed = message.data as typeof pushed;
    };
    events.on('comms', listener);
    try {
      await until(() => pushed !== undefined && pushed.nodes.some((n) => n.id === SW), 'a push naming the node', 5000);
    } finally {
      events.removeListener('comms', listener);
    }
  });

  it('gives a node\'s lists: the stuck asset first, the silent longest', async function () {
    const reply = await admin().get(`/dedup-sidebar/nodes/${SW}`);
    assert.equal(reply.status, 200);
    const stuck = reply.body.stuck as { assetId: string; suppressed: number; accepted: number }[];
    assert.deepEqual(stuck[0], { ...stuck[0], assetId: 'stuck', accepted: 1, suppressed: 39 });
    assert.equal((reply.body.silent as unknown[]).length, 7);
    const missing = await admin().get('/dedup-sidebar/nodes/no-such-node');
    assert.equal(missing.status, 404);
    assert.equal(missing.body.error?.code, 'noNode');
  });

  it('lists the assets whose pings have had no fix for at least the node\'s Heartbeat, beside the stuck ones', async function () {
    const lost = { assetId: 'lost-gps', ts: T0, lat: 0, lon: 0 };
    for (let k = 0; k < 3; k++) node(SW).receive({ payload: { ...lost, ts: T0 + k * 10_000 } });
    await until(() => admitted.length + suppressed.length === sent.length + 3, 'the three pings decided');
    const noFix = async (): Promise<{ assetId: string; noFixSince: number }[]> => (await admin().get(`/dedup-sidebar/nodes/${SW}`)).body.noFix as { assetId: string; noFixSince: number }[];
    assert.deepEqual(await noFix(), [], 'not for a Heartbeat yet');
    const realNow = Date.now;
    const at = realNow();
    Date.now = () => at + 61_000;
    try {
      const listed = await noFix();
      assert.deepEqual(listed.map((r) => r.assetId), ['lost-gps'], 'a Heartbeat (60 s) later');
      assert.ok(listed[0] !== undefined && listed[0].noFixSince <= at && listed[0].noFixSince > at - 5_000, String(listed[0]?.noFixSince));
    } finally {
      Date.now = realNow;
    }
    node(SW).receive({ payload: { ...lost, ts: T0 + 40_000, lat: 50, lon: 8 } });
    await until(() => admitted.length + suppressed.length === sent.length + 4, 'the fix decided');
    Date.now = () => at + 61_000;
    try {
      assert.deepEqual(await noFix(), [], 'a fix ends it');
    } finally {
      Date.now = realNow;
    }
  });

  it('runs a value-mode node\'s what-if over Heartbeat × Deadband, with no jitter and no list of assets without a fix', async function () {
    const bins = `side-bins-${run}`;
    const decided = collect('side-bins-out');
    for (const [i, fill] of [40, 41, 42, 46, 46].entries()) node(bins).receive({ topic: 'bins/A17', payload: { ts: T0 + i * 900_000, fill_pct: fill } });
    await until(() => decided.length === 5, 'the five readings decided');
    const reply = await admin().post(`/dedup-sidebar/nodes/${bins}/what-if`).send({ seconds: '3600', deadbands: '1,10' });
    assert.equal(reply.status, 200, JSON.stringify(reply.body));
    const result = reply.body.result as { spec: unknown; jitter: unknown; cells: { minSeconds: number; deadband?: number; minMetres?: number; admitted: number }[] };
    assert.deepEqual(result.spec, { seconds: [3600, 21600], metres: [], deadbands: [1, 5, 10] }, 'the node\'s own Heartbeat and Deadband added');
    assert.equal(result.jitter, null);
    assert.deepEqual(result.cells.map((c) => [c.minSeconds, c.deadband, c.minMetres, c.admitted]), [
      [3600, 1, undefined, 4],
      [3600, 5, undefined, 2],
      [3600, 10, undefined, 2],
      [21600, 1, undefined, 4],
      [21600, 5, undefined, 2],
      [21600, 10, undefined, 1],
    ]);
    assert.deepEqual(reply.body.current, { minSeconds: 21600, deadband: 5 });
    const details = await admin().get(`/dedup-sidebar/nodes/${bins}`);
    assert.equal(details.body.noFix, undefined);
    const list = await admin().get('/dedup-sidebar/nodes');
    assert.deepEqual(list.body.grid, { seconds: '10,30,60,120,300', metres: '5,10,25,50,100', deadbands: '1,2,5,10,20' });
    const bad = await admin().post(`/dedup-sidebar/nodes/${bins}/what-if`).send({ deadbands: '5,x' });
    assert.deepEqual(bad.body.error, { code: 'list.notPositive', list: 'deadbands', value: 'x', max: 20, message: 'dedup-sidebar.errors.list.notPositive' });
  });

  it('runs the what-if over the node\'s own input: at the node\'s setting it decides as the node did', async function () {
    const reply = await admin().post(`/dedup-sidebar/nodes/${SW}/what-if`).send({ seconds: '10,60,300', metres: [5, 25, 100] });
    assert.equal(reply.status, 200, JSON.stringify(reply.body));
    const result = reply.body.result as { received: number; cells: { minSeconds: number; minMetres: number; admitted: number; suppressed: number }[]; jitter: { parkedPairs: number; suggestedMetres: number } };
    assert.equal(reply.body.source, 'sample');
    assert.equal(result.received, sent.length);
    assert.equal(result.cells.length, 9);
    const own = result.cells.find((c) => c.minSeconds === 60 && c.minMetres === 25);
    assert.deepEqual({ admitted: own?.admitted, suppressed: own?.suppressed }, { admitted: admitted.length, suppressed: suppressed.length });
    assert.ok(result.jitter.parkedPairs > 0 && result.jitter.suggestedMetres > 0, JSON.stringify(result.jitter));
    // The node's own setting is added to the lists when they leave it out, so the chart can mark it.
    const added = await admin().post(`/dedup-sidebar/nodes/${SW}/what-if`).send({ seconds: '30', metres: '50' });
    assert.deepEqual((added.body.result as { spec: unknown }).spec, { seconds: [30, 60], metres: [25, 50] });
  });

  it('runs the what-if over an uploaded file, naming its bad rows', async function () {
    const csv = ['assetId,ts,lat,lon', 'a,2026-07-16T09:00:00Z,50,8', 'a,2026-07-16T09:00:30Z,50,8', 'a,soon,50,8', 'b,2026-07-16T09:00:00Z,50,8', 'a,2026-07-16T09:01:10Z,50,8'].join('\n');
    const reply = await admin().post(`/dedup-sidebar/nodes/${SW}/what-if/file`).query({ seconds: '30,60', metres: '25', name: 'trip.csv' }).set('Content-Type', 'text/csv').send(csv);
    assert.equal(reply.status, 200, JSON.stringify(reply.body));
    assert.equal(reply.body.name, 'trip.csv');
    assert.deepEqual(reply.body.read, {
      format: 'csv',
      mapping: { assetId: 'assetId', time: 'ts', lat: 'lat', lon: 'lon' },
      given: [],
      timeZone: 'UTC',
      zonelessTimes: 0,
      reordered: true,
      rows: 5,
      badRows: 1,
      firstBad: [{ line: 4, problem: 'ts = "soon": is not an ISO-8601 date-time' }],
    });
    const cells = (reply.body.result as { cells: { minSeconds: number; admitted: number }[] }).cells;
    assert.deepEqual(cells.map((c) => [c.minSeconds, c.admitted]), [[30, 4], [60, 3]]);
    const header = await admin().post(`/dedup-sidebar/nodes/${SW}/what-if/file`).set('Content-Type', 'text/csv').send('unit,ts,lat,lon\nv,1,2,3\n');
    assert.equal(header.status, 400);
    assert.equal(header.body.error?.code, 'file.header');
  });

  it('reads an upload\'s columns as the picker names them (topic as the asset id), or by their common names, and its local times in the zone given', async function () {
    type Cells = { cells: { minSeconds: number; minMetres: number; admitted: number }[] };
    const upload = (body: string, query: Record<string, string> = {}) =>
      admin().post(`/dedup-sidebar/nodes/${SW}/what-if/file`).query({ seconds: '30,60', metres: '5,25', ...query }).set('Content-Type', 'text/csv').send(body);
    const cellsOf = (reply: Reply): number[] => (reply.body.result as Cells).cells.map((c) => c.admitted);
    const pingsOf = (k: number, a: number): { t: number; lat: number } => ({ t: Date.parse('2014-10-01T06:00:00Z') + k * 10_000 + a * 1000, lat: 50 + a * 0.01 + (a % 2 === 0 ? Math.sin(k) * 0.00004 : k * 0.0003) });
    const own: string[] = ['assetId,ts,lat,lon'];
    const theirs: string[] = ['longitude,latitude,timestamp,topic,name_id'];
    for (let a = 0; a < 4; a++) {
      for (let k = 0; k < 60; k++) {
        const { t, lat } = pingsOf(k, a);
        // Berlin local time, written without a zone, as a fleet export might.
        const local = new Date(t + 2 * 3_600_000).toISOString().slice(0, 19).replace('T', ' ');
        theirs.push(`8,${lat.toFixed(6)},${local},fleet/van-${a},${k}`);
      }
    }
    const rows: { line: string; t: number }[] = [];
    for (let a = 0; a < 4; a++) for (let k = 0; k < 60; k++) rows.push({ line: `fleet/van-${a},${pingsOf(k, a).t / 1000},${pingsOf(k, a).lat.toFixed(6)},8`, t: pingsOf(k, a).t });
    own.push(...rows.sort((x, y) => x.t - y.t).map((r) => r.line));
    const expected = await upload(own.join('\n'));
    assert.equal(expected.status, 200, JSON.stringify(expected.body));
    // name_id would be recognised as the asset id: the picker names topic instead.
    const mapped = await upload(theirs.join('\n'), { asset: 'topic', tz: 'Europe/Berlin' });
    assert.equal(mapped.status, 200, JSON.stringify(mapped.body));
    assert.deepEqual(cellsOf(mapped), cellsOf(expected));
    assert.ok(new Set(cellsOf(expected)).size >= 3, `not a dull file: ${cellsOf(expected).join(' ')}`);
    const read = mapped.body.read as Record<string, unknown>;
    assert.deepEqual(
      { mapping: read.mapping, given: read.given, timeZone: read.timeZone, zonelessTimes: read.zonelessTimes, reordered: read.reordered },
      { mapping: { assetId: 'topic', time: 'timestamp', lat: 'latitude', lon: 'longitude' }, given: ['assetId'], timeZone: 'Europe/Berlin', zonelessTimes: 240, reordered: true },
    );
    const recognised = await upload(theirs.join('\n'));
    assert.deepEqual((recognised.body.read as Record<string, unknown>).mapping, { assetId: 'name_id', time: 'timestamp', lat: 'latitude', lon: 'longitude' });
    const missing = await upload(theirs.join('\n'), { asset: 'vehicle' });
    assert.equal(missing.status, 400);
    assert.deepEqual(missing.body.error, {
      code: 'file.noColumn',
      column: 'vehicle',
      role: 'asset id',
      option: 'asset',
      header: 'longitude, latitude, timestamp, topic, name_id',
      detail: 'the CSV header has no column "vehicle", named for the asset id (its columns: longitude, latitude, timestamp, topic, name_id)',
      message: 'dedup-sidebar.errors.file.noColumn',
    });
    const zone = await upload(theirs.join('\n'), { tz: 'Mars/Olympus' });
    assert.equal(zone.status, 400);
    assert.equal(zone.body.error?.code, 'timeZone');
  });

  it('reads the heading column the picker names for a node with a turn rule, by the node\'s own rules', async function () {
    const csv = ['vehicle,timestamp,lat,lon,course', 'v,2014-10-01 08:00:00,50,8,10', 'v,2014-10-01 08:00:10,50,8,400', 'v,2014-10-01 08:00:20,50,8,90'].join('\n');
    const turning = `/dedup-sidebar/nodes/side-turning-${run}/what-if/file`;
    const reply = await admin().post(turning).query({ heading: 'course' }).set('Content-Type', 'text/csv').send(csv);
    assert.equal(reply.status, 200, JSON.stringify(reply.body));
    const read = reply.body.read as { mapping: unknown; badRows: number; firstBad: unknown[] };
    assert.deepEqual(read.mapping, { assetId: 'vehicle', time: 'timestamp', lat: 'lat', lon: 'lon', heading: 'course' });
    assert.deepEqual(read.firstBad, [{ line: 3, problem: 'course = "400": must be between 0 and 360' }]);
    // A node without a turn rule never reads it, as the node itself does not.
    const plain = await admin().post(`/dedup-sidebar/nodes/${SW}/what-if/file`).query({ heading: 'course' }).set('Content-Type', 'text/csv').send(csv);
    assert.equal(plain.status, 200, JSON.stringify(plain.body));
    assert.equal((plain.body.read as { badRows: number }).badRows, 0);
  });

  it('refuses an upload over 50 MB, and a form or JSON body, with a clear error', async function () {
    const big = Buffer.alloc(50 * 1024 * 1024 + 1, 0x61);
    const reply = await admin().post(`/dedup-sidebar/nodes/${SW}/what-if/file`).set('Content-Type', 'application/octet-stream').send(big);
    assert.equal(reply.status, 413);
    assert.equal(reply.body.error?.code, 'tooLarge');
    assert.equal((reply.body.error as unknown as { limit: number }).limit, 50);
    const json = await admin().post(`/dedup-sidebar/nodes/${SW}/what-if/file`).send({ assetId: 'a' });
    assert.equal(json.status, 415);
    assert.equal(json.body.error?.code, 'uploadType');
  });

  it('says why it cannot answer: a bad list, a sensor node, no sample yet', async function () {
    const list = await admin().post(`/dedup-sidebar/nodes/${SW}/what-if`).send({ seconds: '10,-5' });
    assert.equal(list.status, 400);
    assert.deepEqual(list.body.error, { code: 'list.notPositive', list: 'seconds', value: '-5', max: 20, message: 'dedup-sidebar.errors.list.notPositive' });
    const sensor = await admin().post(`/dedup-sidebar/nodes/${SR}/what-if`).send({});
    assert.equal(sensor.status, 409);
    assert.equal(sensor.body.error?.code, 'notWindow');
    const window = await admin().post(`/dedup-sidebar/nodes/${SW}/ttl-what-if`).send({});
    assert.equal(window.status, 409);
    assert.equal(window.body.error?.code, 'notSensor');
    node(`side-unsampled-${run}`).receive({ payload: { assetId: 'a', ts: T0, lat: 1, lon: 1 } });
    const unsampled = await admin().post(`/dedup-sidebar/nodes/side-unsampled-${run}/what-if`).send({});
    assert.equal(unsampled.status, 409);
    assert.equal(unsampled.body.error?.code, 'noSample');
  });

  it('answers one what-if at a time', async function () {
    // A real server on the helper's admin app, so that an upload can be held open.
    const app = (helper as unknown as { _httpAdmin: (req: unknown, res: unknown) => void })._httpAdmin;
    const server: Server = createServer(app);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    try {
      let firstStatus = 0;
      const first = httpRequest({ host: '127.0.0.1', port, method: 'POST', path: `/dedup-sidebar/nodes/${SW}/what-if/file`, headers: { 'Content-Type': 'text/csv' } }, (res) => {
        firstStatus = res.statusCode ?? 0;
        res.resume();
      });
      first.write('assetId,ts,lat,lon\n');
      await new Promise((resolve) => setTimeout(resolve, 200));
      const second = await admin().post(`/dedup-sidebar/nodes/${SW}/what-if`).send({});
      assert.equal(second.status, 429);
      assert.equal(second.body.error?.code, 'busy');
      first.end('a,2026-07-16T09:00:00Z,50,8\n');
      await until(() => firstStatus !== 0, 'the held upload to be answered');
      assert.equal(firstStatus, 200);
      const third = await admin().post(`/dedup-sidebar/nodes/${SW}/what-if`).send({});
      assert.equal(third.status, 200, 'free again');
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('runs the sensor node\'s Remember what-if over the gaps of its replays', async function () {
    const unique = collect('side-unique');
    const audit = collect('side-audit');
    const burst = [0, 1, 2, 3].map((seq) => ({ device_id: 'bin-1', seq, ts: '2026-07-16T09:00:00Z', fill_pct: 40 + seq }));
    node(SR).receive({ payload: burst });
    node(SR).receive({ payload: burst.slice(0, 2) });
    await until(() => audit.length === 2, 'both bursts audited');
    assert.equal(unique.length, 1);
    const reply = await admin().post(`/dedup-sidebar/nodes/${SR}/ttl-what-if`).send({});
    assert.equal(reply.status, 200, JSON.stringify(reply.body));
    assert.equal(reply.body.current, 3600);
    assert.equal(reply.body.replays, 2);
    const points = reply.body.points as { ttlSeconds: number; letThrough: number }[];
    assert.deepEqual(points.map((p) => p.ttlSeconds), [10, 60, 300, 900, 3600]);
    assert.ok(points.every((p) => p.letThrough === 0), 'replays a moment later are caught by any Remember');
    const details = await admin().get(`/dedup-sidebar/nodes/${SR}`);
    assert.deepEqual(details.body.replays, [{ device: 'bin-1', replays: 2, lastReplay: (details.body.replays as { lastReplay: number }[])[0]?.lastReplay }]);
  });
});

describe('tune/upload readUpload', function () {
  function body(chunks: Buffer[], length?: number): Readable & { headers: Record<string, string> } {
    const stream = Readable.from(chunks) as Readable & { headers: Record<string, string> };
    stream.headers = length === undefined ? {} : { 'content-length': String(length) };
    return stream;
  }

  it('reads a body up to the limit into a buffer of its own', async function () {
    const result = await readUpload(body([Buffer.from('abc'), Buffer.from('de')]) as never, 5);
    assert.ok(result.ok);
    assert.equal(Buffer.from(result.bytes).toString(), 'abcde');
    assert.equal(result.bytes.byteOffset, 0);
    assert.equal(result.bytes.buffer.byteLength, 5);
  });

  it('refuses a declared length over the limit before reading, and a longer undeclared body as it passes the limit', async function () {
    assert.deepEqual(await readUpload(body([Buffer.from('abcdef')], 6) as never, 5), { ok: false, reason: 'tooLarge', bytes: 6 });
    assert.deepEqual(await readUpload(body([Buffer.from('abc'), Buffer.from('def'), Buffer.from('ghi')]) as never, 5), { ok: false, reason: 'tooLarge', bytes: 6 });
  });
});
