/**
 * What the pack keeps of a node by its id rather than in its node object:
 * Node-RED builds a new object on every deploy that touches a node (and on
 * a full deploy, for every node), so whatever must outlive a redeploy lives
 * here, one entry per node id, a slot per module that keeps something: the
 * memory store (node-red/memory-state), the sidebar's record
 * (node-red/insight), the seen-set a confirm node settles in
 * (node-red/claim-registry), the confirm node's counts
 * (metrics/confirm-counters). Each module keeps its own logic and reads
 * and writes only its slot; a removed node is forgotten in one place,
 * forgetNode(), once its close is over (node-red/node-lifecycle).
 */
import type { ConfirmCounters } from '../metrics/confirm-counters';
import type { ClaimHolder } from './claim-registry';
import type { InsightRecord } from './insight';
import type { HeldMemory } from './memory-state';

export interface NodeEntry {
  memory?: HeldMemory;
  insight?: InsightRecord;
  claims?: ClaimHolder;
  confirm?: ConfirmCounters;
}

export type Slot = keyof NodeEntry;

const entries = new Map<string, NodeEntry>();

/** The node's record in a slot, if it has one. */
export function recordOf<K extends Slot>(id: string, slot: K): NodeEntry[K] {
  return entries.get(id)?.[slot];
}

/** Keeps a record of the node in a slot, in place of the one there. */
export function keep<K extends Slot>(id: string, slot: K, record: NonNullable<NodeEntry[K]>): void {
  let entry = entries.get(id);
  if (entry === undefined) {
    entry = {};
    entries.set(id, entry);
  }
  entry[slot] = record;
}

/** Lets go of the node's record in a slot (the node itself may still be there); an entry left empty goes. */
export function drop(id: string, slot: Slot): void {
  const entry = entries.get(id);
  if (entry === undefined) return;
  delete entry[slot];
  if (entry.memory === undefined && entry.insight === undefined && entry.claims === undefined && entry.confirm === undefined) entries.delete(id);
}

/** Every node's record in a slot, with its id, oldest node first. */
export function* recordsIn<K extends Slot>(slot: K): Generator<[string, NonNullable<NodeEntry[K]>]> {
  for (const [id, entry] of entries) {
    const record = entry[slot];
    if (record !== undefined) yield [id, record];
  }
}

/** How many nodes hold a record in a slot. */
export function countIn(slot: Slot): number {
  let count = 0;
  for (const entry of entries.values()) if (entry[slot] !== undefined) count++;
  return count;
}

/** The node was deleted from the flows: everything kept of it goes. */
export function forgetNode(id: string): void {
  entries.delete(id);
}
