/**
 * The editor in German and in Japanese (Chromium with its language set, the
 * way a user's browser tells the editor; Node-RED with `lang` set, so the
 * runtime's status texts follow): each node's edit dialog, its folds open
 * (the sliding-window node's in both modes), with a validation reason, the dedup-redis dialog, each node's help and the dedup sidebar with
 * its lists and what-ifs open show none of the pack's English catalog text.
 *
 * The English looked for: every fragment of an en-US catalog value (the text
 * between its placeholders and tags) whose translation differs, unless the
 * translations use the same words too (Redis, TTL, msg.payload, node types),
 * and the opening of each en-US help paragraph. Code elements are left out
 * of the visible text: reason codes such as `late` and property paths stay
 * English by design.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'fs';
import { join } from 'path';
import type { Locator } from 'playwright-core';
import { Editor, launchBrowser, type Browser } from './support/editor';
import { startNodeRed, type NodeRedServer } from './support/node-red';
import { LOCALES_DIR } from '../support/node-red-i18n';

type Catalog = { [key: string]: string | Catalog };

const LANGUAGES = [
  { lang: 'de', details: 'Details' },
  { lang: 'ja', details: '詳細' },
] as const;

/** Words the translations keep (names, units); a fragment made of only these is not looked for. */
const STAY = new Set('Redis TTL URL TLS ACL Lua JSON JSONata CSV JSONL README MB KB ms s m h d min max Host Port Server Cluster Sentinels Name Heartbeat Lease Dedup dedup'.split(' '));

function leaves(entries: Catalog, into: Map<string, string> = new Map(), prefix = ''): Map<string, string> {
  for (const [key, value] of Object.entries(entries)) {
    if (typeof value === 'string') into.set(prefix + key, value);
    else leaves(value, into, `${prefix}${key}.`);
  }
  return into;
}

function files(lang: string, ext: string): Map<string, string> {
  const dir = join(LOCALES_DIR, lang);
  return new Map(readdirSync(dir).filter((f) => f.endsWith(ext)).map((f) => [f, readFileSync(join(dir, f), 'utf8')]));
}

/** The English of the en-US catalogs and help that a page in `lang` must not show. */
function englishFragments(lang: string): string[] {
  // The dedup-tune command's texts share the sidebar's catalog, but the editor never shows them.
  const shown = (key: string): boolean => !key.startsWith('dedup-sidebar.cli.');
  // What the translation itself says, code and placeholders left out: `"admitted"` in a help is no reason to allow the word.
  const translated = [
    ...[...files(lang, '.json').values()].flatMap((text) => [...leaves(JSON.parse(text) as Catalog)].filter(([key]) => shown(key)).map(([, value]) => value)),
    ...files(lang, '.html').values(),
  ]
    .join('\n')
    .replace(/<code[^>]*>[\s\S]*?<\/code>|__\w+?__/g, ' ');
  const found = new Set<string>();
  for (const [file, text] of files('en-US', '.json')) {
    const english = leaves(JSON.parse(text) as Catalog);
    const own = leaves(JSON.parse(readFileSync(join(LOCALES_DIR, lang, file), 'utf8')) as Catalog);
    for (const [key, value] of english) {
      if (!shown(key) || own.get(key) === value) continue;
      for (const piece of value.split(/__\w+?__|\$\{\w+\}|<[^>]+>|\n/)) found.add(piece);
    }
  }
  for (const help of files('en-US', '.html').values()) {
    // The opening words of each paragraph and description, as plain text.
    for (const [, block = ''] of help.matchAll(/<(?:p|dd)>([\s\S]*?)<\/(?:p|dd)>/g)) {
      const opening = /^[^<]*/.exec(block.replace(/\s+/g, ' ').trim())?.[0] ?? '';
      if (opening.split(' ').length >= 4) found.add(opening.split(' ').slice(0, 6).join(' '));
    }
  }
  return [...found]
    .map((piece) => piece.replace(/^[\s:;,.·/=]+|[\s:;,.·/=]+$/g, ''))
    .filter((piece) => /\p{L}{3,}/u.test(piece))
    .filter((piece) => ![...piece.matchAll(/\p{L}[\p{L}\w.\-]*/gu)].every(([word]) => STAY.has(word) || /[._\-\d]/.test(word)))
    .filter((piece) => englishIn(translated, [piece]).length === 0)
    .sort((a, b) => b.length - a.length);
}

/** The fragments that occur in a text, as whole words. */
function englishIn(text: string, fragments: string[]): string[] {
  const escape = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return fragments.filter((f) => new RegExp(`(^|[^\\p{L}\\d])${escape(f)}($|[^\\p{L}\\d])`, 'u').test(text));
}

const TAB = 'locale-tab';

/** A function node's code: a minute of three vans, one parked. */
const PINGS = `
const now = Date.now();
const out = [];
for (let k = 0; k < 12; k++) {
  for (let a = 0; a < 3; a++) {
    const parked = a === 0;
    out.push({ payload: { assetId: 'van-' + a, ts: now - (11 - k) * 5000 + a, lat: 52.52 + (parked ? Math.sin(k) * 0.00003 : k * 0.0005), lon: 13.4 } });
  }
}
return [out];
`;

/** Two bursts of five readings, the second a replay of the first. */
const BURSTS = `
const readings = [];
for (let s = 0; s < 5; s++) readings.push({ device_id: 'bin-1', seq: s, ts: '2026-07-16T09:00:0' + s + 'Z', fill_pct: 20 + s });
return [[{ payload: readings }, { payload: readings }]];
`;

const FLOWS = [
  { id: TAB, type: 'tab', label: 'Locale' },
  { id: 'conf-redis', type: 'dedup-redis', name: '', mode: 'standalone', host: '127.0.0.1', port: '6379', timeoutMs: '2000' },
  { id: 'tick-vans', type: 'inject', z: TAB, name: '', props: [{ p: 'payload' }], payload: '', payloadType: 'date', repeat: '', once: false, x: 110, y: 80, wires: [['make-pings']] },
  { id: 'make-pings', type: 'function', z: TAB, name: '', func: PINGS, outputs: 1, x: 280, y: 80, wires: [['vans']] },
  { id: 'vans', type: 'sliding-window-dedup', z: TAB, name: '', minSeconds: 60, minMetres: 25, x: 480, y: 80, wires: [[], []] },
  { id: 'tick-bins', type: 'inject', z: TAB, name: '', props: [{ p: 'payload' }], payload: '', payloadType: 'date', repeat: '', once: false, x: 110, y: 180, wires: [['make-bursts']] },
  { id: 'make-bursts', type: 'function', z: TAB, name: '', func: BURSTS, outputs: 1, x: 280, y: 180, wires: [['bins']] },
  { id: 'bins', type: 'sensor-reconnect-dedup', z: TAB, name: '', confirm: 'on', leaseSeconds: 30, x: 480, y: 180, wires: [['settle'], []] },
  { id: 'settle', type: 'dedup-confirm', z: TAB, name: '', action: 'confirm', x: 680, y: 180, wires: [[]] },
];

/** What the page shows of some elements: their rendered text without code, field placeholders, and the charts' texts and tooltips. */
async function visibleText(elements: Locator): Promise<string> {
  return elements.evaluateAll((roots) => {
    interface El {
      innerText: string;
      textContent: string | null;
      querySelectorAll(s: string): ArrayLike<El>;
      getAttribute(a: string): string | null;
      checkVisibility(): boolean;
    }
    const parts: string[] = [];
    for (const root of roots as unknown as El[]) {
      let text = root.innerText;
      for (const code of Array.from(root.querySelectorAll('code'))) text = text.replace(code.innerText, ' ');
      parts.push(text);
      for (const field of Array.from(root.querySelectorAll('[placeholder]'))) if (field.checkVisibility()) parts.push(field.getAttribute('placeholder') ?? '');
      for (const label of Array.from(root.querySelectorAll('svg text, svg title'))) parts.push(label.textContent ?? '');
    }
    return parts.join('\n');
  });
}

for (const { lang, details } of LANGUAGES) {
  describe(`the editor in ${lang} (Chromium set to ${lang})`, function () {
    let server: NodeRedServer;
    let browser: Browser;
    let editor: Editor;
    const english = englishFragments(lang);

    before(async function () {
      this.timeout(120_000);
      server = await startNodeRed({ flows: FLOWS, settings: { lang } });
      browser = await launchBrowser({ locale: lang });
      editor = new Editor(browser.context, server);
    });

    after(async function () {
      this.timeout(30_000);
      await browser?.close();
      await server?.stop();
    });

    beforeEach(async function () {
      await editor.open();
    });

    afterEach(async function () {
      await editor.afterTest(this.currentTest);
    });

    function expectNoEnglish(text: string, where: string): void {
      assert.ok(text.trim().length > 20, `${where}: there is text to look at`);
      assert.deepEqual(englishIn(text, english), [], `${where} shows English catalog text`);
    }

    it('looks for enough English: the fragments include the dialog labels and the status words', function () {
      assert.ok(english.length > 200, `${english.length} fragments`);
      for (const piece of ['Movement (m)', 'If the store fails', 'admitted', 'Remember (s)']) assert.ok(english.includes(piece), `"${piece}" is looked for`);
    });

    it('is the language the editor and the runtime use', async function () {
      assert.equal(await editor.page.evaluate(() => (RED as unknown as { i18n: { lang(): string } }).i18n.lang()), lang);
    });

    it('shows each node’s edit dialog, a validation reason and the dedup-redis dialog without English', async function () {
      for (const id of ['vans', 'bins', 'settle']) {
        await editor.openEditDialog(id, '#node-input-name');
        // Every folded section open, so that its labels, tips and placeholders are looked at too.
        for (const fold of await editor.page.locator('.dedup-fold-heading:visible').all()) await fold.click();
        let text = await visibleText(editor.page.locator('.red-ui-tray').first());
        if (id === 'vans') {
          // Value mode's heading, fields and tip.
          await editor.page.locator('#node-input-mode').selectOption('value');
          await editor.page.locator('#node-input-deadband').waitFor({ state: 'visible' });
          text += '\n' + (await visibleText(editor.page.locator('.red-ui-tray').first()));
          await editor.page.locator('#node-input-mode').selectOption('position');
          await editor.setField('#node-input-minSeconds', '0');
          await editor.expectInvalid('#node-input-minSeconds');
          text += '\n' + (await editor.invalidReason('#node-input-minSeconds'));
          await editor.setField('#node-input-minSeconds', '60');
          // The Redis store: its rows, then the connection's own dialog.
          await editor.page.locator('#node-input-store').selectOption('redis');
          await editor.page.locator('#node-input-redis').selectOption('conf-redis');
          text += '\n' + (await visibleText(editor.page.locator('.red-ui-tray').first()));
          // The pencil beside the connection (its id differs between Node-RED releases).
          await editor.page.locator('#node-input-btn-redis-edit:visible, #node-input-lookup-redis:visible').first().click();
          await editor.page.locator('#node-config-input-host').waitFor({ state: 'visible' });
          await editor.settled(editor.page.locator('.red-ui-tray').last());
          const redis = await visibleText(editor.page.locator('.red-ui-tray').last());
          expectNoEnglish(redis, 'the dedup-redis dialog');
          await editor.page.locator('#node-config-dialog-cancel').click();
          await editor.page.locator('#node-config-input-host').waitFor({ state: 'detached' });
        }
        expectNoEnglish(text, `the ${id} dialog`);
        await editor.page.locator('#node-dialog-cancel').click();
        await editor.page.locator('.red-ui-tray').first().waitFor({ state: 'detached' });
      }
    });

    it('shows each node’s help without English, under its own headings', async function () {
      for (const type of ['sliding-window-dedup', 'sensor-reconnect-dedup', 'dedup-confirm', 'dedup-redis']) {
        await editor.page.evaluate((t) => (RED as unknown as { sidebar: { help: { show(type: string): void } } }).sidebar.help.show(t), type);
        // The help shown is this node's, in its language: it opens with the translation's first words, and has its Details.
        const first = /<p>([^<]{10,40})/.exec(readFileSync(join(LOCALES_DIR, lang, `${type}.html`), 'utf8'))?.[1] ?? '';
        const help = editor.page.locator('.red-ui-help:visible', { hasText: first.trim() }).first();
        await help.waitFor({ state: 'visible' });
        const text = await visibleText(help);
        assert.ok(text.includes(details), `the help of ${type} has its ${details}`);
        expectNoEnglish(text, `the help of ${type}`);
      }
    });

    it('shows the dedup sidebar, its lists, what-ifs and the node statuses without English', async function () {
      for (const id of ['tick-vans', 'tick-bins']) {
        const response = await fetch(`${server.url}/inject/${id}`, { method: 'POST' });
        assert.equal(response.status, 200, `inject ${id}`);
      }
      await editor.showDedupSidebar();
      const vans = editor.page.locator('.dedup-sb-node[data-node-id="vans"]');
      const bins = editor.page.locator('.dedup-sb-node[data-node-id="bins"]');
      await vans.waitFor({ state: 'visible' });
      await bins.waitFor({ state: 'visible' });
      await vans.locator('.dedup-sb-toggle').click();
      await vans.locator('.dedup-sb-run-sample').click();
      await vans.locator('.dedup-sb-chart svg.dedup-chart-what-if').waitFor({ state: 'visible', timeout: 20_000 });
      await bins.locator('.dedup-sb-toggle').click();
      await bins.locator('.dedup-sb-replays tbody tr').first().waitFor({ state: 'visible' });
      await bins.locator('.dedup-sb-run-ttl').click();
      await bins.locator('.dedup-sb-chart svg.dedup-chart-ttl').waitFor({ state: 'visible', timeout: 10_000 });
      expectNoEnglish(await visibleText(editor.page.locator('.dedup-sb')), 'the dedup sidebar');
      // The statuses the runtime words, in its language: counts after the bursts went through.
      await editor.waitForStatus('bins', (s) => /\d/.test(s.text ?? '') && (s.text ?? '').includes('5'), 'counting the readings');
      const statuses = await editor.page.evaluate(() => ['vans', 'bins', 'settle'].map((id) => RED.nodes.node(id)?.status?.text ?? ''));
      expectNoEnglish(statuses.join('\n'), 'the node statuses');
    });
  });
}
