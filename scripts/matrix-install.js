/*
 * What the two test matrices share (scripts/compat.js: the node tests on
 * each Node-RED line; scripts/e2e-matrix.js: the editor tests in the browser
 * on Node-RED 5): running a command into a log, a Node.js binary from the
 * npm registry's `node` package when this machine's Node is too old for a
 * Node-RED line, copying the checkout into a test directory, and
 * docs/compat.md's sections. scripts/ioredis-matrix.js runs and copies with them too.
 */
'use strict';
const fs = require('fs');
const path = require('path');
const { spawn } = require('child_process');

const ROOT = path.resolve(__dirname, '..');

/** Runs a command; resolves with its exit code (or "signal X"), its output appended to `options.logFile`. */
function run(command, commandArgs, options) {
  return new Promise((resolve, reject) => {
    const out = fs.openSync(options.logFile, 'a');
    fs.writeSync(out, `\n$ ${command} ${commandArgs.join(' ')}\n`);
    const child = spawn(command, commandArgs, {
      cwd: options.cwd,
      env: options.env || process.env,
      stdio: ['ignore', out, out],
    });
    child.on('error', (error) => {
      fs.closeSync(out);
      reject(error);
    });
    child.on('exit', (code, signal) => {
      fs.closeSync(out);
      resolve(code === null ? `signal ${signal}` : code);
    });
  });
}

/** True when `version` ("v22.23.3") is at least [major, minor]. */
function nodeVersionAtLeast(version, [major, minor]) {
  const [a, b] = version.replace(/^v/, '').split('.').map(Number);
  return a > major || (a === major && b >= minor);
}

/**
 * Installs the registry's `node@<major>` package into `dir` (which must
 * exist) and returns the directory of its binary. The package ships the
 * Node.js binary itself, so nothing is fetched from anywhere but the registry.
 */
async function installNode(major, dir, logFile) {
  const code = await run('npm', ['install', '--no-audit', '--no-fund', '--loglevel=error', `node@${major}`], { cwd: dir, logFile });
  const bin = path.join(dir, 'node_modules', 'node', 'bin');
  if (code !== 0 || !fs.existsSync(path.join(bin, 'node'))) throw new Error(`could not install node@${major} from npm (see ${logFile})`);
  return bin;
}

/** The environment for commands that must run on the Node in `bin`: npm's lifecycle scripts build for the Node that will load them. */
function envWithNode(bin) {
  return { ...process.env, PATH: `${bin}${path.delimiter}${process.env.PATH}` };
}

/** The body of the `## heading` section of a Markdown file (up to the next `## `), or undefined. */
function readSection(file, heading) {
  if (!fs.existsSync(file)) return undefined;
  const text = fs.readFileSync(file, 'utf8');
  const start = text.indexOf(`\n## ${heading}\n`);
  if (start < 0) return undefined;
  const rest = text.slice(start + 1);
  // A section ends at the next heading, or at the marked section another
  // script writes (the ioredis table of scripts/ioredis-matrix.js).
  const ends = [rest.indexOf('\n## ', 1), rest.indexOf('\n<!-- ', 1)].filter((i) => i >= 0);
  const next = ends.length > 0 ? Math.min(...ends) : -1;
  return (next < 0 ? rest : rest.slice(0, next + 1)).trimEnd();
}

/** Replaces (or appends) the `## heading` section of a Markdown file with `section` (which starts with that heading). */
function writeSection(file, heading, section) {
  const text = fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : '';
  const old = readSection(file, heading);
  const updated = old === undefined ? `${text.trimEnd()}\n\n${section}\n` : text.replace(old, () => section.trimEnd());
  fs.writeFileSync(file, updated.endsWith('\n') ? updated : `${updated}\n`);
}

/**
 * Copies what of the checkout a test directory needs (`entries`, each a top
 * path of the repository), leaving out the folders of test/ in `skipUnderTest`
 * that its suites do not use.
 */
function copyCheckout(dir, entries, skipUnderTest) {
  const testDir = path.join(ROOT, 'test');
  for (const entry of entries) {
    const from = path.join(ROOT, entry);
    if (!fs.existsSync(from)) continue;
    fs.cpSync(from, path.join(dir, entry), {
      recursive: true,
      filter: (src) => !(path.dirname(src) === testDir && skipUnderTest.has(path.basename(src))),
    });
  }
}

module.exports = { run, nodeVersionAtLeast, installNode, envWithNode, readSection, writeSection, copyCheckout };
