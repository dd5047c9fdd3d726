/**
 * The dashboard-2 example in a real Node-RED (the devDependency) with
 * Node-RED Dashboard 2 (@flowfuse/node-red-dashboard, a devDependency
 * only): deployed with its timers turned into buttons, known traffic
 * driven through the admin API's inject endpoint, then the dashboard page
 * opened in Chromium. The numbers its tables show must equal what
 * dedup/metrics serves: per node, and per node, decision and reason. The
 * picture of the page is docs/dashboard-example.png (E2E_SCREENSHOTS=docs).
 */
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, statSync } from 'fs';
import { join } from 'path';
import type { Page } from 'playwright-core';
import { Editor, launchBrowser, screenshotFile, type Browser } from './support/editor';
import { ROOT, startNodeRed, type NodeRedServer } from './support/node-red';
import { metricSamples } from '../support/metric-samples';

interface FlowNode {
  id: string;
  type: string;
  name?: string;
  [key: string]: unknown;
}

const TAB = 'dash-tab';
const example = JSON.parse(readFileSync(join(ROOT, 'examples', 'dashboard-2.json'), 'utf8')) as FlowNode[];
const idOf = (type: string, name: string): string => {
  const found = example.find((n) => n.type === type && n.name === name);
  if (found === undefined) throw new Error(`the example has no ${type} named ${name}`);
  return found.id;
};

/** The example on a tab, its injects pressed by the test instead of by their timers. */
function deployable(): FlowNode[] {
  const flow: FlowNode[] = [{ id: TAB, type: 'tab', label: 'dashboard example' }];
  for (const n of example) {
    const copy: FlowNode = { ...n };
    if (copy.type === 'inject') Object.assign(copy, { repeat: '', once: false });
    // Config nodes (the dashboard's base, page, theme, groups) live outside any tab.
    if (!['ui-base', 'ui-page', 'ui-theme', 'ui-group'].includes(copy.type)) copy.z = TAB;
    flow.push(copy);
  }
  return flow;
}

/** A dashboard table as text: its header cells and its rows, each a record by header. */
async function tableIn(page: Page, groupId: string): Promise<Record<string, string>[]> {
  const table = page.locator(`#nrdb-ui-group-${groupId} table`);
  const headers = (await table.locator('thead th').allInnerTexts()).map((h) => h.trim());
  const rows: Record<string, string>[] = [];
  for (const row of await table.locator('tbody tr').all()) {
    const cells = (await row.locator('td').allInnerTexts()).map((c) => c.trim());
    if (cells.length !== headers.length) continue; // Vuetify's "no data" row
    rows.push(Object.fromEntries(headers.map((h, i) => [h, cells[i] as string])));
  }
  return rows;
}

const delay = (ms: number): Promise<void> => new Promise((done) => setTimeout(done, ms));

async function until<T>(what: string, check: () => Promise<T | undefined>, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value !== undefined) return value;
    } catch (error) {
      last = error;
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}${last instanceof Error ? `: ${last.message}` : ''}`);
    await delay(200);
  }
}

describe('dashboard-2 example: Node-RED Dashboard 2 shows the dedup nodes\' own counts', function () {
  let server: NodeRedServer;
  let browser: Browser;
  let page: Page;
  const groupOf = (name: string): string => idOf('ui-group', name);

  before(async function () {
    server = await startNodeRed({ flows: deployable(), dashboard: true });
    browser = await launchBrowser();
    page = await browser.context.newPage();
    // A dashboard wide enough for its two columns of groups, and short enough for a small picture.
    await page.setViewportSize({ width: 1280, height: 1000 });
  });

  after(async function () {
    await browser?.close();
    await server?.stop();
  });

  afterEach(async function () {
    if (this.currentTest?.state === 'failed') {
      await page.screenshot({ path: join(ROOT, 'test-results', 'dashboard-failed.png') }).catch(() => undefined);
      console.log(`    Node-RED log tail:\n${server.log().slice(-3000)}`);
    }
  });

  const press = async (inject: string): Promise<void> => {
    const response = await fetch(`${server.url}/inject/${idOf('inject', inject)}`, { method: 'POST' });
    assert.equal(response.status, 200, `pressed ${inject}`);
  };
  const metrics = async (): Promise<string> => (await fetch(`${server.url}/dedup/metrics`)).text();
  /** Decisions and rejections the metrics count for a node, all reasons together. */
  const decided = (text: string, node: string): number =>
    [...metricSamples(text, 'dedup_messages_total'), ...metricSamples(text, 'dedup_rejected_total')].filter((s) => s.labels.node === node).reduce((a, s) => a + s.value, 0);

  it('needs Dashboard 2 only as a devDependency', function () {
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { dependencies?: Record<string, string>; devDependencies?: Record<string, string>; peerDependencies?: Record<string, string> };
    assert.equal(pkg.dependencies?.['@flowfuse/node-red-dashboard'], undefined);
    assert.equal(pkg.peerDependencies?.['@flowfuse/node-red-dashboard'], undefined);
    assert.ok(pkg.devDependencies?.['@flowfuse/node-red-dashboard'] !== undefined);
  });

  it('deploys with the Dashboard 2 nodes, and serves the dashboard page', async function () {
    const flows = await server.getJson<FlowNode[]>('/flows');
    for (const type of ['dedup-stats', 'ui-table', 'ui-chart', 'ui-base']) assert.ok(flows.some((n) => n.type === type), `${type} deployed`);
    assert.doesNotMatch(server.log(), /\[error\]/, 'nothing logged as an error');
    const response = await fetch(`${server.url}/dashboard/dedup`);
    assert.equal(response.status, 200);
  });

  it('shows per node and per reason exactly what dedup/metrics serves, after known traffic', async function () {
    this.timeout(120_000);
    await page.goto(`${server.url}/dashboard/dedup`);
    await page.locator(`#nrdb-ui-group-${groupOf('Per node')}`).waitFor({ state: 'visible' });
    // Six rounds of traffic, each followed by a report, so that the charts draw lines:
    // 4 vans every press (a stale fix every 10th), 2 bins every press (bin-B's replay every 4th).
    let vanPings = 0;
    let binReadings = 0;
    let presses = 0;
    for (let round = 0; round < 6; round++) {
      for (let k = 0; k < 5; k++) {
        await press('fleet every second');
        vanPings += presses % 10 === 9 ? 5 : 4;
        presses++;
      }
      for (let k = 0; k < 2; k++) {
        await press('bins every 3 s');
        const seq = round * 2 + k + 1;
        binReadings += seq % 4 === 0 ? 5 : 2;
      }
      await until('the nodes decided the round\'s traffic', async () => {
        const text = await metrics();
        return decided(text, 'vans') === vanPings && decided(text, 'bins') === binReadings ? true : undefined;
      });
      await press('every 5 s');
      await delay(700);
    }

    // No more traffic: the last report's numbers stay, and must be the metrics'.
    const text = await metrics();
    const messages = metricSamples(text, 'dedup_messages_total');
    const rejected = metricSamples(text, 'dedup_rejected_total');
    const expectedNodes = ['vans', 'bins'].map((node) => {
      const sum = (decision: string): number => messages.filter((s) => s.labels.node === node && s.labels.decision === decision).reduce((a, s) => a + s.value, 0);
      const admitted = sum('admitted');
      const suppressed = sum('suppressed');
      return {
        node,
        admitted: String(admitted),
        suppressed: String(suppressed),
        rejected: String(rejected.find((s) => s.labels.node === node)?.value),
        'share suppressed %': String(Number(((100 * suppressed) / (admitted + suppressed)).toFixed(1))),
      };
    });
    const expectedReasons = messages
      .filter((s) => s.value > 0 && ['vans', 'bins'].includes(s.labels.node as string))
      .map((s) => `${s.labels.node} ${s.labels.decision} ${s.labels.reason} ${s.value}`)
      .sort();
    assert.ok(expectedReasons.some((r) => r.includes('vans suppressed late')), `the traffic made late pings: ${expectedReasons.join(', ')}`);
    assert.ok(expectedReasons.some((r) => r.includes('bins suppressed duplicate')), 'and duplicate readings');

    const shownNodes = await until('the per-node table shows the metrics\' numbers', async () => {
      const rows = (await tableIn(page, groupOf('Per node'))).map((r) => ({ node: r.node, admitted: r.admitted, suppressed: r.suppressed, rejected: r.rejected, 'share suppressed %': r['share suppressed %'] }));
      return JSON.stringify(rows) === JSON.stringify(expectedNodes) ? rows : undefined;
    }).catch(async (error: Error) => {
      throw new Error(`${error.message}\nshown: ${JSON.stringify(await tableIn(page, groupOf('Per node')))}\nexpected: ${JSON.stringify(expectedNodes)}`);
    });
    assert.equal(shownNodes.length, 2);

    const shownReasons = (await tableIn(page, groupOf('By reason'))).map((r) => `${r.node} ${r.decision} ${r.reason} ${r.total}`).sort();
    assert.deepEqual(shownReasons, expectedReasons, 'the by-reason table is dedup_messages_total, series by series');

    const top = await tableIn(page, groupOf('Most suppressed'));
    assert.equal(top[0]?.node, 'vans');
    assert.equal(top[0]?.['asset or device'], 'van-echo', 'the van whose modem sends every ping twice');
    assert.ok(top.some((r) => r.node === 'bins' && r['asset or device'] === 'bin-B'), 'the bin that replays its buffer');

    // Three charts, each with a canvas drawn by the dashboard.
    for (const group of ['Admitted per minute by reason', 'Suppressed per minute by reason', 'Share suppressed, %']) {
      await page.locator(`#nrdb-ui-group-${groupOf(group)} canvas`).first().waitFor({ state: 'visible' });
    }

    const file = screenshotFile('dashboard-example');
    await page.screenshot({ path: file, fullPage: true });
    assert.ok(statSync(file).size < 150_000, `the picture is small: ${statSync(file).size} bytes`);
  });

  it('lays the example out in the editor with no node or status text over another', async function () {
    const editor = new Editor(browser.context, server);
    await editor.open();
    await editor.page.evaluate((id) => (RED as unknown as { workspaces: { show(id: string): void } }).workspaces.show(id), TAB);
    // Every pack node shows its status once it has worked (the stats node after its first report, pressed above).
    await editor.page.waitForFunction((tab) => {
      const doc = (globalThis as unknown as { document: { getElementById(i: string): { querySelector(s: string): { textContent: string | null } | null } | null } }).document;
      const pack = RED.nodes.filterNodes({ z: tab }).filter((n) => /dedup/.test(n.type));
      return pack.length === 3 && pack.every((n) => (doc.getElementById(n.id)?.querySelector('.red-ui-flow-node-status-label')?.textContent ?? '') !== '');
    }, TAB);
    const overlaps = await editor.page.evaluate((tab) => {
      interface Box { left: number; top: number; right: number; bottom: number }
      interface El { getBoundingClientRect(): Box; querySelector(s: string): El | null; textContent: string | null; style: { display: string } }
      const doc = (globalThis as unknown as { document: { getElementById(i: string): El | null } }).document;
      const boxes: { owner: string; what: string; box: Box }[] = [];
      for (const n of RED.nodes.filterNodes({ z: tab })) {
        const g = doc.getElementById(n.id);
        const body = g?.querySelector('.red-ui-flow-node');
        if (!g || !body) continue;
        boxes.push({ owner: n.id, what: `${n.type} ${typeof n.name === 'string' ? n.name : n.id}`, box: body.getBoundingClientRect() });
        const status = g.querySelector('.red-ui-flow-node-status-group');
        if (status && status.style.display !== 'none' && (status.querySelector('.red-ui-flow-node-status-label')?.textContent ?? '') !== '') boxes.push({ owner: n.id, what: `${n.type}'s status`, box: status.getBoundingClientRect() });
      }
      const found: string[] = [];
      for (const a of boxes) {
        for (const b of boxes) {
          if (a.owner >= b.owner) continue;
          if (Math.min(a.box.right, b.box.right) > Math.max(a.box.left, b.box.left) && Math.min(a.box.bottom, b.box.bottom) > Math.max(a.box.top, b.box.top)) found.push(`${a.what} overlaps ${b.what}`);
        }
      }
      return { found, drawn: boxes.length };
    }, TAB);
    // For a look, not for docs/.
    mkdirSync(join(ROOT, 'test-results', 'screenshots'), { recursive: true });
    await editor.page.screenshot({ path: join(ROOT, 'test-results', 'screenshots', 'dashboard-example-flow.png') });
    assert.ok(overlaps.drawn >= 18, `only ${overlaps.drawn} nodes and statuses drawn`);
    assert.deepEqual(overlaps.found, []);
    await editor.afterTest(this.test);
  });
});
