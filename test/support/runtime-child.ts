/**
 * The child side of runtime-process.ts: one embedded Node-RED runtime,
 * driven over the IPC channel. Not a test file; it is forked with tsx.
 */
import Redis from 'ioredis';
import type { FromChild, Recorded, RuntimeResults, RuntimeSpec, ToChild } from './runtime-process';
import { textOf } from '../../src/core/parse/fields';

interface HookEvent {
  msg: { _msgid?: string; [key: string]: unknown };
  node?: { id: string };
  destination?: { id: string };
}

interface LogEvent {
  level: number;
  type?: string;
  msg: unknown;
}

interface EmbeddedNode {
  receive(msg: Record<string, unknown>): void;
}

// The part of node-red's embedding API used here; the package ships no types.
interface EmbeddedRed {
  init(settings: Record<string, unknown>): void;
  start(): Promise<void>;
  stop(): Promise<void>;
  events: { on(event: string, listener: () => void): void };
  hooks: { add(name: string, hook: (event: HookEvent) => void): void };
  nodes: { getNode(id: string): EmbeddedNode | null };
}

const WARN = 30;

function send(message: FromChild): void {
  process.send?.(message);
}

const results: RuntimeResults = { sinks: {}, completions: {}, logged: [], crashes: [] };
let naive: Redis | undefined;
let RED: EmbeddedRed | undefined;

// A crash is a finding, not a reason to lose the evidence: record it and
// let the parent's assertions report it.
process.on('uncaughtException', (error) => results.crashes.push(`uncaught: ${error.stack ?? String(error)}`));
process.on('unhandledRejection', (reason) =>
  results.crashes.push(`unhandled rejection: ${reason instanceof Error ? (reason.stack ?? reason.message) : String(reason)}`),
);
// The parent went away: nobody will ever ask this runtime to stop.
process.on('disconnect', () => process.exit(0));

/** Per injection batch: how many of its messages have not called done() yet. */
const batches = new Map<number, number>();
/** `${nodeId}\0${msgid}` -> the batch waiting for it. */
const pending = new Map<string, number>();

function completed(nodeId: string, msgid: string): void {
  const perNode = (results.completions[nodeId] ??= {});
  perNode[msgid] = (perNode[msgid] ?? 0) + 1;
  const key = `${nodeId}\0${msgid}`;
  const seq = pending.get(key);
  if (seq === undefined) return;
  pending.delete(key);
  const left = (batches.get(seq) ?? 1) - 1;
  if (left > 0) {
    batches.set(seq, left);
    return;
  }
  batches.delete(seq);
  send({ type: 'injected', seq });
}

async function start(spec: RuntimeSpec, userDir: string, packageDir: string): Promise<void> {
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- node-red is CommonJS without types
  const red = require('node-red') as EmbeddedRed;
  RED = red;
  const sinks = new Set(spec.sinks);
  const watched = new Set(spec.watch);
  for (const id of spec.sinks) results.sinks[id] = [];
  const globals: Record<string, unknown> = {};
  if (spec.naiveRedisUrl !== undefined) {
    naive = new Redis(spec.naiveRedisUrl, { connectionName: `naive-control-${spec.name}` });
    naive.on('error', () => undefined);
    globals.naiveRedis = naive;
  }
  const started = Date.now();
  red.init({
    userDir,
    flowFile: 'flows.json',
    credentialSecret: false,
    // No editor, no admin API, no HTTP nodes: nothing listens on any port.
    httpAdminRoot: false,
    httpNodeRoot: false,
    nodesDir: [packageDir],
    functionGlobalContext: globals,
    externalModules: { autoInstall: false, palette: { allowInstall: false } },
    telemetry: { enabled: false },
    editorTheme: { projects: { enabled: false } },
    logging: {
      console: { level: 'off' },
      recorder: {
        level: 'warn',
        metrics: false,
        audit: false,
        handler: () => (event: LogEvent) => {
          if (event.level > WARN || results.logged.length >= 1000) return;
          results.logged.push({ level: event.level, ...(event.type ? { type: event.type } : {}), text: String(event.msg) });
        },
      },
    },
  });
  red.hooks.add('onReceive.dedupRuntimeProbe', (event) => {
    const id = event.destination?.id;
    if (id === undefined || !sinks.has(id)) return;
    const msg = event.msg;
    const error = msg.error as { message?: unknown } | undefined;
    const record: Recorded = { id: String(msg._msgid) };
    if (msg.dedup !== undefined) record.dedup = msg.dedup as Record<string, unknown>;
    if (msg.naive !== undefined) record.naive = msg.naive;
    if (error?.message !== undefined) record.error = textOf(error.message);
    results.sinks[id]?.push(record);
  });
  red.hooks.add('onComplete.dedupRuntimeProbe', (event) => {
    const id = event.node?.id;
    if (id !== undefined && watched.has(id)) completed(id, String(event.msg._msgid));
  });
  const flowsStarted = new Promise<void>((resolve) => red.events.on('flows:started', () => resolve()));
  await red.start();
  await flowsStarted;
  const missing = spec.watch.filter((id) => red.nodes.getNode(id) === null);
  if (missing.length > 0) throw new Error(`nodes ${missing.join(', ')} did not start: ${JSON.stringify(results.logged)}`);
  send({ type: 'ready', startMs: Date.now() - started });
}

function inject(seq: number, items: [string, Record<string, unknown>][]): void {
  const red = RED;
  if (red === undefined) throw new Error('inject before start');
  if (items.length === 0) {
    send({ type: 'injected', seq });
    return;
  }
  // Register every message first: a memory store calls done() synchronously.
  batches.set(seq, items.length);
  for (const [nodeId, msg] of items) pending.set(`${nodeId}\0${String(msg._msgid)}`, seq);
  for (const [nodeId, msg] of items) {
    const target = red.nodes.getNode(nodeId);
    if (target === null) throw new Error(`no node ${nodeId}`);
    target.receive(msg);
  }
}

async function stop(): Promise<void> {
  await RED?.stop();
  await naive?.quit().catch(() => undefined);
  naive?.disconnect();
  process.exit(0);
}

process.on('message', (raw) => {
  const message = raw as ToChild;
  const fail = (error: unknown): void =>
    send({ type: 'failed', error: error instanceof Error ? (error.stack ?? error.message) : String(error) });
  try {
    switch (message.type) {
      case 'start':
        start(message.spec, message.userDir, message.packageDir).catch(fail);
        return;
      case 'inject':
        inject(message.seq, message.items);
        return;
      case 'results':
        send({ type: 'results', results });
        return;
      case 'stop':
        stop().catch(fail);
        return;
    }
  } catch (error) {
    fail(error);
  }
});
