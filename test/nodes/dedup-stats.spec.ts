/**
 * The dedup stats node in a real Node-RED runtime: the message it sends
 * (its shape, and counts equal to what dedup/metrics serves for the same
 * nodes), the nodes it reports (all, or the ones chosen, in their order),
 * its top rows, the reasons left out when the metrics are off, and its
 * errors: a chosen node that does not exist and a bad option both reach a
 * Catch node, with nothing on the output.
 */
import assert from 'node:assert/strict';
import { join } from 'path';
import { collect, coreNodes, helper, node, packNodes, until, type FlowNode, type Msg } from '../support/node-red-helper';
import type { NodeStats } from '../../src/insight/stats-report';
import { metricSamples } from '../support/metric-samples';

const ROOT = join(__dirname, '..', '..');
// eslint-disable-next-line @typescript-eslint/no-require-imports -- the compiled plugin, as Node-RED loads it
const plugin = require(join(ROOT, 'nodes', 'dedup-sidebar.js')) as (red: object) => void;
// eslint-disable-next-line @typescript-eslint/no-require-imports -- the compiled module the nodes' telemetry counts by
const slots = require(join(ROOT, 'nodes', 'telemetry', 'decision-slots.js')) as { countReasons(on: boolean): void };
const admin = (): { get(path: string): PromiseLike<{ status: number; text: string }> } =>
  (helper as unknown as { request(): { get(path: string): PromiseLike<{ status: number; text: string }> } }).request();

const TAB = 'st-tab';
let run = 0;

interface Ids {
  vans: string;
  bins: string;
  stats: string;
}

function flow(stats: Record<string, unknown>): { ids: Ids; nodes: FlowNode[] } {
  run++;
  const ids = { vans: `st-vans-${run}`, bins: `st-bins-${run}`, stats: `st-stats-${run}` };
  return {
    ids,
    nodes: [
      { id: TAB, type: 'tab', label: 'stats tab' },
      { id: ids.vans, type: 'sliding-window-dedup', z: TAB, name: 'vans', wires: [['st-decided'], ['st-decided']] },
      { id: ids.bins, type: 'sensor-reconnect-dedup', z: TAB, name: 'bins', wires: [['st-decided'], ['st-decided']] },
      { id: ids.stats, type: 'dedup-stats', z: TAB, version: 2, ...stats, wires: [['st-out']] },
      { id: 'st-catch', type: 'catch', z: TAB, scope: [ids.stats], uncaught: false, wires: [['st-caught']] },
      { id: 'st-decided', type: 'helper', z: TAB },
      { id: 'st-out', type: 'helper', z: TAB },
      { id: 'st-caught', type: 'helper', z: TAB },
    ],
  };
}

interface Loaded {
  ids: Ids;
  out: Msg[];
  caught: Msg[];
  /** Sends the known traffic: vans 2 first, 2 window, 1 late, 1 elapsed, 1 unreadable; bins 3 new, 2 duplicate. */
  traffic(): Promise<void>;
  ask(msg?: Msg): Promise<void>;
}

async function load(stats: Record<string, unknown> = {}): Promise<Loaded> {
  const { ids, nodes } = flow(stats);
  await helper.load([plugin, ...packNodes(['dedup-redis', 'sliding-window-dedup', 'sensor-reconnect-dedup', 'dedup-stats']), ...coreNodes()], nodes);
  const decided = collect('st-decided');
  const out = collect('st-out');
  const caught = collect('st-caught');
  const t0 = Date.now() - 3_600_000;
  return {
    ids,
    out,
    caught,
    async traffic() {
      const pings = [
        ['a', 0],
        ['b', 0],
        ['a', 10_000],
        ['a', 20_000],
        ['a', -5_000],
        ['a', 70_000],
      ] as const;
      for (const [assetId, dt] of pings) node(ids.vans).receive({ payload: { assetId, ts: t0 + dt, lat: 50, lon: 8 } });
      node(ids.vans).receive({ payload: { ts: t0, lat: 50, lon: 8 } });
      const reading = (seq: number): Record<string, unknown> => ({ device_id: 'bin-7', seq, ts: new Date(t0 + seq * 60_000).toISOString(), fill_pct: seq });
      for (const seq of [1, 2, 3, 1, 2]) node(ids.bins).receive({ payload: reading(seq) });
      await until(() => decided.length === 11, 'the 11 decisions');
    },
    async ask(msg: Msg = { payload: 'tick' }) {
      const before = out.length + caught.length;
      node(ids.stats).receive(msg);
      await until(() => out.length + caught.length > before, 'the stats node to answer');
    },
  };
}

/** Every status a node showed (the helper spies on Node.prototype.status, for every node). */
function statusesOf(id: string): unknown[] {
  const spy = (node(id) as unknown as { status: { getCalls(): { thisValue: { id: string }; args: unknown[] }[] } }).status;
  return spy
    .getCalls()
    .filter((c) => c.thisValue.id === id)
    .map((c) => c.args[0]);
}

describe('dedup-stats node', function () {
  this.timeout(20_000);

  afterEach(async function () {
    await helper.unload();
    helper.settings({});
    slots.countReasons(true);
  });

  it('sends every dedup node\'s counts, equal to dedup/metrics, and keeps the rest of the message', async function () {
    const h = await load();
    await h.traffic();
    await h.ask({ payload: 'tick', topic: 'dashboard' });
    const msg = h.out[0] as Msg;
    assert.equal(msg.topic, 'dashboard', 'the message is kept, its payload replaced');
    const payload = msg.payload as { time: number; nodes: NodeStats[] };
    assert.ok(Math.abs(payload.time - Date.now()) < 5_000);
    const mine = payload.nodes.filter((n) => n.id === h.ids.vans || n.id === h.ids.bins);
    assert.deepEqual(
      mine.map((n) => n.id),
      [h.ids.vans, h.ids.bins],
      'oldest first',
    );
    const [vans, bins] = mine as [NodeStats, NodeStats];
    assert.deepEqual(
      Object.keys(vans),
      ['id', 'name', 'type', 'flow', 'store', 'running', 'since', 'totals', 'reasons', 'shareSuppressed', 'perMinute', 'top'],
    );
    assert.deepEqual({ name: vans.name, type: vans.type, flow: vans.flow, store: vans.store, running: vans.running }, { name: 'vans', type: 'sliding-window-dedup', flow: 'stats tab', store: 'memory', running: true });
    assert.deepEqual(vans.totals, { admitted: 3, suppressed: 3, rejected: 1 });
    assert.deepEqual(vans.reasons, {
      admitted: { 'store-unavailable': 0, first: 2, replayed: 0, elapsed: 1, event: 0, moved: 0, turned: 0, relocated: 0, changed: 0 },
      suppressed: { ahead: 0, late: 1, window: 2, 'no-fix': 0, 'poor-fix': 0, jump: 0, unchanged: 0 },
    });
    assert.equal(vans.shareSuppressed, 0.5);
    assert.deepEqual(bins.totals, { admitted: 3, suppressed: 2, rejected: 0 });
    assert.deepEqual(bins.reasons, { admitted: { 'store-unavailable': 0, new: 3, replayed: 0 }, suppressed: { duplicate: 2, 'in-flight': 0 } });
    assert.equal(bins.shareSuppressed, 0.4);
    // The first report's rates run from the node's start.
    assert.ok(vans.perMinute.seconds > 0 && vans.perMinute.seconds < 20, `${vans.perMinute.seconds} s`);
    assert.ok(Math.abs(vans.perMinute.suppressed - (3 * 60) / vans.perMinute.seconds) < 1e-6);
    assert.equal(vans.perMinute.shareSuppressed, 0.5);
    assert.deepEqual(vans.top, [{ id: 'a', suppressed: 3, admitted: 2 }], 'only a had pings suppressed');
    assert.deepEqual(bins.top, [{ id: 'bin-7', suppressed: 2, admitted: null }]);

    // The same numbers as dedup/metrics, series by series.
    const text = (await admin().get('/dedup/metrics')).text;
    for (const n of [vans, bins]) {
      const messages = metricSamples(text, 'dedup_messages_total').filter((s) => s.labels.node_id === n.id);
      assert.ok(messages.length > 0);
      for (const s of messages) {
        const reasons = n.reasons as NonNullable<NodeStats['reasons']>;
        const ours = (s.labels.decision === 'admitted' ? reasons.admitted : reasons.suppressed)[s.labels.reason as string];
        assert.equal(ours, s.value, `${n.name} ${s.labels.decision} ${s.labels.reason}`);
        assert.equal(s.labels.store, n.store);
        assert.equal(s.labels.flow, n.flow);
      }
      const sum = (decision: string): number => messages.filter((s) => s.labels.decision === decision).reduce((a, s) => a + s.value, 0);
      assert.equal(n.totals.admitted, sum('admitted'));
      assert.equal(n.totals.suppressed, sum('suppressed'));
      assert.equal(n.totals.rejected, metricSamples(text, 'dedup_rejected_total').find((s) => s.labels.node_id === n.id)?.value);
    }

    // The next report's rates run from the first one: nothing happened since.
    await h.ask();
    const second = ((h.out[1] as Msg).payload as { nodes: NodeStats[] }).nodes.find((n) => n.id === h.ids.vans) as NodeStats;
    assert.ok(second.perMinute.seconds >= 0);
    assert.equal(second.since, vans.since);
    assert.deepEqual([second.perMinute.admitted, second.perMinute.suppressed, second.perMinute.rejected], [0, 0, 0]);
    assert.equal(second.perMinute.reasons?.suppressed.late, 0);
    assert.deepEqual(second.totals, vans.totals, 'the totals still count from the start');
    assert.deepEqual(h.caught, []);
    assert.deepEqual(statusesOf(h.ids.stats).at(-1), { fill: 'green', shape: 'dot', text: `dedup nodes reported: ${payload.nodes.length}` });
  });

  it('reports only the nodes chosen, in their order, with as many top rows as asked', async function () {
    const { ids } = flow({});
    run--; // the same ids as the flow load() makes next
    const h = await load({ dedupNodes: [ids.bins, ids.vans], topRows: '0' });
    await h.traffic();
    await h.ask();
    const nodes = ((h.out[0] as Msg).payload as { nodes: NodeStats[] }).nodes;
    assert.deepEqual(
      nodes.map((n) => n.name),
      ['bins', 'vans'],
    );
    assert.deepEqual(
      nodes.map((n) => n.top),
      [[], []],
    );
  });

  it('leaves the reasons out when the metrics are off (dedupMetrics: false), the totals in', async function () {
    helper.settings({ dedupMetrics: false });
    const h = await load();
    await h.traffic();
    await h.ask();
    const vans = ((h.out[0] as Msg).payload as { nodes: NodeStats[] }).nodes.find((n) => n.id === h.ids.vans) as NodeStats;
    assert.equal(vans.reasons, null);
    assert.equal(vans.perMinute.reasons, null);
    assert.deepEqual(vans.totals, { admitted: 3, suppressed: 3, rejected: 1 });
  });

  it('sends a message naming a chosen node that does not exist to Catch, and nothing on its output', async function () {
    const h = await load({ dedupNodes: ['st-gone'] });
    await h.ask({ payload: 'tick', topic: 'kept' });
    assert.deepEqual(h.out, []);
    assert.equal(h.caught.length, 1);
    assert.match(String(h.caught[0]?.error?.message), /no dedup node with id st-gone in this runtime \(deleted, or not deployed\)/);
    assert.equal(h.caught[0]?.topic, 'kept');
    assert.deepEqual(statusesOf(h.ids.stats).at(-1), { fill: 'red', shape: 'ring', text: 'chosen nodes not found: 1' });
  });

  for (const [option, value, words] of [
    ['topRows', 'many', /topRows must be a whole number from 0 to 20, not "many"/],
    ['topRows', '21', /topRows must be a whole number from 0 to 20, not "21"/],
    ['dedupNodes', 'st-vans', /dedupNodes must be a list of node ids, not "st-vans"/],
  ] as const) {
    it(`refuses ${option} ${JSON.stringify(value)}: a red status, and every message to Catch with the reason`, async function () {
      const h = await load({ [option]: value });
      await h.ask();
      await h.ask();
      assert.deepEqual(h.out, []);
      assert.equal(h.caught.length, 2);
      for (const caught of h.caught) assert.match(String(caught.error?.message), words);
      assert.deepEqual(statusesOf(h.ids.stats), [{ fill: 'red', shape: 'ring', text: 'configuration error' }], 'set once, at the start');
    });
  }
});
