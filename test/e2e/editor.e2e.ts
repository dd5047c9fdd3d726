/**
 * The pack as a user meets it: the real Node-RED editor (the devDependency,
 * with the pack linked into a temporary user directory) in Debian's
 * Chromium. Palette, edit dialogs and their validation, the Redis config node
 * with a password, deploy, the saved flow read back through the admin API,
 * Import > Examples and the help sidebar.
 *
 * Screenshots of the edit dialogs and of an example flow are written to
 * test-results/screenshots/, or to docs/ (for README) with E2E_SCREENSHOTS=docs.
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'fs';
import { join } from 'path';
import type Redis from 'ioredis';
import { closeRedisClient, newRedisClient, sharedRedis, useRedis } from '../support/global-hooks';
import { Editor, launchBrowser, type Browser, type EditorNode } from './support/editor';
import { startNodeRed, type NodeRedServer } from './support/node-red';
import { catalog, configNodeTypes, examples, flowNodeTypes, helpFirstParagraph, lookup, packageJson, setOfType } from './support/pack';

const REDIS_USER = 'e2e-dedup';
const REDIS_PASSWORD = 'pw-e2e-7f3c9a1d';

interface SavedNode {
  id: string;
  type: string;
  z?: string;
  wires?: string[][];
  [property: string]: unknown;
}

/** A threshold field of a dedup node's dialog: values that must be marked red, and one that must not. */
interface Threshold {
  field: string;
  bad: string[];
  good: string;
}

interface DedupScenario {
  /** The dialog field to wait for when it opens. */
  firstField: string;
  thresholds: Threshold[];
  /** Saved properties expected after the thresholds and the Redis store are set. */
  expected: Record<string, unknown>;
  screenshot: string;
}

const SCENARIOS: Record<string, DedupScenario> = {
  'sliding-window-dedup': {
    firstField: '#node-input-minSeconds',
    thresholds: [
      { field: 'minSeconds', bad: ['0', '-5', 'soon'], good: '30' },
      { field: 'minMetres', bad: ['0', '-1'], good: '50' },
      { field: 'ttlSeconds', bad: ['0', '-60', '10'], good: '3600' },
      { field: 'maxAssets', bad: ['0', '2.5'], good: '5000' },
    ],
    expected: { minSeconds: '30', minMetres: '50', ttlSeconds: '3600', maxAssets: '5000', minHeadingDegrees: '15', eventFields: 'payload.ignition', maxAheadSeconds: 300, store: 'redis', version: 3 },
    screenshot: 'sliding-window-dedup-dialog',
  },
  'sensor-reconnect-dedup': {
    firstField: '#node-input-ttlSeconds',
    thresholds: [
      { field: 'ttlSeconds', bad: ['0', '-1', 'soon'], good: '600' },
      { field: 'maxKeys', bad: ['0', '-3', '2.5'], good: '5000' },
      { field: 'persistSeconds', bad: ['-1', 'often'], good: '5' },
    ],
    expected: {
      ttlSeconds: '600',
      maxKeys: '5000',
      persistSeconds: '5',
      deviceField: 'end_device_ids.dev_eui',
      seqField: 'uplink_message.decoded_payload.seq',
      tsField: 'uplink_message.decoded_payload.ts',
      measures: [
        { path: 'uplink_message.decoded_payload.fill_pct', name: '', min: '0', max: '100' },
        { path: 'uplink_message.decoded_payload.temp_c', name: 'temp', min: '-40', max: '' },
      ],
      confirm: 'on',
      leaseSeconds: '30',
      store: 'redis',
      version: 3,
    },
    screenshot: 'sensor-reconnect-dedup-dialog',
  },
};

describe('the pack in the Node-RED editor (Chromium)', function () {
  useRedis();
  let server: NodeRedServer;
  let browser: Browser;
  let editor: Editor;
  let admin: Redis;

  before(async function () {
    this.timeout(120_000);
    // A Redis ACL user with a password: the deployed node only connects if
    // the password typed in the editor reached the runtime as a credential.
    admin = newRedisClient();
    await admin.call('ACL', 'SETUSER', REDIS_USER, 'reset', 'on', `>${REDIS_PASSWORD}`, '~*', '&*', '+@all');
    server = await startNodeRed();
    browser = await launchBrowser();
    editor = new Editor(browser.context, server);
  });

  after(async function () {
    this.timeout(30_000);
    await browser?.close();
    await server?.stop();
    if (admin) {
      await admin.call('ACL', 'DELUSER', REDIS_USER).catch(() => undefined);
      await closeRedisClient(admin);
    }
  });

  beforeEach(async function () {
    await server.setFlows([]);
    await editor.open();
  });

  afterEach(async function () {
    await editor.afterTest(this.currentTest);
  });

  it('lists every dedup node in the palette under "dedup", with its label and icon', async function () {
    const types = flowNodeTypes();
    assert.ok(types.length >= 2, `expected both dedup nodes, found ${types.join(', ')}`);
    const header = editor.page.locator('#red-ui-palette-header-dedup');
    await header.scrollIntoViewIfNeeded();
    assert.equal((await header.innerText()).trim(), 'dedup');

    await editor.filterPalette('dedup');
    for (const type of types) {
      const entry = editor.page.locator(`#red-ui-palette-dedup .red-ui-palette-node[data-palette-type="${type}"]`);
      await entry.waitFor({ state: 'visible' });
      const expectedLabel = lookup(catalog(setOfType(type)), `${type}.paletteLabel`);
      assert.equal(await entry.getAttribute('data-palette-label'), expectedLabel, `${type}: palette label from the catalog`);
      // Node-RED wraps a palette label at spaces and hyphens, and shows a hyphen as a word of its own ("sliding - window").
      const shown = (await entry.locator('.red-ui-palette-label').innerText()).replace(/\s+/g, ' ').trim();
      assert.equal(shown, expectedLabel, `${type}: the palette shows its label as written`);
      const icon = await entry.locator('.red-ui-palette-icon-container').getAttribute('data-palette-icon');
      assert.ok(icon, `${type}: has an icon`);
      const response = await editor.page.request.get(`${server.url}/${icon}`);
      assert.equal(response.status(), 200, `${type}: icon ${icon} is served`);
      assert.match(response.headers()['content-type'] ?? '', /svg/);
    }
    for (const type of configNodeTypes()) {
      assert.equal(await editor.paletteNode(type).count(), 0, `config node ${type} is not in the palette`);
    }
    const icons = await editor.page
      .locator('#red-ui-palette-dedup .red-ui-palette-icon-container')
      .evaluateAll((els) => els.map((el) => (el as unknown as { getAttribute(n: string): string | null }).getAttribute('data-palette-icon')));
    assert.equal(new Set(icons).size, icons.length, 'each dedup node has its own icon');
  });

  for (const [type, scenario] of Object.entries(SCENARIOS)) {
    it(`${type}: drag in, set thresholds, reject bad values, add a Redis connection with a password, deploy, read back`, async function () {
      if (!flowNodeTypes().includes(type)) this.skip();
      const page = editor.page;
      await editor.filterPalette('dedup');
      const id = await editor.dragToWorkspace(type, 300, 160);
      if (type === 'sensor-reconnect-dedup') assert.equal(await editor.nodeLabel(id), 'seen-set 6 h', 'the label shows the remember window');
      await editor.openEditDialog(id, scenario.firstField);

      // The store note says what the memory store does not do.
      const note = page.locator('.form-tips.dedup-note-memory');
      await note.waitFor({ state: 'visible' });
      const noteText = await note.innerText();
      assert.match(noteText, /restart/i, 'the memory note mentions restarts');
      assert.match(noteText, /not shared|share/i, 'the memory note mentions sharing between instances');
      assert.ok((await page.locator('.red-ui-tray-body h4:visible').count()) >= 2, 'fields are grouped under headings');
      if (type === 'sliding-window-dedup') {
        // Each folded section shows its caret beside its heading's text (Node-RED's i18n pass once took it away).
        for (const section of ['rules', 'insight']) {
          const heading = page.locator(`#dedup-fold-${section}`);
          await heading.locator('i.fa-caret-right').waitFor({ state: 'visible' });
          assert.ok((await heading.innerText()).trim().length > 3, `${section}: the heading keeps its text`);
        }
      }
      // Blank Max assets / Max keys means the runtime setting: the placeholder saying which value fits its field.
      const cap = page.locator(type === 'sliding-window-dedup' ? '#node-input-maxAssets' : '#node-input-maxKeys');
      const fit = await cap.evaluate((el) => {
        const input = el as unknown as { placeholder: string; clientWidth: number };
        const style = (globalThis as unknown as { getComputedStyle(e: unknown): { font: string; paddingLeft: string; paddingRight: string } }).getComputedStyle(el);
        const canvas = (globalThis as unknown as { document: { createElement(t: string): { getContext(k: string): { font: string; measureText(s: string): { width: number } } } } }).document.createElement('canvas');
        const context = canvas.getContext('2d');
        context.font = style.font;
        return { text: context.measureText(input.placeholder).width, room: input.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight) };
      });
      assert.ok(fit.text <= fit.room, `the placeholder needs ${fit.text.toFixed(0)} px, the field has ${fit.room.toFixed(0)} px`);
      if (type === 'sensor-reconnect-dedup') {
        // The Measured tip is HTML: ts in a code element, not the markup shown as text.
        const tip = page.locator('.dedup-form .form-tips', { hasText: /hashed with the timestamp/ });
        assert.doesNotMatch(await tip.innerText(), /<code>/);
        assert.equal(await tip.locator('code').first().innerText(), 'ts');
      }
      await editor.screenshotDialog(scenario.screenshot);

      for (const threshold of scenario.thresholds) {
        const selector = `#node-input-${threshold.field}`;
        for (const bad of threshold.bad) {
          await editor.setField(selector, bad);
          await editor.expectInvalid(selector, true);
        }
        await editor.setField(selector, threshold.good);
        await editor.expectInvalid(selector, false);
      }

      if (type === 'sliding-window-dedup') {
        // A reason, from the catalog, in the tooltip of a red field.
        await editor.setField('#node-input-minSeconds', '0');
        await editor.expectInvalid('#node-input-minSeconds', true);
        assert.match(await editor.invalidReason('#node-input-minSeconds'), /greater than 0/);
        await editor.setField('#node-input-minSeconds', '30');
        // The TTL must outlive the window: raising the heartbeat above it marks the TTL red.
        await editor.setField('#node-input-minSeconds', '7200');
        await editor.expectInvalid('#node-input-ttlSeconds', true);
        assert.match(await editor.invalidReason('#node-input-ttlSeconds'), /heartbeat/i);
        await editor.setField('#node-input-minSeconds', '30');
        await editor.expectInvalid('#node-input-ttlSeconds', false);
        // Property paths are typedInputs limited to msg.
        const typed = page.locator('#node-input-assetIdProperty + .red-ui-typedInput-container');
        assert.equal((await typed.locator('.red-ui-typedInput-type-label').innerText()).trim(), 'msg.');
        const path = typed.locator('input.red-ui-typedInput-input');
        await path.fill('payload..vehicle');
        await path.dispatchEvent('change');
        await editor.expectInvalid('#node-input-assetIdProperty + .red-ui-typedInput-container', true);
        await path.fill('payload.vehicle');
        await path.dispatchEvent('change');
        await editor.expectInvalid('#node-input-assetIdProperty + .red-ui-typedInput-container', false);
      }

      if (type === 'sliding-window-dedup') {
        // Blank Max assets means the runtime setting: the placeholder says which value that is.
        assert.equal(await page.locator('#node-input-maxAssets').getAttribute('placeholder'), '100000 (runtime setting)');
        // The fleet rules are folded away until opened; each is checked.
        await page.locator('#node-input-eventFields').waitFor({ state: 'hidden' });
        await page.locator('#dedup-fold-rules').click();
        await page.locator('#node-input-eventFields').waitFor({ state: 'visible' });
        await page.locator('#dedup-fold-rules i.fa-caret-down').waitFor({ state: 'visible' });
        await editor.setField('#node-input-minHeadingDegrees', '270');
        await editor.expectInvalid('#node-input-minHeadingDegrees', true);
        assert.match(await editor.invalidReason('#node-input-minHeadingDegrees'), /at most 180 degrees/);
        await editor.setField('#node-input-minHeadingDegrees', '15');
        await editor.expectInvalid('#node-input-minHeadingDegrees', false);
        await editor.setField('#node-input-eventFields', 'payload.ignition, payload..alarm');
        await editor.expectInvalid('#node-input-eventFields', true);
        assert.match(await editor.invalidReason('#node-input-eventFields'), /payload\.\.alarm/);
        await editor.setField('#node-input-eventFields', 'payload.ignition');
        await editor.expectInvalid('#node-input-eventFields', false);
        await editor.screenshotDialog('sliding-window-dedup-rules');
      }

      if (type === 'sensor-reconnect-dedup') {
        // Reading fields are paths inside the reading, in typedInputs labelled "reading.".
        const device = page.locator('#node-input-deviceField + .red-ui-typedInput-container');
        assert.equal((await device.locator('.red-ui-typedInput-type-label').innerText()).trim(), 'reading.');
        const devicePath = device.locator('input.red-ui-typedInput-input');
        await devicePath.fill('end_device_ids..dev_eui');
        await devicePath.dispatchEvent('change');
        await editor.expectInvalid('#node-input-deviceField + .red-ui-typedInput-container', true);
        // The The Things Stack preset fills the fields and moves the measured field under the decoded payload.
        await page.locator('#dedup-preset').selectOption('tts-frame');
        assert.match(await page.locator('#dedup-preset-tip').innerText(), /^Frame counter: .* not a sensor replaying its buffer/);
        await page.locator('#dedup-preset').selectOption('tts-device');
        assert.match(await page.locator('#dedup-preset-tip').innerText(), /^Device counter: .* the replay is suppressed/);
        await page.locator('#dedup-preset-apply').click();
        await editor.expectInvalid('#node-input-deviceField + .red-ui-typedInput-container', false);
        assert.equal(await devicePath.inputValue(), 'end_device_ids.dev_eui');
        assert.equal(await page.locator('#node-input-seqField').inputValue(), 'uplink_message.decoded_payload.seq');
        assert.equal(await page.locator('#node-input-tsField').inputValue(), 'uplink_message.decoded_payload.ts');
        const rows = page.locator('#node-input-measures-list .dedup-measure-row');
        assert.equal(await rows.count(), 1);
        assert.equal(await rows.first().locator('.dedup-measure-path').inputValue(), 'uplink_message.decoded_payload.fill_pct');
        // A second measured field with its own range; a reversed range and a clashing name are named under the list.
        await page.locator('.node-input-measures-container-row .red-ui-editableList-addButton, #node-input-measures-list ~ .red-ui-editableList-addButton, .red-ui-editableList-addButton').first().click();
        const second = rows.nth(1);
        const secondPath = second.locator('.red-ui-typedInput-container input.red-ui-typedInput-input');
        await secondPath.fill('uplink_message.decoded_payload.fill_pct');
        await secondPath.dispatchEvent('change');
        const problem = page.locator('#dedup-measures-problem');
        await problem.waitFor({ state: 'visible' });
        assert.match(await problem.innerText(), /Two measured fields are called "fill_pct"/);
        await secondPath.fill('uplink_message.decoded_payload.temp_c');
        await secondPath.dispatchEvent('change');
        await second.locator('.dedup-measure-name').fill('temp');
        await second.locator('.dedup-measure-min').fill('10');
        await second.locator('.dedup-measure-max').fill('-40');
        await second.locator('.dedup-measure-max').dispatchEvent('change');
        await problem.waitFor({ state: 'visible' });
        assert.match(await problem.innerText(), /lower bound \(10\) is greater than the upper bound \(-40\)/);
        await second.locator('.dedup-measure-min').fill('-40');
        await second.locator('.dedup-measure-max').fill('');
        await second.locator('.dedup-measure-max').dispatchEvent('change');
        await problem.waitFor({ state: 'hidden' });
        // Confirm delivery shows its lease; key mode property hides the reading's fields.
        await page.locator('#node-input-leaseSeconds').waitFor({ state: 'hidden' });
        await page.locator('#node-input-confirm').selectOption('on');
        await page.locator('#node-input-leaseSeconds').waitFor({ state: 'visible' });
        await editor.setField('#node-input-leaseSeconds', '0');
        await editor.expectInvalid('#node-input-leaseSeconds', true);
        await editor.setField('#node-input-leaseSeconds', '30');
        await editor.expectInvalid('#node-input-leaseSeconds', false);
        await page.locator('#node-input-keyMode').selectOption('property');
        await page.locator('#node-input-measures-list').waitFor({ state: 'hidden' });
        await page.locator('#node-input-keyProperty + .red-ui-typedInput-container').waitFor({ state: 'visible' });
        await page.locator('#node-input-keyMode').selectOption('reading');
        await page.locator('#node-input-measures-list').waitFor({ state: 'visible' });
      }

      // Redis store without a connection: marked red, and the memory note goes.
      await page.locator('#node-input-store').selectOption('redis');
      await note.waitFor({ state: 'hidden' });
      await editor.expectInvalid('#node-input-redis', true);

      // Add a dedup-redis connection with a username and password.
      const add = page.locator('#node-input-btn-redis-add:visible, #node-input-lookup-redis:visible').first();
      await add.click();
      await page.locator('#node-config-input-host').waitFor({ state: 'visible' });
      await editor.setField('#node-config-input-name', 'e2e redis');
      await editor.setField('#node-config-input-host', '127.0.0.1');
      await editor.setField('#node-config-input-port', '0');
      await editor.expectInvalid('#node-config-input-port', true);
      await editor.setField('#node-config-input-port', '70000');
      await editor.expectInvalid('#node-config-input-port', true);
      await editor.setField('#node-config-input-port', String(sharedRedis().port));
      await editor.expectInvalid('#node-config-input-port', false);
      await editor.setField('#node-config-input-timeoutMs', '-1');
      await editor.expectInvalid('#node-config-input-timeoutMs', true);
      await editor.setField('#node-config-input-timeoutMs', '1500');
      // Sentinel mode needs sentinels; Cluster mode needs seed nodes.
      await page.locator('#node-config-input-mode').selectOption('sentinel');
      await editor.expectInvalid('#node-config-input-sentinels', true);
      await page.locator('#node-config-input-mode').selectOption('cluster');
      await editor.expectInvalid('#node-config-input-clusterNodes', true);
      await page.locator('#node-config-input-mode').selectOption('standalone');
      await editor.setField('#node-config-input-username', REDIS_USER);
      await editor.setField('#node-config-input-password', REDIS_PASSWORD);
      await editor.setField('#node-config-input-keyPrefix', `e2e-${type}:`);
      if (type === 'sliding-window-dedup') {
        await editor.screenshotDialog('dedup-redis-dialog', 'last');
      }
      await page.locator('#node-config-dialog-ok').click();
      await page.locator('#node-config-input-host').waitFor({ state: 'detached' });
      await editor.expectInvalid('#node-input-redis', false);
      const configId = await page.locator('#node-input-redis').inputValue();
      assert.ok(configId !== '' && configId !== '_ADD_', 'the new connection is selected');

      await editor.closeDialog();
      const node = (await page.evaluate((nodeId) => RED.nodes.node(nodeId), id)) as EditorNode;
      assert.equal(node.valid, true, `the node is valid: ${JSON.stringify(node.validationErrors)}`);
      if (type === 'sliding-window-dedup') assert.equal(await editor.nodeLabel(id), '30 s / 50 m', 'the label shows the thresholds');
      if (type === 'sensor-reconnect-dedup') assert.equal(await editor.nodeLabel(id), 'seen-set 10 min', 'the label shows the remember window');

      await editor.deploy();
      // Connected with the ACL user and its password: a green dot.
      await editor.waitForStatus(id, (s) => s.fill === 'green' && s.shape === 'dot', 'green (connected to Redis)');

      const flows = await server.getJson<SavedNode[]>('/flows', { 'Node-RED-API-Version': 'v1' });
      const saved = flows.find((n) => n.id === id);
      assert.ok(saved, 'the node is in the saved flow');
      for (const [key, value] of Object.entries(scenario.expected)) {
        assert.deepEqual(saved[key], value, `${type}.${key}`);
      }
      assert.equal(saved.redis, configId);
      assert.equal(saved.wires?.length, 2, 'two outputs');
      if (type === 'sliding-window-dedup') assert.equal(saved.assetIdProperty, 'payload.vehicle');
      const config = flows.find((n) => n.id === configId);
      assert.ok(config, 'the dedup-redis node is in the saved flow');
      assert.equal(config.type, 'dedup-redis');
      assert.equal(config.host, '127.0.0.1');
      assert.equal(String(config.port), String(sharedRedis().port));
      assert.equal(config.keyPrefix, `e2e-${type}:`);
      assert.equal(config.timeoutMs, '1500');
      assert.equal(config.version, 3);
      for (const secret of ['password', 'username', 'credentials', 'sentinelPassword']) {
        assert.ok(!(secret in config), `the saved config node has no ${secret}`);
      }
      const text = JSON.stringify(flows);
      assert.ok(!text.includes(REDIS_PASSWORD), 'the password is nowhere in GET /flows');

      // What the editor is told about the credentials: that there is a password, not what it is.
      const credentials = await server.getJson<Record<string, unknown>>(`/credentials/dedup-redis/${configId}`);
      assert.equal(credentials.has_password, true);
      assert.equal(credentials.username, REDIS_USER);
      assert.ok(!JSON.stringify(credentials).includes(REDIS_PASSWORD));
      const credFile = join(server.userDir, 'flows_cred.json');
      assert.ok(existsSync(credFile), 'credentials are saved beside the flow');
      assert.ok(!readFileSync(credFile, 'utf8').includes(REDIS_PASSWORD), 'and encrypted');
      assert.ok(!readFileSync(join(server.userDir, 'flows.json'), 'utf8').includes(REDIS_PASSWORD), 'flows.json has no password');
    });
  }

  it('sliding-window-dedup: Value mode shows the value fields instead of the position ones; the Fix quality and Jump guard folds open; bad values are marked red', async function () {
    const page = editor.page;
    await editor.filterPalette('dedup');
    const id = await editor.dragToWorkspace('sliding-window-dedup', 300, 160);
    await editor.openEditDialog(id, '#node-input-minSeconds');
    const typed = (field: string): string => `#node-input-${field} + .red-ui-typedInput-container`;
    const POSITION = ['#node-input-minMetres', typed('latProperty'), typed('lonProperty'), '#dedup-fold-fix', '#dedup-fold-jump'];
    const VALUE = ['#node-input-deadband', '#node-input-deadbandUnit', typed('valueProperty')];
    const shown = async (selectors: string[], visible: boolean): Promise<void> => {
      for (const selector of selectors) await page.locator(selector).waitFor({ state: visible ? 'visible' : 'hidden' });
    };
    assert.equal(await page.locator('#node-input-mode').inputValue(), 'position');
    await shown(POSITION, true);
    await shown(VALUE, false);

    // Fix quality: folded (nothing is set away from its default), with the no-fix guard on inside.
    await page.locator('#dedup-fold-fix i.fa-caret-right').waitFor({ state: 'visible' });
    await page.locator('#node-input-minSatellites').waitFor({ state: 'hidden' });
    await page.locator('#dedup-fold-fix').click();
    await page.locator('#dedup-fold-fix i.fa-caret-down').waitFor({ state: 'visible' });
    for (const field of ['noFix', 'validProperty', 'minSatellites', 'maxHdop', 'accuracyProperty']) await page.locator(`#node-input-${field}`).waitFor({ state: 'visible' });
    await shown([typed('satellitesProperty'), typed('hdopProperty')], true);
    assert.equal(await page.locator('#node-input-noFix').isChecked(), true, 'the no-fix guard is on by default');
    await editor.setField('#node-input-minSatellites', '-1');
    await editor.expectInvalid('#node-input-minSatellites', true);
    assert.match(await editor.invalidReason('#node-input-minSatellites'), /Min satellites must be 0 or a number greater than 0/);
    await editor.setField('#node-input-minSatellites', '4');
    await editor.expectInvalid('#node-input-minSatellites', false);
    await editor.setField('#node-input-maxHdop', 'poor');
    await editor.expectInvalid('#node-input-maxHdop', true);
    await editor.setField('#node-input-maxHdop', '2');
    await editor.expectInvalid('#node-input-maxHdop', false);

    // Jump guard: Max speed blank is off; Relocate after blank is ten heartbeats, and the placeholder says how long.
    await page.locator('#node-input-maxSpeedKmh').waitFor({ state: 'hidden' });
    await page.locator('#dedup-fold-jump').click();
    await page.locator('#node-input-maxSpeedKmh').waitFor({ state: 'visible' });
    assert.equal(await page.locator('#node-input-relocateAfterSeconds').getAttribute('placeholder'), '600 (Heartbeat × 10)');
    await editor.setField('#node-input-minSeconds', '30');
    assert.equal(await page.locator('#node-input-relocateAfterSeconds').getAttribute('placeholder'), '300 (Heartbeat × 10)');
    assert.equal(await page.locator('#node-input-relocateAfterPings').inputValue(), '3');
    for (const bad of ['fast', '-5']) {
      await editor.setField('#node-input-maxSpeedKmh', bad);
      await editor.expectInvalid('#node-input-maxSpeedKmh', true);
    }
    assert.match(await editor.invalidReason('#node-input-maxSpeedKmh'), /Max speed \(km\/h\) must be 0 or a number/);
    await editor.setField('#node-input-relocateAfterSeconds', '0');
    await editor.expectInvalid('#node-input-relocateAfterSeconds', true);
    await editor.setField('#node-input-relocateAfterSeconds', '');
    await editor.expectInvalid('#node-input-relocateAfterSeconds', false);
    await editor.setField('#node-input-relocateAfterPings', '2.5');
    await editor.expectInvalid('#node-input-relocateAfterPings', true);
    await editor.setField('#node-input-relocateAfterPings', '3');
    await editor.expectInvalid('#node-input-relocateAfterPings', false);
    await editor.screenshotDialog('sliding-window-dedup-guards');

    // Value mode: the position fields, the fix's quality and the jump guard hide; a field only position mode
    // reads is not judged (the runtime does not read it), and is again once position mode is back.
    await page.locator('#node-input-mode').selectOption('value');
    await shown(POSITION, false);
    await shown(VALUE, true);
    await page.locator('#node-input-minSeconds').waitFor({ state: 'visible' });
    await page.locator('.red-ui-tray-body h4', { hasText: 'Admit a reading when' }).waitFor({ state: 'visible' });
    await page.locator('#dedup-fold-rules').click();
    await page.locator('#node-input-eventFields').waitFor({ state: 'visible' });
    await shown(['#node-input-minHeadingDegrees', typed('headingProperty')], false);
    await editor.expectInvalid('#node-input-maxSpeedKmh', false);
    await page.locator('#node-input-mode').selectOption('position');
    await editor.expectInvalid('#node-input-maxSpeedKmh', true);
    await editor.setField('#node-input-maxSpeedKmh', '150');
    await editor.expectInvalid('#node-input-maxSpeedKmh', false);
    await page.locator('#node-input-mode').selectOption('value');

    for (const bad of ['-1', 'lots']) {
      await editor.setField('#node-input-deadband', bad);
      await editor.expectInvalid('#node-input-deadband', true);
    }
    assert.match(await editor.invalidReason('#node-input-deadband'), /Deadband must be 0 or a number greater than 0/);
    await editor.setField('#node-input-deadband', '5');
    await editor.expectInvalid('#node-input-deadband', false);
    await page.locator('#node-input-deadbandUnit').selectOption('percent');
    const value = page.locator(`${typed('valueProperty')} input.red-ui-typedInput-input`);
    await value.fill('uplink_message..fill_pct');
    await value.dispatchEvent('change');
    await editor.expectInvalid(typed('valueProperty'), true);
    await value.fill('uplink_message.decoded_payload.fill_pct');
    await value.dispatchEvent('change');
    await editor.expectInvalid(typed('valueProperty'), false);
    await editor.screenshotDialog('sliding-window-dedup-value-mode');

    await editor.closeDialog();
    const node = (await page.evaluate((nodeId) => RED.nodes.node(nodeId), id)) as EditorNode;
    assert.equal(node.valid, true, `the node is valid: ${JSON.stringify(node.validationErrors)}`);
    assert.equal(await editor.nodeLabel(id), '30 s / ±5 %', 'the label shows the heartbeat and the deadband');
    await editor.deploy();
    const status = await editor.waitForStatus(id, (s) => typeof s.text === 'string' && s.text !== '', 'shown');
    assert.notEqual(status?.fill, 'red', `the runtime takes the options: ${JSON.stringify(status)}`);
    const flows = await server.getJson<SavedNode[]>('/flows', { 'Node-RED-API-Version': 'v1' });
    const saved = flows.find((n) => n.id === id);
    const expected = {
      mode: 'value', minSeconds: '30', deadband: '5', deadbandUnit: 'percent', valueProperty: 'uplink_message.decoded_payload.fill_pct',
      noFix: true, minSatellites: '4', maxHdop: '2', maxSpeedKmh: '150', relocateAfterSeconds: '', version: 3,
    };
    for (const [key, want] of Object.entries(expected)) assert.deepEqual(saved?.[key], want, `sliding-window-dedup.${key}`);
    // A new node keeps its default as the runtime exports it (a number); a field typed over is saved as text.
    assert.equal(String(saved?.relocateAfterPings), '3');
  });

  it('dedup-confirm: drag in, choose release, see it in the label, deploy', async function () {
    const page = editor.page;
    await editor.filterPalette('dedup');
    const id = await editor.dragToWorkspace('dedup-confirm', 300, 160);
    assert.equal(await editor.nodeLabel(id), 'confirm delivery');
    await editor.openEditDialog(id, '#node-input-action');
    await page.locator('#node-input-action').selectOption('release');
    await editor.screenshotDialog('dedup-confirm-dialog');
    await editor.closeDialog();
    assert.equal(await editor.nodeLabel(id), 'release keys');
    await editor.deploy();
    const flows = await server.getJson<SavedNode[]>('/flows', { 'Node-RED-API-Version': 'v1' });
    const saved = flows.find((n) => n.id === id);
    assert.equal(saved?.action, 'release');
    assert.equal(saved?.version, 3);
  });

  it('marks a node left with a bad value, or with the Redis store and no connection, invalid before deploy', async function () {
    const page = editor.page;
    await editor.filterPalette('dedup');
    const badThreshold = await editor.dragToWorkspace('sliding-window-dedup', 260, 120);
    await editor.openEditDialog(badThreshold, '#node-input-minSeconds');
    await editor.setField('#node-input-minSeconds', '-10');
    await editor.closeDialog();

    const noConnection = await editor.dragToWorkspace('sliding-window-dedup', 260, 260);
    await editor.openEditDialog(noConnection, '#node-input-minSeconds');
    await page.locator('#node-input-store').selectOption('redis');
    await editor.expectInvalid('#node-input-redis', true);
    await editor.closeDialog();

    const sensorNoConnection = await editor.dragToWorkspace('sensor-reconnect-dedup', 260, 400);
    await editor.openEditDialog(sensorNoConnection, '#node-input-ttlSeconds');
    await page.locator('#node-input-store').selectOption('redis');
    await editor.expectInvalid('#node-input-redis', true);
    await editor.closeDialog();

    for (const id of [badThreshold, noConnection, sensorNoConnection]) {
      const node = (await page.evaluate((nodeId) => RED.nodes.node(nodeId), id)) as EditorNode;
      assert.equal(node.valid, false, `${id} (${node.type}) is invalid: ${JSON.stringify({ store: node.store, redis: node.redis, minSeconds: node.minSeconds })}`);
      await editor.nodeShape(id).locator('.red-ui-flow-node-error').waitFor({ state: 'visible' });
    }
    const reasons = await page.evaluate<string[], string>((nodeId) => RED.nodes.node(nodeId)?.validationErrors ?? [], noConnection);
    assert.ok(
      reasons.some((r) => /dedup-redis connection/.test(r)),
      `the reason comes from the catalog: ${JSON.stringify(reasons)}`,
    );

    // Deploy asks first, naming the nodes that are not properly configured.
    await page.locator('#red-ui-header-button-deploy').click();
    const dialog = page.locator('.red-ui-notification', { hasText: /not properly configured/i });
    await dialog.waitFor({ state: 'visible' });
    const listed = await dialog.locator('li').allInnerTexts();
    assert.ok(listed.some((l) => l.includes('-10 s / 25 m')), `the bad threshold is listed: ${listed.join(' | ')}`);
    assert.ok(listed.some((l) => l.includes('60 s / 25 m')), `the node without a connection is listed: ${listed.join(' | ')}`);
    assert.ok(listed.some((l) => l.includes('sensor-reconnect-dedup')), `the sensor node without a connection is listed: ${listed.join(' | ')}`);
    await dialog.locator('button', { hasText: /^\s*cancel\s*$/i }).click();
    await dialog.waitFor({ state: 'hidden' });
    assert.equal(await page.evaluate(() => RED.nodes.dirty()), true, 'nothing was deployed');
  });

  // mqtt-scale-out needs a broker and Redis to deploy green: test/examples/mqtt-scale-out.spec.ts and test/system run it.
  // dashboard-2 needs Node-RED Dashboard 2, which this editor does not load: test/e2e/dashboard.e2e.ts runs it.
  for (const example of examples().filter((e) => e.name !== 'mqtt-scale-out' && e.name !== 'dashboard-2')) {
    it(`Import > Examples lists "${example.name}" and it deploys cleanly`, async function () {
      const page = editor.page;
      const pack = packageJson().name;
      await page.locator('#red-ui-header-button-sidemenu').click();
      await page.locator('#menu-item-import').click();
      await page.locator('#red-ui-tab-red-ui-clipboard-dialog-import-tab-examples a').click();
      const tree = page.locator('#red-ui-clipboard-dialog-import-tab-examples');
      await tree.locator('.red-ui-treeList-label', { hasText: pack }).click();
      for (const listed of examples()) {
        await tree.locator('.red-ui-treeList-label-text', { hasText: new RegExp(`^${listed.name}$`) }).waitFor({ state: 'visible' });
      }
      await tree.locator('.red-ui-treeList-label-text', { hasText: new RegExp(`^${example.name}$`) }).click();
      await page.locator('#red-ui-clipboard-dialog-import-opt-new').click();
      await page.locator('#red-ui-clipboard-dialog-ok:enabled').click();
      await page.locator('#red-ui-clipboard-dialog').waitFor({ state: 'hidden' });
      // Imported nodes follow the pointer until a click places them.
      const canvas = await page.locator('#red-ui-workspace-chart').boundingBox();
      if (canvas === null) throw new Error('the workspace is not visible');
      await page.mouse.move(canvas.x + 120, canvas.y + 80, { steps: 5 });
      await page.mouse.click(canvas.x + 120, canvas.y + 80);

      const dedupTypes = flowNodeTypes();
      const imported = example.flow.filter((n) => dedupTypes.includes(n.type));
      assert.ok(imported.length > 0, `${example.name} uses a dedup node`);
      const inEditor = (await page.evaluate(() => {
        const active = RED.workspaces.active();
        return RED.nodes.filterNodes({ z: active }).map((n) => ({ id: n.id, type: n.type, valid: n.valid }));
      })) as Array<{ id: string; type: string; valid?: boolean }>;
      const editorDedup = inEditor.filter((n) => dedupTypes.includes(n.type));
      assert.equal(editorDedup.length, imported.length, 'every dedup node of the example was imported');
      for (const n of inEditor) assert.notEqual(n.valid, false, `${n.type} ${n.id} is valid after import`);

      await editor.deploy();
      for (const n of editorDedup) {
        const status = await editor.waitForStatus(n.id, (s) => typeof s.text === 'string' && s.text !== '', 'shown');
        assert.notEqual(status?.fill, 'red', `${n.type} runs without error: ${JSON.stringify(status)}`);
      }
      const flows = await server.getJson<SavedNode[]>('/flows', { 'Node-RED-API-Version': 'v1' });
      for (const n of editorDedup) assert.ok(flows.some((f) => f.id === n.id), `${n.type} was deployed`);
      assert.doesNotMatch(server.log(), new RegExp(`\\[error\\] \\[(${dedupTypes.join('|')}|dedup-redis)`), 'no node errors in the log');

      if (example.name === 'sliding-window-fleet') {
        // Let the simulated fleet run a little, then picture it.
        await editor.showSidebarTab('debug');
        await editor.waitForStatus(editorDedup[0]?.id ?? '', (s) => /[1-9]\d* suppressed/.test(s.text ?? ''), 'counting suppressed pings');
        await page.locator('.red-ui-debug-msg').nth(5).waitFor({ state: 'visible' });
        // Deselect, and let the "imported" and "deployed" notifications go.
        await page.mouse.click(canvas.x + canvas.width - 40, canvas.y + canvas.height - 40);
        const notifications = page.locator('.red-ui-notification:visible');
        while ((await notifications.count()) > 0) await notifications.first().waitFor({ state: 'detached', timeout: 15_000 });
        await editor.screenshotTop('example-flow', 560);
      }
    });
  }

  it('shows each node’s help in the help sidebar, and its first paragraph as the palette tooltip', async function () {
    const page = editor.page;
    const pack = packageJson().name;
    await editor.showSidebarTab('help');
    const helpTab = page.locator('.red-ui-sidebar-help-stack, #red-ui-sidebar-content').first();
    await helpTab.locator('.red-ui-treeList-label', { hasText: pack }).first().click();
    for (const type of [...flowNodeTypes(), ...configNodeTypes()]) {
      const label = type === 'dedup-redis' ? 'dedup-redis' : lookup(catalog(setOfType(type)), `${type}.paletteLabel`);
      assert.ok(label, `${type} has a label`);
      await helpTab.locator('.red-ui-treeList-label', { hasText: new RegExp(`^\\s*${label}\\s*$`) }).first().click();
      const body = page.locator('.red-ui-help').filter({ hasText: helpFirstParagraph(type) }).first();
      await body.waitFor({ state: 'visible' });
      const headings = (await body.locator('h3').allInnerTexts()).map((h) => h.trim());
      // Nothing in the help sticks out of the sidebar at its default width (long paths in code elements did).
      const overflow = await body.evaluate((el) => {
        type Box = { right: number };
        const e = el as unknown as { getBoundingClientRect(): Box; querySelectorAll(s: string): ArrayLike<{ getBoundingClientRect(): Box; textContent: string | null }> };
        const right = e.getBoundingClientRect().right;
        return Array.from(e.querySelectorAll('*')).filter((c) => c.getBoundingClientRect().right > right + 1).map((c) => c.textContent?.slice(0, 60));
      });
      assert.deepEqual(overflow, [], `${type}: help elements wider than the sidebar`);
      if (type === 'dedup-redis') {
        assert.ok(headings.includes('Details'), `${type}: Details in ${headings.join(', ')}`);
      } else {
        for (const h of ['Inputs', 'Outputs', 'Details', 'References']) {
          assert.ok(headings.includes(h), `${type}: ${h} in ${headings.join(', ')}`);
        }
        // One entry per output in an ol.node-ports when there are several; a single output is described directly.
        const outputs = await page.evaluate<number, string>((t) => RED.nodes.getType(t)?.outputs ?? 0, type);
        assert.equal(await body.locator('ol.node-ports > li').count(), outputs > 1 ? outputs : 0, `${type}: one help entry per output`);
      }
    }

    await editor.showSidebarTab('info');
    await editor.filterPalette('dedup');
    for (const type of flowNodeTypes()) {
      await editor.paletteNode(type).hover();
      const tip = page.locator('.red-ui-popover:visible', { hasText: helpFirstParagraph(type) });
      await tip.waitFor({ state: 'visible' });
      await page.mouse.move(5, 400);
      await tip.waitFor({ state: 'hidden' });
    }
  });
});
