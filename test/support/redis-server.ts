/**
 * A throwaway redis-server for the tests: loopback only, no persistence, a
 * temporary working directory, on a port nobody else is using. restart()
 * kills it and starts it again on the same port, which is what a fault test
 * needs (an empty script cache, dropped connections, lost keys).
 *
 * Every server started here is killed when the test process ends: stop() is
 * the polite path; an 'exit' hook and SIGINT/SIGTERM/SIGHUP handlers are the
 * last resort (only a SIGKILL of the test process itself can orphan one).
 */
import { spawn, spawnSync, type ChildProcess } from 'child_process';
import { mkdtempSync, rmSync } from 'fs';
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

const HOST = '127.0.0.1';
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

// Children still running, and their working directories; killed and
// removed synchronously if the process ends before stop() is called.
const running = new Set<ChildProcess>();
const directories = new Set<string>();
let exitHookInstalled = false;

function killAll(): void {
  for (const child of running) {
    try {
      child.kill('SIGKILL');
    } catch {
      // Already gone: nothing to clean up.
    }
  }
  for (const dir of directories) rmSync(dir, { recursive: true, force: true });
}

function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.on('exit', killAll);
  // A signal's default action ends the process without an 'exit' event, so
  // the servers are killed here first. If nobody else listens for the
  // signal, it is then raised again to keep its default effect (exit).
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    const onSignal = (): void => {
      killAll();
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

/** One PING over a raw socket; resolves true on +PONG, false on anything else. */
function pingOnce(port: number): Promise<boolean> {
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
      if (reply.includes('\r\n')) finish(reply.startsWith('+PONG'));
    });
  });
}

const delay = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

class ServerProcess {
  private child: ChildProcess | undefined;
  private output = '';

  constructor(
    readonly port: number,
    private readonly dir: string,
    private readonly extraArgs: readonly string[],
  ) {}

  /** Spawns redis-server and waits for PONG; throws with its output if it dies. */
  async start(): Promise<void> {
    const args = [
      '--port', String(this.port),
      '--bind', HOST,
      '--save', '',
      '--appendonly', 'no',
      '--daemonize', 'no',
      '--dir', this.dir,
      '--logfile', '',
      '--loglevel', 'warning',
      ...this.extraArgs,
    ];
    this.output = '';
    const child = spawn(redisServerBinary(), args, { stdio: ['ignore', 'pipe', 'pipe'] });
    this.child = child;
    running.add(child);
    const keep = (chunk: Buffer): void => {
      // Only the tail matters, for the error message if the server dies.
      this.output = (this.output + chunk.toString('utf8')).slice(-4000);
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
        throw new Error(
          `redis-server exited (${child.exitCode ?? child.signalCode}) before answering on port ${this.port}:\n${this.output}`,
        );
      }
      if (await pingOnce(this.port)) return;
      if (Date.now() > deadline) {
        await this.kill();
        throw new Error(`redis-server did not answer PING on port ${this.port} within ${READY_TIMEOUT_MS} ms:\n${this.output}`);
      }
      await delay(20);
    }
  }

  /** SIGTERM, then SIGKILL if it has not exited within the grace period. */
  async kill(): Promise<void> {
    const child = this.child;
    this.child = undefined;
    if (child === undefined || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    child.kill('SIGTERM');
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
}

/**
 * Starts a private redis-server on a free loopback port; `extraArgs` are
 * appended to its command line (e.g. `['--cluster-enabled', 'yes']`).
 */
export async function startRedisServer(extraArgs: readonly string[] = []): Promise<RedisServer> {
  if (!redisServerAvailable()) throw new Error(INSTALL_HINT);
  installExitHook();
  const dir = mkdtempSync(join(tmpdir(), 'node-red-dedup-redis-'));
  directories.add(dir);
  let server: ServerProcess | undefined;
  let lastError: unknown;
  // Another process may take the port between freePort() and the bind.
  for (let attempt = 0; attempt < START_ATTEMPTS && server === undefined; attempt++) {
    const candidate = new ServerProcess(await freePort(), dir, extraArgs);
    try {
      await candidate.start();
      server = candidate;
    } catch (error) {
      lastError = error;
      await candidate.kill();
    }
  }
  if (server === undefined) {
    rmSync(dir, { recursive: true, force: true });
    directories.delete(dir);
    throw lastError;
  }
  const proc = server;
  let stopped = false;
  return {
    host: HOST,
    port: proc.port,
    url: `redis://${HOST}:${proc.port}`,
    owned: true,
    async stop() {
      if (stopped) return;
      stopped = true;
      await proc.kill();
      rmSync(dir, { recursive: true, force: true });
      directories.delete(dir);
    },
    async restart() {
      if (stopped) throw new Error('this redis-server was stopped; start a new one');
      await proc.kill();
      await proc.start();
    },
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
    async restart() {
      throw new Error('cannot restart the server named by REDIS_URL');
    },
  };
}
