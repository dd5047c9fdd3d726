/**
 * How long each part of the pack waits when Node-RED stops nodes (a
 * redeploy, a shutdown), in one place because the three only work in this
 * order:
 *
 * 1. A dedup node lets its decisions still out at Redis finish, for at most
 *    DRAIN_MS (less when the connection's give-up time is shorter: a
 *    decision cannot take longer than that plus a second). What is still
 *    waiting then is failed through the node's failure policy, so every
 *    message leaves, and the node leaves the shared connection. The confirm
 *    node has no store of its own (it settles in the sensor nodes'
 *    stores, any of which may be Redis): its settles get the whole
 *    DRAIN_MS, and are not failed after it (those stores are not its own).
 * 2. The dedup-redis config node is stopped alongside its users; it closes
 *    the connection when the last user has left, or after CONFIG_WAIT_MS,
 *    which must outlast step 1 so that no user loses its connection while
 *    it is still draining.
 * 3. Node-RED itself gives every close handler NODE_RED_LIMIT_MS
 *    (`nodeCloseTimeout`) before it moves on without it; both waits above
 *    end before it, with room for the connection's QUIT (QUIT_GRACE_MS, kept
 *    beside the connection in redis/shared-connection).
 */
export const DRAIN_MS = 10_000;
export const CONFIG_WAIT_MS = 12_000;
export const NODE_RED_LIMIT_MS = 15_000;

/** How long a node drains, given its store's give-up time (Infinity for memory, and for the confirm node's settles in other nodes' stores). */
export function drainLimit(storeTimeoutMs: number): number {
  return Math.min(DRAIN_MS, storeTimeoutMs + 1000);
}
