/**
 * The seen-sets of the running sensor nodes, by node id, so that a dedup
 * confirm node can confirm or release the keys a message carries with no
 * wire back to the node that claimed them: msg.dedup names that node, and
 * its store (memory, or Redis through the same dedup-redis connection) is
 * found here (kept in node-red/node-registry).
 */
import type { SeenClaim } from '../core/sensor/burst';
import type { SeenStore } from '../stores/types';
import { drop, keep, NodeSlot, recordOf } from './node-registry';

export interface ClaimHolder {
  store: SeenStore;
  /** The claim of a key as its store needs it (the key's group: its device, or itself). */
  claimOf(key: string): SeenClaim;
  /** Whether the node holds keys pending until confirmed (confirm mode). */
  confirm: boolean;
  leaseSeconds: number;
}

const CLAIMS = new NodeSlot<ClaimHolder>('claims');

export function registerClaimHolder(nodeId: string, holder: ClaimHolder): void {
  keep(nodeId, CLAIMS, holder);
}

/** Only the holder registered under the id goes: a redeployed node may have registered its successor already. */
export function unregisterClaimHolder(nodeId: string, holder: ClaimHolder): void {
  if (recordOf(nodeId, CLAIMS) === holder) drop(nodeId, CLAIMS);
}

export function claimHolder(nodeId: string): ClaimHolder | undefined {
  return recordOf(nodeId, CLAIMS);
}
