/**
 * The shipped Prometheus alert rules (docs/prometheus/dedup-alerts.yml),
 * checked with Debian's promtool: the file is valid (`promtool check
 * rules`), its unit tests pass (`promtool test rules` on
 * dedup-alerts.test.yml), every metric, label and label value the rules
 * and their tests name is one the pack exports, and the rules fire as
 * expected on series scraped from /dedup/metrics of a real runtime (the
 * test helper's) after known traffic: nothing else, nothing less.
 */
import assert from 'node:assert/strict';
import { execFile } from 'child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'fs';
import { tmpdir } from 'os';
import { join } from 'path';
import { promisify } from 'util';
import { METRICS } from '../../src/metrics/exporter';
import { CONFIRM_OUTCOMES, SENSOR_SLOTS, WINDOW_SLOTS } from '../../src/telemetry/decision-slots';
import { FAILURE_CAUSES } from '../../src/telemetry/failure-causes';
import { freePort, HOST } from '../support/redis-server';
import { collect, coreNodes, helper, node, packNodes, until, type FlowNode } from '../support/node-red-helper';

// eslint-disable-next-line @typescript-eslint/no-require-imports -- js-yaml ships no types; only load() is used
const yaml = require('js-yaml') as { load(text: string): unknown };

const ROOT = join(__dirname, '..', '..');
const RULES = join(ROOT, 'docs', 'prometheus', 'dedup-alerts.yml');
const RULE_TESTS = join(ROOT, 'docs', 'prometheus', 'dedup-alerts.test.yml');
export const PROMTOOL = '/usr/bin/promtool';

// eslint-disable-next-line @typescript-eslint/no-require-imports -- the compiled plugin, as Node-RED loads it
const plugin = require(join(ROOT, 'nodes', 'dedup-sidebar.js')) as (red: object) => void;
const admin = (): { get(path: string): PromiseLike<{ status: number; text: string }> } =>
  (helper as unknown as { request(): { get(path: string): PromiseLike<{ status: number; text: string }> } }).request();

const run = promisify(execFile);

async function promtool(...args: string[]): Promise<{ ok: boolean; output: string }> {
  try {
    const { stdout, stderr } = await run(PROMTOOL, args, { cwd: ROOT });
    return { ok: true, output: stdout + stderr };
  } catch (error) {
    const { stdout = '', stderr = '' } = error as { stdout?: string; stderr?: string };
    return { ok: false, output: stdout + stderr };
  }
}

interface Rule {
  alert?: string;
  record?: string;
  expr: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}

function rules(): Rule[] {
  const file = yaml.load(readFileSync(RULES, 'utf8')) as { groups: { rules: Rule[] }[] };
  return file.groups.flatMap((g) => g.rules);
}

/** The labels the scrape job adds to every series. */
const SCRAPE_LABELS = ['job', 'instance'];

/** Every series name the exporter serves, with its label names. */
function exported(): Map<string, readonly string[]> {
  const names = new Map<string, readonly string[]>();
  for (const metric of METRICS) {
    const { name, labelNames, constructor } = metric as unknown as { name: string; labelNames: string[]; constructor: { name: string } };
    if (constructor.name === 'Histogram') {
      names.set(`${name}_bucket`, [...labelNames, 'le']);
      names.set(`${name}_sum`, labelNames);
      names.set(`${name}_count`, labelNames);
    } else {
      names.set(name, labelNames);
    }
  }
  return names;
}

/** The values the exporter gives each label of fixed words. */
const LABEL_VALUES: Record<string, readonly string[]> = {
  decision: ['admitted', 'suppressed'],
  reason: [...new Set([...WINDOW_SLOTS, ...SENSOR_SLOTS].map((s) => s.reason))],
  type: ['sliding-window-dedup', 'sensor-reconnect-dedup', 'dedup-confirm'],
  store: ['memory', 'redis'],
  cause: FAILURE_CAUSES,
  outcome: [...new Set<string>([...CONFIRM_OUTCOMES, 'unique', 'duplicate', 'in-flight', 'rejected', 'lease-expired'])],
};

interface ExprParts {
  metrics: string[];
  labels: string[];
  matchers: { label: string; value: string }[];
}

/** The series names, label names and matched values an expression uses (enough PromQL for rules like these). */
function partsOf(expr: string): ExprParts {
  const matchers: ExprParts['matchers'] = [];
  const labels: string[] = [];
  let rest = expr.replace(/\{([^}]*)\}/g, (_all, inner: string) => {
    for (const m of inner.matchAll(/([a-zA-Z_]\w*)\s*(?:=~|!~|!=|=)\s*"([^"]*)"/g)) {
      labels.push(m[1] as string);
      matchers.push({ label: m[1] as string, value: m[2] as string });
    }
    return ' ';
  });
  rest = rest.replace(/\b(?:by|without|on|ignoring|group_left|group_right)\s*\(([^)]*)\)/g, (_all, list: string) => {
    labels.push(...list.split(',').map((l) => l.trim()).filter((l) => l !== ''));
    return ' ';
  });
  rest = rest.replace(/\[[^\]]*\]/g, ' ').replace(/"[^"]*"/g, ' ');
  const metrics: string[] = [];
  for (const m of rest.matchAll(/(?<![\w.])([a-zA-Z_:][\w:]*)(\s*\()?/g)) {
    const word = m[1] as string;
    if (m[2] !== undefined || ['and', 'or', 'unless', 'offset', 'bool', 'group_left', 'group_right', 'Inf', 'NaN'].includes(word)) continue;
    metrics.push(word);
  }
  return { metrics, labels, matchers };
}

/** One series selector of a promtool test file, e.g. `dedup_store_entries{node="a", ...}`. */
function parseSeries(text: string): { name: string; labels: Record<string, string> } {
  const match = /^([a-zA-Z_:][\w:]*)\{(.*)\}$/.exec(text.trim());
  if (match === null) throw new Error(`not a series: ${text}`);
  const labels: Record<string, string> = {};
  for (const m of (match[2] as string).matchAll(/([a-zA-Z_]\w*)="([^"]*)"/g)) labels[m[1] as string] = m[2] as string;
  return { name: match[1] as string, labels };
}

describe('alert rules: docs/prometheus/dedup-alerts.yml', function () {
  this.timeout(60_000);

  before(function () {
    if (!existsSync(PROMTOOL)) throw new Error(`${PROMTOOL} is missing: apt-get install prometheus (Debian's package ships promtool)`);
  });

  it('pass promtool check rules', async function () {
    const { ok, output } = await promtool('check', 'rules', RULES);
    assert.ok(ok, output);
    assert.match(output, /SUCCESS: \d+ rules found/);
  });

  it('pass their unit tests (promtool test rules docs/prometheus/dedup-alerts.test.yml)', async function () {
    const { ok, output } = await promtool('test', 'rules', RULE_TESTS);
    assert.ok(ok, output);
    assert.match(output, /SUCCESS/);
  });

  it('alert on the store, a node deciding none, a jump in late / ahead / no-fix / poor-fix / jump, and a store at its cap', function () {
    const alerts = rules().filter((r) => r.alert !== undefined);
    assert.deepEqual(alerts.map((r) => r.alert).sort(), ['DedupDecidingNone', 'DedupRedisDisconnected', 'DedupStoreAtCap', 'DedupStoreFailing', 'DedupSuppressedShareJump']);
    const jump = alerts.find((r) => r.alert === 'DedupSuppressedShareJump') as Rule;
    assert.match(jump.expr, /reason=~"late\|ahead\|no-fix\|poor-fix\|jump"/);
    for (const alert of alerts) {
      assert.ok(['warning', 'critical'].includes(alert.labels?.severity ?? ''), `${alert.alert} has a severity`);
      assert.ok((alert.annotations?.summary ?? '') !== '' && (alert.annotations?.description ?? '') !== '', `${alert.alert} says what and why`);
      // Only labels in the templates: the scraped-series test below renders them.
      for (const text of Object.values(alert.annotations ?? {})) for (const t of text.matchAll(/\{\{(.*?)\}\}/g)) assert.match(t[1] as string, /^\s*\$labels\.\w+\s*$/, `${alert.alert}: ${t[0]}`);
    }
  });

  it('name only series, labels and label values the exporter emits', function () {
    const series = exported();
    const recorded = new Set(rules().flatMap((r) => (r.record === undefined ? [] : [r.record])));
    const allLabels = new Set([...SCRAPE_LABELS, ...[...series.values()].flat()]);
    const reasons = LABEL_VALUES.reason as string[];
    const checkValue = (label: string, value: string, where: string): void => {
      const known = label === 'reason' ? reasons : LABEL_VALUES[label];
      if (known === undefined) return;
      for (const alternative of value.split('|')) assert.ok(known.includes(alternative), `${where}: ${label}="${alternative}" is not a value the exporter gives (${known.join(', ')})`);
    };
    for (const rule of rules()) {
      const where = rule.alert ?? rule.record ?? '?';
      const parts = partsOf(rule.expr);
      assert.ok(parts.metrics.length > 0, `${where} reads some series`);
      for (const name of parts.metrics) assert.ok(series.has(name) || recorded.has(name), `${where}: ${name} is neither exported nor recorded in the file`);
      for (const label of parts.labels) assert.ok(allLabels.has(label), `${where}: label ${label} is not one the exporter or the scrape gives`);
      for (const { label, value } of parts.matchers) checkValue(label, value, where);
    }
    const tests = yaml.load(readFileSync(RULE_TESTS, 'utf8')) as { tests: { name: string; input_series: { series: string }[] }[] };
    for (const t of tests.tests) {
      for (const { series: text } of t.input_series) {
        const { name, labels } = parseSeries(text);
        const names = series.get(name);
        assert.ok(names !== undefined, `${t.name}: ${name} is not exported`);
        // The whole label set of the exporter and the scrape, no more, no less.
        assert.deepEqual(Object.keys(labels).sort(), [...names, ...SCRAPE_LABELS].sort(), `${t.name}: the labels of ${text}`);
        for (const [label, value] of Object.entries(labels)) checkValue(label, value, `${t.name}: ${text}`);
      }
    }
  });

  describe('on series scraped from a real runtime', function () {
    const TAB = 'ar-tab';
    const FLOW = 'alert flow';
    let scratch: string;

    before(function () {
      scratch = mkdtempSync(join(tmpdir(), 'dedup-alert-rules-'));
    });

    after(async function () {
      await helper.unload();
      rmSync(scratch, { recursive: true, force: true });
    });

    it('fires exactly the alerts the traffic calls for', async function () {
      const deadPort = await freePort();
      const flow: FlowNode[] = [
        { id: TAB, type: 'tab', label: FLOW },
        { id: 'ar-dead-conn', type: 'dedup-redis', host: HOST, port: String(deadPort), keyPrefix: 'dead:', timeoutMs: '300' },
        // Two vans, at most two assets kept: at its cap.
        { id: 'ar-fleet', type: 'sliding-window-dedup', z: TAB, name: 'fleet', maxAssets: '2', wires: [['ar-out'], ['ar-out']] },
        // Its asset id path matches nothing: every ping is rejected.
        { id: 'ar-unread', type: 'sliding-window-dedup', z: TAB, name: 'unread', assetIdProperty: 'payload.vehicle', wires: [['ar-out'], ['ar-out']] },
        { id: 'ar-dead', type: 'sliding-window-dedup', z: TAB, name: 'dead', store: 'redis', redis: 'ar-dead-conn', onStoreError: 'admit', wires: [['ar-out'], ['ar-out']] },
        { id: 'ar-bins', type: 'sensor-reconnect-dedup', z: TAB, name: 'bins', wires: [['ar-out'], ['ar-out']] },
        { id: 'ar-catch', type: 'catch', z: TAB, scope: null, uncaught: false, wires: [['ar-out']] },
        { id: 'ar-out', type: 'helper', z: TAB },
      ];
      await helper.load([plugin, ...packNodes(['dedup-redis', 'sliding-window-dedup', 'sensor-reconnect-dedup']), ...coreNodes()], flow);
      const out = collect('ar-out');
      const mine = new Set(flow.map((n) => n.id));
      const scrape = async (): Promise<Map<string, number>> => {
        const reply = await admin().get('/dedup/metrics');
        assert.equal(reply.status, 200);
        const values = new Map<string, number>();
        for (const line of reply.text.split('\n')) {
          if (line === '' || line.startsWith('#')) continue;
          const at = line.lastIndexOf(' ');
          const series = line.slice(0, at);
          const nodeId = /node_id="([^"]*)"/.exec(series)?.[1];
          // The runtime's own nodes only (a process running other specs holds theirs), and the runtime-wide histograms.
          if (nodeId === undefined ? !series.startsWith('dedup_redis_call_') : !mine.has(nodeId)) continue;
          values.set(series, Number(line.slice(at + 1)));
        }
        return values;
      };
      const send = async (messages: [string, unknown][]): Promise<void> => {
        const expected = out.length + messages.length;
        for (const [id, payload] of messages) node(id).receive({ payload });
        await until(() => out.length >= expected, `${expected} messages out`, 15_000);
      };

      const before = await scrape();
      // Six hours of ordinary traffic: the vans every 61 s (elapsed), the bins with a replay now and then.
      const base = Date.now() - 3 * 24 * 3_600_000;
      const normal: [string, unknown][] = [];
      for (let k = 0; k < 1000; k++) for (const v of ['v1', 'v2']) normal.push(['ar-fleet', { assetId: v, ts: base + k * 61_000, lat: 50, lon: 8 }]);
      for (let seq = 1; seq <= 20; seq++) {
        const reading = { device_id: 'bin-1', seq, ts: new Date(base + seq * 60_000).toISOString(), fill_pct: seq };
        normal.push(['ar-bins', reading]);
        if (seq % 4 === 0) normal.push(['ar-bins', { ...reading }]);
      }
      await send(normal);
      const ordinary = await scrape();
      // Ten minutes of trouble: old fixes replayed (late), pings to the dead Redis, unreadable pings.
      const trouble: [string, unknown][] = [];
      for (let k = 0; k < 100; k++) trouble.push(['ar-fleet', { assetId: k % 2 === 0 ? 'v1' : 'v2', ts: base + k * 1000, lat: 50, lon: 8 }]);
      for (let k = 1000; k < 1010; k++) for (const v of ['v1', 'v2']) trouble.push(['ar-fleet', { assetId: v, ts: base + k * 61_000, lat: 50, lon: 8 }]);
      for (let k = 0; k < 30; k++) trouble.push(['ar-dead', { assetId: `d${k}`, ts: base, lat: 50, lon: 8 }]);
      for (let k = 0; k < 30; k++) trouble.push(['ar-unread', { assetId: `u${k}`, ts: base, lat: 50, lon: 8 }]);
      await send(trouble);
      const after = await scrape();

      // The scrape serves every series a rule reads (or records).
      const recorded = new Set(rules().flatMap((r) => (r.record === undefined ? [] : [r.record])));
      const scrapedNames = new Set([...after.keys()].map((s) => s.slice(0, s.indexOf('{') < 0 ? undefined : s.indexOf('{'))));
      for (const rule of rules()) for (const name of partsOf(rule.expr).metrics) assert.ok(scrapedNames.has(name) || recorded.has(name), `${name} (${rule.alert ?? rule.record}) is in a real scrape`);

      // 360 minutes from `before` to `ordinary`, 10 from `ordinary` to `after`; counters rise evenly, gauges hold their value.
      const SLOW = 360;
      const FAST = 10;
      const scrapeLabels = 'job="node-red-dedup",instance="nr-test:1880",';
      const inputSeries = [...after.keys()].map((series) => {
        const a = before.get(series) ?? 0;
        const b = ordinary.get(series) ?? a;
        const c = after.get(series) as number;
        const gauge = !/_total\{|_bucket\{|_sum\{|_count\{/.test(series);
        const values: number[] = [];
        for (let m = 0; m <= SLOW; m++) values.push(gauge ? b : a + ((b - a) * m) / SLOW);
        for (let m = 1; m <= FAST; m++) values.push(gauge ? c : b + ((c - b) * m) / FAST);
        return { series: series.replace('{', `{${scrapeLabels}`), values: values.map((v) => String(Math.round(v * 1e6) / 1e6)).join(' ') };
      });

      const labelsOf = (name: string, nodeName: string, extra: Record<string, string> = {}): Record<string, string> => {
        const series = [...after.keys()].find((s) => s.startsWith(`${name}{`) && s.includes(`node="${nodeName}"`) && Object.entries(extra).every(([k, v]) => s.includes(`${k}="${v}"`)));
        assert.ok(series !== undefined, `a ${name} series of ${nodeName}`);
        return { job: 'node-red-dedup', instance: 'nr-test:1880', ...parseSeries(series).labels };
      };
      const pick = (labels: Record<string, string>, keep: string[]): Record<string, string> => Object.fromEntries(keep.map((k) => [k, labels[k] as string]));
      const NODE = ['job', 'instance', 'node', 'node_id', 'flow', 'type'];
      // The dead Redis's failures, by whichever cause its driver gave.
      const failed = [...after.entries()].find(([s, v]) => s.startsWith('dedup_store_failures_total{') && s.includes('node="dead"') && v > 0);
      assert.ok(failed !== undefined && failed[1] === 30, `30 failures of the dead store: ${JSON.stringify(failed)}`);
      const expected: Record<string, Record<string, string>[]> = {
        DedupRedisDisconnected: [labelsOf('dedup_redis_connected', 'dead')],
        DedupStoreFailing: [pick({ job: 'node-red-dedup', instance: 'nr-test:1880', ...parseSeries(failed[0]).labels }, [...NODE, 'cause'])],
        DedupDecidingNone: [pick(labelsOf('dedup_rejected_total', 'unread'), NODE)],
        DedupSuppressedShareJump: [pick(labelsOf('dedup_messages_total', 'fleet', { reason: 'late' }), [...NODE, 'decision', 'reason'])],
        DedupStoreAtCap: [labelsOf('dedup_store_entries', 'fleet')],
      };
      const fleetEntries = [...after.entries()].find(([s]) => s.startsWith('dedup_store_entries{') && s.includes('node="fleet"'));
      assert.equal(fleetEntries?.[1], 2, 'the fleet store holds its two vans, its cap');

      const byName = new Map(rules().flatMap((r) => (r.alert === undefined ? [] : [[r.alert, r] as const])));
      const render = (text: string, labels: Record<string, string>): string => text.replace(/\{\{\s*\$labels\.(\w+)\s*\}\}/g, (_all, name: string) => labels[name] ?? '');
      const testFile = {
        rule_files: [RULES],
        evaluation_interval: '1m',
        tests: [
          {
            name: 'series scraped from a real runtime',
            interval: '1m',
            input_series: inputSeries,
            alert_rule_test: Object.entries(expected).map(([alertname, alerts]) => {
              const rule = byName.get(alertname) as Rule;
              return {
                eval_time: `${SLOW + FAST}m`,
                alertname,
                exp_alerts: alerts.map((labels) => ({
                  exp_labels: { ...rule.labels, ...labels },
                  exp_annotations: Object.fromEntries(Object.entries(rule.annotations ?? {}).map(([k, v]) => [k, render(v, labels)])),
                })),
              };
            }),
          },
        ],
      };
      const file = join(scratch, 'scraped.test.yml');
      // YAML is a superset of JSON.
      writeFileSync(file, JSON.stringify(testFile, null, 1));
      const { ok, output } = await promtool('test', 'rules', file);
      assert.ok(ok, output);
    });
  });
});
