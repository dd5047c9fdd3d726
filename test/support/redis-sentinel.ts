/**
 * Redis processes that a test can hurt: start, SIGKILL, start again on the
 * same port, and (below) a Sentinel-managed primary + replica + 3 sentinels.
 *
 * test/support/redis-server.ts gives each test run one polite server; the
 * scale and fault tests need more: a primary killed without warning (a
 * crash, not a shutdown), a server down for a while and then back, and
 * sentinels, which take a config file rather than command-line options.
 * ManagedRedis is that, and redis-cluster.ts builds on it too.
 *
 * Everything is bound to 127.0.0.1, runs without persistence in its own
 * temporary directory, and is killed (and its directory removed) when the
 * test process exits, however it exits.
 */
import { spawn, spawnSync, type ChildProcess } from 'child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'fs';
import { connect } from 'net';
import { tmpdir } from 'os';
import { join } from 'path';
import Redis from 'ioredis';
import { freePort, INSTALL_HINT, redisServerAvailable } from './redis-server';

export const HOST = '127.0.0.1';
const READY_TIMEOUT_MS = 10_000;
const STOP_GRACE_MS = 3_000;
const START_ATTEMPTS = 5;

function redisServerBinary(): string {
  return process.env.REDIS_SERVER_BIN ?? 'redis-server';
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

// Children and directories still alive; removed synchronously on exit.
const running = new Set<ChildProcess>();
const directories = new Set<string>();
const cleanups = new Set<() => void>();
let hooksInstalled = false;

function killEverything(): void {
  for (const child of running) {
    try {
      child.kill('SIGKILL');
    } catch {
      // Already gone.
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
  // A signal's default action skips 'exit'. Kill ours, step aside, and raise
  // the signal again, so that the next cleanup hook (redis-server.ts has one)
  // or the default action runs as if we had never been there.
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    const onSignal = (): void => {
      killEverything();
      process.removeListener(signal, onSignal);
      process.kill(process.pid, signal);
    };
    process.on(signal, onSignal);
  }
}

/** Sends PING on a raw socket; a server that asks for a password is up too. */
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

export class ManagedRedis {
  private child: ChildProcess | undefined;
  private output = '';
  private removed = false;

  private constructor(
    readonly port: number,
    private readonly extraPorts: readonly number[],
    readonly dir: string,
    private readonly options: ManagedRedisOptions,
  ) {}

  /** Starts a new server on a free loopback port, in a new temporary directory. */
  static async start(options: ManagedRedisOptions = {}): Promise<ManagedRedis> {
    if (!redisServerAvailable()) throw new Error(INSTALL_HINT);
    installHooks();
    const dir = mkdtempSync(join(tmpdir(), 'node-red-dedup-managed-'));
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

  get pid(): number | undefined {
    return this.child?.pid;
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

  /** (Re)starts the process on its port and waits until it answers. */
  async start(): Promise<void> {
    if (this.removed) throw new Error('this server was stopped for good');
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
      if (spawnError !== undefined) throw new Error(`${INSTALL_HINT}\n(spawning failed: ${spawnError.message})`);
      if (child.exitCode !== null || child.signalCode !== null) {
        throw new Error(`redis-server on port ${this.port} exited (${child.exitCode ?? child.signalCode}):\n${this.output}`);
      }
      if (await answers(this.port)) return;
      if (Date.now() > deadline) {
        await this.kill();
        throw new Error(`redis-server on port ${this.port} did not answer within ${READY_TIMEOUT_MS} ms:\n${this.output}`);
      }
      await delay(20);
    }
  }

  /** Kills the process (SIGKILL by default: a crash, not a shutdown) and waits for it to go. */
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

  /** The tail of what the server printed, for failure messages. */
  get log(): string {
    return this.output;
  }

  /** Kills it and removes its directory; safe to call twice. */
  async stop(): Promise<void> {
    if (this.removed) return;
    this.removed = true;
    await this.kill();
    directories.delete(this.dir);
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/** A client for set-up and checks, not one under test; errors are expected and ignored. */
export function adminClient(port: number, password?: string): Redis {
  const client = new Redis({
    host: HOST,
    port,
    ...(password !== undefined ? { password } : {}),
    connectionName: 'dedup-test-admin',
    maxRetriesPerRequest: 1,
    retryStrategy: () => 200,
  });
  client.on('error', () => undefined);
  return client;
}

/** Polls until check() returns true; throws with the description after timeoutMs. */
export async function waitFor(check: () => Promise<boolean>, description: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    let ok = false;
    try {
      ok = await check();
    } catch {
      ok = false;
    }
    if (ok) return;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${description}`);
    await delay(50);
  }
}

/** Is redis-cli there? The cluster is created with it. */
export function redisCliAvailable(): boolean {
  const probe = spawnSync(process.env.REDIS_CLI_BIN ?? 'redis-cli', ['--version'], { stdio: 'ignore' });
  return probe.error === undefined && probe.status === 0;
}

// ---------------------------------------------------------------------------
// Sentinel

export interface SentinelSet {
  readonly masterName: string;
  readonly sentinelPassword: string;
  /** The data servers: [0] starts as primary, [1] as its replica. */
  readonly servers: readonly ManagedRedis[];
  readonly sentinels: readonly ManagedRedis[];
  /** `host:port, host:port, ...` of the sentinels, as the editor takes it. */
  readonly sentinelList: string;
  /** What the sentinels currently name as primary (asks the first that answers). */
  primaryPort(): Promise<number>;
  stop(): Promise<void>;
}

export interface SentinelOptions {
  masterName?: string;
  sentinelPassword?: string;
  /** How long a silent primary is tolerated before the sentinels act. */
  downAfterMs?: number;
}

/**
 * A primary, one replica in sync with it, and three sentinels (quorum 2)
 * that have all found one another and the replica, so that a failover can
 * be elected as soon as the primary dies. The sentinels require a password,
 * which is what the config node's sentinelPassword credential is for.
 */
export async function startSentinelSet(options: SentinelOptions = {}): Promise<SentinelSet> {
  const masterName = options.masterName ?? 'dedup-primary';
  const sentinelPassword = options.sentinelPassword ?? `sentinel-${process.pid}`;
  const downAfterMs = options.downAfterMs ?? 1000;
  const started: ManagedRedis[] = [];
  const admins: Redis[] = [];
  const stopAll = async (): Promise<void> => {
    for (const admin of admins.splice(0)) admin.disconnect();
    await Promise.all(started.map((server) => server.stop()));
  };
  try {
    const primary = await ManagedRedis.start();
    started.push(primary);
    const replica = await ManagedRedis.start({ args: ['--replicaof', HOST, String(primary.port)] });
    started.push(replica);
    const primaryAdmin = adminClient(primary.port);
    admins.push(primaryAdmin);
    await waitFor(
      async () => /slave0:.*state=online/.test(await primaryAdmin.info('replication')),
      'the replica to be in sync with the primary',
      10_000,
    );

    const config = [
      'sentinel resolve-hostnames no',
      `requirepass ${sentinelPassword}`,
      `sentinel monitor ${masterName} ${HOST} ${primary.port} 2`,
      `sentinel down-after-milliseconds ${masterName} ${downAfterMs}`,
      // Also the pause before a failed failover is retried: keep it short.
      `sentinel failover-timeout ${masterName} 5000`,
      `sentinel parallel-syncs ${masterName} 1`,
      '',
    ].join('\n');
    const sentinels: ManagedRedis[] = [];
    for (let i = 0; i < 3; i++) {
      const sentinel = await ManagedRedis.start({ config, sentinel: true });
      started.push(sentinel);
      sentinels.push(sentinel);
    }
    // Sentinels find each other through hello messages every 2 s; a
    // failover needs a majority that knows the others.
    for (const sentinel of sentinels) {
      const admin = adminClient(sentinel.port, sentinelPassword);
      admins.push(admin);
      await waitFor(
        async () => {
          const fields = (await admin.call('SENTINEL', 'MASTER', masterName)) as string[];
          const info = new Map<string, string>();
          for (let i = 0; i + 1 < fields.length; i += 2) info.set(fields[i] as string, fields[i + 1] as string);
          return info.get('num-other-sentinels') === '2' && info.get('num-slaves') === '1' && info.get('flags') === 'master';
        },
        `sentinel ${sentinel.port} to know the other sentinels and the replica`,
        15_000,
      );
    }
    for (const admin of admins.splice(0)) admin.disconnect();

    return {
      masterName,
      sentinelPassword,
      servers: [primary, replica],
      sentinels,
      sentinelList: sentinels.map((s) => s.address).join(', '),
      async primaryPort() {
        for (const sentinel of sentinels) {
          if (!sentinel.running) continue;
          const admin = adminClient(sentinel.port, sentinelPassword);
          try {
            const address = (await admin.call('SENTINEL', 'GET-MASTER-ADDR-BY-NAME', masterName)) as [string, string];
            return Number(address[1]);
          } catch {
            // Ask the next one.
          } finally {
            admin.disconnect();
          }
        }
        throw new Error('no sentinel answered');
      },
      stop: stopAll,
    };
  } catch (error) {
    await stopAll();
    throw error;
  }
}
