/**
 * The metrics endpoint scraped by a real Prometheus (Debian's binary) from
 * a real Node-RED process with adminAuth on, the scrape job holding a
 * Node-RED bearer token: traffic through both dedup nodes (one on Redis,
 * one in memory with Confirm delivery) and a confirm node, a node whose
 * Redis is unreachable, and a bad message. The counters Prometheus has must
 * equal what the flow's own outputs counted; each query of the Grafana
 * dashboard (docs/grafana/dedup.json) must return data.
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'fs';
import { join } from 'path';
import { useRedis, sharedRedis } from '../support/global-hooks';
import { freePort, HOST } from '../support/redis-server';
import { startNodeRed, ROOT, type NodeRedServer } from '../e2e/support/node-red';
import { PROMETHEUS_BIN, startPrometheus, type PrometheusServer, type Sample } from './prometheus-server';

// eslint-disable-next-line @typescript-eslint/no-require-imports -- Node-RED's own bcrypt, for the settings' password hashes
const bcrypt = require('bcryptjs') as { hashSync(password: string, rounds: number): string };

const TAB = 'm-tab';
const FLOW_NAME = 'metrics flow';
const DEAD_SW = 'm-dead-sw';

/** A function node that counts what reaches it into global.counts, keyed `<node>|<decision>|<reason>`. */
function counter(id: string, node: string, x: number, y: number): Record<string, unknown> {
  const func = `const NODE = ${JSON.stringify(node)};
const counts = global.get('counts') || {};
const add = (key, n) => { counts[key] = (counts[key] || 0) + n; };
const d = msg.dedup || {};
if (msg.error) add(NODE + '|rejected', 1);
else if (d.decision === 'audit') { for (const s of msg.payload.suppressed) add(NODE + '|suppressed|' + s.reason, 1); }
else if (typeof d.confirmed === 'number') add(NODE + '|confirmed', d.confirmed);
else add(NODE + '|' + d.decision + '|' + d.reason, 1);
global.set('counts', counts);
return null;`;
  return { id, type: 'function', z: TAB, name: `count ${node}`, func, outputs: 1, x, y, wires: [] };
}

/** 3 vehicles, a ping every 20 s each for 20 minutes, every fourth sent twice (late), and one unreadable. */
const PINGS = `const base = Date.now() - 3600000;
const out = [];
for (let k = 0; k < 60; k++) {
  const p = { payload: { assetId: 'v' + (k % 3), ts: base + Math.floor(k / 3) * 20000, lat: 50, lon: 8 } };
  out.push(p);
  if (k % 4 === 0) out.push(RED.util.cloneMessage(p));
}
out.push({ payload: { assetId: 'v0', ts: base, lat: 'north', lon: 8 } });
return [out];`;

/** 3 bins, 10 readings each, every third sent again; then one burst holding two new readings and a repeat of each. */
const READINGS = `const out = [];
for (let seq = 1; seq <= 10; seq++) for (const id of ['bin-A', 'bin-B', 'bin-C']) {
  const r = { device_id: id, seq, ts: new Date(Date.UTC(2026, 6, 16, 9, seq)).toISOString(), fill_pct: seq * 5 };
  out.push({ payload: r });
  if (seq % 3 === 0) out.push({ payload: Object.assign({}, r) });
}
const a = { device_id: 'bin-D', seq: 1, ts: '2026-07-16T09:00:00Z', fill_pct: 10 };
const b = { device_id: 'bin-D', seq: 2, ts: '2026-07-16T09:01:00Z', fill_pct: 11 };
out.push({ payload: [a, b, Object.assign({}, a), Object.assign({}, b)] });
return [out];`;

const DEAD_PINGS = `const out = [];
for (let k = 0; k < 5; k++) out.push({ payload: { assetId: 'd' + k, ts: Date.now() - 60000, lat: 50, lon: 8 } });
return [out];`;

function flows(redisUrl: string, deadPort: number): unknown[] {
  return [
    { id: TAB, type: 'tab', label: FLOW_NAME },
    { id: 'm-conn', type: 'dedup-redis', url: redisUrl, keyPrefix: `metrics-${process.pid}:`, timeoutMs: '3000' },
    { id: 'm-dead', type: 'dedup-redis', host: HOST, port: String(deadPort), keyPrefix: 'dead:', timeoutMs: '500' },
    { id: 'm-go', type: 'inject', z: TAB, props: [{ p: 'payload' }], payload: '', payloadType: 'date', repeat: '', once: false, x: 100, y: 60, wires: [['m-pings', 'm-readings', 'm-dead-pings']] },
    { id: 'm-pings', type: 'function', z: TAB, name: 'pings', func: PINGS, outputs: 1, x: 260, y: 60, wires: [['m-sw']] },
    { id: 'm-sw', type: 'sliding-window-dedup', z: TAB, name: 'fleet window', store: 'redis', redis: 'm-conn', version: 2, x: 440, y: 60, wires: [['m-count-sw'], ['m-count-sw']] },
    counter('m-count-sw', 'fleet window', 640, 60),
    { id: 'm-catch', type: 'catch', z: TAB, scope: ['m-sw'], uncaught: false, x: 440, y: 120, wires: [['m-count-sw']] },
    { id: 'm-readings', type: 'function', z: TAB, name: 'readings', func: READINGS, outputs: 1, x: 260, y: 200, wires: [['m-sensor']] },
    {
      id: 'm-sensor',
      type: 'sensor-reconnect-dedup',
      z: TAB,
      name: 'bins',
      store: 'memory',
      persistSeconds: '1',
      confirm: 'on',
      leaseSeconds: '60',
      outputMode: 'each',
      version: 2,
      x: 440,
      y: 200,
      wires: [['m-count-sensor', 'm-confirm'], ['m-count-sensor']],
    },
    counter('m-count-sensor', 'bins', 640, 200),
    { id: 'm-confirm', type: 'dedup-confirm', z: TAB, name: 'confirm', action: 'confirm', version: 2, x: 640, y: 260, wires: [['m-count-confirm']] },
    counter('m-count-confirm', 'confirm', 840, 260),
    { id: 'm-dead-pings', type: 'function', z: TAB, name: 'pings to a dead Redis', func: DEAD_PINGS, outputs: 1, x: 260, y: 340, wires: [[DEAD_SW]] },
    { id: DEAD_SW, type: 'sliding-window-dedup', z: TAB, store: 'redis', redis: 'm-dead', onStoreError: 'admit', version: 2, x: 440, y: 340, wires: [['m-count-dead'], ['m-count-dead']] },
    counter('m-count-dead', DEAD_SW, 640, 340),
    { id: 'm-counts-in', type: 'http in', z: TAB, url: '/metrics-test/counts', method: 'get', x: 120, y: 440, wires: [['m-counts-read']] },
    { id: 'm-counts-read', type: 'function', z: TAB, func: "msg.payload = global.get('counts') || {}; return msg;", outputs: 1, x: 300, y: 440, wires: [['m-counts-out']] },
    { id: 'm-counts-out', type: 'http response', z: TAB, x: 460, y: 440, wires: [] },
  ];
}

const delay = (ms: number): Promise<void> => new Promise((done) => setTimeout(done, ms));

describe('metrics: a real Prometheus scrapes dedup/metrics from a real Node-RED with adminAuth', function () {
  this.timeout(120_000);
  useRedis();
  let nodeRed: NodeRedServer;
  let prometheus: PrometheusServer;
  let token = '';
  let counts: Record<string, number> = {};
  let trafficDone = 0;

  before(async function () {
    if (!existsSync(PROMETHEUS_BIN)) throw new Error(`${PROMETHEUS_BIN} is missing: apt-get install prometheus`);
    nodeRed = await startNodeRed({
      flows: flows(sharedRedis().url, await freePort()),
      settings: {
        adminAuth: {
          type: 'credentials',
          users: [
            { username: 'operator', password: bcrypt.hashSync('operator-secret', 4), permissions: '*' },
            { username: 'prometheus', password: bcrypt.hashSync('prometheus-secret', 4), permissions: 'read' },
          ],
          default: { permissions: 'settings.read' },
        },
      },
    });
    const tokenOf = async (username: string, scope: string): Promise<string> => {
      const response = await fetch(`${nodeRed.url}/auth/token`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ client_id: 'node-red-admin', grant_type: 'password', scope, username, password: `${username}-secret` }),
      });
      assert.equal(response.status, 200, `token for ${username}`);
      return ((await response.json()) as { access_token: string }).access_token;
    };
    token = await tokenOf('prometheus', 'read');
    const operator = await tokenOf('operator', '*');
    prometheus = await startPrometheus({ name: 'node-red-dedup', target: new URL(nodeRed.url).host, metricsPath: '/dedup/metrics', bearer: token });
    // Scraped once before any traffic, so that rates see the counters rise from zero.
    await until(async () => (await prometheus.query('up{job="node-red-dedup"} == 1')).length === 1, 'Prometheus scrapes Node-RED', () => prometheus.log());
    const injected = await fetch(`${nodeRed.url}/inject/m-go`, { method: 'POST', headers: { Authorization: `Bearer ${operator}` } });
    assert.equal(injected.status, 200);
    // The flow is done when its counts stop changing and the dead store's pings (which wait out its give-up time) are in.
    let last = '';
    await until(async () => {
      counts = (await (await fetch(`${nodeRed.url}/metrics-test/counts`)).json()) as Record<string, number>;
      const now = JSON.stringify(counts);
      const settled = now === last && (counts[`${DEAD_SW}|admitted|store-unavailable`] ?? 0) === 5;
      last = now;
      return settled;
    }, 'the flow finishes');
    trafficDone = Date.now();
  });

  after(async function () {
    await prometheus?.stop();
    await nodeRed?.stop();
  });

  it('refuses the endpoint without a token, and serves the text format with one', async function () {
    const refused = await fetch(`${nodeRed.url}/dedup/metrics`);
    assert.equal(refused.status, 401);
    const served = await fetch(`${nodeRed.url}/dedup/metrics`, { headers: { Authorization: `Bearer ${token}` } });
    assert.equal(served.status, 200);
    assert.match(served.headers.get('content-type') ?? '', /^text\/plain;.*\bversion=0\.0\.4/);
    const text = await served.text();
    assert.match(text, /^# TYPE dedup_messages_total counter$/m);
    assert.match(text, /^# TYPE dedup_redis_call_seconds histogram$/m);
  });

  it('has dedup_messages_total equal to what the outputs counted, per node, decision and reason', async function () {
    const expected = new Map<string, number>();
    for (const [key, n] of Object.entries(counts)) {
      const [node, decision, reason] = key.split('|');
      if (decision === 'admitted' || decision === 'suppressed') expected.set(`${node}|${decision}|${reason}`, n);
    }
    // The traffic was made to reach many reasons: a test that saw only one would prove little.
    for (const key of ['fleet window|admitted|first', 'fleet window|admitted|elapsed', 'fleet window|suppressed|window', 'fleet window|suppressed|late', 'bins|admitted|new', `${DEAD_SW}|admitted|store-unavailable`]) {
      assert.ok((expected.get(key) ?? 0) > 0, `the flow produced ${key}: ${JSON.stringify(counts)}`);
    }
    assert.ok((expected.get('bins|suppressed|duplicate') ?? 0) + (expected.get('bins|suppressed|in-flight') ?? 0) > 0);
    const seen = await converged('dedup_messages_total', (samples) => {
      const got = new Map<string, number>();
      for (const s of samples) if (s.value > 0) got.set(`${s.metric.node}|${s.metric.decision}|${s.metric.reason}`, s.value);
      return sameMap(got, expected);
    });
    for (const s of seen) {
      assert.equal(s.metric.flow, FLOW_NAME, 'the flow label is the tab name');
      assert.ok(['memory', 'redis'].includes(s.metric.store as string));
    }
    const unnamed = seen.find((s) => s.metric.node_id === DEAD_SW);
    assert.equal(unnamed?.metric.node, DEAD_SW, 'an unnamed node is labelled with its id');
  });

  it('counts the sensor readings by outcome, the confirm node and the rejected ping', async function () {
    const admitted = (counts['bins|admitted|new'] ?? 0) + (counts['bins|admitted|replayed'] ?? 0);
    assert.equal(admitted, 32, '30 single readings and the burst\'s two new ones');
    await converged('dedup_sensor_readings_total{node="bins",outcome="unique"}', (s) => s[0]?.value === admitted);
    await converged('dedup_sensor_readings_total{node="bins",outcome="duplicate"}', (s) => s[0]?.value === (counts['bins|suppressed|duplicate'] ?? 0));
    await converged('dedup_sensor_readings_total{node="bins",outcome="in-flight"}', (s) => s[0]?.value === (counts['bins|suppressed|in-flight'] ?? 0));
    assert.equal(counts['confirm|confirmed'], admitted, 'every admitted reading was confirmed');
    await converged('dedup_confirm_keys_total{node="confirm",outcome="confirmed"}', (s) => s[0]?.value === counts['confirm|confirmed']);
    assert.equal(counts['fleet window|rejected'], 1);
    await converged('dedup_rejected_total{node="fleet window"}', (s) => s[0]?.value === 1);
  });

  it('counts store failures by cause and measures the Redis calls', async function () {
    await converged(`sum(dedup_store_failures_total{node="${DEAD_SW}"})`, (s) => s[0]?.value === 5);
    await converged('sum(dedup_store_failures_total{node="fleet window"})', (s) => s[0]?.value === 0);
    const windowDecisions = Object.entries(counts)
      .filter(([key]) => key.startsWith('fleet window|admitted|') || key.startsWith('fleet window|suppressed|'))
      .reduce((sum, [, n]) => sum + n, 0);
    // Every ping of the Redis-backed node went to Redis in some call; the dead store's calls never answered.
    await converged('dedup_redis_call_items_sum', (s) => s[0]?.value === windowDecisions);
    await converged('dedup_redis_call_seconds_count', (s) => (s[0]?.value ?? 0) > 0);
    await converged('dedup_redis_connected{node="fleet window"}', (s) => s[0]?.value === 1);
    await converged(`dedup_redis_connected{node="${DEAD_SW}"}`, (s) => s[0]?.value === 0);
  });

  it('reports the memory store: entries held, saved bytes, last save age', async function () {
    // 30 single readings and the burst's two: 32 keys.
    await converged('dedup_store_entries{node="bins"}', (s) => s[0]?.value === 32);
    await converged('dedup_saved_state_bytes{node="bins"}', (s) => (s[0]?.value ?? 0) > 0);
    // Every admitted reading was confirmed: none is left pending.
    await converged('dedup_pending_keys{node="bins"}', (s) => s[0]?.value === 0);
    await converged('dedup_last_save_age_seconds{node="bins"}', (s) => s[0] !== undefined && s[0].value >= 0 && s[0].value < 60);
  });

  it('answers every query of the Grafana dashboard with data', async function () {
    const dashboard = JSON.parse(readFileSync(join(ROOT, 'docs', 'grafana', 'dedup.json'), 'utf8')) as {
      __inputs: { name: string }[];
      panels: { title: string; datasource: { uid: string }; targets: { expr: string }[] }[];
    };
    assert.deepEqual(
      dashboard.__inputs.map((i) => i.name),
      ['DS_PROMETHEUS'],
    );
    assert.ok(dashboard.panels.length >= 7);
    // A rate needs two samples of a series after its traffic: wait for a few scrapes of every dedup series.
    for (;;) {
      const since = Math.ceil((Date.now() - trafficDone) / 1000);
      const scrapes = await prometheus.query(`count_over_time(up{job="node-red-dedup"}[${since}s])`);
      if ((scrapes[0]?.value ?? 0) >= 3) break;
      await delay(250);
    }
    const empty: string[] = [];
    for (const panel of dashboard.panels) {
      assert.equal(panel.datasource.uid, '${DS_PROMETHEUS}', panel.title);
      for (const target of panel.targets) {
        // Grafana's variables, as Grafana would fill them in for "All" over the last few minutes.
        const expr = target.expr.replaceAll('$__rate_interval', '5m').replaceAll('$__interval', '15s').replaceAll('$__range', '5m').replaceAll('$node', '.*');
        assert.doesNotMatch(expr, /\$/, `every variable of "${panel.title}" is substituted`);
        const samples = await prometheus.query(expr);
        if (samples.length === 0 || samples.every((s) => Number.isNaN(s.value))) empty.push(`${panel.title}: ${expr}`);
      }
    }
    assert.deepEqual(empty, [], 'panels whose query returned no data');
  });

  /** Polls an instant query until `ok` holds (Prometheus scrapes every second), and returns its samples. */
  async function converged(promql: string, ok: (samples: Sample[]) => boolean): Promise<Sample[]> {
    let samples: Sample[] = [];
    const deadline = Date.now() + 20_000;
    for (;;) {
      samples = await prometheus.query(promql);
      if (ok(samples)) return samples;
      if (Date.now() > deadline) {
        assert.fail(`${promql} never matched the flow's counts ${JSON.stringify(counts)}; Prometheus has ${JSON.stringify(samples)}`);
      }
      await delay(250);
    }
  }
});

function sameMap(a: Map<string, number>, b: Map<string, number>): boolean {
  if (a.size !== b.size) return false;
  for (const [key, n] of a) if (b.get(key) !== n) return false;
  return true;
}

async function until(check: () => Promise<boolean>, what: string, log?: () => string): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (!(await check().catch(() => false))) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}${log ? `\n${log()}` : ''}`);
    await delay(300);
  }
}
