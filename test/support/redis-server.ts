/**
 * Throwaway redis-server processes for the tests: loopback only, no
 * persistence, each in its own temporary working directory, on a port nobody
 * else is using.
 *
 * global-hooks.ts runs one polite server (startRedisServer), started when
 * the first suite that calls useRedis() runs and shared by all of them; the
 * fault and scale tests hurt theirs (ManagedRedis): a
 * SIGKILL (a crash, not a shutdown), a server down for a while and then back
 * on the same port (an empty script cache, dropped connections, lost keys),
 * and sentinels, which take a config file rather than command-line options.
 *
 * Every process started here is killed, and its directory removed, when the
 * test process ends: stop() is the polite path; an 'exit' hook and
 * SIGINT/SIGTERM/SIGHUP handlers are the last resort (only a SIGKILL of the
 * test process itself can orphan one).
 */
import { spawn, spawnSync, type ChildProcess } from 'child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'fs';
import { connect, createServer } from 'net';
import { tmpdir } from 'os';
import { join } from 'path';

export interface RedisServer {
  readonly host: string;
  readonly port: number;
  /** `redis://127.0.0.1:<port>` */
  readonly url: string;
  /** False for a server named by REDIS_URL, which the tests cannot restart. */
  readonly owned: boolean;
  /** SIGTERM, then SIGKILL after a grace period; safe to call twice. */
  stop(): Promise<void>;
  /** Kills the server and starts a fresh one on the same port (data and scripts are gone). */
  restart(): Promise<void>;
}

export const HOST = '127.0.0.1';
const READY_TIMEOUT_MS = 10_000;
const STOP_GRACE_MS = 3_000;
const START_ATTEMPTS = 5;

export const INSTALL_HINT =
  'The Redis-backed tests run against a real redis-server, and none could be run ' +
  '(looked for `redis-server` on PATH, or the binary named by REDIS_SERVER_BIN). ' +
  'Install one (Debian/Ubuntu: `sudo apt-get install redis-server`; macOS: `brew install redis`), ' +
  'or point REDIS_URL at a running, disposable Redis (e.g. REDIS_URL=redis://127.0.0.1:6379/15): ' +
  'the tests flush that database.';

/** The binary to run; REDIS_SERVER_BIN overrides the one on PATH. */
function redisServerBinary(): string {
  return process.env.REDIS_SERVER_BIN ?? 'redis-server';
}

/** True when the binary can be run at all. */
export function redisServerAvailable(): boolean {
  const probe = spawnSync(redisServerBinary(), ['--version'], { stdio: 'ignore' });
  return probe.error === undefined && probe.status === 0;
}

/**
 * For the suites that start servers of their own: they run wherever
 * redis-server exists. Only when it truly does not (the run then uses
 * REDIS_URL for everything else) are they skipped, and the skip is shouted,
 * so that a CI log never reads as "all green" with these tests silently gone.
 */
export function skipLoudlyWithoutRedisServer(context: Mocha.Context, what: string): void {
  if (redisServerAvailable()) return;
  const bar = '!'.repeat(78);
  process.stderr.write(
    `\n${bar}\n!! SKIPPED: ${what}\n!! No runnable redis-server (on PATH, or named by REDIS_SERVER_BIN), so these tests\n` +
      `!! cannot start the servers they need.\n!! ${INSTALL_HINT}\n${bar}\n\n`,
  );
  context.skip();
}

// Children still running, their working directories, and other modules'
// cleanups; all run synchronously if the process ends before stop().
const running = new Set<ChildProcess>();
const directories = new Set<string>();
const cleanups = new Set<() => void>();
let hooksInstalled = false;

function killEverything(): void {
  for (const child of running) {
    try {
      child.kill('SIGKILL');
    } catch {
      // Already gone: nothing to clean up.
    }
  }
  running.clear();
  for (const dir of directories) rmSync(dir, { recursive: true, force: true });
  directories.clear();
  for (const cleanup of cleanups) cleanup();
}

/**
 * Runs `cleanup` (synchronous) when the test process ends, on exit or on a
 * signal: for runtime-process.ts, whose children and directories must go too.
 */
export function onProcessEnd(cleanup: () => void): void {
  cleanups.add(cleanup);
  installHooks();
}

function installHooks(): void {
  if (hooksInstalled) return;
  hooksInstalled = true;
  process.on('exit', killEverything);
  // A signal's default action ends the process without an 'exit' event, so
  // everything is killed here first. If nobody else listens for the signal,
  // it is then raised again to keep its default effect (exit).
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    const onSignal = (): void => {
      killEverything();
      if (process.listenerCount(signal) === 1) {
        process.removeListener(signal, onSignal);
        process.kill(process.pid, signal);
      }
    };
    process.on(signal, onSignal);
  }
}

/** A port that was free a moment ago: bind port 0 on loopback and let it go. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.once('error', reject);
    server.listen(0, HOST, () => {
      const address = server.address();
      if (address === null || typeof address === 'string') {
        server.close();
        reject(new Error('could not read the port of a loopback listener'));
        return;
      }
      server.close(() => resolve(address.port));
    });
  });
}

/** One PING over a raw socket: true on +PONG, or on -NOAUTH (a server with a password is up too). */
function answers(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: HOST, port });
    let reply = '';
    const finish = (ok: boolean): void => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(500, () => finish(false));
    socket.once('error', () => finish(false));
    socket.once('connect', () => socket.write('PING\r\n'));
    socket.on('data', (chunk: Buffer) => {
      reply += chunk.toString('latin1');
      if (reply.includes('\r\n')) finish(reply.startsWith('+PONG') || reply.startsWith('-NOAUTH'));
    });
  });
}

const delay = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

export interface ManagedRedisOptions {
  /** Extra command-line options, after the defaults (e.g. `--replicaof`). */
  args?: readonly string[];
  /**
   * A config file's text, for sentinels: written to the server's directory
   * and passed first. `__PORT__` and `__DIR__` are filled in.
   */
  config?: string;
  /** Run as a sentinel (`--sentinel`). */
  sentinel?: boolean;
  /** Extra ports to reserve, e.g. a cluster bus port: `__PORT1__`... in args. */
  extraPorts?: number;
}

/** One redis-server (or sentinel) process that can be killed and started again on its port. */
export class ManagedRedis {
  private child: ChildProcess | undefined;
  private output = '';
  private removed = false;

  private constructor(
    readonly port: number,
    private readonly extraPorts: readonly number[],
    private readonly dir: string,
    private readonly options: ManagedRedisOptions,
  ) {}

  /** Starts a new server on a free loopback port, in a new temporary directory. */
  static async start(options: ManagedRedisOptions = {}): Promise<ManagedRedis> {
    if (!redisServerAvailable()) throw new Error(INSTALL_HINT);
    installHooks();
    const dir = mkdtempSync(join(tmpdir(), 'node-red-dedup-redis-'));
    directories.add(dir);
    let lastError: unknown;
    // Another process may take a port between freePort() and the bind.
    for (let attempt = 0; attempt < START_ATTEMPTS; attempt++) {
      const extra: number[] = [];
      for (let i = 0; i < (options.extraPorts ?? 0); i++) extra.push(await freePort());
      const server = new ManagedRedis(await freePort(), extra, dir, options);
      try {
        await server.start();
        return server;
      } catch (error) {
        lastError = error;
        await server.kill();
      }
    }
    directories.delete(dir);
    rmSync(dir, { recursive: true, force: true });
    throw lastError;
  }

  get url(): string {
    return `redis://${HOST}:${this.port}`;
  }

  get address(): string {
    return `${HOST}:${this.port}`;
  }

  get running(): boolean {
    const child = this.child;
    return child !== undefined && child.exitCode === null && child.signalCode === null;
  }

  /** The `__PORTn__` reserved with `extraPorts`, n from 1. */
  extraPort(n: number): number {
    const port = this.extraPorts[n - 1];
    if (port === undefined) throw new Error(`no extra port ${n}`);
    return port;
  }

  private fill(text: string): string {
    return text
      .replace(/__PORT(\d+)__/g, (_whole, n: string) => String(this.extraPort(Number(n))))
      .replace(/__PORT__/g, String(this.port))
      .replace(/__DIR__/g, this.dir);
  }

  /** (Re)starts the process on its port and waits until it answers; throws with its output if it dies. */
  async start(): Promise<void> {
    if (this.removed) throw new Error(`the redis-server on port ${this.port} was stopped; start a new one`);
    if (this.running) return;
    const args: string[] = [];
    if (this.options.config !== undefined) {
      const file = join(this.dir, 'redis.conf');
      // Sentinel rewrites its file as it learns the topology; a restart
      // keeps what it learned, as a real one does.
      if (this.child === undefined) writeFileSync(file, this.fill(this.options.config));
      args.push(file);
    }
    if (this.options.sentinel) args.push('--sentinel');
    args.push('--port', String(this.port), '--bind', HOST, '--daemonize', 'no', '--dir', this.dir, '--logfile', '');
    if (!this.options.sentinel) args.push('--save', '', '--appendonly', 'no', '--loglevel', 'warning');
    args.push(...(this.options.args ?? []).map((arg) => this.fill(arg)));

    this.output = '';
    const child = spawn(redisServerBinary(), args, { stdio: ['ignore', 'pipe', 'pipe'] });
    this.child = child;
    running.add(child);
    const keep = (chunk: Buffer): void => {
      // Only the tail matters, for the error message if the server dies.
      this.output = (this.output + chunk.toString('utf8')).slice(-6000);
    };
    child.stdout?.on('data', keep);
    child.stderr?.on('data', keep);
    let spawnError: Error | undefined;
    child.once('error', (error) => {
      spawnError = error;
    });
    child.once('exit', () => running.delete(child));

    const deadline = Date.now() + READY_TIMEOUT_MS;
    for (;;) {
      if (spawnError !== undefined) {
        throw new Error(`${INSTALL_HINT}\n(spawning ${redisServerBinary()} failed: ${spawnError.message})`);
      }
      if (child.exitCode !== null || child.signalCode !== null) {
        throw new Error(`redis-server on port ${this.port} exited (${child.exitCode ?? child.signalCode}) before answering:\n${this.output}`);
      }
      if (await answers(this.port)) return;
      if (Date.now() > deadline) {
        await this.kill();
        throw new Error(`redis-server on port ${this.port} did not answer PING within ${READY_TIMEOUT_MS} ms:\n${this.output}`);
      }
      await delay(20);
    }
  }

  /**
   * Sends `signal` (SIGKILL by default: a crash, not a shutdown) and waits
   * for the process to go; SIGKILL after a grace period if it lingers.
   */
  async kill(signal: NodeJS.Signals = 'SIGKILL'): Promise<void> {
    const child = this.child;
    if (child === undefined || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    child.kill(signal);
    let timer: NodeJS.Timeout | undefined;
    const gaveUp = await Promise.race([
      exited.then(() => false),
      new Promise<boolean>((resolve) => {
        timer = setTimeout(() => resolve(true), STOP_GRACE_MS);
      }),
    ]);
    if (timer) clearTimeout(timer);
    if (gaveUp) {
      child.kill('SIGKILL');
      await exited;
    }
  }

  /** Shuts the server down (SIGTERM) and starts it again on the same port. */
  async restart(): Promise<void> {
    await this.kill('SIGTERM');
    await this.start();
  }

  /** Kills it (`signal` first, SIGKILL at the latest) and removes its directory; safe to call twice. */
  async stop(signal: NodeJS.Signals = 'SIGKILL'): Promise<void> {
    if (this.removed) return;
    this.removed = true;
    await this.kill(signal);
    directories.delete(this.dir);
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/**
 * Starts a private redis-server on a free loopback port; `extraArgs` are
 * appended to its command line (e.g. `['--cluster-enabled', 'yes']`).
 * Stopped politely: SIGTERM, then SIGKILL after a grace period.
 */
export async function startRedisServer(extraArgs: readonly string[] = []): Promise<RedisServer> {
  const server = await ManagedRedis.start({ args: extraArgs });
  return {
    host: HOST,
    port: server.port,
    url: server.url,
    owned: true,
    stop: () => server.stop('SIGTERM'),
    restart: () => server.restart(),
  };
}

/** A server someone else runs (REDIS_URL): used as is, never stopped or restarted. */
export function externalRedisServer(url: string): RedisServer {
  const parsed = new URL(url);
  return {
    host: parsed.hostname,
    port: parsed.port === '' ? 6379 : Number(parsed.port),
    url,
    owned: false,
    async stop() {
      // Not ours to stop.
    },
    restart() {
      return Promise.reject(new Error('cannot restart the server named by REDIS_URL'));
    },
  };
}
