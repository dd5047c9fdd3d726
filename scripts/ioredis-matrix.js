#!/usr/bin/env node
/*
 * The Redis suites on the other ioredis major (issue 30, item 1). The pack
 * declares "^5.8.2 || ^6.0.0"; the repository's own install (package-lock)
 * holds 6.x, which the rest of `npm test` runs on. This script runs the
 * suites that the ioredis major can change (one server, Sentinel, Cluster,
 * the fault tests and the store contracts: SUITES) once more on the oldest
 * 5.x the range declares, and is the first step of `npm test`'s test run.
 *
 * That ioredis is installed from the npm registry into a temporary
 * directory of its own, with a copy of the compiled pack and the tests; every
 * other package the tests need is a symlink into the repository's
 * node_modules, which is never touched. (Node resolves a symlinked
 * package's own requires from its real place, so node-red, mocha and tsx
 * work as they are; the pack's and the tests' `require('ioredis')` finds the
 * temporary directory's.)
 *
 * Options:
 *   --write        rewrite the ioredis table of docs/compat.md from this run
 *   --keep         keep the temporary directory (its path is printed)
 *   --spec <path>  run this spec (or folder) instead of SUITES; repeatable
 *   --ioredis <v>  test this version instead (e.g. --ioredis 5.11.1); repeatable,
 *                  e.g. `--ioredis 5.8.2 --ioredis 6.0.0 --write` for both rows of the table
 * Exit status: 0 when the suites passed, 1 otherwise.
 */
'use strict';
const fs = require('fs');
const os = require('os');
const path = require('path');
const { spawnSync } = require('child_process');
const { copyCheckout, run } = require('./matrix-install');

const ROOT = path.resolve(__dirname, '..');

/** The oldest release of the ioredis 5 range package.json declares. */
const OLDEST_5 = '5.8.2';
/** The suites the ioredis major can change: every one that opens a Redis connection of the pack's. */
const SUITES = ['test/redis', 'test/faults', 'test/contract', 'test/scale', 'test/nodes/dedup-redis.spec.ts'];
/**
 * Left out, to keep the added time small: what they measure is the scripts'
 * (the same bytes on either major), at a size that makes them the slowest
 * tests of these suites. The cross-process race (two Node-RED processes,
 * 10,000 pings; the in-process race of test/redis/race runs here) and the
 * resets among 200,000 unrelated keys (the resets among few keys run here).
 */
const LEFT_OUT_FILES = ['test/scale/cross-process-race.spec.ts'];
const LEFT_OUT_TITLES = '200,000 unrelated';
const COPY = ['package.json', 'tsconfig.json', 'tsconfig.test.json', '.mocharc.json', 'src', 'nodes', 'lua', 'resources', 'examples', 'docs', 'test'];
/** Big folders of test/ that no suite here uses. */
const SKIP_UNDER_TEST = new Set(['e2e', 'system']);
const BEGIN = '<!-- ioredis-matrix: begin -->';
const END = '<!-- ioredis-matrix: end -->';

const args = process.argv.slice(2);
const keep = args.includes('--keep');
const write = args.includes('--write');
const asked = args.flatMap((a, i) => (a === '--ioredis' && args[i + 1] ? [args[i + 1]] : []));
const versions = asked.length > 0 ? asked : [OLDEST_5];
const specs = args.flatMap((a, i) => (a === '--spec' && args[i + 1] ? [args[i + 1]] : []));
const suites = specs.length > 0 ? specs : SUITES;

function log(line) {
  process.stdout.write(`[ioredis-matrix] ${line}\n`);
}

/** Symlinks every package of the repository's node_modules that `dir`'s own install does not hold. */
function linkTheRest(dir) {
  const theirs = path.join(ROOT, 'node_modules');
  const ours = path.join(dir, 'node_modules');
  const link = (from, to) => fs.symlinkSync(from, to, 'dir');
  for (const entry of fs.readdirSync(theirs)) {
    if (entry.startsWith('.')) continue;
    const from = path.join(theirs, entry);
    const to = path.join(ours, entry);
    if (!entry.startsWith('@')) {
      if (!fs.existsSync(to)) link(from, to);
      continue;
    }
    // A scope: ioredis brings its own @ioredis/commands, of its own major.
    if (!fs.existsSync(to)) {
      link(from, to);
      continue;
    }
    for (const name of fs.readdirSync(from)) {
      if (!fs.existsSync(path.join(to, name))) link(path.join(from, name), path.join(to, name));
    }
  }
}

/** The ioredis the copied pack really loads: resolved from its own folder. */
function loadedIoredis(dir) {
  const probe = spawnSync(process.execPath, ['-e', "const p=require.resolve('ioredis/package.json');console.log(p+' '+require(p).version)"], {
    cwd: path.join(dir, 'nodes'),
    encoding: 'utf8',
  });
  const [where, loaded] = probe.stdout.trim().split(' ');
  return { where, loaded };
}

function summaryFrom(logFile) {
  const text = fs.readFileSync(logFile, 'utf8');
  const matches = [...text.matchAll(/^tests: (\d+) passed, (\d+) failed, (\d+) skipped$/gm)];
  const last = matches[matches.length - 1];
  return last ? { passed: Number(last[1]), failed: Number(last[2]), skipped: Number(last[3]) } : undefined;
}

function writeDoc(results) {
  const file = path.join(ROOT, 'docs', 'compat.md');
  const table = [
    BEGIN,
    '## ioredis',
    '',
    'The pack declares `ioredis` `^5.8.2 || ^6.0.0`. The repository installs 6.x, and all of `npm test` runs on it;',
    '`scripts/ioredis-matrix.js`, the first step of `npm test`, runs the suites the ioredis major can change',
    `(${SUITES.map((s) => `\`${s}\``).join(', ')}: one server, Sentinel, Cluster, faults, store contracts;`,
    `without \`${LEFT_OUT_FILES.join('`, `')}\` and the tests named "${LEFT_OUT_TITLES}", which measure the scripts at size)`,
    'once more on the oldest 5.x declared, installed from the npm registry into a directory of its own.',
    'The pack sets the options it depends on itself (RESP2, no command timeout, its retry curve, one',
    'retry per request, the offline queue, TCP keep-alive): see [redis.md](redis.md#ioredis-5-and-6).',
    '',
    '| ioredis | installed | suites above: passed | failed | skipped | result | seconds |',
    '| --- | --- | ---: | ---: | ---: | --- | ---: |',
    ...results.map(
      (r) =>
        `| ${r.loaded ?? r.version} | ${r.loaded === r.primary ? "also the repository's (all of `npm test` runs on it)" : 'by the matrix only'} | ${r.passed ?? '-'} | ${r.failed ?? '-'} | ${r.skipped ?? '-'} | ${r.outcome} | ${r.seconds} |`,
    ),
    '',
    `Run on ${new Date().toISOString().slice(0, 10)} on Node ${process.version}, ${os.platform()} ${os.arch()} (two shared cores).`,
    END,
  ].join('\n');
  const text = fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : '# Compatibility\n';
  const start = text.indexOf(BEGIN);
  const end = text.indexOf(END);
  const next = start >= 0 && end > start ? text.slice(0, start) + table + text.slice(end + END.length) : `${text.trimEnd()}\n\n${table}\n`;
  fs.writeFileSync(file, next);
  log('wrote the ioredis table of docs/compat.md');
}

/** Installs one ioredis into a directory of its own and runs the suites on it. */
async function runOne(version, primary) {
  const started = Date.now();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dedup-ioredis-'));
  const logFile = path.join(dir, 'ioredis-matrix.log');
  const result = { version, primary, outcome: 'fail' };
  try {
    fs.writeFileSync(path.join(dir, 'package.json'), `${JSON.stringify({ name: 'dedup-ioredis-matrix', private: true, dependencies: { ioredis: version } }, null, 2)}\n`);
    log(`installing ioredis@${version} in ${dir}`);
    const installed = await run('npm', ['install', '--no-audit', '--no-fund', '--no-package-lock', '--loglevel=error'], { cwd: dir, logFile });
    if (installed !== 0) throw new Error(`npm install ioredis@${version} failed (see ${logFile})`);
    linkTheRest(dir);
    copyCheckout(dir, COPY, SKIP_UNDER_TEST);
    const { where, loaded } = loadedIoredis(dir);
    result.loaded = loaded;
    if (loaded !== version || !where.startsWith(path.join(dir, 'node_modules'))) {
      throw new Error(`the copied pack loads ioredis ${loaded} from ${where}, not ${version} from ${dir}`);
    }
    log(`running ${suites.join(' ')} on ioredis ${loaded} (the repository's is ${primary})`);
    const mocha = path.join(ROOT, 'node_modules', 'mocha', 'bin', 'mocha.js');
    const code = await run(
      process.execPath,
      [mocha, '--config', '.mocharc.json', ...LEFT_OUT_FILES.flatMap((f) => ['--ignore', f]), '--grep', LEFT_OUT_TITLES, '--invert', ...suites],
      { cwd: dir, logFile },
    );
    Object.assign(result, summaryFrom(logFile) ?? {});
    result.outcome = code === 0 && result.failed === 0 && result.passed > 0 ? 'pass' : 'fail';
  } catch (error) {
    result.outcome = `error: ${error.message}`;
  } finally {
    result.seconds = Math.round((Date.now() - started) / 1000);
    if (result.outcome !== 'pass' && fs.existsSync(logFile)) {
      // The evidence of a failure, in the CI log itself.
      process.stdout.write(fs.readFileSync(logFile, 'utf8').slice(-20_000));
    }
    if (keep) log(`kept: ${dir}`);
    else fs.rmSync(dir, { recursive: true, force: true });
  }
  log(
    `ioredis ${result.loaded ?? version}: ${result.outcome}` +
      (result.passed !== undefined ? ` (${result.passed} passed, ${result.failed} failed, ${result.skipped} skipped)` : '') +
      ` in ${result.seconds} s`,
  );
  return result;
}

async function main() {
  if (!fs.existsSync(path.join(ROOT, 'nodes', 'dedup-redis.js'))) {
    log('building the pack (npm run build)');
    if (spawnSync('npm', ['run', 'build'], { cwd: ROOT, stdio: 'inherit' }).status !== 0) throw new Error('npm run build failed');
  }
  const primary = JSON.parse(fs.readFileSync(path.join(ROOT, 'node_modules', 'ioredis', 'package.json'), 'utf8')).version;
  const results = [];
  for (const version of versions) results.push(await runOne(version, primary));
  if (write) writeDoc(results);
  process.exitCode = results.every((r) => r.outcome === 'pass') ? 0 : 1;
}

main().catch((error) => {
  process.stderr.write(`[ioredis-matrix] ${error.stack || error}\n`);
  process.exitCode = 1;
});
