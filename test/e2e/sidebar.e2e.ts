/**
 * The dedup sidebar in the real editor (Chromium): the tab lists the running
 * dedup nodes, their rates move as messages pass, the what-if draws its
 * chart over a node's recent input and over an uploaded file, and a point
 * picked on the chart lands in the node's edit dialog. Screenshots of the
 * tab go to test-results/screenshots/, or to docs/ with E2E_SCREENSHOTS=docs.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync, truncateSync, writeFileSync } from 'fs';
import { tmpdir } from 'os';
import { dirname, join } from 'path';
import { Editor, launchBrowser, screenshotFile, type Browser } from './support/editor';
import { freePort } from '../support/redis-server';
import { nodeRedMajor, ROOT, startNodeRed, type NodeRedServer } from './support/node-red';

const TAB = 'fleet-tab';

/** A function node's code: five minutes of a 20-van fleet, 10 s apart, the last round now, and a device stuck re-sending a cached fix. */
const PINGS = `
const now = Date.now();
const out = [];
for (let k = 0; k < 30; k++) {
  const t = now - (29 - k) * 10000;
  for (let a = 0; a < 20; a++) {
    const parked = a % 2 === 0;
    const wobble = parked ? Math.sin(k * 7 + a) * 0.00004 : 0;
    out.push({ payload: { assetId: 'van-' + a, ts: t + a, lat: 52.52 + a * 0.01 + wobble + (parked ? 0 : k * 0.0006), lon: 13.4 + (parked ? Math.cos(k * 5 + a) * 0.00004 : 0) } });
  }
  out.push({ payload: { assetId: 'stuck-1', ts: now - 600000, lat: 52.6, lon: 13.5 } });
}
return [out];
`;

/** Bursts of ten readings from five bins, each followed by a replay of part of it; bin-4 replays most. */
const BURSTS = `
const out = [];
for (let d = 0; d < 5; d++) {
  const readings = [];
  for (let s = 0; s < 10; s++) readings.push({ device_id: 'bin-' + d, seq: s, ts: '2026-07-16T09:00:' + String(s).padStart(2, '0') + 'Z', fill_pct: 10 + s });
  out.push({ payload: readings });
  out.push({ payload: readings.slice(0, 5 + d) });
}
return [out];
`;

const DEPOT = 'depot-tab';
/** Two unnamed sliding-window nodes, one per flow; the second on a Redis nobody listens on. */
const UNNAMED = 'a1b2c3d4e5f60001';
const DOWN = 'b7c8d9e0f1a20002';

function flows(deadPort: number): Record<string, unknown>[] {
  return [
  { id: TAB, type: 'tab', label: 'Fleet' },
  { id: DEPOT, type: 'tab', label: 'Depot' },
  { id: 'dead-redis', type: 'dedup-redis', host: '127.0.0.1', port: String(deadPort), timeoutMs: '500' },
  { id: UNNAMED, type: 'sliding-window-dedup', z: TAB, minSeconds: 60, minMetres: 25, x: 530, y: 280, wires: [[], []] },
  { id: DOWN, type: 'sliding-window-dedup', z: DEPOT, minSeconds: 60, minMetres: 25, store: 'redis', redis: 'dead-redis', x: 200, y: 80, wires: [[], []] },
  { id: 'tick-vans', type: 'inject', z: TAB, name: 'five minutes of pings', props: [{ p: 'payload' }], payload: '', payloadType: 'date', repeat: '', once: false, x: 130, y: 80, wires: [['make-pings']] },
  { id: 'make-pings', type: 'function', z: TAB, name: '20 vans', func: PINGS, outputs: 1, x: 330, y: 80, wires: [['vans']] },
  { id: 'vans', type: 'sliding-window-dedup', z: TAB, name: 'vans', minSeconds: 60, minMetres: 25, x: 530, y: 80, wires: [[], []] },
  { id: 'tick-bins', type: 'inject', z: TAB, name: 'bursts', props: [{ p: 'payload' }], payload: '', payloadType: 'date', repeat: '', once: false, x: 110, y: 180, wires: [['make-bursts']] },
  { id: 'make-bursts', type: 'function', z: TAB, name: '5 bins', func: BURSTS, outputs: 1, x: 320, y: 180, wires: [['bins']] },
  { id: 'bins', type: 'sensor-reconnect-dedup', z: TAB, name: 'bins', x: 530, y: 180, wires: [[], []] },
  ];
}
let FLOWS: Record<string, unknown>[] = [];

describe('the dedup sidebar in the Node-RED editor (Chromium)', function () {
  // Each test drives a real editor through several round trips (an upload, a
  // grid, a chart): the e2e config's budget, not the 20 s of the node tests,
  // which npm test's one mocha run would give it.
  this.timeout(60_000);
  let server: NodeRedServer;
  let browser: Browser;
  let editor: Editor;

  before(async function () {
    this.timeout(120_000);
    FLOWS = flows(await freePort());
    server = await startNodeRed({ flows: FLOWS });
    browser = await launchBrowser();
    editor = new Editor(browser.context, server);
  });

  after(async function () {
    this.timeout(30_000);
    await browser?.close();
    await server?.stop();
  });

  beforeEach(async function () {
    await editor.open();
    await editor.showDedupSidebar();
  });

  afterEach(async function () {
    await editor.afterTest(this.currentTest);
  });

  const entry = (id: string) => editor.page.locator(`.dedup-sb-node[data-node-id="${id}"]`);

  async function inject(id: string): Promise<void> {
    const response = await fetch(`${server.url}/inject/${id}`, { method: 'POST' });
    assert.equal(response.status, 200, `inject ${id}`);
  }

  async function waitForNumber(id: string, attribute: string, accept: (n: number) => boolean, what: string): Promise<number> {
    const handle = await editor.page.waitForFunction(
      ([nodeId, attr]) => {
        const doc = (globalThis as unknown as { document: { querySelector(s: string): { getAttribute(a: string): string | null } | null } }).document;
        const value = doc.querySelector(`.dedup-sb-node[data-node-id="${nodeId}"] .dedup-sb-figures`)?.getAttribute(attr);
        // An object: a rate of 0 is an answer, and waitForFunction waits for a truthy one.
        return value === null || value === undefined ? undefined : { value: Number(value) };
      },
      [id, attribute] as const,
      { timeout: 15_000 },
    );
    const { value } = (await handle.jsonValue()) as { value: number };
    if (accept(value)) return value;
    const deadline = Date.now() + 15_000;
    for (;;) {
      const now = Number(await entry(id).locator('.dedup-sb-figures').getAttribute(attribute));
      if (accept(now)) return now;
      if (Date.now() > deadline) throw new Error(`${id}: ${what}; last ${attribute} = ${now}`);
      await editor.page.waitForTimeout(200);
    }
  }

  /** Drags the sidebar's edge left, as a user giving it room for the charts would. */
  async function widenSidebar(pixels: number): Promise<void> {
    const separator = await editor.page.locator('#red-ui-sidebar-separator').boundingBox();
    if (separator === null) throw new Error('no sidebar separator');
    const x = separator.x + separator.width / 2;
    const y = separator.y + separator.height / 2;
    await editor.page.mouse.move(x, y);
    await editor.page.mouse.down();
    await editor.page.mouse.move(x - 10, y, { steps: 2 });
    await editor.page.mouse.move(x - pixels, y, { steps: 10 });
    await editor.page.mouse.up();
    await editor.settled(editor.page.locator('#red-ui-sidebar'));
  }

  /** The sidebar, from the top of `from` (or its own top) down to the end of the node list. */
  async function screenshotSidebar(name: string, from?: string): Promise<void> {
    const sidebar = editor.page.locator('#red-ui-sidebar');
    if (from !== undefined) {
      await editor.page.locator(from).evaluate((el) => {
        (el as unknown as { scrollIntoView(top: boolean): void }).scrollIntoView(true);
        // Past the list's top padding too, where the end of the line above would show, cut.
        const doc = (globalThis as unknown as { document: { querySelector(s: string): { scrollTop: number } | null } }).document;
        const list = doc.querySelector('.dedup-sb-scroll');
        if (list !== null) list.scrollTop += 6;
      });
    }
    await editor.settled(sidebar);
    const box = await sidebar.boundingBox();
    const list = await editor.page.locator('.dedup-sb-list-nodes').boundingBox();
    if (box === null || list === null) throw new Error('the sidebar is not visible');
    const bottom = Math.min(box.y + box.height, list.y + list.height + 12);
    await editor.page.screenshot({ path: screenshotFile(name), animations: 'disabled', clip: { x: box.x, y: box.y, width: box.width, height: bottom - box.y } });
  }

  it('lists every running dedup node with its type and store', async function () {
    const vans = entry('vans');
    const bins = entry('bins');
    await vans.waitFor({ state: 'visible' });
    await bins.waitFor({ state: 'visible' });
    assert.equal((await vans.locator('.dedup-sb-label').innerText()).trim(), 'vans');
    assert.equal((await vans.locator('.dedup-sb-type').innerText()).trim(), 'sliding window');
    assert.equal((await bins.locator('.dedup-sb-type').innerText()).trim(), 'sensor reconnect');
    assert.match(await vans.locator('.dedup-sb-store').innerText(), /^memory: \d+ of 100,000 assets/);
    assert.match(await bins.locator('.dedup-sb-store').innerText(), /^memory: \d+ of 100,000 keys/);
    assert.match(await editor.page.locator('.dedup-sb-count').innerText(), /: 4$/);
    // The tab follows deploys: a node deleted from the flow leaves the list.
    await server.setFlows(FLOWS.filter((n) => n.id !== 'bins' && n.id !== 'make-bursts' && n.id !== 'tick-bins'));
    await bins.waitFor({ state: 'detached', timeout: 10_000 });
    await server.setFlows(FLOWS);
    await bins.waitFor({ state: 'visible', timeout: 10_000 });
  });

  it('moves the rates after messages', async function () {
    await entry('vans').waitFor({ state: 'visible' });
    const before = await waitForNumber('vans', 'data-admitted', () => true, 'no rate shown');
    const suppressedBefore = Number(await entry('vans').locator('.dedup-sb-figures').getAttribute('data-suppressed'));
    await inject('tick-vans');
    const after = await waitForNumber('vans', 'data-admitted', (n) => n > before, 'the admitted rate never rose after 630 pings');
    const suppressed = await waitForNumber('vans', 'data-suppressed', (n) => n > suppressedBefore, 'the suppressed rate never rose');
    assert.ok(after > 0 && suppressed > 0, `admitted ${after}/s, suppressed ${suppressed}/s`);
    assert.match(await entry('vans').locator('.dedup-sb-totals').innerText(), /\d+ admitted, \d+ suppressed, 0 rejected/);
    // The sparkline draws the rates of past buckets: present as soon as the node runs.
    assert.equal(await entry('vans').locator('.dedup-sb-spark svg.dedup-chart-rates').count(), 1);
    await inject('tick-bins');
    await waitForNumber('bins', 'data-suppressed', (n) => n > 0, 'the sensor node showed no suppressed readings');
  });

  it('draws the what-if over the recent input, marks the current setting and the suggested Movement', async function () {
    await inject('tick-vans');
    const vans = entry('vans');
    await vans.waitFor({ state: 'visible' });
    await vans.locator('.dedup-sb-toggle').click();
    // The stuck device heads its list.
    const firstStuck = vans.locator('.dedup-sb-stuck tbody tr').first();
    await firstStuck.waitFor({ state: 'visible' });
    assert.equal((await firstStuck.locator('td').first().innerText()).trim(), 'stuck-1');
    await vans.locator('.dedup-sb-silent tbody tr').first().waitFor({ state: 'visible' });

    await vans.locator('.dedup-sb-run-sample').click();
    const chart = vans.locator('.dedup-sb-chart svg.dedup-chart-what-if');
    await chart.waitFor({ state: 'visible', timeout: 20_000 });
    assert.equal(await chart.locator('.dedup-chart-point').count(), 25, 'a point per Heartbeat × Movement pair');
    assert.equal(await chart.locator('.dedup-chart-line').count(), 5, 'a line per Heartbeat');
    assert.equal(await chart.locator('.dedup-chart-current').count(), 1, 'the current setting (60 s, 25 m) is marked');
    // The admitted fraction falls as Heartbeat grows (fewer parked heartbeats admitted).
    const fraction = async (s: number, m: number): Promise<number> => {
      const title = await chart.locator(`.dedup-chart-point[data-seconds="${s}"][data-metres="${m}"] title`).textContent();
      return Number(/([\d.]+)% admitted/.exec(title ?? '')?.[1]);
    };
    assert.ok((await fraction(10, 25)) > (await fraction(300, 25)), 'a longer heartbeat admits less');
    const jitter = vans.locator('.dedup-sb-jitter svg.dedup-chart-jitter');
    await jitter.waitFor({ state: 'visible' });
    assert.ok((await jitter.locator('.dedup-chart-bar').count()) > 0);
    assert.match(await vans.locator('.dedup-sb-suggested').innerText(), /Suggested Movement: \d+ m/);
    await widenSidebar(140);
    // Tall enough for the whole opened node, from its name to the jitter.
    const viewport = editor.page.viewportSize();
    await editor.page.setViewportSize({ width: viewport?.width ?? 1440, height: 1900 });
    await screenshotSidebar('sidebar-what-if', '.dedup-sb-node[data-node-id="vans"]');
    if (viewport !== null) await editor.page.setViewportSize(viewport);
  });

  it('puts a picked point into the open edit dialog, and opens the dialog when none is', async function () {
    await inject('tick-vans');
    const vans = entry('vans');
    await vans.locator('.dedup-sb-toggle').click();
    await vans.locator('.dedup-sb-run-sample').click();
    const chart = vans.locator('.dedup-sb-chart svg.dedup-chart-what-if');
    await chart.waitFor({ state: 'visible', timeout: 20_000 });

    await editor.openEditDialog('vans', '#node-input-minSeconds');
    assert.equal(await editor.page.locator('#node-input-minSeconds').inputValue(), '60');
    await chart.locator('.dedup-chart-point[data-seconds="120"][data-metres="50"]').click();
    await editor.page.waitForFunction(() => {
      const doc = (globalThis as unknown as { document: { querySelector(s: string): { value: string } | null } }).document;
      return doc.querySelector('#node-input-minSeconds')?.value === '120' && doc.querySelector('#node-input-minMetres')?.value === '50';
    });
    await editor.closeDialog();
    const node = await editor.page.evaluate(() => RED.nodes.node('vans'));
    assert.equal(String(node?.minSeconds), '120', 'Done keeps the picked Heartbeat');
    assert.equal(String(node?.minMetres), '50');
    assert.equal(await editor.page.evaluate(() => RED.nodes.dirty()), true, 'it takes effect on deploy, like any edit');

    // No dialog open: picking opens this node's.
    await chart.locator('.dedup-chart-point[data-seconds="30"][data-metres="10"]').click();
    await editor.page.locator('#node-input-minSeconds').waitFor({ state: 'visible' });
    await editor.page.waitForFunction(() => {
      const doc = (globalThis as unknown as { document: { querySelector(s: string): { value: string } | null } }).document;
      return doc.querySelector('#node-input-minSeconds')?.value === '30' && doc.querySelector('#node-input-minMetres')?.value === '10';
    });
    await editor.page.locator('#node-dialog-cancel').click();
  });

  it('runs the what-if over an uploaded file and names its bad rows by line', async function () {
    const vans = entry('vans');
    await vans.locator('.dedup-sb-toggle').click();
    const rows = ['assetId,ts,lat,lon,speed'];
    for (let k = 0; k < 40; k++) rows.push(`truck-1,${1_784_000_000 + k * 15},52.5,13.4,0`, `truck-2,${1_784_000_000 + k * 15},52.5,${(13.4 + k * 0.001).toFixed(4)},40`);
    rows.splice(5, 0, 'truck-3,yesterday,52.5,13.4,0');
    rows.splice(9, 0, 'truck-4,1784000000,95,13.4,0');
    await vans.locator('.dedup-sb-file').setInputFiles({ name: 'trucks.csv', mimeType: 'text/csv', buffer: Buffer.from(rows.join('\n')) });
    // The picker: each column as the node reads it (payload.assetId: assetId, ...); the validity too, as the
    // no-fix guard is on by default: the file has no such column, so it is left to be found by its name.
    await vans.locator('.dedup-sb-run-file').waitFor({ state: 'visible' });
    const picked = await vans.locator('.dedup-sb-column').evaluateAll((els) => els.map((el) => {
      const select = el as unknown as { value: string; getAttribute(name: string): string | null };
      return `${select.getAttribute('data-param') ?? ''}: ${select.value}`;
    }));
    assert.deepEqual(picked, ['asset: assetId', 'time: ts', 'lat: lat', 'lon: lon', 'valid: ']);
    await vans.locator('.dedup-sb-run-file').click();
    const chart = vans.locator('.dedup-sb-chart svg.dedup-chart-what-if');
    await chart.waitFor({ state: 'visible', timeout: 20_000 });
    assert.match(await vans.locator('.dedup-sb-source').innerText(), /^trucks\.csv: 80 pings of 2 assets/);
    const bad = await vans.locator('.dedup-sb-bad li').allInnerTexts();
    assert.deepEqual(
      bad.map((b) => /^line (\d+)/.exec(b)?.[1]),
      ['6', '10'],
      `bad rows by line: ${bad.join(' | ')}`,
    );
    assert.match(bad[1] as string, /lat = "95": must be between -90 and 90/);

    // An export of its own: the picker offers its columns, recognises what it can, and maps topic as the asset id.
    const exported = ['longitude,latitude,timestamp,topic,name_id'];
    for (let k = 0; k < 40; k++) {
      const local = new Date(Date.UTC(2014, 9, 1, 8, 0, k * 15)).toISOString().slice(0, 19).replace('T', ' ');
      exported.push(`13.4,52.5,${local},fleet/truck-1,${k}`, `${(13.4 + k * 0.001).toFixed(4)},52.5,${local},fleet/truck-2,${k}`);
    }
    await vans.locator('.dedup-sb-file').setInputFiles({ name: 'export.csv', mimeType: 'text/csv', buffer: Buffer.from(exported.join('\n')) });
    const asset = vans.locator('.dedup-sb-column[data-param="asset"]');
    await asset.waitFor({ state: 'visible' });
    await editor.page.waitForFunction(() => {
      const doc = (globalThis as unknown as { document: { querySelector(s: string): { textContent: string } | null } }).document;
      return doc.querySelector('.dedup-sb-node[data-node-id="vans"] .dedup-sb-columns h4')?.textContent === 'Columns of export.csv';
    });
    assert.deepEqual(await asset.locator('option').allInnerTexts(), ['recognised by name', 'longitude', 'latitude', 'timestamp', 'topic', 'name_id']);
    assert.equal(await asset.inputValue(), '', 'the node\'s assetId is not in this file: left to the names');
    await asset.selectOption('topic');
    await vans.locator('.dedup-sb-zone').fill('Europe/Berlin');
    await vans.locator('.dedup-sb-run-file').click();
    await editor.page.waitForFunction(() => {
      const doc = (globalThis as unknown as { document: { querySelector(s: string): { textContent: string } | null } }).document;
      return /^export\.csv: 80 pings of 2 assets/.test(doc.querySelector('.dedup-sb-node[data-node-id="vans"] .dedup-sb-source')?.textContent ?? '');
    }, undefined, { timeout: 20_000 });
    assert.equal(
      await vans.locator('.dedup-sb-read-as').innerText(),
      'Columns: asset id topic, time timestamp, latitude latitude, longitude longitude; 80 times without a zone read in Europe/Berlin.',
    );
    await vans.locator('.dedup-sb-chart svg.dedup-chart-what-if').waitFor({ state: 'visible' });

    // A file over the limit is refused with the reason, before a byte is sent.
    const big = join(mkdtempSync(join(tmpdir(), 'dedup-sidebar-e2e-')), 'huge.csv');
    writeFileSync(big, '');
    truncateSync(big, 50 * 1024 * 1024 + 1);
    await vans.locator('.dedup-sb-file').setInputFiles(big);
    const status = vans.locator('.dedup-sb-status.dedup-sb-error');
    await status.waitFor({ state: 'visible' });
    assert.equal(await status.innerText(), 'The file is 50.0 MB; the sidebar reads files of at most 50 MB. For larger files use the dedup-tune command.');
    // The chart of the file before is gone: it is not this request's result.
    assert.equal(await vans.locator('.dedup-sb-chart svg').count(), 0, 'the old chart is cleared after an error');
    assert.equal(await vans.locator('.dedup-sb-jitter svg').count(), 0);
    assert.equal((await vans.locator('.dedup-sb-source').innerText()).trim(), '');
    assert.equal(await vans.locator('.dedup-sb-bad li').count(), 0);
    rmSync(dirname(big), { recursive: true, force: true });
  });

  it('sensor reconnect: lists the devices that replay most and draws the Remember what-if', async function () {
    await inject('tick-bins');
    const bins = entry('bins');
    await bins.locator('.dedup-sb-toggle').click();
    const first = bins.locator('.dedup-sb-replays tbody tr').first();
    await first.waitFor({ state: 'visible' });
    assert.equal((await first.locator('td').first().innerText()).trim(), 'bin-4', 'the device that replays most comes first');
    await bins.locator('.dedup-sb-run-ttl').click();
    const chart = bins.locator('.dedup-sb-chart svg.dedup-chart-ttl');
    await chart.waitFor({ state: 'visible', timeout: 10_000 });
    assert.ok((await chart.locator('.dedup-chart-point').count()) >= 2);
    assert.equal(await chart.locator('.dedup-chart-current').count(), 1, 'the current Remember is marked');
    // At the default width every text of the chart is inside it (its title was clipped).
    const outside = await chart.evaluate((svg) => {
      // Boxes on the page, so that a rotated axis label is measured as drawn.
      type Box = { left: number; right: number };
      type Text = { textContent: string | null; getBoundingClientRect(): Box };
      const el = svg as unknown as { getBoundingClientRect(): Box; querySelectorAll(s: string): ArrayLike<Text> };
      const frame = el.getBoundingClientRect();
      return Array.from(el.querySelectorAll('text'))
        .filter((t) => t.getBoundingClientRect().left < frame.left - 0.5 || t.getBoundingClientRect().right > frame.right + 0.5)
        .map((t) => `${t.textContent ?? ''} (${(t.getBoundingClientRect().left - frame.left).toFixed(0)} to ${(t.getBoundingClientRect().right - frame.left).toFixed(0)} of ${(frame.right - frame.left).toFixed(0)})`);
    });
    assert.deepEqual(outside, [], 'texts outside the Remember chart');
    await widenSidebar(140);
    await screenshotSidebar('sidebar-sensor');
    // Both closed: the list as it first shows, with the rates of the minutes this test file ran.
    await bins.locator('.dedup-sb-toggle').click();
    await bins.locator('.dedup-sb-body').waitFor({ state: 'hidden' });
    await screenshotSidebar('sidebar-rates');
  });

  it('fills the what-if fields with the runtime\'s grid when the first push comes before the node list', async function () {
    // The node list (GET dedup-sidebar/nodes, which carries the grid) held back until the pushed entries are drawn.
    let release: () => void = () => undefined;
    const held = new Promise<void>((done) => {
      release = done;
    });
    const hold = async (route: { fallback(): Promise<void> }): Promise<void> => {
      await held;
      await route.fallback();
    };
    await editor.context.route(/\/dedup-sidebar\/nodes(\?|$)/, hold);
    try {
      await editor.open();
      await editor.showDedupSidebar();
      const vans = entry('vans');
      await vans.waitFor({ state: 'visible', timeout: 15_000 });
      await vans.locator('.dedup-sb-toggle').click();
      assert.equal(await vans.locator('.dedup-sb-seconds').inputValue(), '', 'drawn before the grid is known');
      release();
      await editor.page.waitForFunction(() => {
        const doc = (globalThis as unknown as { document: { querySelector(s: string): { value: string } | null } }).document;
        return doc.querySelector('.dedup-sb-node[data-node-id="vans"] .dedup-sb-seconds')?.value !== '';
      });
      assert.equal(await vans.locator('.dedup-sb-seconds').inputValue(), '10,30,60,120,300');
      assert.equal(await vans.locator('.dedup-sb-metres').inputValue(), '5,10,25,50,100');
    } finally {
      release();
      await editor.context.unroute(/\/dedup-sidebar\/nodes(\?|$)/, hold);
    }
  });

  it('shows its icon in the tab bar at the default sidebar width, not only in the ▾ menu', async function () {
    // While another tab shows (the editor hides the active tab's own button, its label being there).
    await editor.page.evaluate(() => (RED as unknown as { sidebar: { show(id: string): void } }).sidebar.show('info'));
    // Node-RED 5 has one bar of tab buttons under the workspace; 3.1 to 4.1 a tab bar atop the sidebar.
    const tabButton = (id: string) =>
      nodeRedMajor() >= 5
        ? editor.page.locator(`.red-ui-sidebar-tab-bar button[data-tab-id="${id}"]`)
        : editor.page.locator(`#red-ui-sidebar a.red-ui-tab-link-button[href="#${id}"]`);
    const button = tabButton('dedup');
    await editor.settled(editor.page.locator('#red-ui-sidebar'));
    assert.equal(await button.isVisible(), true, 'the dedup button is in the tab bar');
    assert.equal(await button.locator('i.fa-filter').count(), 1);
    // The editor's own tabs are still there too.
    assert.equal(await tabButton('info').isVisible(), true);
    assert.equal(await tabButton('debug').isVisible(), true);
    // Pressing it shows the tab.
    await button.click();
    await editor.page.locator('.dedup-sb').waitFor({ state: 'visible' });
  });

  it('draws the what-if legibly at the default width, its legend titled Heartbeat', async function () {
    await inject('tick-vans');
    const vans = entry('vans');
    await vans.locator('.dedup-sb-toggle').click();
    await vans.locator('.dedup-sb-run-sample').click();
    const chart = vans.locator('.dedup-sb-chart svg.dedup-chart-what-if');
    await chart.waitFor({ state: 'visible', timeout: 20_000 });
    assert.equal((await chart.locator('.dedup-chart-legend-title').textContent())?.trim(), 'Heartbeat');
    // Drawn at the width it is shown at: its 11 px text is not scaled down.
    const scale = await chart.evaluate((svg) => {
      const el = svg as unknown as { getBoundingClientRect(): { width: number }; viewBox: { baseVal: { width: number } } };
      return el.getBoundingClientRect().width / el.viewBox.baseVal.width;
    });
    assert.ok(scale > 0.95 && scale < 1.05, `the chart is shown at ${scale.toFixed(2)} of its size`);
    const smallest = await chart.locator('text').evaluateAll((texts) =>
      Math.min(...texts.map((t) => (t as unknown as { getBoundingClientRect(): { height: number } }).getBoundingClientRect().height)),
    );
    assert.ok(smallest >= 10, `its smallest text is ${smallest.toFixed(1)} px high`);
    // The whole list at the default width, from its top: tall enough for the opened node and its chart.
    const viewport = editor.page.viewportSize();
    await editor.page.setViewportSize({ width: viewport?.width ?? 1440, height: 2700 });
    await editor.page.locator('.dedup-sb-scroll').evaluate((el) => {
      (el as unknown as { scrollTop: number }).scrollTop = 0;
    });
    await screenshotSidebar('sidebar-at-a-glance');
    if (viewport !== null) await editor.page.setViewportSize(viewport);
  });

  it('tells two unnamed nodes apart by flow and short id, and shows a store that is down in red with its cause', async function () {
    const unnamed = entry(UNNAMED);
    const down = entry(DOWN);
    await unnamed.waitFor({ state: 'visible' });
    await down.waitFor({ state: 'visible' });
    // Named from the editor's flows: the list's first push may come before they are loaded.
    const where = async (id: string, expected: string): Promise<void> => {
      const line = entry(id).locator('.dedup-sb-where');
      for (let tries = 0; (await line.innerText()) !== expected && tries < 50; tries++) await editor.page.waitForTimeout(100);
      assert.equal(await line.innerText(), expected);
    };
    await where(UNNAMED, 'Fleet · #a1b2c3');
    await where(DOWN, 'Depot · #b7c8d9');
    await where('vans', 'Fleet · #vans');
    assert.equal(await unnamed.locator('.dedup-sb-label').innerText(), await down.locator('.dedup-sb-label').innerText(), 'the same label: only the line below tells them apart');
    const store = down.locator('.dedup-sb-store');
    await editor.page.waitForFunction(
      (id) => {
        const doc = (globalThis as unknown as { document: { querySelector(s: string): { textContent: string | null } | null } }).document;
        return /ECONNREFUSED/.test(doc.querySelector(`.dedup-sb-node[data-node-id="${id}"] .dedup-sb-store`)?.textContent ?? '');
      },
      DOWN,
      { timeout: 15_000 },
    );
    assert.match(await store.innerText(), /^Redis: (not connected|connecting) \(.*ECONNREFUSED/);
    assert.equal(await store.evaluate((el) => (el as unknown as { classList: { contains(c: string): boolean } }).classList.contains('dedup-sb-store-down')), true);
    const colour = (el: unknown): string => (globalThis as unknown as { getComputedStyle(e: unknown): { color: string } }).getComputedStyle(el).color;
    const [downColour, upColour] = [await store.evaluate(colour), await entry('vans').locator('.dedup-sb-store').evaluate(colour)];
    const [r, g, b] = (downColour.match(/\d+/g) ?? []).map(Number) as [number, number, number];
    assert.ok(r > 150 && g < 80 && b < 80, `a store that is down is red (${downColour}; a working one ${upColour})`);
  });

  it('shows in the sensor dialog the preset its fields follow, or none, and fills the fields from a chosen one', async function () {
    await editor.openEditDialog('bins', '#dedup-preset');
    assert.equal(await editor.page.locator('#dedup-preset').inputValue(), 'flat', 'flat fields: the flat preset, not The Things Stack');
    await editor.page.locator('#dedup-preset').selectOption('tts-device');
    await editor.page.locator('#dedup-preset-apply').click();
    assert.equal(await editor.page.locator('#node-input-deviceField').inputValue(), 'end_device_ids.dev_eui', 'Fill in puts the preset into the fields');
    await editor.page.locator('#node-dialog-cancel').click();
    // Fields of no preset: none is shown as chosen.
    await editor.page.evaluate(() => {
      const bins = (RED as unknown as { nodes: { node(id: string): { deviceField: string } } }).nodes.node('bins');
      bins.deviceField = 'meta.device';
    });
    await editor.openEditDialog('bins', '#dedup-preset');
    assert.equal(await editor.page.locator('#dedup-preset').evaluate((el) => (el as unknown as { selectedIndex: number }).selectedIndex), -1);
    await editor.page.locator('#node-dialog-cancel').click();
  });

  it('lays out every example flow so that no node, status text or comment overlaps another', async function () {
    this.timeout(90_000);
    const dir = join(ROOT, 'examples');
    // dashboard-2 needs Node-RED Dashboard 2, which this runtime does not load (test/e2e/dashboard.e2e.ts deploys it).
    const examples = readdirSync(dir).filter((f) => f.endsWith('.json') && f !== 'dashboard-2.json').sort();
    const deployed: Record<string, unknown>[] = [];
    for (const file of examples) {
      const tab = `example-${file.replace(/\.json$/, '')}`;
      deployed.push({ id: tab, type: 'tab', label: file });
      for (const node of JSON.parse(readFileSync(join(dir, file), 'utf8')) as Record<string, unknown>[]) deployed.push(node.x === undefined ? node : { ...node, z: tab });
    }
    await server.setFlows(deployed);
    try {
      await editor.open();
      const overlaps: string[] = [];
      for (const file of examples) {
        const tab = `example-${file.replace(/\.json$/, '')}`;
        await editor.page.evaluate((id) => (RED as unknown as { workspaces: { show(id: string): void } }).workspaces.show(id), tab);
        // The dedup nodes' status texts are drawn once the runtime has sent them.
        await editor.page.waitForFunction(
          (id) => {
            const red = RED as unknown as { nodes: { filterNodes(f: { z: string }): { id: string; type: string }[] } };
            const doc = (globalThis as unknown as { document: { getElementById(i: string): { querySelector(s: string): { textContent: string | null } | null } | null } }).document;
            const dedup = red.nodes.filterNodes({ z: id }).filter((n) => /dedup/.test(n.type));
            // The editor has the deployed examples (not the flows before them), drawn, with their statuses.
            return dedup.length > 0 && dedup.every((n) => (doc.getElementById(n.id)?.querySelector('.red-ui-flow-node-status-label')?.textContent ?? '') !== '');
          },
          tab,
          { timeout: 20_000 },
        );
        const checked = await editor.page.evaluate((id) => {
            interface Box { x: number; y: number; width: number; height: number }
            interface El { getBoundingClientRect(): Box; querySelector(s: string): El | null; textContent: string | null; getAttribute(a: string): string | null; style: { display: string } }
            const doc = (globalThis as unknown as { document: { getElementById(i: string): El | null } }).document;
            const red = RED as unknown as { nodes: { filterNodes(f: { z: string }): { id: string; type: string; name?: string }[] } };
            const boxes: { owner: string; what: string; box: Box }[] = [];
            for (const n of red.nodes.filterNodes({ z: id })) {
              const g = doc.getElementById(n.id);
              const body = g?.querySelector('.red-ui-flow-node');
              if (!g || !body) continue;
              const name = `${n.type} "${n.name ?? ''}"`;
              boxes.push({ owner: n.id, what: name, box: body.getBoundingClientRect() });
              const status = g.querySelector('.red-ui-flow-node-status-group');
              const text = status?.querySelector('.red-ui-flow-node-status-label')?.textContent ?? '';
              if (status && status.style.display !== 'none' && text !== '') boxes.push({ owner: n.id, what: `${name}'s status "${text}"`, box: status.getBoundingClientRect() });
            }
            const found: string[] = [];
            for (let i = 0; i < boxes.length; i++) {
              for (let j = i + 1; j < boxes.length; j++) {
                const a = boxes[i] as (typeof boxes)[number];
                const b = boxes[j] as (typeof boxes)[number];
                if (a.owner === b.owner) continue;
                const w = Math.min(a.box.x + a.box.width, b.box.x + b.box.width) - Math.max(a.box.x, b.box.x);
                const h = Math.min(a.box.y + a.box.height, b.box.y + b.box.height) - Math.max(a.box.y, b.box.y);
                if (w > 0 && h > 0) found.push(`${id}: ${a.what} overlaps ${b.what}`);
              }
            }
            return { found, drawn: boxes.filter((b) => b.box.width > 0 && b.box.height > 0).length };
          }, tab);
        assert.ok(checked.drawn >= 8, `${file}: only ${checked.drawn} nodes and statuses drawn`);
        overlaps.push(...checked.found);
      }
      assert.deepEqual(overlaps, [], 'overlapping nodes or status texts in the examples');
      assert.doesNotMatch(server.log(), /Installing module|Failed to load external modules/, 'the examples run with what is installed');
    } finally {
      await server.setFlows(FLOWS);
    }
  });
});
