/**
 * dedup/metrics belongs to the nodes, not to the sidebar plugin: the packed
 * pack installed into a stock Node-RED twice, once as it is (nodes and the
 * dedup-sidebar plugin: the endpoint asked for by both, served once) and
 * once with its package.json `plugins` entry taken out (no sidebar at all).
 * The same traffic (the drop-repeats example: 9 readings, 5 new, 4
 * repeats) gives the same counts in both, each series once.
 */
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'fs';
import { join, resolve } from 'path';
import { nodeRedProcess, type NodeRedProcess } from '../support/node-red-process';
import { installPack } from '../support/packed-pack';

const ROOT = resolve(__dirname, '..', '..');
const manifest = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { name: string };

interface FlowNode {
  id: string;
  type: string;
  [property: string]: unknown;
}

interface Scraped {
  status: number;
  /** The dedup_messages_total lines of the sensor node. */
  lines: string[];
  plugins: string[];
}

/** The values of the sensor node's dedup_messages_total series, by their labels' text. */
function seriesOf(lines: readonly string[]): Record<string, number> {
  const values: Record<string, number> = {};
  for (const line of lines) values[line.slice(0, line.lastIndexOf(' '))] = Number(line.slice(line.lastIndexOf(' ') + 1));
  return values;
}

function count(lines: readonly string[], decision: string, reason: string): number {
  return lines.filter((line) => line.includes(`decision="${decision}"`) && line.includes(`reason="${reason}"`)).reduce((sum, line) => sum + Number(line.slice(line.lastIndexOf(' ') + 1)), 0);
}

/** Installs the packed pack (its package.json edited by `edit`), deploys drop-repeats and scrapes dedup/metrics once its 9 readings are counted. */
async function runExample(edit: (pkg: Record<string, unknown>) => void): Promise<Scraped> {
  const nr: NodeRedProcess = await nodeRedProcess([]);
  try {
    installPack(nr.userDir);
    const pkgFile = join(nr.userDir, 'node_modules', ...manifest.name.split('/'), 'package.json');
    const pkg = JSON.parse(readFileSync(pkgFile, 'utf8')) as Record<string, unknown>;
    edit(pkg);
    writeFileSync(pkgFile, JSON.stringify(pkg, null, 2));
    await nr.start();
    const plugins = ((await nr.get('/plugins')) as { module: string; plugins: { id: string }[] }[]).filter((p) => p.module === manifest.name).flatMap((p) => p.plugins.map((x) => x.id));
    const example = JSON.parse(readFileSync(join(ROOT, 'examples', 'drop-repeats.json'), 'utf8')) as FlowNode[];
    const tab = 'tab-drop-repeats';
    await nr.deploy([{ id: tab, type: 'tab', label: 'drop-repeats' }, ...example.map((n) => ({ ...n, z: tab }))], 'full');
    const dedup = example.find((n) => n.type === 'sensor-reconnect-dedup');
    assert.ok(dedup);
    // Its inject fires once, a second after the deploy.
    const deadline = Date.now() + 20_000;
    for (;;) {
      const response = await fetch(`${nr.url}/dedup/metrics`);
      const text = await response.text();
      const lines = text.split('\n').filter((line) => line.startsWith('dedup_messages_total{') && line.includes(`node_id="${dedup.id}"`));
      if ((response.status === 200 && count(lines, 'admitted', 'new') + count(lines, 'suppressed', 'duplicate') >= 9) || Date.now() > deadline) {
        return { status: response.status, lines, plugins };
      }
      await new Promise((done) => setTimeout(done, 200));
    }
  } finally {
    await nr.dispose();
  }
}

describe('dedup/metrics without the sidebar plugin', function () {
  this.timeout(180_000);

  it('is served by the nodes: the pack without its plugins entry counts as the whole pack does, each series once', async function () {
    const whole = await runExample(() => undefined);
    const bare = await runExample((pkg) => {
      delete (pkg['node-red'] as Record<string, unknown>).plugins;
    });
    assert.deepEqual(whole.plugins, ['dedup-sidebar'], 'the whole pack loads its sidebar plugin');
    assert.deepEqual(bare.plugins, [], 'the copy has no plugin');
    for (const [what, scraped] of [
      ['the whole pack', whole],
      ['the pack without plugins', bare],
    ] as const) {
      assert.equal(scraped.status, 200, `${what}: GET /dedup/metrics`);
      assert.equal(count(scraped.lines, 'admitted', 'new'), 5, `${what}: ${scraped.lines.join('\n')}`);
      assert.equal(count(scraped.lines, 'suppressed', 'duplicate'), 4, `${what}: ${scraped.lines.join('\n')}`);
      assert.equal(new Set(scraped.lines.map((line) => line.slice(0, line.lastIndexOf(' ')))).size, scraped.lines.length, `${what}: each series once`);
    }
    assert.deepEqual(seriesOf(bare.lines), seriesOf(whole.lines), 'the same series, with the same counts');
  });
});
