/**
 * One start for every dedup node (sliding window, sensor, confirm): read
 * and migrate its config, bind its store, then build its controller with
 * everything it needs, so that no part of a node is filled in later. A
 * config that cannot start answers every message with the reason. And one
 * close: requests still out at the store finish first, so that every
 * message leaves.
 *
 * What differs between the nodes is a NodeKind: how its config is read,
 * which store it chose (an object, see store-binding), and its controller.
 */
import { errorMessage } from '../core/parse/errors';
import type { DoneFunction, Node, NodeAPI, NodeDef, NodeMessage, SendFunction } from './api';
import { drainLimit } from './close-times';
import { serveMetrics } from './metrics-endpoint';
import { upgradeConfig, type DedupNodeType } from './migrations';
import { forgetNode } from './node-registry';
import { Outlet } from './outlet';
import { StatusBoard, type StatusCounts, type Translate } from './status-board';
import type { StoreBinding, StoreChoice } from './store-binding';
import { StoreCalls } from './store-calls';
import { StoreHealth } from './store-health';

/** What a node warns about at start (an option that works, but not as one may think): a catalog key and its substitutions. */
export interface StartWarning {
  key: string;
  subs: Record<string, string | number>;
}

/** Everything a node's controller is built from, ready. */
export interface NodeParts<C, B> {
  RED: NodeAPI;
  node: Node;
  /** A text of the node's catalog. */
  t: Translate;
  config: C;
  store: B;
  /** Every message's way out (see outlet). */
  out: Outlet;
  /** Every request to the store (see store-calls). */
  calls: StoreCalls;
  /** How the store is doing, for the status line. */
  health: StoreHealth;
  /** Runs when the node starts closing, before its requests drain; `removed` when it was deleted. */
  onClose: (closer: (removed: boolean) => void) => void;
}

/** A node's behaviour: its messages, and the counts its status line shows. */
export interface Controller {
  input(msg: NodeMessage, send: SendFunction, done: DoneFunction): void;
  readonly status: StatusCounts;
}

export interface NodeKind<C, B extends StoreBinding> {
  readonly type: DedupNodeType;
  /** Reads the (upgraded) definition; throws the reason a configuration cannot start. */
  read(RED: NodeAPI, def: NodeDef): C;
  /** What the config says to warn about, if anything. */
  warnings?(config: C): readonly StartWarning[];
  store(config: C): StoreChoice<B>;
  controller(parts: NodeParts<C, B>): Controller;
}

/**
 * The constructor of a node type of the pack: it starts each node of the
 * type (startNode). Asking for it serves the pack's metrics
 * (node-red/metrics-endpoint). Each entry file registers it under its type
 * name written out, as the Flow Library's checks read it there.
 */
export function nodeConstructor<C, B extends StoreBinding>(RED: NodeAPI, kind: NodeKind<C, B>): (this: Node, def: NodeDef) => void {
  serveMetrics(RED);
  return function DedupNode(this: Node, def: NodeDef): void {
    RED.nodes.createNode(this, def);
    startNode(RED, this, def, kind);
  };
}

/**
 * Starts a node: upgrades its definition (warning of one saved by a newer
 * release), reads it and warns what it says to, binds its store, builds
 * its controller, draws its status and takes messages; on close, lets its
 * requests finish first.
 */
export function startNode<C, B extends StoreBinding>(RED: NodeAPI, node: Node, def: NodeDef, kind: NodeKind<C, B>): void {
  const t: Translate = (key, subs) => RED._(`${kind.type}.${key}`, subs);
  const out = new Outlet(RED, node, t);
  const health = new StoreHealth();
  let config: C;
  let store: B;
  try {
    config = kind.read(RED, upgradeConfig(kind.type, def, (version, supported) => node.warn(t('warnings.newerConfig', { version, supported }))));
    for (const warning of kind.warnings?.(config) ?? []) node.warn(t(warning.key, warning.subs));
    store = kind.store(config).bind({ RED, node, t, health, callbackFailed: out.callbackFailed });
  } catch (error) {
    refuseMessages(node, t, out, error);
    return;
  }
  const calls = new StoreCalls(out, health);
  const closers: ((removed: boolean) => void)[] = [];
  const controller = kind.controller({ RED, node, t, config, store, out, calls, health, onClose: (closer) => closers.push(closer) });
  const board = new StatusBoard(node, controller.status, health, t);
  node.on('close', (removed, done) => {
    // A close that fails (a store that cannot let go) is logged; the node still ends.
    closeNode(node, t, { out, calls, store, board, closers }, removed).then(done, (error: unknown) => {
      node.error(errorMessage(error));
      done();
    });
  });
  board.changed();
  node.on('input', (msg, send, done) => controller.input(msg, send, done));
}

/**
 * A node whose configuration cannot start still answers every message, with
 * the reason, so that nothing sent to it disappears without a word.
 */
function refuseMessages(node: Node, t: Translate, out: Outlet, error: unknown): void {
  const reason = errorMessage(error);
  const text = t('errors.badConfig', { error: reason });
  const status = { fill: 'red', shape: 'ring', text: t('status.badConfig', { error: reason }) } as const;
  node.error(text);
  node.status(status);
  node.on('input', (msg, _send, done) => {
    // Drawn again, for a Status node that started after this one.
    node.status(status);
    out.end(msg, done, new Error(text));
  });
  node.on('close', (removed, done) => {
    if (removed) forgetNode(node.id);
    done();
  });
}

/**
 * On close (redeploy, shutdown): lets the requests still out at the store
 * finish, fails what is still waiting after the drain limit (through the
 * node's failure policy, so that every message leaves), then leaves the
 * store: a memory store is kept for the next start of this node (saving
 * its changes) unless the node was deleted; a Redis store leaves the
 * shared connection. A deleted node is then forgotten (node-registry).
 */
async function closeNode(
  node: Node,
  t: Translate,
  parts: { out: Outlet; calls: StoreCalls; store: StoreBinding; board: StatusBoard; closers: readonly ((removed: boolean) => void)[] },
  removed: boolean,
): Promise<void> {
  const { out, calls, store, board, closers } = parts;
  out.closeStarted();
  try {
    for (const closer of closers) closer(removed);
    await calls.drained(drainLimit(store.timeoutMs));
    if (calls.count > 0 && store.abandon !== undefined) {
      store.abandon(new Error(t('errors.closedWaiting')));
      await calls.drained(1000);
    }
    await store.close(removed);
  } catch (error) {
    node.warn(errorMessage(error));
  } finally {
    board.stop();
    // The one place a deleted node is forgotten: its kept store, telemetry and claims.
    if (removed) forgetNode(node.id);
  }
}
