/**
 * A sensor reconnect dedup node in confirm mode with a dedup confirm node of
 * each action beside it, in a real Node-RED runtime (node-red-node-test-helper):
 * the flow the confirm specs drive by hand. Not a spec file.
 *
 *   readings -> [dedup] -1-> out-admitted
 *                       -2-> out-audit
 *   a copy of an admitted message -> [do-confirm] -> out-confirmed
 *                                 -> [do-release] -> out-released
 *   errors of the confirm nodes and the dedup node -> Catch -> out-caught
 *   status of the dedup node and the confirm node -> Status -> out-status
 *
 * The confirm nodes have no wire from the dedup node: as in a real flow,
 * they find its seen-set from what msg.dedup names.
 */
import assert from 'node:assert/strict';
import { sharedRedis } from '../support/global-hooks';
import { collect, coreNodes, helper, node, packNodes, sleep, until, type FlowNode, type Msg, type StoreKind } from '../support/node-red-helper';

export const PACK = ['dedup-redis', 'sensor-reconnect-dedup', 'dedup-confirm'] as const;

/**
 * helper.load(), for flows with more than one Catch, Status or Complete node.
 * The helper registers its own copy of those three core nodes once per node
 * of their type in the flow, and Node-RED refuses a second registration
 * ("catch already registered"); `nodes` must hold them instead (coreNodes()
 * does). The helper's table is put back afterwards, for the other specs.
 */
export async function loadFlow(nodes: unknown[], flow: FlowNode[], credentials: Record<string, Record<string, string>> = {}): Promise<void> {
  const internals = helper as unknown as { _nodeModules: Record<string, unknown> };
  const preloaded = internals._nodeModules;
  internals._nodeModules = {};
  try {
    await helper.load(nodes, flow, credentials);
  } finally {
    internals._nodeModules = preloaded;
  }
}

export interface Reading {
  device_id: string;
  seq: number;
  ts: string;
  fill_pct: number;
}

export function reading(device: string, seq: number, fill = 50): Reading {
  return { device_id: device, seq, ts: new Date(Date.UTC(2026, 6, 16, 9, 0, seq % 60)).toISOString(), fill_pct: fill };
}

let prefixCounter = 0;

export function confirmFlow(store: StoreKind, settings: Record<string, unknown> = {}, redisSettings: Record<string, unknown> = {}): FlowNode[] {
  const flow: FlowNode[] = [
    { id: 'tab', type: 'tab' },
    {
      id: 'dedup', type: 'sensor-reconnect-dedup', z: 'tab', store, redis: store === 'redis' ? 'conn' : '',
      confirm: 'on', leaseSeconds: '60', outputMode: 'burst', version: 2, ...settings,
      wires: [['out-admitted'], ['out-audit']],
    },
    { id: 'out-admitted', type: 'helper', z: 'tab' },
    { id: 'out-audit', type: 'helper', z: 'tab' },
    { id: 'do-confirm', type: 'dedup-confirm', z: 'tab', action: 'confirm', version: 2, wires: [['out-confirmed']] },
    { id: 'do-release', type: 'dedup-confirm', z: 'tab', action: 'release', version: 2, wires: [['out-released']] },
    { id: 'out-confirmed', type: 'helper', z: 'tab' },
    { id: 'out-released', type: 'helper', z: 'tab' },
    { id: 'on-catch', type: 'catch', z: 'tab', scope: ['do-confirm', 'do-release', 'dedup'], uncaught: false, wires: [['out-caught']] },
    { id: 'out-caught', type: 'helper', z: 'tab' },
    { id: 'on-status', type: 'status', z: 'tab', scope: ['dedup', 'do-confirm'], wires: [['out-status']] },
    { id: 'out-status', type: 'helper', z: 'tab' },
  ];
  if (store === 'redis') {
    flow.push({
      id: 'conn', type: 'dedup-redis', host: '127.0.0.1', port: redisSettings.port ?? String(sharedRedis().port),
      keyPrefix: `confirm-${process.pid}-${++prefixCounter}:`, timeoutMs: '2000', ...redisSettings,
    });
  }
  return flow;
}

export interface ConfirmHarness {
  admitted: Msg[];
  audits: Msg[];
  confirmed: Msg[];
  released: Msg[];
  caught: Msg[];
  statuses: Msg[];
  /**
   * Sends readings (an array: a burst; an object: one reading) and returns
   * what came out: for a burst, its audit is `second`; for one reading, a
   * suppressed copy is.
   */
  deliver(payload: unknown): Promise<{ admitted: Msg[]; second: Msg | undefined }>;
  /** Hands a copy of `msg` to a confirm node and waits for it to pass or reach the Catch node. */
  settle(action: 'confirm' | 'release', msg: Msg): Promise<{ passed?: Msg; caught?: Msg }>;
}

/** A deep copy, as Node-RED makes when a message goes down two wires. */
export function copy(msg: Msg): Msg {
  return structuredClone(msg);
}

export async function loadConfirm(store: StoreKind, settings: Record<string, unknown> = {}, redisSettings: Record<string, unknown> = {}): Promise<ConfirmHarness> {
  await loadFlow([...packNodes(PACK), ...coreNodes()], confirmFlow(store, settings, redisSettings), store === 'redis' ? { conn: {} } : {});
  const h = {
    admitted: collect('out-admitted'),
    audits: collect('out-audit'),
    confirmed: collect('out-confirmed'),
    released: collect('out-released'),
    caught: collect('out-caught'),
    statuses: collect('out-status'),
  };
  return {
    ...h,
    async deliver(payload) {
      const before = { admitted: h.admitted.length, audits: h.audits.length };
      node('dedup').receive({ payload });
      const burst = Array.isArray(payload);
      await until(() => (burst ? h.audits.length > before.audits : h.admitted.length + h.audits.length > before.admitted + before.audits), 'the decision');
      // Both outputs are sent in one send; give the rest a moment to land.
      await sleep(20);
      if (burst) assert.equal(h.audits.length, before.audits + 1, 'one audit per burst');
      else assert.equal(h.admitted.length + h.audits.length, before.admitted + before.audits + 1, 'one message out per reading');
      return { admitted: h.admitted.slice(before.admitted), second: h.audits[before.audits] };
    },
    async settle(action, msg) {
      const out = action === 'confirm' ? h.confirmed : h.released;
      const before = { out: out.length, caught: h.caught.length };
      node(action === 'confirm' ? 'do-confirm' : 'do-release').receive(copy(msg));
      await until(() => out.length > before.out || h.caught.length > before.caught, `the ${action} node to pass the message on or raise an error`);
      await sleep(20);
      assert.equal(out.length + h.caught.length, before.out + before.caught + 1, `one outcome per message at the ${action} node`);
      return out.length > before.out ? { passed: out[before.out] as Msg } : { caught: h.caught[before.caught] as Msg };
    },
  };
}
