import { existsSync } from 'fs';
import { availableParallelism } from 'os';
import { join } from 'path';
import { Worker, type ResourceLimits } from 'worker_threads';
import type { MemoryWindowSettings } from '../stores/memory-window-store';
import { cellSettings, type GridCell, type GridRule, type GridSpec } from './grid';
import { runJob, type Job, type Reply, type WhatIfJob } from './jobs';
import { transferables, type PingColumns } from '../core/window/ping-columns';

/**
 * What-if work off the caller's thread. In Node-RED a grid over an
 * uploaded file takes seconds, and the runtime's one thread must keep
 * moving messages meanwhile; on the command line the grid's cells are
 * shared between as many threads as the machine has cores.
 *
 * The thread runs the compiled tune/grid-worker.js beside this file. Run
 * from TypeScript sources (tsx, the tests of the pure modules) there is
 * none, and the work runs in the calling thread instead: same code, same
 * answers, only not in parallel.
 */
const WORKER = join(__dirname, 'grid-worker.js');

/**
 * The heap of a what-if thread in Node-RED (its typed-array columns are
 * bounded apart, by the pings an upload may hold). An upload that needs more,
 * such as a million pings each from an asset of its own, ends that thread
 * with a 'memory' error, never the runtime.
 */
export const WHAT_IF_HEAP_MB = 64;
const WHAT_IF_LIMITS: ResourceLimits = { maxOldGenerationSizeMb: WHAT_IF_HEAP_MB, maxYoungGenerationSizeMb: 8 };

export function threadsAvailable(): boolean {
  return existsSync(WORKER);
}

export interface ThreadedOptions {
  /** How many threads share the cells (this one among them); one where there is no compiled worker. */
  threads: number;
  /** Told after each cell, with how many are done of how many. */
  onCell?: (done: number, total: number) => void;
}

/** The grid, its cells split between `options.threads` threads; the cells come back in the order runGrid gives them. */
export async function runGridThreaded(columns: PingColumns, spec: GridSpec, rule: GridRule, options: ThreadedOptions): Promise<GridCell[]> {
  const { threads, onCell } = options;
  const settings = cellSettings(spec, rule);
  const cells = new Array<GridCell>(settings.length);
  let done = 0;
  const count = threadsAvailable() ? Math.max(1, Math.min(threads, settings.length)) : 1;
  // Thread k takes cells k, k + count, ...: neighbouring cells cost about the same.
  const shares = Array.from({ length: count }, (_, k) => settings.map((s, index) => ({ s, index })).filter((_, index) => index % count === k));
  const collect = (share: { index: number }[]) => (reply: Reply): void => {
    if (reply.kind !== 'cell') return;
    cells[(share[reply.index] as { index: number }).index] = reply.cell;
    onCell?.(++done, settings.length);
  };
  // The other shares go to new threads; the first is worked here meanwhile, which
  // saves a thread's start, and loses nothing when other work holds the cores.
  const shared = count > 1 ? sharedCopy(columns) : columns;
  const others = shares.slice(1).map((share) => run({ kind: 'cells', columns: shared, settings: share.map((c) => c.s) }, collect(share)));
  const mine = shares[0] as { s: MemoryWindowSettings; index: number }[];
  runJob({ kind: 'cells', columns, settings: mine.map((c) => c.s) }, collect(mine));
  await Promise.all(others);
  return cells;
}

/** One what-if job in a thread of its own; resolves with its reply (a result or an error). */
export async function runWhatIfJob(job: WhatIfJob): Promise<Extract<Reply, { kind: 'what-if' | 'error' }>> {
  let answer: Extract<Reply, { kind: 'what-if' | 'error' }> | undefined;
  if ('text' in job.input) job = { ...job, input: { ...job.input, text: ownBuffer(job.input.text) } };
  const transfer = 'text' in job.input ? [job.input.text.buffer as ArrayBuffer] : transferables(job.input.columns);
  try {
    await run(job, (reply) => {
      if (reply.kind === 'what-if' || reply.kind === 'error') answer = reply;
    }, transfer, WHAT_IF_LIMITS);
  } catch (error) {
    if ((error as { code?: unknown }).code !== 'ERR_WORKER_OUT_OF_MEMORY') throw error;
    return { kind: 'error', code: 'memory', message: `the what-if needs more than its ${WHAT_IF_HEAP_MB} MB of memory`, details: { limit: String(WHAT_IF_HEAP_MB) } };
  }
  return answer ?? { kind: 'error', code: 'failed', message: 'the what-if thread gave no answer', details: {} };
}

/** Runs a job in a new thread (or here, without a compiled worker); resolves after its last reply. */
function run(job: Job, onReply: (reply: Reply) => void, transfer: ArrayBuffer[] = [], resourceLimits?: ResourceLimits): Promise<void> {
  const final = (reply: Reply): boolean => reply.kind !== 'cell';
  if (!threadsAvailable()) {
    runJob(job, onReply);
    return Promise.resolve();
  }
  return new Promise((resolve, reject) => {
    const worker = new Worker(WORKER, resourceLimits === undefined ? {} : { resourceLimits });
    let finished = false;
    worker.on('message', (reply: Reply) => {
      onReply(reply);
      if (final(reply)) {
        finished = true;
        void worker.terminate();
        resolve();
      }
    });
    worker.on('error', (error) => {
      finished = true;
      reject(error);
    });
    worker.on('exit', (code) => {
      if (!finished) reject(new Error(`the what-if thread stopped (exit code ${code})`));
    });
    worker.postMessage(job, transfer);
  });
}

/** Bytes with an ArrayBuffer of their own: a Buffer may be a view of a pool that must not be transferred away. */
function ownBuffer(bytes: Uint8Array): Uint8Array {
  if (bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength && !(bytes.buffer instanceof SharedArrayBuffer)) return bytes;
  return new Uint8Array(bytes);
}

/** The machine's cores, for the command's default. */
export function cores(): number {
  return availableParallelism();
}

/** The columns in SharedArrayBuffers, read by every thread without a copy each. */
function sharedCopy(columns: PingColumns): PingColumns {
  const share = <T extends Int32Array | Float64Array | Uint8Array>(column: T): T => {
    const Column = column.constructor as new (buffer: SharedArrayBuffer) => T;
    const copy = new Column(new SharedArrayBuffer(column.byteLength));
    copy.set(column);
    return copy;
  };
  return {
    size: columns.size,
    names: columns.names,
    asset: share(columns.asset),
    t: share(columns.t),
    lat: share(columns.lat),
    lon: share(columns.lon),
    heading: share(columns.heading),
    accuracy: share(columns.accuracy),
    events: share(columns.events),
    value: share(columns.value),
    arrival: share(columns.arrival),
    fix: share(columns.fix),
  };
}
