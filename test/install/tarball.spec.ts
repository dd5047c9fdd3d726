/**
 * The pack as README's install section installs it: `npm pack`, the tarball
 * unpacked into the node_modules of a fresh user directory of a stock
 * Node-RED (the devDependency's red.js, its own process on a free loopback
 * port), its dependencies linked from this checkout (test/support/packed-pack.ts:
 * offline, and without a minute of npm resolving what is here already).
 * Then what a user looks at first: the nodes in the palette (GET /nodes),
 * the examples under Import > Examples (the editor's library requests), and
 * one example deployed through the admin API, deciding.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'child_process';
import { readFileSync, statSync } from 'fs';
import { join, resolve } from 'path';
import { nodeRedProcess, type NodeRedProcess } from '../support/node-red-process';
import { installPack, packedTarball } from '../support/packed-pack';

const ROOT = resolve(__dirname, '..', '..');
const manifest = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
  name: string;
  'node-red': { nodes: Record<string, string>; plugins: Record<string, string> };
};
/** What README promises of the tarball's size (836.6 kB packed while the documentation's pictures were in it). */
const MAX_TARBALL_BYTES = 300_000;

interface NodeSet {
  id: string;
  module: string;
  types: string[];
  enabled: boolean;
  /** Set when the module failed to load. */
  err?: string;
}

interface FlowNode {
  id: string;
  type: string;
  [property: string]: unknown;
}

/** The value of one series of the Prometheus text, 0 when it is not there. */
function series(metrics: string, name: string, labels: Record<string, string>): number {
  for (const line of metrics.split('\n')) {
    if (!line.startsWith(`${name}{`)) continue;
    const labelText = line.slice(name.length + 1, line.lastIndexOf('}'));
    if (Object.entries(labels).every(([k, v]) => labelText.includes(`${k}="${v}"`))) return Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return 0;
}

describe('the packed tarball, installed into a stock Node-RED', function () {
  this.timeout(120_000);
  let nr: NodeRedProcess;

  before(async function () {
    nr = await nodeRedProcess([]);
    // nodeRedProcess links the checkout; the tarball's copy replaces the link.
    installPack(nr.userDir);
    await nr.start();
  });

  after(async function () {
    await nr?.dispose();
  });

  it(`is under ${MAX_TARBALL_BYTES / 1000} kB, with the built nodes, no documentation picture and no install script`, function () {
    const tarball = packedTarball();
    const bytes = statSync(tarball).size;
    assert.ok(bytes < MAX_TARBALL_BYTES, `the tarball is ${bytes} bytes`);
    const files = execFileSync('tar', ['tzf', tarball], { encoding: 'utf8' }).split('\n').filter((f) => f !== '');
    assert.deepEqual(files.filter((f) => /\.(png|jpe?g|gif)$/i.test(f)), []);
    for (const entry of Object.values({ ...manifest['node-red'].nodes, ...manifest['node-red'].plugins })) {
      assert.ok(files.includes(`package/${entry}`), `${entry} is in the tarball`);
    }
    const packed = JSON.parse(execFileSync('tar', ['xzOf', tarball, 'package/package.json'], { encoding: 'utf8' })) as { scripts?: Record<string, string> };
    for (const script of ['preinstall', 'install', 'postinstall', 'prepare']) assert.equal(packed.scripts?.[script], undefined, `no ${script} script runs on the user's machine`);
  });

  it('registers every node and the sidebar plugin (GET /nodes, GET /plugins)', async function () {
    const sets = ((await nr.get('/nodes')) as NodeSet[]).filter((s) => s.module === manifest.name);
    const types = sets.flatMap((s) => s.types).sort();
    assert.deepEqual(types, Object.keys(manifest['node-red'].nodes).sort());
    for (const s of sets) {
      assert.equal(s.err, undefined, `${s.id}: ${s.err ?? ''}`);
      assert.equal(s.enabled, true, `${s.id} enabled`);
    }
    const plugins = ((await nr.get('/plugins')) as { module: string; plugins: { id: string }[] }[]).filter((p) => p.module === manifest.name);
    assert.deepEqual(plugins.flatMap((p) => p.plugins.map((x) => x.id)), Object.keys(manifest['node-red'].plugins));
  });

  it('lists every example under Import > Examples, and serves each', async function () {
    const modules = (await nr.get('/library/examples/flows/')) as Record<string, unknown>;
    assert.ok(JSON.stringify(modules).includes(manifest.name), `the pack among the examples' modules: ${JSON.stringify(modules)}`);
    const listing = (await nr.get(`/library/examples/flows/${manifest.name}`)) as { fn?: string }[];
    const names = listing.map((entry) => entry.fn).sort();
    const expected = execFileSync('tar', ['tzf', packedTarball()], { encoding: 'utf8' })
      .split('\n')
      .filter((f) => /^package\/examples\/[^/]+\.json$/.test(f))
      .map((f) => f.replace(/^package\/examples\/(.+)\.json$/, '$1'))
      .sort();
    assert.ok(expected.includes('drop-repeats'), `the examples in the tarball: ${expected.join(', ')}`);
    assert.deepEqual(names, expected);
    const flow = (await nr.get(`/library/examples/flows/${manifest.name}/drop-repeats`)) as FlowNode[];
    assert.ok(flow.some((n) => n.type === 'sensor-reconnect-dedup'));
  });

  it('deploys the drop-repeats example through the admin API, and it decides', async function () {
    const example = (await nr.get(`/library/examples/flows/${manifest.name}/drop-repeats`)) as FlowNode[];
    const tab = 'tab-drop-repeats';
    await nr.deploy([{ id: tab, type: 'tab', label: 'drop-repeats' }, ...example.map((n) => ({ ...n, z: tab }))], 'full');
    const dedup = example.find((n) => n.type === 'sensor-reconnect-dedup');
    assert.ok(dedup);
    // Its inject fires once, a second after the deploy: 9 messages, 5 new, 4 repeats.
    const deadline = Date.now() + 20_000;
    let counts = { admitted: 0, suppressed: 0 };
    for (;;) {
      const response = await fetch(`${nr.url}/dedup/metrics`);
      const metrics = await response.text();
      counts = {
        admitted: series(metrics, 'dedup_messages_total', { node_id: dedup.id, decision: 'admitted', reason: 'new' }),
        suppressed: series(metrics, 'dedup_messages_total', { node_id: dedup.id, decision: 'suppressed', reason: 'duplicate' }),
      };
      if (counts.admitted + counts.suppressed >= 9 || Date.now() > deadline) break;
      await new Promise((done) => setTimeout(done, 200));
    }
    assert.deepEqual(counts, { admitted: 5, suppressed: 4 }, nr.log().slice(-3000));
    assert.doesNotMatch(nr.log(), /\[(error|warn)\] \[(sensor-reconnect-dedup|sliding-window-dedup|dedup-redis|dedup-confirm)/);
  });
});
