/**
 * Debian's Chromium driven by playwright-core, and the few editor gestures
 * the tests repeat: drag from the palette, open a node's dialog, set a field,
 * deploy, import an example. Everything waits for a visible condition of the
 * editor rather than for a fixed time.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'fs';
import { tmpdir } from 'os';
import { join } from 'path';
import { chromium, type BrowserContext, type Locator, type Page } from 'playwright-core';
import { isOtherInstall, nodeRedMajor, ROOT, type NodeRedServer } from './node-red';

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

const CHROMIUM_FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/**
 * Where screenshots go: docs/ (the ones README shows) with E2E_SCREENSHOTS=docs,
 * else test-results/screenshots/, so an ordinary run leaves the committed
 * pictures alone (each run differs: ports, times, debug messages).
 *
 * The pictures in docs/ are of the devDependency's Node-RED, unless
 * `docsFromMajor` names the Node-RED major a picture belongs to (the dark
 * theme's, 5): a run on another line (scripts/e2e-matrix.js) leaves the
 * others in test-results/.
 */
export function screenshotFile(name: string, docsFromMajor?: number): string {
  const wanted = docsFromMajor === undefined ? !isOtherInstall() : nodeRedMajor() === docsFromMajor;
  const dir = process.env.E2E_SCREENSHOTS === 'docs' && wanted ? join(ROOT, 'docs') : join(ROOT, 'test-results', 'screenshots');
  mkdirSync(dir, { recursive: true });
  return join(dir, `${name}.png`);
}

/** What the tests read of the editor's RED global (in the page). */
export interface EditorNode {
  id: string;
  type: string;
  z?: string;
  valid?: boolean;
  validationErrors?: string[];
  status?: { fill?: string; shape?: string; text?: string };
  [property: string]: unknown;
}

export interface RedGlobal {
  nodes: {
    filterNodes(filter: { type?: string; z?: string }): EditorNode[];
    node(id: string): EditorNode | null;
    dirty(): boolean;
    eachConfig(callback: (node: EditorNode) => void): void;
    getType(type: string): { outputs?: number } | undefined;
  };
  workspaces: { active(): string };
}

declare global {
  // The editor's global, for the functions the tests run in the page
  // (page.evaluate / waitForFunction); it does not exist in Node.
  // (A global is declared with var: let/const do not add to globalThis.)
  var RED: RedGlobal;
}

export interface Browser {
  context: BrowserContext;
  close(): Promise<void>;
}

export interface LaunchOptions {
  /** The browser's language (navigator.language and Accept-Language), which the editor takes as its own: 'de', 'ja'. */
  locale?: string;
  /**
   * localStorage entries every page starts with, as a user's browser that
   * chose them keeps them (e.g. Node-RED 5's `view-dark-theme: dark`, the
   * Appearance choice of its User Settings).
   */
  localStorage?: Record<string, string>;
}

export async function launchBrowser(options: LaunchOptions = {}): Promise<Browser> {
  if (!existsSync(CHROMIUM)) {
    throw new Error(`no Chromium at ${CHROMIUM}: install Debian's package (apt-get install -y chromium) or set CHROMIUM_PATH`);
  }
  const profile = mkdtempSync(join(tmpdir(), 'node-red-dedup-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: CHROMIUM_FLAGS,
    // Tall enough for a whole edit dialog in the screenshots.
    viewport: { width: 1440, height: 1500 },
    ...(options.locale !== undefined ? { locale: options.locale } : {}),
  });
  // Each page starts like a first visit: the editor keeps the palette filter
  // and other state of the last visit in localStorage (only what was asked
  // for is put back).
  await context.addInitScript((entries: Record<string, string>) => {
    const storage = (globalThis as unknown as { localStorage: { clear(): void; setItem(key: string, value: string): void } }).localStorage;
    storage.clear();
    for (const [key, value] of Object.entries(entries)) storage.setItem(key, value);
  }, options.localStorage ?? {});
  // The editor is all the browser may talk to.
  await context.route('**/*', (route) => {
    const host = new URL(route.request().url()).hostname;
    if (host === '127.0.0.1' || host === 'localhost' || host === '[::1]') return route.continue();
    return route.abort('blockedbyclient');
  });
  return {
    context,
    async close() {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

export class Editor {
  /** Uncaught errors in the current page: a test fails if any appear. */
  readonly pageErrors: string[] = [];
  private current: Page | undefined;

  constructor(
    readonly context: BrowserContext,
    readonly server: NodeRedServer,
  ) {}

  get page(): Page {
    if (this.current === undefined) throw new Error('the editor is not open: call open() first');
    return this.current;
  }

  /**
   * The end of every editor test: a failed one leaves a screenshot in
   * test-results/ and prints the tail of Node-RED's log; a passed one must
   * not have made the page throw.
   */
  async afterTest(test: { state?: string; title: string } | undefined): Promise<void> {
    if (test?.state === 'failed') {
      const dir = join(ROOT, 'test-results');
      mkdirSync(dir, { recursive: true });
      const name = (test.title || 'failed').replace(/[^\w-]+/g, '_').slice(0, 80);
      await this.page.screenshot({ path: join(dir, `${name}.png`) }).catch(() => undefined);
      console.log(`    screenshot: test-results/${name}.png\n    Node-RED log tail:\n${this.server.log().slice(-3000)}`);
      return;
    }
    assert.deepEqual(this.pageErrors, [], 'the editor page threw');
  }

  /** Loads the editor in a fresh tab (no state kept from the last one) and waits for the palette. */
  async open(): Promise<void> {
    const previous = this.current;
    this.current = await this.context.newPage();
    this.pageErrors.length = 0;
    // With its stack: where in the editor's or the pack's code it threw.
    this.current.on('pageerror', (error) => this.pageErrors.push(error.stack ?? error.message));
    // Leaving an undeployed editor asks "leave this page?": just leave.
    if (previous) await previous.close({ runBeforeUnload: false });
    await this.page.goto(this.server.url);
    await this.paletteNode('inject').waitFor({ state: 'visible' });
    await this.page.waitForFunction(() => {
      const editor = (globalThis as unknown as { RED?: { nodes?: { dirty?: () => boolean } } }).RED;
      return editor?.nodes?.dirty !== undefined;
    });
  }

  /**
   * Shows a sidebar tab (info, help, debug, dedup). Node-RED 3.1 to 4.1 have
   * a tab bar atop the sidebar (#red-ui-tab-<id>-link-button), Node-RED 5 a
   * bar of buttons under the workspace whose button hides a tab already
   * shown: the editor's own call shows it in either.
   */
  async showSidebarTab(id: string): Promise<void> {
    await this.page.evaluate((tab) => (RED as unknown as { sidebar: { show(id: string): void } }).sidebar.show(tab), id);
    await this.settled(this.page.locator('#red-ui-sidebar'));
  }

  /**
   * Shows the pack's sidebar tab and waits until its content is visible.
   * The tab is added by the sidebar plugin, which the editor loads after
   * its own start: a show() that comes first finds no tab and does nothing
   * (on a loaded machine it often does), so the show is asked again until
   * the tab exists and its content is drawn.
   */
  async showDedupSidebar(): Promise<void> {
    await this.page.waitForFunction(
      () => {
        // No DOM types in the tests' compilation: the page's document as far as this uses it.
        const doc = (globalThis as unknown as { document: { querySelector(s: string): { offsetParent: unknown } | null } }).document;
        const content = doc.querySelector('.dedup-sb');
        if (content !== null && content.offsetParent !== null) return true;
        (RED as unknown as { sidebar: { show(id: string): void } }).sidebar.show('dedup');
        return false;
      },
      undefined,
      { polling: 250, timeout: 45_000 },
    );
  }

  paletteNode(type: string): Locator {
    return this.page.locator(`#red-ui-palette-container .red-ui-palette-node[data-palette-type="${type}"]`);
  }

  /** Narrows the palette with its filter box, as a user looking for the pack would. */
  async filterPalette(text: string): Promise<void> {
    const box = this.page.locator('#red-ui-palette-search input');
    await box.fill('');
    await box.pressSequentially(text);
    await this.paletteNode('inject').waitFor({ state: 'hidden' });
  }

  /** Drags a palette node onto the workspace at (x, y) of the canvas; returns the new node's id. */
  async dragToWorkspace(type: string, x: number, y: number): Promise<string> {
    const before = await this.page.evaluate((t) => RED.nodes.filterNodes({ type: t }).map((n) => n.id), type);
    const source = this.paletteNode(type);
    await source.scrollIntoViewIfNeeded();
    const from = await source.boundingBox();
    const canvas = await this.page.locator('#red-ui-workspace-chart').boundingBox();
    if (from === null || canvas === null) throw new Error(`palette node ${type} or the workspace is not visible`);
    await this.page.mouse.move(from.x + from.width / 2, from.y + from.height / 2);
    await this.page.mouse.down();
    // jQuery UI starts a drag only after the pointer has moved a little.
    await this.page.mouse.move(from.x + from.width / 2 + 8, from.y + from.height / 2 + 8, { steps: 4 });
    await this.page.mouse.move(canvas.x + x, canvas.y + y, { steps: 20 });
    await this.page.mouse.up();
    const handle = await this.page.waitForFunction(
      ([t, known]) => {
        const added = RED.nodes.filterNodes({ type: t }).filter((n) => !known.includes(n.id));
        return added.length === 1 ? added[0]?.id : undefined;
      },
      [type, before] as const,
    );
    return (await handle.jsonValue()) as string;
  }

  /** The node's shape on the canvas. */
  nodeShape(id: string): Locator {
    return this.page.locator(`#red-ui-workspace-chart g.red-ui-flow-node-group[id="${id}"]`);
  }

  async nodeLabel(id: string): Promise<string> {
    return ((await this.nodeShape(id).locator('.red-ui-flow-node-label').textContent()) ?? '').trim();
  }

  /** Double-clicks the node and waits for its edit tray. */
  async openEditDialog(id: string, waitFor: string): Promise<void> {
    await this.nodeShape(id).locator('rect.red-ui-flow-node').dblclick();
    await this.page.locator(waitFor).waitFor({ state: 'visible' });
    await this.page.locator('#node-dialog-ok').waitFor({ state: 'visible' });
    await this.settled(this.page.locator('.red-ui-tray').first());
  }

  /** Waits until an element has stopped moving (the edit trays slide in). */
  async settled(element: Locator): Promise<void> {
    let last = JSON.stringify(await element.boundingBox());
    for (let frames = 0; frames < 600; frames++) {
      await this.page.evaluate(
        () =>
          new Promise<void>((done) => {
            const win = globalThis as unknown as { requestAnimationFrame(cb: () => void): void };
            win.requestAnimationFrame(() => win.requestAnimationFrame(() => done()));
          }),
      );
      const now = JSON.stringify(await element.boundingBox());
      if (now === last) return;
      last = now;
    }
    throw new Error('the element never stopped moving');
  }

  /** Types into a field and leaves it, which is when the editor validates. */
  async setField(selector: string, value: string): Promise<void> {
    const field = this.page.locator(selector);
    await field.fill(value);
    await field.dispatchEvent('change');
  }

  async isMarkedInvalid(selector: string): Promise<boolean> {
    return this.page.locator(selector).evaluate((el) => (el as unknown as { classList: { contains(c: string): boolean } }).classList.contains('input-error'));
  }

  /** Waits until the field is (or is not) marked red. */
  async expectInvalid(selector: string, invalid = true): Promise<void> {
    await this.page.waitForFunction(
      ([sel, want]) => {
        const doc = (globalThis as unknown as { document: { querySelector(s: string): { classList: { contains(c: string): boolean } } | null } }).document;
        const el = doc.querySelector(sel);
        return el !== null && el.classList.contains('input-error') === want;
      },
      [selector, invalid] as const,
      { timeout: 5000 },
    );
  }

  /** The reason shown in the tooltip of an invalid field. */
  async invalidReason(selector: string): Promise<string> {
    await this.page.locator(selector).hover();
    const popover = this.page.locator('.red-ui-popover:visible').last();
    await popover.waitFor({ state: 'visible' });
    const text = (await popover.innerText()).trim();
    const shown = await popover.elementHandle();
    await this.page.mouse.move(5, 5);
    // Gone before the next field is hovered: Node-RED 5 fades its popovers out, and
    // a reason still fading would be read as the next field's.
    await shown?.waitForElementState('hidden');
    return text;
  }

  /** Done in the node's edit tray; waits for the tray to close. */
  async closeDialog(): Promise<void> {
    await this.page.locator('#node-dialog-ok').click();
    await this.page.locator('.red-ui-tray').first().waitFor({ state: 'detached' });
  }

  /** Clicks Deploy and waits for the editor to report it clean; fails on any confirmation dialog. */
  async deploy(): Promise<void> {
    await this.page.locator('#red-ui-header-button-deploy').click();
    await this.page.waitForFunction(() => !RED.nodes.dirty(), undefined, { timeout: 15000 }).catch(async (error: unknown) => {
      // A confirmation (e.g. "nodes not properly configured") means the flow was not clean.
      const dialogs = (await this.page.locator('.ui-dialog:visible').allInnerTexts()).join(' | ');
      throw new Error(`deploy did not finish: ${dialogs || String(error)}`);
    });
    await this.page.locator('.red-ui-notification', { hasText: 'Successfully deployed' }).first().waitFor({ state: 'visible' });
  }

  /** A node's status as the editor shows it. */
  async waitForStatus(id: string, accept: (status: { fill?: string; shape?: string; text?: string }) => boolean, description: string): Promise<EditorNode['status']> {
    const deadline = Date.now() + 20_000;
    for (;;) {
      const status = await this.page.evaluate((nodeId) => RED.nodes.node(nodeId)?.status, id);
      if (status && accept(status)) return status;
      if (Date.now() > deadline) throw new Error(`node ${id}: status never ${description}; last ${JSON.stringify(status)}`);
      await this.page.waitForTimeout(100);
    }
  }

  /** Saves a screenshot of the open edit tray (`which`: the node's or a config node's on top of it), cut below its last field; see screenshotFile(). */
  async screenshotDialog(name: string, which: 'first' | 'last' = 'first'): Promise<string> {
    const tray = which === 'first' ? this.page.locator('.red-ui-tray').first() : this.page.locator('.red-ui-tray').last();
    await this.settled(tray);
    const box = await tray.boundingBox();
    const rows = tray.locator('.red-ui-tray-body .form-row:visible, .red-ui-tray-body .form-tips:visible');
    const last = await rows.last().boundingBox();
    if (box === null || last === null) throw new Error('no edit tray is open');
    const height = Math.min(box.height, last.y + last.height + 16 - box.y);
    const file = screenshotFile(name);
    await this.page.screenshot({ path: file, animations: 'disabled', clip: { x: box.x, y: box.y, width: box.width, height } });
    return file;
  }

  /** Saves a screenshot of the top `height` pixels of the page; see screenshotFile(). */
  async screenshotTop(name: string, height: number): Promise<string> {
    const file = screenshotFile(name);
    const size = this.page.viewportSize() ?? { width: 1440, height };
    await this.page.screenshot({ path: file, animations: 'disabled', clip: { x: 0, y: 0, width: size.width, height } });
    return file;
  }
}
