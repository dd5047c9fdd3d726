/**
 * node-red-node-test-helper, typed for these tests, plus small tools to
 * collect what nodes send. The helper runs a real Node-RED runtime (the
 * devDependency) with the compiled nodes from nodes/.
 */
import { EventEmitter } from 'events';
import { readFileSync } from 'fs';
import { join } from 'path';
import { sharedRedis } from './global-hooks';

// The helper ships no types; this is the part of its API the tests use.
interface TestHelper {
  init(runtimePath: string, settings?: Record<string, unknown>): void;
  startServer(done: (err?: Error) => void): void;
  stopServer(done: (err?: Error) => void): void;
  load(nodes: unknown[], flow: FlowNode[], credentials?: Record<string, Record<string, string>>): Promise<void>;
  setFlows(flow: FlowNode[], type: 'full' | 'nodes' | 'flows', credentials?: Record<string, Record<string, string>>): Promise<void>;
  unload(): Promise<void>;
  getNode(id: string): TestNode | null;
  /** The spy on Node-RED's log: one call per log record, args[0] the record. */
  log(): { args: { level: number; msg: unknown; id?: string }[][] };
  /** Replaces the runtime settings (settings.js) the next load() sees. */
  settings(settings: Record<string, unknown>): unknown;
}

export interface FlowNode {
  id: string;
  type: string;
  z?: string;
  wires?: string[][];
  [key: string]: unknown;
}

export interface Msg {
  _msgid?: string;
  payload?: unknown;
  dedup?: Record<string, unknown>;
  error?: { message: string; source?: { id: string } };
  [key: string]: unknown;
}

export interface TestNode extends EventEmitter {
  id: string;
  receive(msg: Msg): void;
  on(event: 'input', listener: (msg: Msg) => void): this;
  on(event: 'call:error' | 'call:warn' | 'call:status', listener: (call: { args: unknown[] }) => void): this;
  on(event: string, listener: (...args: never[]) => void): this;
}

// eslint-disable-next-line @typescript-eslint/no-require-imports -- untyped CommonJS module
export const helper = require('node-red-node-test-helper') as TestHelper;

const ROOT = join(__dirname, '..', '..');
helper.init(require.resolve('node-red'));

/**
 * The memory stores outlive their node objects, held by node id across
 * redeploys and restarts of the flows (src/node-red/memory-state.ts), as in
 * a real Node-RED. The test helper's unload() stops the flows as a shutdown
 * does, which keeps them; a test process is not a real install, and one
 * test's state must not leak into the next test's node of the same id, so
 * every unload also forgets the held stores (of the compiled module the
 * runtime loaded, not of src/).
 */
// eslint-disable-next-line @typescript-eslint/no-require-imports -- the compiled CommonJS output the runtime uses
const compiledMemoryState = require(join(ROOT, 'nodes', 'node-red', 'memory-state.js')) as { forgetHeldStores(): void };
const unloadFlows = helper.unload.bind(helper);
helper.unload = async (): Promise<void> => {
  await unloadFlows();
  compiledMemoryState.forgetHeldStores();
};

/** The pack's compiled node modules, as Node-RED loads them. */
export function packNodes(
  names: readonly string[] = ['dedup-redis', 'sliding-window-dedup', 'sensor-reconnect-dedup'],
): unknown[] {
  return names.map((name) => {
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- the compiled CommonJS output
    const register = require(join(ROOT, 'nodes', `${name}.js`)) as (red: object) => void;
    const catalog = JSON.parse(readFileSync(join(ROOT, 'nodes', 'locales', 'en-US', `${name}.json`), 'utf8')) as object;
    // The helper's RED._ returns the key itself; give each node its real
    // en-US catalog instead, so tests read the messages users read, and a key
    // missing from the catalog fails the test that uses it.
    return function registerWithCatalog(red: object): void {
      const withCatalog = Object.create(red) as { _: (key: string, subs?: Record<string, unknown>) => string };
      withCatalog._ = (key, subs = {}) => translate(catalog, key, subs);
      register(withCatalog);
    };
  });
}

function translate(catalog: object, key: string, subs: Record<string, unknown>): string {
  const find = (path: string): unknown => {
    let entry: unknown = catalog;
    for (const part of path.split('.')) entry = entry !== null && typeof entry === 'object' ? (entry as Record<string, unknown>)[part] : undefined;
    return entry;
  };
  // As i18next reads en-US: a numeric count other than 1 takes the key's plural form when it has one.
  const plural = typeof subs.count === 'number' && subs.count !== 1 ? find(`${key}_plural`) : undefined;
  const entry = typeof plural === 'string' ? plural : find(key);
  if (typeof entry !== 'string') throw new Error(`message catalog has no string "${key}"`);
  return entry.replace(/__(\w+)__/g, (whole, name: string) => (name in subs ? String(subs[name]) : whole));
}

/** What nodes logged with node.warn() since the flows were loaded, by node id. */
export function warningsOf(id: string): string[] {
  const WARN = 30; // Node-RED's log level number for warnings
  return helper
    .log()
    .args.flatMap(([record]) => record ?? [])
    .filter((record) => record.level === WARN && record.id === id)
    .map((record) => String(record.msg));
}

/** Runtime settings (as in settings.js) for the flows loaded next; {} restores the defaults. */
export function runtimeSettings(settings: Record<string, unknown>): void {
  helper.settings(settings);
}

export function startServer(): Promise<void> {
  return new Promise((resolve, reject) => helper.startServer((err) => (err ? reject(err) : resolve())));
}

export function stopServer(): Promise<void> {
  return new Promise((resolve, reject) => helper.stopServer((err) => (err ? reject(err) : resolve())));
}

export function node(id: string): TestNode {
  const found = helper.getNode(id);
  if (found === null) throw new Error(`no node ${id} in the loaded flow`);
  return found;
}

/** Every message a helper node receives, in order. */
export function collect(id: string): Msg[] {
  const received: Msg[] = [];
  node(id).on('input', (msg: Msg) => received.push(msg));
  return received;
}

/** Resolves once the condition holds; rejects after timeoutMs with the description. */
export async function until(condition: () => boolean, description: string, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${description}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Core nodes the tests wire around the node under test. */
export function coreNodes(): unknown[] {
  const core = join(ROOT, 'node_modules', '@node-red', 'nodes', 'core');
  return ['common/25-catch.js', 'common/24-complete.js', 'common/25-status.js', 'function/10-function.js'].map(
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- Node-RED's own CommonJS nodes
    (file) => require(join(core, file)) as unknown,
  );
}

/** Loads `flow` with every node of the pack and the core nodes around them. */
export function loadPackFlow(flow: FlowNode[], credentials: Record<string, Record<string, string>> = {}): Promise<void> {
  return helper.load([...packNodes(), ...coreNodes()], flow, credentials);
}

export type DedupType = 'sliding-window-dedup' | 'sensor-reconnect-dedup';
export type StoreKind = 'memory' | 'redis';

/** What one dedup node under test sent, and a way to send it a message. */
export interface DedupHarness {
  /** Output 1. */
  admitted: Msg[];
  /** Output 2. */
  second: Msg[];
  caught: Msg[];
  completed: Msg[];
  statuses: Msg[];
  /** The Redis store's key prefix ('' with the memory store). */
  keyPrefix: string;
  send(payload: unknown, extra?: Partial<Msg>): void;
}

let keyPrefixCounter = 0;

/**
 * One dedup node, `dedup`, on a tab: each output wired to a helper node, and
 * a Catch, a Complete and a Status node scoped to it, each wired to a helper.
 * With the Redis store, its config node `conn` points at the shared server,
 * under a key prefix of its own, so that no test sees another's keys.
 */
export function dedupFlow(
  type: DedupType,
  store: StoreKind,
  settings: Record<string, unknown> = {},
  redisSettings: Record<string, unknown> = {},
): FlowNode[] {
  // Ids differ from every type name: the runtime starts nodes without x/y as
  // config nodes, and reads a property whose value is a node id as a
  // dependency on that node (a node "catch" of type "catch" waits on itself).
  const nodes: FlowNode[] = [
    { id: 'tab', type: 'tab' },
    { id: 'dedup', type, z: 'tab', store, redis: store === 'redis' ? 'conn' : '', ...settings, wires: [['out-admitted'], ['out-second']] },
    { id: 'out-admitted', type: 'helper', z: 'tab' },
    { id: 'out-second', type: 'helper', z: 'tab' },
    { id: 'on-catch', type: 'catch', z: 'tab', scope: ['dedup'], uncaught: false, wires: [['out-caught']] },
    { id: 'out-caught', type: 'helper', z: 'tab' },
    { id: 'on-complete', type: 'complete', z: 'tab', scope: ['dedup'], wires: [['out-completed']] },
    { id: 'out-completed', type: 'helper', z: 'tab' },
    { id: 'on-status', type: 'status', z: 'tab', scope: ['dedup'], wires: [['out-status']] },
    { id: 'out-status', type: 'helper', z: 'tab' },
  ];
  if (store === 'redis') {
    nodes.push({
      id: 'conn',
      type: 'dedup-redis',
      host: '127.0.0.1',
      port: String(sharedRedis().port),
      keyPrefix: `${type}-${process.pid}-${++keyPrefixCounter}:`,
      timeoutMs: '2000',
      ...redisSettings,
    });
  }
  return nodes;
}

/** Loads dedupFlow() with the node's en-US catalog, and collects what comes out. */
export async function loadDedup(
  type: DedupType,
  store: StoreKind,
  settings: Record<string, unknown> = {},
  redisSettings: Record<string, unknown> = {},
): Promise<DedupHarness> {
  const flow = dedupFlow(type, store, settings, redisSettings);
  await helper.load([...packNodes(['dedup-redis', type]), ...coreNodes()], flow, store === 'redis' ? { conn: {} } : {});
  return {
    admitted: collect('out-admitted'),
    second: collect('out-second'),
    caught: collect('out-caught'),
    completed: collect('out-completed'),
    statuses: collect('out-status'),
    keyPrefix: flow.find((n) => n.id === 'conn')?.keyPrefix as string | undefined ?? '',
    send: (payload, extra = {}) => node('dedup').receive({ payload, ...extra }),
  };
}

type Hooks = { add(name: string, hook: (event: { msg: Msg; node: { id: string } }) => void): void; remove(name: string): void };
// eslint-disable-next-line @typescript-eslint/no-require-imports -- Node-RED's hook registry, untyped
const hooks = (require('@node-red/util') as { hooks: Hooks }).hooks;

let hookCounter = 0;

/**
 * Counts done() per message for nodes with the given id, through Node-RED's
 * onComplete hook: unlike a Complete node it still hears nodes of a flow
 * that a redeploy has stopped.
 */
export function watchCompletions(nodeId: string): { perMessage: Map<string, number>; total(): number; dispose(): void } {
  const name = `onComplete.dedupTest${++hookCounter}`;
  const perMessage = new Map<string, number>();
  hooks.add(name, (event) => {
    if (event.node.id !== nodeId) return;
    const id = String(event.msg._msgid);
    perMessage.set(id, (perMessage.get(id) ?? 0) + 1);
  });
  return {
    perMessage,
    total: () => [...perMessage.values()].reduce((a, b) => a + b, 0),
    dispose: () => hooks.remove(name),
  };
}
