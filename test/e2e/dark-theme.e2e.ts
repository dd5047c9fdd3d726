/**
 * The dedup sidebar in Node-RED 5's dark theme (Chromium): the lists and the
 * charts take the theme's colours, so their text and lines stand out from
 * the dark background as they do from the light one. The theme is chosen as
 * a user chooses it (User Settings > Appearance > Dark, which Node-RED 5
 * keeps in the browser's localStorage as `view-dark-theme`).
 *
 * Node-RED 3.1 and 4.1 have no dark theme: on them this file is skipped
 * (scripts/e2e-matrix.js runs it on Node-RED 5). Screenshots of the dark
 * sidebar go to test-results/screenshots/, or to docs/ with E2E_SCREENSHOTS=docs
 * (`E2E_SCREENSHOTS=docs node scripts/e2e-matrix.js --only 5.0.x`).
 */
import assert from 'node:assert/strict';
import { statSync } from 'fs';
import type { Locator } from 'playwright-core';
import { contrast, hex, over, parseColour, type Rgba } from './support/contrast';
import { Editor, launchBrowser, screenshotFile, type Browser } from './support/editor';
import { nodeRedMajor, nodeRedVersion, startNodeRed, type NodeRedServer } from './support/node-red';

const TAB = 'theme-tab';

/** Five minutes of ten vans 10 s apart, half of them parked and wobbling, and a device stuck on an old fix. */
const PINGS = `
const now = Date.now();
const out = [];
for (let k = 0; k < 30; k++) {
  const t = now - (29 - k) * 10000;
  for (let a = 0; a < 10; a++) {
    const parked = a % 2 === 0;
    const wobble = parked ? Math.sin(k * 7 + a) * 0.00004 : 0;
    out.push({ payload: { assetId: 'van-' + a, ts: t + a, lat: 52.52 + a * 0.01 + wobble + (parked ? 0 : k * 0.0006), lon: 13.4 } });
  }
  out.push({ payload: { assetId: 'stuck-1', ts: now - 600000, lat: 52.6, lon: 13.5 } });
}
return [out];
`;

const FLOWS = [
  { id: TAB, type: 'tab', label: 'Theme' },
  { id: 'tick', type: 'inject', z: TAB, name: 'pings', props: [{ p: 'payload' }], payload: '', payloadType: 'date', repeat: '', once: false, x: 110, y: 80, wires: [['make']] },
  { id: 'make', type: 'function', z: TAB, name: '10 vans', func: PINGS, outputs: 1, x: 290, y: 80, wires: [['vans']] },
  { id: 'vans', type: 'sliding-window-dedup', z: TAB, name: 'vans', minSeconds: 60, minMetres: 25, x: 470, y: 80, wires: [[], []] },
];

/** Screenshots committed in docs/ must stay small. */
const MAX_SCREENSHOT_BYTES = 150 * 1024;

/** WCAG 2 minimums: 4.5 for text, 3 for the lines and marks of a chart (graphical objects). */
const TEXT_CONTRAST = 4.5;
const GRAPHIC_CONTRAST = 3;

/** A painted colour as the eye gets it: the property's colour at the element's opacity over its opaque background. */
interface Paint {
  what: string;
  colour: Rgba;
  background: Rgba;
}

/**
 * Reads `property` (color, fill, stroke, background-color) of each element
 * that `locator` matches, with the product of the opacities on the way up
 * and the first opaque background behind it.
 */
async function paints(locator: Locator, property: 'color' | 'fill' | 'stroke' | 'background-color', what: string): Promise<Paint[]> {
  const raw = await locator.evaluateAll(
    (elements, prop) => {
      interface Style { getPropertyValue(p: string): string }
      interface El { parentElement: El | null; tagName: string }
      const win = globalThis as unknown as { getComputedStyle(e: El): Style };
      return elements.map((element) => {
        const el = element as unknown as El;
        const style = win.getComputedStyle(el);
        let opacity = 1;
        if (prop === 'fill' || prop === 'stroke') opacity *= Number(style.getPropertyValue(`${prop}-opacity`) || '1');
        let background = '';
        for (let at: El | null = el; at !== null; at = at.parentElement) {
          const s = win.getComputedStyle(at);
          opacity *= Number(s.getPropertyValue('opacity') || '1');
          const bg = s.getPropertyValue('background-color');
          if (background === '' && at !== el && bg !== '' && !/rgba\([^)]*,\s*0\)$/.test(bg) && bg !== 'transparent') background = bg;
        }
        return { value: style.getPropertyValue(prop), opacity, background };
      });
    },
    property,
  );
  assert.ok(raw.length > 0, `no ${what} found`);
  return raw.map((r, i) => {
    const background = parseColour(r.background || 'rgb(255, 255, 255)');
    return { what: `${what} #${i + 1}`, colour: over(parseColour(r.value), background, r.opacity), background };
  });
}

function assertContrast(found: Paint[], minimum: number): void {
  const poor = found
    .map((p) => ({ ...p, ratio: contrast(p.colour, p.background) }))
    .filter((p) => p.ratio < minimum)
    .map((p) => `${p.what}: ${hex(p.colour)} on ${hex(p.background)} is ${p.ratio.toFixed(2)}:1`);
  assert.deepEqual(poor, [], `below ${minimum}:1`);
}

function assertSmall(file: string): void {
  const bytes = statSync(file).size;
  assert.ok(bytes < MAX_SCREENSHOT_BYTES, `${file} is ${Math.round(bytes / 1024)} kB`);
}

/** Drags the sidebar's edge left, as a user giving it room for the charts would. */
async function widen(editor: Editor, pixels: number): Promise<void> {
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

interface Look {
  dark: boolean;
  background: string;
  label: string;
  axisText: string;
  tableHeader: string;
  /** The what-if's line colours, by Heartbeat. */
  lines: string[];
}

describe('the dedup sidebar in the dark theme of Node-RED 5 (Chromium)', function () {
  let server: NodeRedServer;
  const browsers: Browser[] = [];

  before(async function () {
    if (nodeRedMajor() < 5) {
      console.log(`    (Node-RED ${nodeRedVersion()} has no dark theme: run on Node-RED 5 by scripts/e2e-matrix.js)`);
      this.skip();
    }
    this.timeout(120_000);
    server = await startNodeRed({ flows: FLOWS });
  });

  after(async function () {
    this.timeout(30_000);
    for (const browser of browsers) await browser.close();
    await server?.stop();
  });

  /** An editor in a browser whose user chose `theme`, with the dedup tab shown and vans opened on its what-if. */
  async function openSidebar(theme: 'light' | 'dark'): Promise<Editor> {
    const browser = await launchBrowser({ localStorage: { 'view-dark-theme': theme } });
    browsers.push(browser);
    const editor = new Editor(browser.context, server);
    await editor.open();
    await editor.showDedupSidebar();
    const response = await fetch(`${server.url}/inject/tick`, { method: 'POST' });
    assert.equal(response.status, 200);
    const vans = editor.page.locator('.dedup-sb-node[data-node-id="vans"]');
    await vans.locator('.dedup-sb-toggle').click();
    await vans.locator('.dedup-sb-stuck tbody tr').first().waitFor({ state: 'visible' });
    await vans.locator('.dedup-sb-run-sample').click();
    await vans.locator('.dedup-sb-chart svg.dedup-chart-what-if').waitFor({ state: 'visible', timeout: 20_000 });
    await vans.locator('.dedup-sb-jitter svg.dedup-chart-jitter').waitFor({ state: 'visible' });
    return editor;
  }

  async function look(editor: Editor): Promise<Look> {
    const page = editor.page;
    const vans = page.locator('.dedup-sb-node[data-node-id="vans"]');
    const [label] = await paints(vans.locator('.dedup-sb-label'), 'color', 'name');
    const [axis] = await paints(vans.locator('.dedup-sb-chart svg text').first(), 'fill', 'axis text');
    const [header] = await paints(vans.locator('.dedup-sb-stuck th').first(), 'background-color', 'table header');
    return {
      dark: await page.evaluate(() => (globalThis as unknown as { document: { documentElement: { classList: { contains(c: string): boolean } } } }).document.documentElement.classList.contains('nr-theme-dark')),
      background: hex((label as Paint).background),
      label: hex((label as Paint).colour),
      axisText: hex((axis as Paint).colour),
      tableHeader: hex((header as Paint).colour),
      lines: (await paints(vans.locator('.dedup-sb-chart .dedup-chart-line'), 'stroke', 'what-if line')).map((p) => hex(p.colour)),
    };
  }

  it('draws the lists and the charts in the theme colours, readable on the dark background, and saves a screenshot of each', async function () {
    this.timeout(120_000);
    const light = await look(await openSidebar('light'));
    const editor = await openSidebar('dark');
    const dark = await look(editor);
    assert.equal(light.dark, false, 'the light editor has no dark class');
    assert.equal(dark.dark, true, 'view-dark-theme = dark puts the editor in its dark theme');

    // The sidebar follows the theme: a dark background, light text, the chart's text with it.
    assert.notEqual(dark.background, light.background, `background ${dark.background} (light ${light.background})`);
    assert.notEqual(dark.label, light.label, `text ${dark.label} (light ${light.label})`);
    assert.notEqual(dark.axisText, light.axisText, `chart text ${dark.axisText} (light ${light.axisText})`);
    // The chart palette follows the theme too (a dark-background order), and still tells the five Heartbeats apart.
    assert.notDeepEqual(dark.lines, light.lines, `what-if lines ${dark.lines.join(' ')} (light ${light.lines.join(' ')})`);
    assert.equal(new Set(dark.lines).size, dark.lines.length, `five different line colours: ${dark.lines.join(' ')}`);
    // A table's sticky header is painted with the sidebar's own background, not a white bar.
    assert.equal(dark.tableHeader, dark.background, 'the table header has the background of the sidebar');

    const page = editor.page;
    const vans = page.locator('.dedup-sb-node[data-node-id="vans"]');
    // Text of the lists: names, store line, totals, table cells, help.
    assertContrast(
      [
        ...(await paints(vans.locator('.dedup-sb-label'), 'color', 'node name')),
        ...(await paints(vans.locator('.dedup-sb-type'), 'color', 'node type')),
        ...(await paints(vans.locator('.dedup-sb-store'), 'color', 'store line')),
        ...(await paints(vans.locator('.dedup-sb-totals'), 'color', 'totals')),
        ...(await paints(vans.locator('.dedup-sb-figure'), 'color', 'rate figure')),
        ...(await paints(vans.locator('.dedup-sb-stuck td'), 'color', 'stuck table cell')),
        ...(await paints(vans.locator('.dedup-sb-stuck th'), 'color', 'stuck table header')),
        ...(await paints(vans.locator('.dedup-sb-help'), 'color', 'help text')),
        ...(await paints(page.locator('.dedup-sb-count'), 'color', 'node count')),
      ],
      TEXT_CONTRAST,
    );
    // The charts: their text, their lines and bars, and the rate keys.
    assertContrast(
      [
        ...(await paints(vans.locator('.dedup-sb-chart svg text'), 'fill', 'what-if text')),
        ...(await paints(vans.locator('.dedup-sb-jitter svg text'), 'fill', 'jitter text')),
      ],
      TEXT_CONTRAST,
    );
    assertContrast(
      [
        ...(await paints(vans.locator('.dedup-sb-chart .dedup-chart-line'), 'stroke', 'what-if line')),
        ...(await paints(vans.locator('.dedup-sb-chart .dedup-chart-point'), 'fill', 'what-if point')),
        ...(await paints(vans.locator('.dedup-sb-chart .dedup-chart-current'), 'stroke', 'current-setting ring')),
        ...(await paints(vans.locator('.dedup-sb-jitter .dedup-chart-bar'), 'fill', 'jitter bar')),
        ...(await paints(vans.locator('.dedup-sb-spark .dedup-chart-rate'), 'stroke', 'rate line')),
        ...(await paints(vans.locator('.dedup-sb-key'), 'background-color', 'rate key')),
      ],
      GRAPHIC_CONTRAST,
    );
    // The ring around each point is the background (it separates overlapping points), not white.
    const rims = await paints(vans.locator('.dedup-sb-chart .dedup-chart-point'), 'stroke', 'point rim');
    assert.deepEqual([...new Set(rims.map((r) => hex(r.colour)))], [dark.background], 'point rims in the background colour');

    // The screenshots: the lists, then the what-if chart, each within the dedup section, given the
    // room a user gives it: the debug section below it hidden (its tab button pressed), the sidebar widened.
    const section = page.locator('.red-ui-sidebar-section', { has: page.locator('.dedup-sb') });
    await page.locator('.red-ui-sidebar-tab-bar button[data-tab-id="debug"]').click();
    await page.locator('.red-ui-sidebar-section', { has: page.locator('#red-ui-sidebar-debug, .red-ui-debug-content') }).waitFor({ state: 'hidden' }).catch(() => undefined);
    await widen(editor, 140);
    const viewport = page.viewportSize();
    await page.setViewportSize({ width: viewport?.width ?? 1440, height: 900 });
    await vans.locator('.dedup-sb-head').evaluate((el) => (el as unknown as { scrollIntoView(top: boolean): void }).scrollIntoView(true));
    await editor.settled(section);
    const listsFile = screenshotFile('sidebar-dark', 5);
    await section.screenshot({ path: listsFile, animations: 'disabled' });
    assertSmall(listsFile);
    await vans.locator('.dedup-sb-whatif').evaluate((el) => (el as unknown as { scrollIntoView(top: boolean): void }).scrollIntoView(true));
    await editor.settled(section);
    const chartFile = screenshotFile('sidebar-what-if-dark', 5);
    await section.screenshot({ path: chartFile, animations: 'disabled' });
    assertSmall(chartFile);
    if (viewport !== null) await page.setViewportSize(viewport);
    assert.deepEqual(editor.pageErrors, [], 'the editor page threw');
  });
});
