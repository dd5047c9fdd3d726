/**
 * A real Node-RED (the devDependency's red.js) in a child process, with a
 * user directory that outlives the process, for the tests of what survives
 * what: deploys through the admin API, SIGTERM and a restart, `kill -9` and
 * a restart. The pack is linked into the user directory's node_modules, as
 * scripts/start.js does.
 */
import { spawn, type ChildProcess } from 'child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'fs';
import { tmpdir } from 'os';
import { dirname, join, resolve } from 'path';
import { freePort, HOST, onProcessEnd } from './redis-server';

const ROOT = resolve(__dirname, '..', '..');
const PACKAGE_NAME: string = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { name: string }).name;
const READY_TIMEOUT_MS = 60_000;
const STOP_GRACE_MS = 15_000;

export type DeploymentType = 'full' | 'flows' | 'nodes' | 'reload';

export interface NodeRedProcess {
  readonly url: string;
  readonly userDir: string;
  log(): string;
  /** Starts (or starts again) Node-RED on the same user directory. */
  start(): Promise<void>;
  /** SIGTERM: Node-RED stops its flows (close handlers run) and exits. */
  stop(): Promise<void>;
  /** SIGKILL: no close handler runs, as in a crash or a power cut of the process. */
  kill(): Promise<void>;
  /** A deploy through the admin API, of the given kind ("reload" is the editor's "Restart flows"). */
  deploy(flows: unknown[], type: DeploymentType): Promise<void>;
  get(path: string): Promise<unknown>;
  post(path: string, body: unknown): Promise<unknown>;
  /** Stops the process if it runs and removes the user directory. */
  dispose(): Promise<void>;
}

export async function nodeRedProcess(flows: unknown[], settings: Record<string, unknown> = {}): Promise<NodeRedProcess> {
  const userDir = mkdtempSync(join(tmpdir(), 'node-red-dedup-proc-'));
  const link = join(userDir, 'node_modules', ...PACKAGE_NAME.split('/'));
  mkdirSync(dirname(link), { recursive: true });
  symlinkSync(ROOT, link, 'dir');
  writeFileSync(join(userDir, 'flows.json'), JSON.stringify(flows));
  const port = await freePort();
  writeFileSync(
    join(userDir, 'settings.js'),
    `module.exports = ${JSON.stringify(
      {
        uiHost: HOST,
        uiPort: port,
        flowFile: 'flows.json',
        credentialSecret: false,
        telemetry: { enabled: false, updateNotification: false },
        diagnostics: { enabled: false, ui: false },
        externalModules: { palette: { allowInstall: false } },
        editorTheme: { tours: false, palette: { catalogues: [] }, projects: { enabled: false } },
        logging: { console: { level: 'info', metrics: false, audit: false } },
        ...settings,
      },
      null,
      2,
    )};\n`,
  );
  const url = `http://${HOST}:${port}`;
  let child: ChildProcess | undefined;
  let exited: Promise<void> = Promise.resolve();
  let output = '';
  onProcessEnd(() => {
    child?.kill('SIGKILL');
  });

  async function request(method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<unknown> {
    const response = await fetch(url + path, {
      method,
      headers: { Accept: 'application/json', ...(body === undefined ? {} : { 'Content-Type': 'application/json' }), ...headers },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await response.text();
    if (!response.ok) throw new Error(`${method} ${path}: HTTP ${response.status} ${text}`);
    return text === '' ? undefined : (JSON.parse(text) as unknown);
  }

  const running = (): boolean => child !== undefined && child.exitCode === null && child.signalCode === null;

  const process_: NodeRedProcess = {
    url,
    userDir,
    log: () => output,
    async start() {
      const started = output.length;
      const proc = spawn(process.execPath, [require.resolve('node-red/red.js'), '--userDir', userDir, '--settings', join(userDir, 'settings.js')], {
        cwd: userDir,
        stdio: ['ignore', 'pipe', 'pipe'],
        env: { ...process.env, NODE_RED_ENABLE_PROJECTS: 'false' },
      });
      child = proc;
      const keep = (chunk: Buffer): void => {
        output = (output + chunk.toString('utf8')).slice(-50_000);
      };
      proc.stdout?.on('data', keep);
      proc.stderr?.on('data', keep);
      exited = new Promise<void>((done) => proc.once('exit', () => done()));
      const deadline = Date.now() + READY_TIMEOUT_MS;
      for (;;) {
        if (!running()) throw new Error(`Node-RED exited before it was ready:\n${output.slice(started)}`);
        if (/Started flows/.test(output.slice(started))) {
          try {
            await request('GET', '/settings');
            return;
          } catch {
            // Not listening yet.
          }
        }
        if (Date.now() > deadline) throw new Error(`Node-RED was not ready within ${READY_TIMEOUT_MS} ms:\n${output.slice(started)}`);
        await new Promise((done) => setTimeout(done, 100));
      }
    },
    async stop() {
      if (!running()) return;
      child?.kill('SIGTERM');
      const timer = setTimeout(() => child?.kill('SIGKILL'), STOP_GRACE_MS);
      await exited;
      clearTimeout(timer);
    },
    async kill() {
      if (!running()) return;
      child?.kill('SIGKILL');
      await exited;
    },
    async deploy(flowsToDeploy, type) {
      const from = output.length;
      await request('POST', '/flows', flowsToDeploy, { 'Node-RED-Deployment-Type': type });
      // The answer comes once the flows are saved; they start a moment later.
      const deadline = Date.now() + READY_TIMEOUT_MS;
      while (!/Started (modified )?(flows|nodes)/.test(output.slice(from))) {
        if (Date.now() > deadline) throw new Error(`the flows did not start after a ${type} deploy:\n${output.slice(from)}`);
        await new Promise((done) => setTimeout(done, 20));
      }
    },
    get: (path) => request('GET', path),
    post: (path, body) => request('POST', path, body),
    async dispose() {
      await process_.stop();
      rmSync(userDir, { recursive: true, force: true });
    },
  };
  return process_;
}
