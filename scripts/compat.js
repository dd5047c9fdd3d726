#!/usr/bin/env node
/*
 * `npm run test:compat`: runs the node tests (test/nodes/*.spec.ts) against
 * several Node-RED release lines and writes the result table to
 * docs/compat.md (keeping its "In the browser" section, which
 * scripts/e2e-matrix.js writes).
 *
 * Each Node-RED line is installed into its own temporary directory, together
 * with a copy of the compiled pack and the tests, so the repository's own
 * node_modules is never touched. Node-RED 5 needs Node >= 22.9: when this
 * machine's Node is older, Node 22 is taken from the npm registry's `node`
 * package (a binary shipped in a registry package) into another temporary
 * directory, and that line is installed and tested with it.
 *
 * The node tests use a real redis-server (test/support/global-hooks.ts):
 * REDIS_URL, or a private server started from redis-server on PATH.
 *
 * Options:
 *   --only <label>   run one line only (e.g. --only 3.1.x); repeatable
 *   --keep           keep the temporary directories (their paths are printed)
 *   --no-write       do not rewrite docs/compat.md
 * Exit status: 0 when every line passed, 1 otherwise.
 */
'use strict';
const fs = require('fs');
const os = require('os');
const path = require('path');
const { spawnSync } = require('child_process');
const { copyCheckout, envWithNode, installNode, nodeVersionAtLeast, readSection, run } = require('./matrix-install');

const ROOT = path.resolve(__dirname, '..');
const pkg = require(path.join(ROOT, 'package.json'));

/** The Node-RED lines to test; `node` is the Node.js major to run them on when ours is too old. */
const TARGETS = [
  { label: '3.1.x', spec: '~3.1.0' },
  { label: '4.1.x', spec: '~4.1.0' },
  { label: '5.x', spec: '^5.0.0', minNode: [22, 9], node: '22' },
];

/** What of the repository a test run needs (nodes/ is the compiled pack). */
/** The heading of docs/compat.md's section that scripts/e2e-matrix.js writes. */
const BROWSER_SECTION = 'In the browser';

const COPY = ['package.json', 'tsconfig.json', 'tsconfig.test.json', 'src', 'nodes', 'resources', 'lua', 'examples', 'test'];
const SKIP_UNDER_TEST = new Set(['e2e']);

const args = process.argv.slice(2);
const only = args.flatMap((a, i) => (a === '--only' && args[i + 1] ? [args[i + 1]] : []));
const keep = args.includes('--keep');
const write = !args.includes('--no-write');

function log(line) {
  process.stdout.write(`[compat] ${line}\n`);
}

/** The package.json of a test directory: the pack's dependencies plus what the node tests need. */
function testPackage(nodeRedSpec) {
  const dev = pkg.devDependencies;
  return {
    name: 'node-red-dedup-compat',
    private: true,
    version: '0.0.0',
    dependencies: { ...pkg.dependencies },
    devDependencies: {
      mocha: dev.mocha,
      tsx: dev.tsx,
      'node-red-node-test-helper': dev['node-red-node-test-helper'],
      'node-red': nodeRedSpec,
    },
  };
}

const MOCHARC = {
  require: ['tsx/cjs', 'test/support/global-hooks.ts'],
  extension: ['ts'],
  spec: ['test/nodes/*.spec.ts'],
  timeout: 20000,
  reporter: 'test/support/summary-reporter.js',
};

/** Node 22 from the registry's `node` package; returns the binary's directory. */
async function fetchNode(major, logFile) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `dedup-compat-node${major}-`));
  return { dir, bin: await installNode(major, dir, logFile) };
}

function summaryFrom(logFile) {
  const text = fs.readFileSync(logFile, 'utf8');
  const matches = [...text.matchAll(/^tests: (\d+) passed, (\d+) failed, (\d+) skipped$/gm)];
  const last = matches[matches.length - 1];
  if (!last) return undefined;
  return { passed: Number(last[1]), failed: Number(last[2]), skipped: Number(last[3]) };
}

function failureTitles(logFile) {
  const text = fs.readFileSync(logFile, 'utf8');
  const start = text.lastIndexOf(' failing');
  if (start < 0) return [];
  return [...text.slice(start).matchAll(/^\s+\d+\) (.+)$/gm)].map((m) => m[1].trim()).slice(0, 10);
}

async function runTarget(target, tmpDirs) {
  const started = Date.now();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `dedup-compat-${target.label.replace(/[^\w.]/g, '')}-`));
  tmpDirs.push(dir);
  const logFile = path.join(dir, 'compat.log');
  const result = { label: target.label, spec: target.spec, dir, logFile };

  let env = process.env;
  let nodeBinary = process.execPath;
  if (target.minNode && !nodeVersionAtLeast(process.version, target.minNode)) {
    log(`${target.label}: Node ${process.version} is too old, installing node@${target.node} from npm`);
    const node = await fetchNode(target.node, logFile);
    tmpDirs.push(node.dir);
    nodeBinary = path.join(node.bin, 'node');
    // npm and its lifecycle scripts then run on that Node too, so anything
    // native is built for the Node that will load it.
    env = envWithNode(node.bin);
  }
  result.nodeVersion = spawnSync(nodeBinary, ['--version'], { encoding: 'utf8' }).stdout.trim();

  copyCheckout(dir, COPY, SKIP_UNDER_TEST);
  fs.writeFileSync(path.join(dir, 'package.json'), `${JSON.stringify(testPackage(target.spec), null, 2)}\n`);
  fs.writeFileSync(path.join(dir, '.mocharc.json'), `${JSON.stringify(MOCHARC, null, 2)}\n`);

  log(`${target.label}: installing node-red@${target.spec} in ${dir}`);
  const installed = await run('npm', ['install', '--no-audit', '--no-fund', '--loglevel=error'], { cwd: dir, env, logFile });
  if (installed !== 0) {
    return { ...result, outcome: 'install failed', seconds: Math.round((Date.now() - started) / 1000) };
  }
  result.nodeRedVersion = require(path.join(dir, 'node_modules', 'node-red', 'package.json')).version;

  log(`${target.label}: running the node tests with Node-RED ${result.nodeRedVersion} on Node ${result.nodeVersion}`);
  const mocha = path.join(dir, 'node_modules', 'mocha', 'bin', 'mocha.js');
  const code = await run(nodeBinary, [mocha, '--config', '.mocharc.json'], { cwd: dir, env, logFile });
  const counts = summaryFrom(logFile);
  const seconds = Math.round((Date.now() - started) / 1000);
  const outcome = code === 0 && counts && counts.failed === 0 && counts.passed > 0 ? 'pass' : 'fail';
  return { ...result, ...counts, code, outcome, seconds, failures: outcome === 'pass' ? [] : failureTitles(logFile) };
}

function table(results) {
  const rows = [
    '| Node-RED line | version tested | Node.js | node tests passed | failed | skipped | result |',
    '| --- | --- | --- | ---: | ---: | ---: | --- |',
  ];
  for (const r of results) {
    rows.push(
      `| ${r.label} | ${r.nodeRedVersion || '-'} | ${r.nodeVersion || '-'} | ${r.passed ?? '-'} | ${r.failed ?? '-'} | ${r.skipped ?? '-'} | ${r.outcome} |`,
    );
  }
  return rows.join('\n');
}

function writeReport(results) {
  const failures = results.filter((r) => r.failures && r.failures.length > 0);
  const lines = [
    '# Compatibility',
    '',
    'The node tests (`test/nodes/*.spec.ts`, a real Node-RED runtime through',
    '`node-red-node-test-helper` and a real redis-server) run against each Node-RED',
    'release line, each installed into its own temporary directory by',
    '`npm run test:compat` (`scripts/compat.js`). Node-RED 5 needs Node >= 22.9;',
    "on an older Node the script takes Node 22 from the npm registry's `node` package.",
    '',
    table(results),
    '',
    `Run on ${new Date().toISOString().slice(0, 10)} with pack version ${pkg.version}, ${os.platform()} ${os.arch()}.`,
  ];
  if (failures.length > 0) {
    lines.push('', '## Failures', '');
    for (const r of failures) {
      lines.push(`- Node-RED ${r.label}:`);
      for (const title of r.failures) lines.push(`  - ${title}`);
    }
  }
  // The browser section (scripts/e2e-matrix.js --write) and the ioredis table
  // (scripts/ioredis-matrix.js) are those scripts': kept as they are.
  const report = path.join(ROOT, 'docs', 'compat.md');
  const browser = readSection(report, BROWSER_SECTION);
  if (browser !== undefined) lines.push('', browser);
  const before = fs.existsSync(report) ? fs.readFileSync(report, 'utf8') : '';
  const ioredis = /<!-- ioredis-matrix: begin -->[\s\S]*<!-- ioredis-matrix: end -->/.exec(before);
  if (ioredis) lines.push('', ioredis[0]);
  fs.mkdirSync(path.join(ROOT, 'docs'), { recursive: true });
  fs.writeFileSync(report, `${lines.join('\n')}\n`);
}

async function main() {
  const targets = TARGETS.filter((t) => only.length === 0 || only.includes(t.label));
  if (targets.length === 0) throw new Error(`no target matches ${only.join(', ')}; known: ${TARGETS.map((t) => t.label).join(', ')}`);

  log('building the pack (npm run build)');
  const build = spawnSync('npm', ['run', 'build'], { cwd: ROOT, stdio: 'inherit' });
  if (build.status !== 0) throw new Error('npm run build failed');

  const tmpDirs = [];
  const results = [];
  try {
    for (const target of targets) {
      let result;
      try {
        result = await runTarget(target, tmpDirs);
      } catch (error) {
        result = { label: target.label, spec: target.spec, outcome: `error: ${error.message}` };
      }
      results.push(result);
      log(
        `${result.label}: ${result.outcome}` +
          (result.passed !== undefined ? ` (${result.passed} passed, ${result.failed} failed, ${result.skipped} skipped)` : '') +
          (result.seconds !== undefined ? ` in ${result.seconds} s` : '') +
          (result.outcome !== 'pass' && result.logFile ? `; log: ${result.logFile}` : ''),
      );
      if (result.outcome !== 'pass' && result.logFile) {
        // Keep the evidence of a failure even without --keep.
        const kept = path.join(os.tmpdir(), `dedup-compat-${target.label}-${Date.now()}.log`);
        fs.copyFileSync(result.logFile, kept);
        result.logFile = kept;
        log(`${result.label}: log kept at ${kept}`);
      }
    }
  } finally {
    if (keep) log(`kept: ${tmpDirs.join(' ')}`);
    else for (const dir of tmpDirs) fs.rmSync(dir, { recursive: true, force: true });
  }

  process.stdout.write(`\n${table(results)}\n\n`);
  if (write) {
    writeReport(results);
    log('wrote docs/compat.md');
  }
  const passed = results.filter((r) => r.outcome === 'pass').length;
  process.stdout.write(`compat: ${passed} passed, ${results.length - passed} failed\n`);
  process.exitCode = passed === results.length ? 0 : 1;
}

main().catch((error) => {
  process.stderr.write(`[compat] ${error.stack || error}\n`);
  process.exitCode = 1;
});
