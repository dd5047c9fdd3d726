/**
 * An example flow of examples/ in a real Node-RED runtime
 * (node-red-node-test-helper), as `npm start` deploys it: on a tab of its
 * own, with the pack's nodes and the core nodes it uses, and an HTTP server
 * on a free loopback port serving the runtime's http-in routes (the
 * helper's own server serves only the admin API). Nothing tells a flow that
 * port, as nothing tells a flow the port of a real Node-RED: an example may
 * not depend on knowing it. Not a spec file.
 *
 * What the flow shows is read where a user reads it: the messages that
 * reach its debug nodes (through Node-RED's onReceive hook, which leaves
 * the nodes untouched) and the status of its nodes.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'http';
import { join } from 'path';
import { loadFlow } from '../confirm/confirm-harness';
import { helper, node, packNodes, startServer, stopServer, type FlowNode, type Msg } from '../support/node-red-helper';

const ROOT = join(__dirname, '..', '..');
const CORE = join(ROOT, 'node_modules', '@node-red', 'nodes', 'core');

/** The core node files the examples may use. */
const CORE_FILES = [
  'common/20-inject.js',
  'common/21-debug.js',
  'common/24-complete.js',
  'common/25-catch.js',
  'common/25-status.js',
  'common/60-link.js',
  'common/90-comment.js',
  'function/10-function.js',
  'function/10-switch.js',
  'function/15-change.js',
  'network/21-httpin.js',
  'network/21-httprequest.js',
];

/** The node types those files register, and the pack's: an example may use no other. */
export const ALLOWED_TYPES = new Set([
  'tab', 'inject', 'debug', 'complete', 'catch', 'status', 'comment', 'function', 'switch', 'change', 'http in', 'http response', 'http request', 'junction',
  'link in', 'link out', 'link call',
  'sliding-window-dedup', 'sensor-reconnect-dedup', 'dedup-confirm', 'dedup-redis',
]);

export const EXAMPLES = ['bin-fill-levels', 'confirmed-delivery', 'drop-repeats', 'fleet-with-events', 'lorawan-uplinks', 'sensor-reconnect-fleet', 'sliding-window-fleet'] as const;
export type ExampleName = (typeof EXAMPLES)[number];

export function exampleFlow(name: ExampleName): FlowNode[] {
  return JSON.parse(readFileSync(join(ROOT, 'examples', `${name}.json`), 'utf8')) as FlowNode[];
}

type Hooks = { add(name: string, hook: (event: { msg: Msg; destination: { id: string } }) => void): void; remove(name: string): void };
// eslint-disable-next-line @typescript-eslint/no-require-imports -- Node-RED's hook registry, untyped
const hooks = (require('@node-red/util') as { hooks: Hooks }).hooks;

interface Status {
  fill?: string;
  shape?: string;
  text?: string;
}

export interface RunningExample {
  /** The example's nodes, by id, as loaded. */
  nodes: Map<string, FlowNode>;
  /** The id of the one node with this name (a debug node's, say). */
  idOf(name: string, type?: string): string;
  /** Every message that reached the node with this id since the load, in order. */
  arrivals(id: string): Msg[];
  /** Every status the node showed since the load, in order. */
  statuses(id: string): Status[];
  /** Presses an inject node's button. */
  press(injectName: string): void;
  /** What the example's nodes logged as errors or warnings. */
  logged(): string[];
  stop(): Promise<void>;
}

let hookCounter = 0;

/**
 * For a describe block: the runtime started before its tests and stopped
 * after, and each test's example stopped when the test ends, passed or not.
 * Returns runExample for the tests to call.
 */
export function examplesInThisBlock(): typeof runExample {
  let running: RunningExample | undefined;
  before(startServer);
  after(stopServer);
  afterEach(async function () {
    await running?.stop();
    running = undefined;
  });
  return async (name, options) => (running = await runExample(name, options));
}

/**
 * Loads an example. `manualInjects`: the inject nodes fire only when the
 * test presses them (their timers are switched off), so that a test drives
 * the flow tick by tick instead of waiting for the clock.
 */
export async function runExample(name: ExampleName, options: { manualInjects?: boolean; edit?: (flow: FlowNode[]) => void } = {}): Promise<RunningExample> {
  let app: ((req: IncomingMessage, res: ServerResponse) => void) | undefined;
  const server: Server = createServer((req, res) => {
    if (app === undefined) {
      res.statusCode = 503;
      res.end();
      return;
    }
    app(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));

  const tab = `tab-${name}`;
  const flow: FlowNode[] = [
    { id: tab, type: 'tab', label: name },
    ...exampleFlow(name).map((n) => ({ ...n, z: tab })),
  ];
  options.edit?.(flow);
  if (options.manualInjects) {
    for (const n of flow) if (n.type === 'inject') Object.assign(n, { once: false, repeat: '' });
  }
  const unknown = flow.filter((n) => !ALLOWED_TYPES.has(n.type)).map((n) => n.type);
  assert.deepEqual(unknown, [], `${name} uses only core nodes and this pack's`);

  const arrived = new Map<string, Msg[]>();
  const hookName = `onReceive.exampleTest${++hookCounter}`;
  hooks.add(hookName, (event) => {
    const list = arrived.get(event.destination.id);
    if (list) list.push(event.msg);
    else arrived.set(event.destination.id, [event.msg]);
  });

  const captureHttpNode = (red: { httpNode: (req: IncomingMessage, res: ServerResponse) => void }): void => {
    app = red.httpNode;
  };
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- Node-RED's own CommonJS nodes
  const core = CORE_FILES.map((file) => require(join(CORE, file)) as unknown);
  await loadFlow([captureHttpNode, ...packNodes(['dedup-redis', 'sliding-window-dedup', 'sensor-reconnect-dedup', 'dedup-confirm']), ...core], flow);

  const statuses = new Map<string, Status[]>();
  const nodes = new Map(flow.map((n) => [n.id, n]));
  for (const n of flow) {
    if (n.type === 'tab') continue;
    const running = helper.getNode(n.id);
    if (running === null) continue;
    const list: Status[] = [];
    statuses.set(n.id, list);
    running.on('call:status', (call: { args: unknown[] }) => list.push(call.args[0] as Status));
  }
  const idOf = (nodeName: string, type?: string): string => {
    const found = flow.filter((n) => n.name === nodeName && (type === undefined || n.type === type));
    assert.equal(found.length, 1, `one node named "${nodeName}"${type ? ` of type ${type}` : ''} in ${name}`);
    return (found[0] as FlowNode).id;
  };
  return {
    nodes,
    idOf,
    arrivals: (id) => {
      // The list itself, kept: a test may hold it while messages arrive.
      let list = arrived.get(id);
      if (list === undefined) {
        list = [];
        arrived.set(id, list);
      }
      return list;
    },
    statuses: (id) => statuses.get(id) ?? [],
    press: (injectName) => node(idOf(injectName, 'inject')).receive({}),
    logged: () =>
      helper
        .log()
        .args.flatMap(([record]) => record ?? [])
        // Node-level records only: the helper itself warns of its own deprecated calls.
        .filter((record) => record.level <= 30 && record.id !== undefined)
        .map((record) => `${String(record.id)}: ${String(record.msg)}`),
    async stop() {
      hooks.remove(hookName);
      await helper.unload();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
