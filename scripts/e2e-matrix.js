#!/usr/bin/env node
/*
 * The editor tests (every spec under test/e2e, with test/e2e/.mocharc.json)
 * on Node-RED lines other than the devDependency: today Node-RED 5.0.x,
 * which needs Node >= 22.9. `npm test` calls it after its own mocha run,
 * which has already run those specs on the devDependency (4.1.x).
 *
 * Each line is installed once into its own directory under the cache
 * (DEDUP_E2E_CACHE, else <tmpdir>/node-red-dedup-e2e-matrix), which
 * survives the rest of a CI run, so later runs start at once; the
 * repository's node_modules is never touched. When this machine's Node is
 * too old for the line, Node 22 comes from the npm registry's `node` package
 * into the same directory, and Node-RED is installed and run with it. The
 * specs themselves run on this Node (mocha, playwright and the test helpers
 * from the repository); only the Node-RED they start runs on the other one
 * (test/e2e/support/node-red.ts reads E2E_NODE_RED and E2E_NODE).
 *
 * Options:
 *   --only <label>   run one line only (5.0.x, or 4.1.x for the devDependency); repeatable
 *   --all            also run the devDependency's line (as `npm test`'s mocha does)
 *   --write          write the results to docs/compat.md's "In the browser" section
 *   --fresh          install again even when the cache holds the line
 * Exit status: 0 when every line passed, 1 otherwise.
 */
'use strict';
const fs = require('fs');
const os = require('os');
const path = require('path');
const { spawn, spawnSync } = require('child_process');
const { envWithNode, installNode, nodeVersionAtLeast, run, writeSection } = require('./matrix-install');

const ROOT = path.resolve(__dirname, '..');
const pkg = require(path.join(ROOT, 'package.json'));

/**
 * The lines. `spec` is what npm installs; `devDependency` means the repository's own
 * node-red (no install, this Node); `minNode`/`node`: the Node.js it needs and the
 * registry `node` major to take when ours is older.
 */
const TARGETS = [
  { label: '4.1.x', devDependency: true },
  { label: '5.0.x', spec: '~5.0.0', minNode: [22, 9], node: '22' },
];

/** Bumped when the layout of a cached install changes, so an old one is not reused. */
const CACHE_LAYOUT = 1;

const args = process.argv.slice(2);
const only = args.flatMap((a, i) => (a === '--only' && args[i + 1] ? [args[i + 1]] : []));
const all = args.includes('--all');
const write = args.includes('--write');
const fresh = args.includes('--fresh');

const CACHE = process.env.DEDUP_E2E_CACHE || path.join(os.tmpdir(), 'node-red-dedup-e2e-matrix');

function log(line) {
  process.stdout.write(`[e2e-matrix] ${line}\n`);
}

function seconds(since) {
  return Math.round((Date.now() - since) / 1000);
}

/**
 * The line's install in the cache: { packageDir, binary, nodeRedVersion, nodeVersion, cached }.
 * A finished install is recorded in ready.json; anything else in the cache
 * (a run interrupted mid-install) is built again from nothing, beside it, and
 * moved into place only once complete.
 */
async function cachedInstall(target) {
  const dir = path.join(CACHE, `node-red-${target.label}`);
  const marker = path.join(dir, 'ready.json');
  const wanted = { layout: CACHE_LAYOUT, spec: target.spec, node: target.node || null, hostNode: process.version };
  if (!fresh && fs.existsSync(marker)) {
    const ready = JSON.parse(fs.readFileSync(marker, 'utf8'));
    if (ready.layout === wanted.layout && ready.spec === wanted.spec && ready.node === wanted.node && ready.hostNode === wanted.hostNode) {
      return { ...ready, cached: true };
    }
  }
  fs.mkdirSync(CACHE, { recursive: true });
  const building = fs.mkdtempSync(path.join(CACHE, `.node-red-${target.label}-`));
  const logFile = path.join(building, 'install.log');
  try {
    let nodeBin = path.dirname(process.execPath);
    let env = process.env;
    const needsNode = target.minNode && !nodeVersionAtLeast(process.version, target.minNode);
    if (needsNode) {
      log(`${target.label}: Node ${process.version} is too old, installing node@${target.node} from npm`);
      const nodeDir = path.join(building, 'node');
      fs.mkdirSync(nodeDir);
      nodeBin = await installNode(target.node, nodeDir, logFile);
      env = envWithNode(nodeBin);
    }
    log(`${target.label}: installing node-red@${target.spec}`);
    const nodeRedDir = path.join(building, 'node-red');
    fs.mkdirSync(nodeRedDir);
    fs.writeFileSync(
      path.join(nodeRedDir, 'package.json'),
      `${JSON.stringify({ name: 'node-red-dedup-e2e-matrix', private: true, version: '0.0.0', dependencies: { 'node-red': target.spec } }, null, 2)}\n`,
    );
    const code = await run('npm', ['install', '--no-audit', '--no-fund', '--loglevel=error'], { cwd: nodeRedDir, env, logFile });
    if (code !== 0) throw new Error(`npm install node-red@${target.spec} failed (${code}):\n${fs.readFileSync(logFile, 'utf8').slice(-3000)}`);
    // Paths as they will be once moved into place.
    const relative = {
      packageDir: path.join('node-red', 'node_modules', 'node-red'),
      node: needsNode ? path.join('node', 'node_modules', 'node', 'bin', 'node') : null,
    };
    const nodeRedVersion = JSON.parse(fs.readFileSync(path.join(building, relative.packageDir, 'package.json'), 'utf8')).version;
    const nodeBinary = needsNode ? path.join(building, relative.node) : process.execPath;
    const nodeVersion = spawnSync(nodeBinary, ['--version'], { encoding: 'utf8' }).stdout.trim();
    fs.rmSync(dir, { recursive: true, force: true });
    fs.renameSync(building, dir);
    const ready = {
      ...wanted,
      packageDir: path.join(dir, relative.packageDir),
      binary: needsNode ? path.join(dir, relative.node) : process.execPath,
      nodeRedVersion,
      nodeVersion,
    };
    fs.writeFileSync(marker, `${JSON.stringify(ready, null, 2)}\n`);
    return { ...ready, cached: false };
  } catch (error) {
    fs.rmSync(building, { recursive: true, force: true });
    throw error;
  }
}

/** Runs test/e2e with its mocharc against an install (or the devDependency); output to our stdout as it comes. */
function runSpecs(install) {
  return new Promise((resolve, reject) => {
    const env = { ...process.env };
    if (install) {
      env.E2E_NODE_RED = install.packageDir;
      env.E2E_NODE = install.binary;
    } else {
      delete env.E2E_NODE_RED;
      delete env.E2E_NODE;
    }
    const mocha = path.join(ROOT, 'node_modules', 'mocha', 'bin', 'mocha.js');
    const child = spawn(process.execPath, [mocha, '--config', path.join('test', 'e2e', '.mocharc.json')], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    const keep = (stream) => (chunk) => {
      stream.write(chunk);
      output += chunk.toString('utf8');
    };
    child.stdout.on('data', keep(process.stdout));
    child.stderr.on('data', keep(process.stderr));
    child.on('error', reject);
    child.on('exit', (code, signal) => resolve({ code: code === null ? `signal ${signal}` : code, output }));
  });
}

function summaryOf(output) {
  const matches = [...output.matchAll(/^tests: (\d+) passed, (\d+) failed, (\d+) skipped$/gm)];
  const last = matches[matches.length - 1];
  return last ? { passed: Number(last[1]), failed: Number(last[2]), skipped: Number(last[3]) } : undefined;
}

/** The spec files mocha runs (test/e2e/**\/*.e2e.ts), for the report. */
function specFiles() {
  const found = [];
  const walk = (dir) => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
      const at = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(at);
      else if (entry.name.endsWith('.e2e.ts')) found.push(path.relative(ROOT, at));
    }
  };
  walk(path.join(ROOT, 'test', 'e2e'));
  return found.sort();
}

async function runTarget(target) {
  const started = Date.now();
  const result = { label: target.label };
  let install;
  if (target.devDependency) {
    result.nodeRedVersion = require(path.join(ROOT, 'node_modules', 'node-red', 'package.json')).version;
    result.nodeVersion = process.version;
    result.installSeconds = 0;
  } else {
    install = await cachedInstall(target);
    result.nodeRedVersion = install.nodeRedVersion;
    result.nodeVersion = install.nodeVersion;
    result.installSeconds = seconds(started);
    log(`${target.label}: Node-RED ${install.nodeRedVersion} on Node ${install.nodeVersion}, ${install.cached ? 'from the cache' : `installed in ${result.installSeconds} s`} (${path.dirname(path.dirname(path.dirname(install.packageDir)))})`);
  }
  log(`${target.label}: running the editor tests (test/e2e) on Node-RED ${result.nodeRedVersion}`);
  const testsStarted = Date.now();
  const { code, output } = await runSpecs(install);
  result.testSeconds = seconds(testsStarted);
  const counts = summaryOf(output);
  const outcome = code === 0 && counts !== undefined && counts.failed === 0 && counts.passed > 0 ? 'pass' : 'fail';
  return { ...result, ...counts, code, outcome, seconds: seconds(started) };
}

function table(results) {
  const rows = [
    '| Node-RED line | version tested | Node.js (Node-RED) | editor tests passed | failed | skipped | result |',
    '| --- | --- | --- | ---: | ---: | ---: | --- |',
  ];
  for (const r of results) {
    rows.push(`| ${r.label} | ${r.nodeRedVersion || '-'} | ${r.nodeVersion || '-'} | ${r.passed ?? '-'} | ${r.failed ?? '-'} | ${r.skipped ?? '-'} | ${r.outcome} |`);
  }
  return rows.join('\n');
}

function writeReport(results) {
  const lines = [
    '## In the browser',
    '',
    'The editor tests (every spec under `test/e2e`: palette, edit dialogs and their',
    'validation, the Redis config node, deploy and read-back, examples, help, the',
    'sidebar with its rates, lists, what-if and upload, and the dark theme) drive the',
    "real editor in Debian's Chromium. `npm test` runs them on the devDependency's",
    'Node-RED, then `scripts/e2e-matrix.js` runs them again on Node-RED 5, installed',
    "with Node 22 from the npm registry into a cache directory. The dark-theme spec",
    "runs on Node-RED 5 only (3.1 and 4.1 have no dark theme); it is the one skipped",
    'on 4.1. Node-RED 3.1 is covered by the node tests above, not in the browser.',
    '',
    table(results),
    '',
    `Specs: ${specFiles().map((f) => `\`${path.basename(f)}\``).join(', ')}. ` +
      `Run on ${new Date().toISOString().slice(0, 10)} with pack version ${pkg.version} (\`node scripts/e2e-matrix.js --all --write\`).`,
  ];
  writeSection(path.join(ROOT, 'docs', 'compat.md'), 'In the browser', lines.join('\n'));
}

async function main() {
  const chosen = TARGETS.filter((t) => (only.length > 0 ? only.includes(t.label) : all || !t.devDependency));
  if (chosen.length === 0) throw new Error(`no line matches ${only.join(', ')}; known: ${TARGETS.map((t) => t.label).join(', ')}`);
  const started = Date.now();
  const results = [];
  for (const target of chosen) {
    let result;
    try {
      result = await runTarget(target);
    } catch (error) {
      result = { label: target.label, outcome: `error: ${error.message}` };
    }
    results.push(result);
    log(
      `${result.label}: ${result.outcome}` +
        (result.passed !== undefined ? ` (${result.passed} passed, ${result.failed} failed, ${result.skipped} skipped)` : '') +
        (result.seconds !== undefined ? ` in ${result.seconds} s (install ${result.installSeconds} s, tests ${result.testSeconds} s)` : ''),
    );
  }
  process.stdout.write(`\n${table(results)}\n\n`);
  if (write) {
    writeReport(results);
    log('wrote the "In the browser" section of docs/compat.md');
  }
  const passed = results.filter((r) => r.outcome === 'pass').length;
  log(`${passed} of ${results.length} lines passed; ${seconds(started)} s in all`);
  process.exitCode = passed === results.length ? 0 : 1;
}

main().catch((error) => {
  process.stderr.write(`[e2e-matrix] ${error.stack || error}\n`);
  process.exitCode = 1;
});
