/**
 * A whole Node-RED runtime in a separate OS process, for the tests that need
 * two of them racing each other through one Redis.
 *
 * The child (runtime-child.ts) embeds Node-RED the way an application does
 * (`RED.init` + `RED.start`, editor and HTTP disabled, nothing listening),
 * with a temporary userDir holding flows.json and flows_cred.json, and this
 * package loaded from the working copy through `nodesDir`, so it gets the
 * real node loader and message catalogs. The parent drives it over the IPC
 * channel: inject messages into nodes, wait until every one of them has
 * called done(), and collect what reached the "sink" nodes.
 */
import { fork, type ChildProcess } from 'child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'fs';
import { tmpdir } from 'os';
import { join } from 'path';
import type { FlowNode } from './node-red-helper';
import { onProcessEnd } from './redis-server';

export interface RuntimeSpec {
  /** For messages and logs: "A", "B". */
  name: string;
  /** The flow, as the editor exports it. */
  flow: FlowNode[];
  /** Credentials by node id (written unencrypted: credentialSecret is false). */
  credentials?: Record<string, Record<string, string>>;
  /** Nodes whose incoming messages are recorded (junctions, usually). */
  sinks: readonly string[];
  /** Nodes whose done() calls are counted: the ones messages are injected into. */
  watch: readonly string[];
  /** When set, function nodes find an ioredis client of it at global.get('naiveRedis'). */
  naiveRedisUrl?: string;
}

/** What a sink saw of one message. */
export interface Recorded {
  id: string;
  dedup?: Record<string, unknown>;
  naive?: unknown;
  error?: string;
}

export interface RuntimeResults {
  sinks: Record<string, Recorded[]>;
  /** node id -> _msgid -> how many times done() was called for it. */
  completions: Record<string, Record<string, number>>;
  /** Warnings and errors the runtime logged. */
  logged: { level: number; type?: string; text: string }[];
  /** Uncaught exceptions and unhandled rejections in the child. */
  crashes: string[];
}

export type Injection = [nodeId: string, msg: Record<string, unknown>];

export type ToChild =
  | { type: 'start'; spec: RuntimeSpec; userDir: string; packageDir: string }
  | { type: 'inject'; seq: number; items: Injection[] }
  | { type: 'results' }
  | { type: 'stop' };

export type FromChild =
  | { type: 'ready'; startMs: number }
  | { type: 'injected'; seq: number }
  | { type: 'results'; results: RuntimeResults }
  | { type: 'failed'; error: string };

const PACKAGE_DIR = join(__dirname, '..', '..');
const CHILD_SCRIPT = join(__dirname, 'runtime-child.ts');
const START_TIMEOUT_MS = 30_000;
const STOP_TIMEOUT_MS = 20_000;

const children = new Set<ChildProcess>();
const userDirs = new Set<string>();
let exitHookInstalled = false;

function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  // The children also exit when the IPC channel closes; this covers a
  // parent that ends while a child is stuck in a busy loop, and the userDirs.
  onProcessEnd(() => {
    for (const child of children) child.kill('SIGKILL');
    for (const dir of userDirs) rmSync(dir, { recursive: true, force: true });
  });
}

export class RuntimeProcess {
  private readonly waiters = new Map<string, { resolve: (m: FromChild) => void; reject: (e: Error) => void }>();
  private stderr = '';
  private exited: Promise<void>;
  private exitError: Error | undefined;
  private seq = 0;

  private constructor(
    readonly name: string,
    private readonly child: ChildProcess,
    private readonly userDir: string,
  ) {
    child.stderr?.on('data', (chunk: Buffer) => {
      this.stderr = (this.stderr + chunk.toString('utf8')).slice(-8000);
    });
    child.on('message', (raw) => this.dispatch(raw as FromChild));
    this.exited = new Promise((resolve) => {
      child.once('exit', (code, signal) => {
        children.delete(child);
        this.exitError = new Error(`Node-RED runtime ${name} exited (${code ?? signal}):\n${this.stderr}`);
        for (const waiter of this.waiters.values()) waiter.reject(this.exitError);
        this.waiters.clear();
        resolve();
      });
    });
  }

  /** Forks the child, starts Node-RED in it with the spec's flow, and waits until the flow runs. */
  static async start(spec: RuntimeSpec): Promise<RuntimeProcess> {
    installExitHook();
    const userDir = mkdtempSync(join(tmpdir(), `node-red-dedup-runtime-${spec.name}-`));
    userDirs.add(userDir);
    writeFileSync(join(userDir, 'flows.json'), JSON.stringify(spec.flow, null, 2));
    writeFileSync(join(userDir, 'flows_cred.json'), JSON.stringify(spec.credentials ?? {}, null, 2));
    const child = fork(CHILD_SCRIPT, [], {
      execArgv: ['--require', require.resolve('tsx/cjs')],
      stdio: ['ignore', 'inherit', 'pipe', 'ipc'],
      env: { ...process.env, NODE_RED_DEDUP_RUNTIME: spec.name },
    });
    children.add(child);
    const runtime = new RuntimeProcess(spec.name, child, userDir);
    try {
      await runtime.request({ type: 'start', spec, userDir, packageDir: PACKAGE_DIR }, 'ready', START_TIMEOUT_MS);
    } catch (error) {
      await runtime.stop();
      throw error;
    }
    return runtime;
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  /**
   * Hands each message to its node (in one turn of the child's event loop)
   * and resolves once every one of them has called done().
   */
  async inject(items: Injection[], timeoutMs = 30_000): Promise<void> {
    const seq = ++this.seq;
    await this.request({ type: 'inject', seq, items }, `injected:${seq}`, timeoutMs);
  }

  async results(): Promise<RuntimeResults> {
    const reply = await this.request({ type: 'results' }, 'results', 30_000);
    if (reply.type !== 'results') throw new Error('unexpected reply');
    return reply.results;
  }

  /** Stops Node-RED (every node's close handler runs), then the process; kills it if that hangs. */
  async stop(): Promise<void> {
    if (this.child.exitCode === null && this.child.signalCode === null) {
      if (this.child.connected) this.child.send({ type: 'stop' } satisfies ToChild);
      let timer: NodeJS.Timeout | undefined;
      const hung = await Promise.race([
        this.exited.then(() => false),
        new Promise<boolean>((resolve) => {
          timer = setTimeout(() => resolve(true), STOP_TIMEOUT_MS);
        }),
      ]);
      if (timer) clearTimeout(timer);
      if (hung) {
        this.child.kill('SIGKILL');
        await this.exited;
      }
    }
    userDirs.delete(this.userDir);
    rmSync(this.userDir, { recursive: true, force: true });
  }

  private request(message: ToChild, replyKey: string, timeoutMs: number): Promise<FromChild> {
    if (this.exitError) return Promise.reject(this.exitError);
    return new Promise<FromChild>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiters.delete(replyKey);
        reject(new Error(`Node-RED runtime ${this.name}: no "${replyKey}" within ${timeoutMs} ms\n${this.stderr}`));
      }, timeoutMs);
      this.waiters.set(replyKey, {
        resolve: (reply) => {
          clearTimeout(timer);
          resolve(reply);
        },
        reject: (error) => {
          clearTimeout(timer);
          reject(error);
        },
      });
      this.child.send(message);
    });
  }

  private dispatch(message: FromChild): void {
    const key = message.type === 'injected' ? `injected:${message.seq}` : message.type;
    if (message.type === 'failed') {
      const error = new Error(`Node-RED runtime ${this.name} failed: ${message.error}`);
      for (const waiter of this.waiters.values()) waiter.reject(error);
      this.waiters.clear();
      return;
    }
    const waiter = this.waiters.get(key);
    this.waiters.delete(key);
    waiter?.resolve(message);
  }
}
