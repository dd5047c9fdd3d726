/**
 * A real Node-RED runtime inside a benchmark process: the embedded API with
 * the editor and HTTP off, a temporary user directory with this pack linked
 * into its node_modules (as after `npm install`), one flow from
 * bench/flows.ts, and the bench nodes of bench/nodes. Node-RED can be started
 * once per process, so every trial process holds exactly one of these.
 *
 * Also the small helpers every trial process shares: Redis CPU from INFO,
 * a forced GC, timeouts, and feeding a Redis store a bounded number of
 * requests at a time.
 */
import { mkdtempSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'fs';
import { tmpdir } from 'os';
import { join, resolve } from 'path';
import type Redis from 'ioredis';
import type { Replies } from '../src/stores/types';
import { COUNTER_ID, SOURCE_ID } from './flows';

export const ROOT = resolve(__dirname, '..');

export interface NodeLike {
  receive(msg: object): void;
}

/** What a hook handler is handed on a node's done() (see Node-RED's Node.prototype._complete). */
export interface CompleteEvent {
  msg: Record<string, unknown>;
  error?: unknown;
  node: { id: string };
}

interface NodeRedLike {
  init(settings: Record<string, unknown>): void;
  start(): Promise<void>;
  stop(): Promise<void>;
  nodes: { getNode(id: string): NodeLike | null };
  hooks: { add(name: string, hook: (event: CompleteEvent) => void): void };
}

export interface BenchRuntime {
  /** The function node that fires what the harness queued (see flows.ts, FIRE). */
  source: NodeLike;
  hooks: NodeRedLike['hooks'];
  getNode(id: string): NodeLike | null;
  stop(): Promise<void>;
}

function userDirWithPack(packRoot: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'node-red-dedup-bench-'));
  // Node-RED finds packs in <userDir>/node_modules, as after `npm install`.
  mkdirSync(join(dir, 'node_modules', '@telemetry-dedup'), { recursive: true });
  symlinkSync(packRoot, join(dir, 'node_modules', '@telemetry-dedup', 'node-red-dedup'), 'dir');
  return dir;
}

/**
 * Core node files the bench flows never use, left unloaded when
 * BENCH_LEAN_RUNTIME=1 (the quick run sets it): about 0.4 s less per
 * Node-RED start, and nothing on a message's path changes. The full run
 * loads every core node, as an installed Node-RED does.
 */
const UNUSED_CORE_NODES = [
  '10-mqtt.js', '21-httprequest.js', '21-httpin.js', '22-websocket.js', '70-XML.js', '70-HTML.js', '70-YAML.js', '70-CSV.js',
  '05-tls.js', '06-httpproxy.js', '31-tcpin.js', '32-udp.js', '10-file.js', '90-exec.js', '23-watch.js',
];

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** A full collection, when the process runs with --expose-gc (every bench child does). */
export function gc(): void {
  (globalThis as { gc?: () => void }).gc?.();
}

/** `packRoot`: the build of the pack Node-RED loads (bench/baseline.ts); this checkout's by default. */
export async function startBenchRuntime(flow: object[], globals: Record<string, unknown>, packRoot: string = ROOT): Promise<BenchRuntime> {
  const userDir = userDirWithPack(packRoot);
  writeFileSync(join(userDir, 'flows.json'), JSON.stringify(flow));
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- node-red is CommonJS without types
  const RED = require('node-red') as NodeRedLike;
  RED.init({
    userDir,
    flowFile: 'flows.json',
    credentialSecret: false,
    httpAdminRoot: false,
    httpNodeRoot: false,
    disableEditor: true,
    nodesDir: [join(__dirname, 'nodes')],
    functionGlobalContext: globals,
    logging: { console: { level: 'warn', metrics: false, audit: false } },
    telemetry: { enabled: false, updateNotification: false },
    externalModules: { autoInstall: false, palette: { allowInstall: false } },
    editorTheme: { tours: false },
    // The memory stores' state files, should a flow turn saving on: inside the temporary directory.
    dedupStateDir: join(userDir, 'dedup-state'),
    ...(process.env.BENCH_LEAN_RUNTIME === '1' ? { nodesExcludes: UNUSED_CORE_NODES } : {}),
  });
  const stop = async (): Promise<void> => {
    await RED.stop().catch(() => undefined);
    rmSync(userDir, { recursive: true, force: true });
  };
  try {
    await RED.start();
    for (let i = 0; RED.nodes.getNode(COUNTER_ID) === null; i++) {
      if (i > 400) throw new Error('the benchmark flow did not start (a node type missing?)');
      await sleep(25);
    }
    const source = RED.nodes.getNode(SOURCE_ID);
    if (source === null) throw new Error('the firing function node is missing');
    return { source, hooks: RED.hooks, getNode: (id) => RED.nodes.getNode(id), stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

/** User plus system CPU seconds of the whole redis-server process. */
export async function redisCpuSeconds(client: Redis): Promise<number> {
  const info = await client.info('cpu');
  const field = (name: string): number => Number(new RegExp(`^${name}:([\\d.]+)`, 'm').exec(info)?.[1] ?? Number.NaN);
  return field('used_cpu_user') + field('used_cpu_sys');
}

/** Summed over every primary: a Cluster's load is spread over several redis-server processes. */
export async function redisCpuSecondsOf(admins: readonly Redis[]): Promise<number> {
  const each = await Promise.all(admins.map((a) => redisCpuSeconds(a)));
  return each.reduce((s, v) => s + v, 0);
}

/** Calls and microseconds of EVAL and EVALSHA in INFO commandstats (ioredis sends EVAL once per connection, then EVALSHA). */
export function scriptStats(info: string): { calls: number; usec: number } {
  let calls = 0;
  let usec = 0;
  for (const m of info.matchAll(/^cmdstat_(?:eval|evalsha):calls=(\d+),usec=(\d+)/gm)) {
    calls += Number(m[1]);
    usec += Number(m[2]);
  }
  return { calls, usec };
}

/** scriptStats summed over every primary, as their CPU is (redisCpuSecondsOf). */
export async function scriptStatsOf(admins: readonly Redis[]): Promise<{ calls: number; usec: number }> {
  const each = await Promise.all(admins.map(async (a) => scriptStats(await a.info('commandstats'))));
  return each.reduce((s, v) => ({ calls: s.calls + v.calls, usec: s.usec + v.usec }), { calls: 0, usec: 0 });
}

/**
 * Feeds requests to a Redis store through its callback interface, at most
 * `window` unanswered at once, and resolves when all are answered. The
 * window keeps ioredis's queue, and so the process's heap, from holding
 * every request at once; after the first error nothing more is sent, so a
 * failing server is not handed the rest of a million requests.
 */
export function drive<T>(items: Iterable<T>, window: number, ask: (item: T, replies: Replies<unknown, undefined>) => void): Promise<void> {
  return new Promise((resolve, reject) => {
    const iterator = items[Symbol.iterator]();
    let open = 0;
    let finished = false;
    let failed = false;
    const replies: Replies<unknown, undefined> = {
      value: () => {
        open--;
        pump();
      },
      error: (error) => {
        failed = true;
        reject(error instanceof Error ? error : new Error(String(error)));
      },
    };
    const pump = (): void => {
      while (!failed && !finished && open < window) {
        const next = iterator.next();
        if (next.done === true) {
          finished = true;
          break;
        }
        open++;
        ask(next.value, replies);
      }
      if (finished && open === 0 && !failed) resolve();
    };
    pump();
  });
}

/** used_memory; `settleMs` lets the server finish growing its hash tables first (incremental rehashing keeps both tables for a while). */
export async function usedMemory(client: Redis, settleMs = 1000): Promise<number> {
  if (settleMs > 0) await sleep(settleMs);
  return Number(/used_memory:(\d+)/.exec(await client.info('memory'))?.[1]);
}

export function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    promise.finally(() => clearTimeout(timer)),
    new Promise<T>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${what}: not every message reached the counter within ${ms} ms`)), ms);
    }),
  ]);
}

/** heapUsed plus the typed arrays' contents (the memory stores keep their columns there), after a full GC. */
export function heapAfterGc(): number {
  gc();
  gc();
  const usage = process.memoryUsage();
  return usage.heapUsed + usage.arrayBuffers;
}

/** The job a child process was started with (bench/children.ts): on the command line, or in a file when it is long. */
export function jobFromArgv<T>(): T {
  const job = JSON.parse(process.argv[2] ?? '{}') as T & { $jobFile?: string };
  return typeof job.$jobFile === 'string' ? (JSON.parse(readFileSync(job.$jobFile, 'utf8')) as T) : job;
}

/** How a child process answers its parent (bench/children.ts): once, then it exits. */
export function answerParent<T>(work: Promise<T>): void {
  work.then(
    (result) => {
      if (process.send) process.send({ ok: true, result }, undefined, {}, () => process.exit(0));
      else {
        console.log(JSON.stringify(result, null, 2));
        process.exit(0);
      }
    },
    (error: unknown) => {
      const text = error instanceof Error ? (error.stack ?? error.message) : String(error);
      if (process.send) process.send({ ok: false, error: text }, undefined, {}, () => process.exit(1));
      else {
        console.error(text);
        process.exit(1);
      }
    },
  );
}
