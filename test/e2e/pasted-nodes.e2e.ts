/**
 * Nodes pasted into the editor (Import > Clipboard) with none of their
 * options, as a flow written by hand or by a script holds them: `{id, type,
 * x, y, wires}` and nothing else (issue 27). Each opens with every default
 * shown, throws nothing in the page, and is saved with the config version on
 * Done, so that what is deployed means what the dialog showed.
 */
import assert from 'node:assert/strict';
import { useRedis } from '../support/global-hooks';
import { Editor, launchBrowser, type Browser, type EditorNode } from './support/editor';
import { startNodeRed, type NodeRedServer } from './support/node-red';

interface SavedNode {
  id: string;
  type: string;
  [property: string]: unknown;
}

/** A typedInput's value as the dialog shows it (the visible input beside the hidden one). */
const TYPED = (field: string): string => `#node-input-${field} + .red-ui-typedInput-container input.red-ui-typedInput-input`;

interface PastedCase {
  type: string;
  /** The dialog field to wait for when it opens. */
  firstField: string;
  /** Fields of the dialog (CSS selectors) and the value each must show. */
  shown: Record<string, string>;
  /** Checkboxes of the dialog (CSS selectors) and whether each must be ticked. */
  ticked?: Record<string, boolean>;
  /** Saved properties expected after Done and a deploy. */
  saved: Record<string, unknown>;
  /** The node's label on the canvas, from the defaults. */
  label: string;
}

const CASES: PastedCase[] = [
  {
    type: 'sliding-window-dedup',
    firstField: '#node-input-minSeconds',
    shown: {
      '#node-input-minSeconds': '60',
      '#node-input-minMetres': '25',
      '#node-input-ttlSeconds': '21600',
      '#node-input-persistSeconds': '10',
      '#node-input-maxAheadSeconds': '300',
      '#node-input-store': 'memory',
      '#node-input-onStoreError': 'admit',
      '#node-input-sampleSize': '10000',
      [TYPED('assetIdProperty')]: 'payload.assetId',
      [TYPED('timeProperty')]: 'payload.ts',
      [TYPED('latProperty')]: 'payload.lat',
      [TYPED('lonProperty')]: 'payload.lon',
      // Issue 29's options: value mode's (hidden in position mode), the fix's quality, the jump guard.
      '#node-input-mode': 'position',
      [TYPED('valueProperty')]: 'payload.value',
      '#node-input-deadband': '0',
      '#node-input-deadbandUnit': 'units',
      '#node-input-validProperty': '',
      '#node-input-minSatellites': '',
      [TYPED('satellitesProperty')]: 'payload.satellites',
      '#node-input-maxHdop': '',
      [TYPED('hdopProperty')]: 'payload.hdop',
      '#node-input-accuracyProperty': '',
      '#node-input-maxSpeedKmh': '',
      '#node-input-relocateAfterSeconds': '',
      '#node-input-relocateAfterPings': '3',
    },
    ticked: { '#node-input-noFix': true },
    saved: {
      minSeconds: '60', minMetres: '25', maxAheadSeconds: '300', assetIdProperty: 'payload.assetId', store: 'memory', version: 3,
      mode: 'position', noFix: true, deadband: '0', deadbandUnit: 'units', valueProperty: 'payload.value', minSatellites: '', maxSpeedKmh: '', relocateAfterPings: '3',
    },
    label: '60 s / 25 m',
  },
  {
    type: 'sensor-reconnect-dedup',
    firstField: '#node-input-ttlSeconds',
    shown: {
      '#node-input-ttlSeconds': '21600',
      '#node-input-keyMode': 'reading',
      '#node-input-confirm': 'off',
      '#node-input-outputMode': 'burst',
      '#node-input-store': 'memory',
      '#node-input-onStoreError': 'admit',
      '#dedup-preset': 'flat',
      [TYPED('deviceField')]: 'device_id',
      '#node-input-deviceFieldType': 'reading',
      [TYPED('seqField')]: 'seq',
      [TYPED('tsField')]: 'ts',
      '#node-input-measures-list .dedup-measure-row .dedup-measure-path': 'fill_pct',
      '#node-input-measures-list .dedup-measure-row .dedup-measure-min': '0',
      '#node-input-measures-list .dedup-measure-row .dedup-measure-max': '100',
    },
    saved: {
      ttlSeconds: '21600', keyMode: 'reading', deviceField: 'device_id', seqField: 'seq', tsField: 'ts',
      measures: [{ path: 'fill_pct', name: '', min: '0', max: '100' }], confirm: 'off', store: 'memory', version: 3,
    },
    label: 'seen-set 6 h',
  },
  {
    type: 'dedup-confirm',
    firstField: '#node-input-action',
    shown: { '#node-input-action': 'confirm' },
    saved: { action: 'confirm', version: 3 },
    label: 'confirm delivery',
  },
];

describe('nodes pasted without any option open with the defaults (Chromium)', function () {
  useRedis();
  let server: NodeRedServer;
  let browser: Browser;
  let editor: Editor;

  before(async function () {
    this.timeout(120_000);
    server = await startNodeRed();
    browser = await launchBrowser();
    editor = new Editor(browser.context, server);
  });

  after(async function () {
    this.timeout(30_000);
    await browser?.close();
    await server?.stop();
  });

  beforeEach(async function () {
    await server.setFlows([]);
    await editor.open();
  });

  afterEach(async function () {
    // Fails the test if the page threw (the issue saw "reading 'label'" on Node-RED 3.1).
    await editor.afterTest(this.currentTest);
  });

  /** Pastes the nodes through Import > Clipboard and places them on the canvas. */
  async function paste(nodes: unknown[]): Promise<void> {
    const page = editor.page;
    await page.locator('#red-ui-header-button-sidemenu').click();
    await page.locator('#menu-item-import').click();
    const text = page.locator('#red-ui-clipboard-dialog-import-text');
    await text.fill(JSON.stringify(nodes));
    // The dialog checks the text on keyup, as a user's paste or typing ends.
    await text.press('End');
    await page.locator('#red-ui-clipboard-dialog-ok:enabled').click();
    await page.locator('#red-ui-clipboard-dialog').waitFor({ state: 'hidden' });
    const canvas = await page.locator('#red-ui-workspace-chart').boundingBox();
    if (canvas === null) throw new Error('the workspace is not visible');
    // Imported nodes follow the pointer until a click places them.
    await page.mouse.move(canvas.x + 200, canvas.y + 120, { steps: 5 });
    await page.mouse.click(canvas.x + 200, canvas.y + 120);
  }

  for (const c of CASES) {
    it(`${c.type}: a bare pasted node shows every default, and is saved with the config version on Done`, async function () {
      const page = editor.page;
      const id = `bare-${c.type}`;
      await paste([{ id, type: c.type, x: 200, y: 120, wires: [] }]);
      const before = (await page.evaluate((nodeId) => RED.nodes.node(nodeId), id)) as EditorNode | undefined;
      assert.ok(before, 'the pasted node is in the editor');
      assert.equal(before.version, undefined, 'pasted without a version');
      assert.equal(await editor.nodeLabel(id), c.label, 'labelled from the defaults');

      await editor.openEditDialog(id, c.firstField);
      // The folded sections hold some of the fields: open them to read every one.
      for (const fold of await page.locator('.dedup-fold-heading').all()) await fold.click();
      for (const [selector, value] of Object.entries(c.shown)) {
        assert.equal(await page.locator(selector).first().inputValue(), value, `${c.type}: ${selector}`);
      }
      for (const [selector, ticked] of Object.entries(c.ticked ?? {})) {
        assert.equal(await page.locator(selector).isChecked(), ticked, `${c.type}: ${selector} ticked`);
      }
      await editor.closeDialog();
      const after = (await page.evaluate((nodeId) => RED.nodes.node(nodeId), id)) as EditorNode;
      assert.equal(after.version, 3, 'Done saves the config version');
      assert.equal(after.valid, true, `valid: ${JSON.stringify(after.validationErrors)}`);

      await editor.deploy();
      const flows = await server.getJson<SavedNode[]>('/flows', { 'Node-RED-API-Version': 'v1' });
      const saved = flows.find((n) => n.id === id);
      assert.ok(saved, 'the node was deployed');
      for (const [key, value] of Object.entries(c.saved)) assert.deepEqual(saved[key], value, `${c.type}.${key}`);
    });
  }

  it('dedup-redis: a bare pasted config node opens with its defaults and is saved with the config version', async function () {
    const page = editor.page;
    await paste([{ id: 'bare-redis', type: 'dedup-redis' }]);
    const pasted = await page.evaluate(() => RED.nodes.node('bare-redis'));
    assert.equal(pasted?.version, undefined);
    await page.evaluate(() => {
      (globalThis as unknown as { RED: { editor: { editConfig(name: string, type: string, id: string): void } } }).RED.editor.editConfig('', 'dedup-redis', 'bare-redis');
    });
    await page.locator('#node-config-input-host').waitFor({ state: 'visible' });
    const shown = { mode: 'standalone', host: '127.0.0.1', port: '6379', db: '0', masterName: 'mymaster', keyPrefix: 'dedup:', timeoutMs: '2000' };
    for (const [field, value] of Object.entries(shown)) {
      assert.equal(await page.locator(`#node-config-input-${field}`).inputValue(), value, `dedup-redis: ${field}`);
    }
    await page.locator('#node-config-dialog-ok').click();
    await page.locator('#node-config-input-host').waitFor({ state: 'detached' });
    const saved = (await page.evaluate(() => RED.nodes.node('bare-redis'))) as EditorNode;
    assert.deepEqual([saved?.version, saved?.host, saved?.keyPrefix], [3, '127.0.0.1', 'dedup:']);
  });

  it('sensor-reconnect-dedup: the device id can be a msg property (msg.topic), one choice of its field', async function () {
    const page = editor.page;
    await paste([{ id: 'by-topic', type: 'sensor-reconnect-dedup', x: 200, y: 120, wires: [[], []] }]);
    await editor.openEditDialog('by-topic', '#node-input-ttlSeconds');
    const device = page.locator('#node-input-deviceField + .red-ui-typedInput-container');
    assert.equal((await device.locator('.red-ui-typedInput-type-label').innerText()).trim(), 'reading.');
    await device.locator('.red-ui-typedInput-type-select').click();
    await page.locator('.red-ui-typedInput-options:visible [value="msg"]').click();
    assert.equal((await device.locator('.red-ui-typedInput-type-label').innerText()).trim(), 'msg.');
    const path = device.locator('input.red-ui-typedInput-input');
    await path.fill('topic');
    await path.dispatchEvent('change');
    await editor.expectInvalid('#node-input-deviceField + .red-ui-typedInput-container', false);
    await editor.closeDialog();
    await editor.deploy();
    const flows = await server.getJson<SavedNode[]>('/flows', { 'Node-RED-API-Version': 'v1' });
    const saved = flows.find((n) => n.id === 'by-topic');
    assert.deepEqual([saved?.deviceField, saved?.deviceFieldType, saved?.version], ['topic', 'msg', 3]);
  });

  it('a pasted node of an older version keeps what it says: no default replaces an option it left out', async function () {
    const page = editor.page;
    // Version 1 had no clock guard: the runtime reads it as off, so the dialog must not show 300 s.
    await paste([{ id: 'old', type: 'sliding-window-dedup', x: 200, y: 120, wires: [], version: 1, minSeconds: '30', minMetres: '10' }]);
    await editor.openEditDialog('old', '#node-input-minSeconds');
    await page.locator('#dedup-fold-rules').click();
    assert.equal(await page.locator('#node-input-maxAheadSeconds').inputValue(), '');
    assert.equal(await page.locator('#node-input-minSeconds').inputValue(), '30');
    await editor.closeDialog();
    const node = (await page.evaluate(() => RED.nodes.node('old'))) as EditorNode;
    assert.equal(node.version, 1, 'an explicit version is kept: the runtime migrates it');
  });

  it('a pasted node of version 2 shows what its migration gives issue 29\'s options: the no-fix guard on, the other guards off', async function () {
    const page = editor.page;
    // Version 2 had no fix guards: its migration turns the no-fix guard on and leaves every other new option off.
    await paste([{ id: 'v2', type: 'sliding-window-dedup', x: 200, y: 120, wires: [], version: 2, minSeconds: '30', minMetres: '10', maxAheadSeconds: '300' }]);
    await editor.openEditDialog('v2', '#node-input-minSeconds');
    assert.equal(await page.locator('#node-input-mode').inputValue(), 'position');
    // The guard on is the default: the Fix quality fold stays folded until opened, and shows it ticked.
    await page.locator('#node-input-noFix').waitFor({ state: 'hidden' });
    await page.locator('#dedup-fold-fix').click();
    await page.locator('#node-input-noFix').waitFor({ state: 'visible' });
    assert.equal(await page.locator('#node-input-noFix').isChecked(), true);
    assert.equal(await page.locator('#node-input-minSatellites').inputValue(), '');
    assert.equal(await page.locator('#node-input-relocateAfterPings').inputValue(), '3');
    await editor.closeDialog();
    const node = (await page.evaluate(() => RED.nodes.node('v2'))) as EditorNode;
    assert.deepEqual([node.version, node.noFix, node.mode, node.maxSpeedKmh], [2, true, 'position', ''], 'Done keeps what the migration would have given');
  });
});
