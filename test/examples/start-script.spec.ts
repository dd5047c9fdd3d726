/**
 * `npm start` (scripts/start.js) as a process manager meets it: a SIGTERM to
 * npm alone stops Node-RED and frees its port, and with REDIS_URL the
 * examples start afresh (their own keys removed, nobody else's).
 *
 * npm runs the start script through `sh -c "npm run build && node
 * scripts/start.js"`, and passes a SIGTERM to that shell only. The test runs
 * a real npm on a package whose start script has the same shape without the
 * build (`true && node <this repo>/scripts/start.js`): the build is the test
 * command's first step already, and rebuilding nodes/ under running tests
 * would race them.
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'fs';
import { request } from 'http';
import { tmpdir } from 'os';
import { join, resolve } from 'path';
import { closeRedisClient, newRedisClient, sharedRedis, useRedis } from '../support/global-hooks';
import { freePort, HOST } from '../support/redis-server';

const ROOT = resolve(__dirname, '..', '..');

interface Started {
  npm: ChildProcess;
  port: number;
  output(): string;
  exited: Promise<void>;
}

const started: Started[] = [];
const dirs: string[] = [];

/** Polls an async condition every 100 ms until it holds, or fails after timeoutMs. */
async function until(condition: () => Promise<boolean>, description: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${description}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Answers true when something answers HTTP on the port. */
function answers(port: number): Promise<boolean> {
  return new Promise((done) => {
    const req = request({ host: HOST, port, path: '/', timeout: 1000 }, (res) => {
      res.resume();
      done(true);
    });
    req.on('error', () => done(false));
    req.on('timeout', () => {
      req.destroy();
      done(false);
    });
    req.end();
  });
}

async function npmStart(env: Record<string, string> = {}): Promise<Started> {
  const dir = mkdtempSync(join(tmpdir(), 'dedup-start-'));
  dirs.push(dir);
  const script = `true && node ${JSON.stringify(join(ROOT, 'scripts', 'start.js'))}`;
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'start-under-npm', private: true, scripts: { start: script } }));
  const port = await freePort();
  const childEnv: NodeJS.ProcessEnv = { ...process.env, PORT: String(port), DEDUP_START_USER_DIR: join(dir, 'user'), npm_config_update_notifier: 'false', ...env };
  if (env.REDIS_URL === undefined) delete childEnv.REDIS_URL;
  // A process group of its own, so that clean-up can end what a failed test left behind; the test itself signals npm alone.
  const npm = spawn('npm', ['start'], { cwd: dir, env: childEnv, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  let output = '';
  npm.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  npm.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<void>((done) => npm.once('exit', () => done()));
  const run: Started = { npm, port, output: () => output, exited };
  started.push(run);
  await until(async () => npm.exitCode !== null || (await answers(port)), `Node-RED on port ${port}`, 60_000);
  assert.equal(npm.exitCode, null, `npm start exited early:\n${output}`);
  return run;
}

/**
 * Waits for a node's status, as the editor sees it, to match: a child Node
 * (Node 20 has WebSocket behind a flag) subscribes to the editor's comms
 * channel, whose status messages are retained, and prints each status text
 * of the node until one matches.
 */
function statusMatching(port: number, nodeId: string, pattern: RegExp, timeoutMs = 30_000): Promise<string> {
  const script = `
    const seen = [];
    const ws = new WebSocket('ws://${HOST}:${port}/comms');
    ws.onopen = () => ws.send(JSON.stringify({ subscribe: 'status/${nodeId}' }));
    ws.onmessage = (event) => {
      for (const m of [].concat(JSON.parse(event.data))) {
        if (m.topic !== 'status/${nodeId}' || !m.data || m.data.text === undefined) continue;
        seen.push(m.data.text);
        if (new RegExp(process.env.PATTERN).test(m.data.text)) { console.log(m.data.text); process.exit(0); }
      }
    };
    setTimeout(() => { console.log(JSON.stringify(seen)); process.exit(1); }, ${timeoutMs});
  `;
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, ['--experimental-websocket', '--no-warnings', '-e', script], { env: { ...process.env, PATTERN: pattern.source }, stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout?.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.on('exit', (code) => (code === 0 ? done(out.trim()) : fail(new Error(`status of ${nodeId} never matched ${pattern}; seen: ${out.trim()}`))));
  });
}

/** The The Things Stack node of examples/lorawan-uplinks.json. */
const TTS_NODE = '10ba7a0b1e0c1004';

async function signalNpmOnly(run: Started, signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
  assert.ok(run.npm.pid !== undefined);
  process.kill(run.npm.pid, signal);
  await until(async () => !(await answers(run.port)), `port ${run.port} free after ${signal} to npm\n${run.output()}`, 15_000);
  await Promise.race([run.exited, new Promise((_, fail) => setTimeout(() => fail(new Error(`npm still running\n${run.output()}`)), 15_000))]);
}

describe('npm start (scripts/start.js)', function () {
  this.timeout(120_000);

  afterEach(function () {
    // What a failed test left behind: the process group of the npm it started.
    for (const run of started.splice(0)) {
      if (run.npm.pid === undefined) continue;
      try {
        process.kill(-run.npm.pid, 'SIGKILL');
      } catch {
        // The group has ended.
      }
    }
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  it('stops Node-RED and frees its port when only npm gets SIGTERM', async function () {
    const run = await npmStart();
    await signalNpmOnly(run);
    assert.doesNotMatch(run.output(), /EADDRINUSE/);
  });

  it("answers Node-RED 4's update-check question in its settings, so the editor opens on the examples", async function () {
    const run = await npmStart();
    // The editor asks (a modal over the workspace) while telemetryEnabled is undefined.
    const response = await fetch(`http://${HOST}:${run.port}/settings`);
    const settings = (await response.json()) as { telemetryEnabled?: boolean };
    assert.equal(settings.telemetryEnabled, false);
    await signalNpmOnly(run);
  });

  it('stops Node-RED when npm alone is killed outright (SIGKILL), its shell left waiting', async function () {
    const run = await npmStart();
    await signalNpmOnly(run, 'SIGKILL');
  });

  describe('with REDIS_URL', function () {
    useRedis();

    it("removes the examples' keys from the last run, and only theirs, before Node-RED starts", async function () {
      const redis = newRedisClient();
      try {
        // The last run's keys, as the examples' dedup-redis connection names them, and a user's key beside them.
        await redis.set('dedup-example:rc:{planted-by-test}:1:0123456789abcdef', '1');
        await redis.set('dedup-example:rc:epoch', '7');
        await redis.set('users-own:key', 'keep');
        const run = await npmStart({ REDIS_URL: sharedRedis().url });
        assert.equal(await redis.exists('dedup-example:rc:{planted-by-test}:1:0123456789abcdef'), 0, 'the last run\'s key is gone');
        assert.equal(await redis.get('users-own:key'), 'keep', 'a key outside the examples\' prefix is untouched');
        assert.match(run.output(), /Removed the examples' \d+ key\(s\) under dedup-example:/);
        await signalNpmOnly(run);
      } finally {
        await redis.del('users-own:key');
        await closeRedisClient(redis);
      }
    });

    it('shows lorawan-uplinks as its comment says on a second start too (8 / 5 / 3, not 8 / 0 / 8 from the last run)', async function () {
      for (const start of ['first', 'second']) {
        const run = await npmStart({ REDIS_URL: sharedRedis().url });
        const text = await statusMatching(run.port, TTS_NODE, /^8 received/);
        assert.match(text, /^8 received \/ 5 unique \/ 3 suppressed \/ 0 rejected$/, `${start} start`);
        await signalNpmOnly(run);
      }
    });
  });
});
