/**
 * What the adapter keeps of a node by its id rather than in its node
 * object: Node-RED builds a new object on every deploy that touches a node
 * (and on a full deploy, for every node), so whatever must outlive a
 * redeploy lives here, one entry per node id, a slot per module that keeps
 * something: the memory store (node-red/memory-state), the seen-set a
 * confirm node settles in (node-red/claim-registry). Each module declares
 * its own slot, keeps its own logic and reads and writes only its slot. A
 * node's telemetry is kept by id below the adapter (telemetry/records). A
 * removed node is forgotten in one place, forgetNode(), once its close is
 * over (node-red/node-lifecycle): its slots here and its telemetry.
 */
import { forgetTelemetry } from '../telemetry/records';

/** A module's place in every node's entry, holding a T. */
export class NodeSlot<T> {
  // Never read: it keeps T a part of the slot's type, so that slots of different records do not mix.
  declare private readonly holds?: T;

  constructor(readonly name: string) {}
}

const entries = new Map<string, Map<NodeSlot<unknown>, unknown>>();

/** The node's record in a slot, if it has one. */
export function recordOf<T>(id: string, slot: NodeSlot<T>): T | undefined {
  return entries.get(id)?.get(slot) as T | undefined;
}

/** Keeps a record of the node in a slot, in place of the one there. */
export function keep<T>(id: string, slot: NodeSlot<T>, record: T): void {
  let entry = entries.get(id);
  if (entry === undefined) {
    entry = new Map();
    entries.set(id, entry);
  }
  entry.set(slot, record);
}

/** Lets go of the node's record in a slot (the node itself may still be there); an entry left empty goes. */
export function drop<T>(id: string, slot: NodeSlot<T>): void {
  const entry = entries.get(id);
  if (entry === undefined) return;
  entry.delete(slot);
  if (entry.size === 0) entries.delete(id);
}

/** Every node's record in a slot, with its id, oldest node first. */
export function* recordsIn<T>(slot: NodeSlot<T>): Generator<[string, T]> {
  for (const [id, entry] of entries) {
    if (entry.has(slot)) yield [id, entry.get(slot) as T];
  }
}

/** The node was deleted from the flows: everything kept of it goes. */
export function forgetNode(id: string): void {
  entries.delete(id);
  forgetTelemetry(id);
}
