/**
 * Flow Library readiness, offline: what the Flow Library's scorecard checks
 * that can be checked without the network (the npm registry's view, the
 * node-name clash check and "dependencies up to date" need it and are left
 * out), plus what Node-RED itself needs to load and show the pack.
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'fs';
import { dirname, join } from 'path';
import { CONFIG_VERSION } from '../../src/node-red/migrations';
import {
  allEditorTypes,
  configNodeTypes,
  editorTypes,
  examples,
  flowNodeTypes,
  nodeSets,
  PACK_ROOT,
  packageJson,
  registerTypeCallCount,
} from '../e2e/support/pack';

// node-red depends on semver; the pack does not, so take Node-RED's copy.
interface Semver {
  satisfies(version: string, range: string): boolean;
  validRange(range: string): string | null;
  minVersion(range: string): { version: string } | null;
}
// eslint-disable-next-line @typescript-eslint/no-require-imports -- untyped CommonJS, resolved through node-red
const semver = require(require.resolve('semver', { paths: [dirname(require.resolve('node-red/package.json'))] })) as Semver;

/**
 * The Node-RED release lines a user may install today (scripts/compat.js runs
 * the node tests on each): node-red.version must admit every one of them.
 */
const CURRENT_NODE_RED_LINES = ['3.1.0', '4.1.0', '5.0.0'];
/** Node-RED 5 needs this Node.js; engines.node must admit it. */
const NODE_FOR_NODE_RED_5 = '22.9.0';
/** The scorecard's limit on runtime dependencies. */
const MAX_DEPENDENCIES = 6;

const SPDX_LICENSES: Record<string, RegExp> = {
  MIT: /^MIT License/m,
  'Apache-2.0': /Apache License\s+Version 2\.0/,
  'BSD-3-Clause': /Redistribution and use in source and binary forms/,
  ISC: /^ISC License/m,
};

const pkg = packageJson();

type PackageJsonUrl = string | { url?: string } | undefined;

function url(field: PackageJsonUrl): string {
  if (field === undefined) return '';
  return typeof field === 'string' ? field : (field.url ?? '');
}

describe('Flow Library readiness (offline scorecard)', function () {
  describe('package.json', function () {
    it('has a license the Flow Library recognises, matching the LICENSE file that is published', function () {
      assert.ok(pkg.license, 'license is set');
      const licenseText = SPDX_LICENSES[pkg.license];
      assert.ok(licenseText, `license "${pkg.license}" is one of ${Object.keys(SPDX_LICENSES).join(', ')}`);
      const file = join(PACK_ROOT, 'LICENSE');
      assert.ok(existsSync(file), 'a LICENSE file');
      assert.match(readFileSync(file, 'utf8'), licenseText, `LICENSE is the ${pkg.license} text`);
      assert.ok(pkg.files?.includes('LICENSE'), 'LICENSE is in "files"');
    });

    it('names a repository that contains the package, and where to report bugs', function () {
      const repository = url(pkg.repository);
      assert.match(repository, /^(git\+)?https:\/\/[^/]+\/[^/]+\/[^/]+?(\.git)?$/, `repository url: ${repository}`);
      const base = pkg.name.split('/').pop() ?? '';
      assert.ok(repository.includes(base), `the repository url names the package (${base})`);
      const bugs = pkg.bugs;
      const bugsUrl = url(bugs);
      const bugsEmail = typeof bugs === 'object' ? bugs.email : undefined;
      assert.ok(/issues/.test(bugsUrl) || /^[^@\s]+@[^@\s]+$/.test(bugsEmail ?? ''), `bugs: an issues url or an email (${bugsUrl})`);
    });

    it('has a scoped name', function () {
      assert.match(pkg.name, /^@[a-z0-9][a-z0-9._~-]*\/[a-z0-9][a-z0-9._~-]*$/, pkg.name);
    });

    it('has the node-red keyword', function () {
      assert.ok(pkg.keywords?.includes('node-red'), `keywords: ${JSON.stringify(pkg.keywords)}`);
    });

    it('declares a node-red.version that every current Node-RED release line satisfies, as a lower bound only', function () {
      const range = pkg['node-red']?.version;
      assert.ok(range, 'node-red.version is set');
      assert.ok(semver.validRange(range), `a valid range: ${range}`);
      const installed = (JSON.parse(readFileSync(require.resolve('node-red/package.json'), 'utf8')) as { version: string }).version;
      for (const version of [...CURRENT_NODE_RED_LINES, installed.replace(/-.*$/, '')]) {
        assert.ok(semver.satisfies(version, range), `Node-RED ${version} satisfies ${range}`);
      }
      // Node-RED refuses to load a pack whose range excludes it: no upper bound.
      assert.ok(semver.satisfies('99.0.0', range), `${range} has no upper bound`);
    });

    it('has engines.node admitting Node.js 22.9 (what Node-RED 5 needs)', function () {
      const engines = pkg.engines?.node;
      assert.ok(engines, 'engines.node is set');
      assert.ok(semver.satisfies(NODE_FOR_NODE_RED_5, engines), `${NODE_FOR_NODE_RED_5} satisfies ${engines}`);
      assert.ok(semver.satisfies(process.versions.node, engines), `this Node (${process.versions.node}) satisfies ${engines}`);
    });

    it(`has at most ${MAX_DEPENDENCIES} runtime dependencies, none of them Node-RED itself`, function () {
      const dependencies = Object.keys(pkg.dependencies ?? {});
      assert.ok(dependencies.length <= MAX_DEPENDENCIES, `${dependencies.length}: ${dependencies.join(', ')}`);
      for (const bundled of ['node-red', '@node-red/util', '@node-red/runtime', '@node-red/registry']) {
        assert.ok(!dependencies.includes(bundled), `${bundled} is not a dependency`);
      }
    });

    it('publishes what Node-RED loads: the nodes, their editor files, resources and examples', function () {
      for (const entry of ['nodes', 'resources', 'examples', 'lua', 'README.md', 'LICENSE']) {
        assert.ok(pkg.files?.includes(entry), `"files" includes ${entry}`);
        assert.ok(existsSync(join(PACK_ROOT, entry)), `${entry} exists`);
      }
    });
  });

  describe('the nodes', function () {
    it('register each editor definition with a plain RED.nodes.registerType("<literal>", { ... }) call', function () {
      const sets = nodeSets();
      assert.ok(sets.length >= 3, 'the pack declares its node sets');
      for (const set of sets) {
        assert.ok(existsSync(set.html), `${set.html} sits beside ${set.js}`);
        const types = editorTypes(set);
        assert.ok(types.length >= 1, `${set.html} registers a type`);
        assert.equal(registerTypeCallCount(set), types.length, `${set.html}: every registerType call has a literal type and an object literal`);
        assert.ok(types.some((t) => t.type === set.set), `${set.html} registers "${set.set}" (its package.json key)`);
        for (const t of types) assert.ok(t.category, `${t.type} has a literal category`);
      }
    });

    it('register the same types in the runtime as in the editor', function () {
      for (const set of nodeSets()) {
        const source = readFileSync(join(PACK_ROOT, 'src', `${set.set}.ts`), 'utf8');
        for (const t of editorTypes(set)) {
          assert.match(source, new RegExp(`registerType\\(\\s*['"]${t.type}['"]`), `src/${set.set}.ts registers ${t.type}`);
        }
      }
    });

    it('put the palette nodes in the "dedup" category and have one config node', function () {
      for (const t of allEditorTypes().filter((e) => e.category !== 'config')) {
        assert.equal(t.category, 'dedup', t.type);
      }
      assert.deepEqual(configNodeTypes(), ['dedup-redis']);
    });

    it('ship an en-US message catalog and help for every node set', function () {
      for (const set of nodeSets()) {
        assert.ok(existsSync(set.catalog), set.catalog);
        assert.ok(existsSync(set.help), set.help);
        for (const t of editorTypes(set)) {
          assert.match(readFileSync(set.help, 'utf8'), new RegExp(`data-help-name=["']${t.type}["']`), `help for ${t.type}`);
        }
      }
    });

    it('use every non-config node type in some example flow', function () {
      const used = new Set(examples().flatMap((e) => e.flow.map((n) => n.type)));
      const types = flowNodeTypes();
      assert.ok(types.length >= 2);
      for (const type of types) assert.ok(used.has(type), `${type} appears in an example`);
    });

    it('have example flows Node-RED can import: arrays of nodes with unique ids and known wires', function () {
      for (const example of examples()) {
        assert.ok(Array.isArray(example.flow) && example.flow.length > 0, example.name);
        const ids = example.flow.map((n) => n.id);
        assert.equal(new Set(ids).size, ids.length, `${example.name}: ids are unique`);
        for (const n of example.flow) {
          for (const port of (n.wires as string[][] | undefined) ?? []) {
            for (const target of port) assert.ok(ids.includes(target), `${example.name}: ${n.id} is wired to ${target}, which is in the flow`);
          }
          if (flowNodeTypes().includes(n.type)) assert.equal(n.version, CONFIG_VERSION, `${example.name}: ${n.type} is saved with the current config version`);
        }
      }
    });
  });
});
