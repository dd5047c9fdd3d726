/**
 * A real Node-RED for the browser tests: its own temporary user directory
 * with this pack linked into node_modules (as scripts/start.js does), on a
 * free loopback port, in a child process.
 *
 * Which Node-RED, on which Node: the devDependency on this process's Node by
 * default; E2E_NODE_RED (a node-red package directory) and E2E_NODE (a node
 * binary) name another install, which is how scripts/e2e-matrix.js runs the
 * same specs on Node-RED 5 and Node 22. StartOptions.nodeRed overrides both.
 */
import { spawn, type ChildProcess } from 'child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'fs';
import { tmpdir } from 'os';
import { dirname, join, resolve } from 'path';
import { provideFunctionModules } from '../../support/packed-pack';
import { freePort, HOST } from '../../support/redis-server';

export const ROOT = resolve(__dirname, '..', '..', '..');
export const PACKAGE_NAME: string = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { name: string }).name;

/** What the examples' function nodes load (mqtt-scale-out writes to PostgreSQL). */
const EXAMPLE_FUNCTION_MODULES = ['pg'];
const DASHBOARD_MODULE = '@flowfuse/node-red-dashboard';

const READY_TIMEOUT_MS = 60_000;
const STOP_GRACE_MS = 5_000;

export interface NodeRedServer {
  readonly url: string;
  readonly port: number;
  readonly userDir: string;
  /** The tail of Node-RED's log, for failure messages. */
  log(): string;
  /** GET a path of the admin API and parse the JSON answer. */
  getJson<T>(path: string, headers?: Record<string, string>): Promise<T>;
  /** Replaces every flow through the admin API (a full deploy). */
  setFlows(flows: unknown[]): Promise<void>;
  stop(): Promise<void>;
}

/** A Node-RED install and the node binary to run it with. */
export interface NodeRedInstall {
  /** The node-red package's directory (the one holding red.js). */
  packageDir: string;
  /** The node binary that runs it. */
  node: string;
}

/** The install the tests run on: E2E_NODE_RED / E2E_NODE, else the devDependency on this Node. */
export function selectedInstall(): NodeRedInstall {
  return {
    packageDir: isOtherInstall() ? resolve(process.env.E2E_NODE_RED as string) : dirname(require.resolve('node-red/package.json')),
    node: process.env.E2E_NODE !== undefined && process.env.E2E_NODE !== '' ? process.env.E2E_NODE : process.execPath,
  };
}

/** True when E2E_NODE_RED names a Node-RED other than the devDependency. */
export function isOtherInstall(): boolean {
  return process.env.E2E_NODE_RED !== undefined && process.env.E2E_NODE_RED !== '';
}

/** The version of the Node-RED a spec runs on (its package.json), e.g. "5.0.7". */
export function nodeRedVersion(install: NodeRedInstall = selectedInstall()): string {
  return (JSON.parse(readFileSync(join(install.packageDir, 'package.json'), 'utf8')) as { version: string }).version;
}

/** The major version of that Node-RED, e.g. 5. */
export function nodeRedMajor(install: NodeRedInstall = selectedInstall()): number {
  return Number(nodeRedVersion(install).split('.')[0]);
}

export interface StartOptions {
  /** The Node-RED to start (default: selectedInstall()). */
  nodeRed?: NodeRedInstall;
  /** Flows to start with (default: none). */
  flows?: unknown[];
  /** Extra settings merged into settings.js. */
  settings?: Record<string, unknown>;
  /**
   * Load Node-RED Dashboard 2 (@flowfuse/node-red-dashboard, a
   * devDependency that Node-RED finds in this checkout's node_modules): off
   * unless asked, so that the other suites see the editor of a user with the
   * pack alone (Dashboard 2's own sidebar tab would take the sidebar over).
   */
  dashboard?: boolean;
}

const delay = (ms: number): Promise<void> => new Promise((done) => setTimeout(done, ms));

function settingsFile(port: number, extra: Record<string, unknown>, dashboard: boolean): string {
  const settings = {
    // Node-RED skips a module whose directory name is listed here, wherever it finds it.
    ...(dashboard ? {} : { nodesExcludes: ['node-red-dashboard'] }),
    uiHost: HOST,
    uiPort: port,
    flowFile: 'flows.json',
    // Credentials are encrypted in flows_cred.json with this key.
    credentialSecret: 'e2e-only-secret',
    // Nothing may reach beyond loopback: no telemetry, update check, palette catalogue or tours.
    telemetry: { enabled: false, updateNotification: false },
    diagnostics: { enabled: false, ui: false },
    // The examples' function modules (pg) are provided, never installed.
    externalModules: { palette: { allowInstall: false, allowUpdate: false, allowUpload: false }, modules: { allowInstall: false } },
    editorTheme: { tours: false, palette: { catalogues: [] }, projects: { enabled: false } },
    logging: { console: { level: 'info', metrics: false, audit: false } },
    ...extra,
  };
  return `module.exports = ${JSON.stringify(settings, null, 2)};\n`;
}

export async function startNodeRed(options: StartOptions = {}): Promise<NodeRedServer> {
  const userDir = mkdtempSync(join(tmpdir(), 'node-red-dedup-e2e-'));
  const link = join(userDir, 'node_modules', ...PACKAGE_NAME.split('/'));
  mkdirSync(dirname(link), { recursive: true });
  symlinkSync(ROOT, link, 'dir');
  // Dashboard 2 is found beside the devDependency's Node-RED in this
  // checkout's node_modules; another install (Node-RED 5 of the e2e matrix)
  // finds it only in the user directory, so it is linked there from the checkout.
  const dashboard = options.dashboard === true && isOtherInstall() ? [DASHBOARD_MODULE] : [];
  provideFunctionModules(userDir, [...EXAMPLE_FUNCTION_MODULES, ...dashboard]);
  writeFileSync(join(userDir, 'flows.json'), JSON.stringify(options.flows ?? []));

  let lastError: unknown;
  for (let attempt = 0; attempt < 3; attempt++) {
    const port = await freePort();
    writeFileSync(join(userDir, 'settings.js'), settingsFile(port, options.settings ?? {}, options.dashboard === true));
    try {
      const install = options.nodeRed ?? selectedInstall();
      return await launch(userDir, port, install, startedFlows(install, options.settings?.lang));
    } catch (error) {
      lastError = error;
    }
  }
  rmSync(userDir, { recursive: true, force: true });
  throw lastError;
}

/**
 * The log line that says the flows have started, in the runtime's language
 * (settings.lang): Node-RED logs it from its own message catalog, that of the
 * install started.
 */
function startedFlows(install: NodeRedInstall, lang: unknown): RegExp {
  if (typeof lang !== 'string' || lang === 'en-US') return /Started flows/;
  const runtime = dirname(require.resolve('@node-red/runtime/package.json', { paths: [install.packageDir] }));
  const catalog = join(runtime, 'locales', lang, 'runtime.json');
  const text = /"started-flows":\s*"([^"]+)"/.exec(readFileSync(catalog, 'utf8'))?.[1];
  if (text === undefined) throw new Error(`Node-RED's ${lang} runtime catalog has no "started-flows"`);
  return new RegExp(text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
}

async function launch(userDir: string, port: number, install: NodeRedInstall, started: RegExp): Promise<NodeRedServer> {
  const url = `http://${HOST}:${port}`;
  const redJs = join(install.packageDir, 'red.js');
  if (!existsSync(redJs)) throw new Error(`no Node-RED at ${install.packageDir} (no red.js)`);
  const child: ChildProcess = spawn(
    install.node,
    [redJs, '--userDir', userDir, '--settings', join(userDir, 'settings.js')],
    { cwd: userDir, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, NODE_RED_ENABLE_PROJECTS: 'false' } },
  );
  let output = '';
  const keep = (chunk: Buffer): void => {
    output = (output + chunk.toString('utf8')).slice(-20_000);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  const exited = new Promise<void>((done) => child.once('exit', () => done()));
  const onExit = (): void => {
    child.kill('SIGKILL');
  };
  process.once('exit', onExit);

  async function stop(): Promise<void> {
    process.removeListener('exit', onExit);
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), STOP_GRACE_MS);
      await exited;
      clearTimeout(timer);
    }
  }

  async function getJson<T>(path: string, headers: Record<string, string> = {}): Promise<T> {
    const response = await fetch(url + path, { headers: { Accept: 'application/json', ...headers } });
    if (!response.ok) throw new Error(`GET ${path}: HTTP ${response.status} ${await response.text()}`);
    return (await response.json()) as T;
  }

  async function setFlows(flows: unknown[]): Promise<void> {
    const response = await fetch(`${url}/flows`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'Node-RED-Deployment-Type': 'full' },
      body: JSON.stringify(flows),
    });
    if (!response.ok) throw new Error(`POST /flows: HTTP ${response.status} ${await response.text()}`);
  }

  const deadline = Date.now() + READY_TIMEOUT_MS;
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new Error(`Node-RED exited (${child.exitCode ?? child.signalCode}) before it was ready:\n${output}`);
    }
    // Ready once the HTTP API answers and the flows have started.
    if (started.test(output)) {
      try {
        await getJson('/settings');
        break;
      } catch {
        // Not listening yet.
      }
    }
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`Node-RED was not ready within ${READY_TIMEOUT_MS} ms:\n${output}`);
    }
    await delay(100);
  }

  return {
    url,
    port,
    userDir,
    log: () => output,
    getJson,
    setFlows,
    async stop() {
      await stop();
      rmSync(userDir, { recursive: true, force: true });
    },
  };
}
