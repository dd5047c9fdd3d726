/**
 * What the seen-set answers, as the numbers both stores use: the memory
 * store returns them, lua/seen-set.lua replies with them. This table is the
 * only place they are written; src/redis/scripts.ts hands it to the script
 * by name.
 *
 * A claim:
 * - `admitted`: the first claim of the key (or the first after its lease
 *   ran out, or after a release): the reading goes on;
 * - `duplicate`: the key is seen: the reading is a replay;
 * - `inFlight`: the key is pending, claimed by another message whose
 *   delivery is not yet confirmed (confirm mode);
 * - `replayed`: the key is held by this very message (the same token), sent
 *   again after its decision was lost: admitted again;
 * plus the flag `leaseExpired` when the claim took over a pending key whose
 * lease had run out (counted as lease_expired in the audit).
 *
 * A confirm or release:
 * - `settled`: done;
 * - `notHeld`: the key is gone or held by another token: nothing changed;
 * - `lateSettled`: done, but the lease had run out before it came (no other
 *   copy was admitted meanwhile, since the token still held the key);
 * - `kept`: a release of a key already confirmed (or admitted with confirm
 *   off): a delivery that succeeded is never undone, so the key stays seen.
 */
export const CLAIM = { admitted: 1, duplicate: 2, inFlight: 3, replayed: 4 } as const;
export const LEASE_EXPIRED = 16;
export const SETTLE = { settled: 1, notHeld: 2, lateSettled: 3, kept: 4 } as const;

/** The outcome of a claim without its flag. */
export function claimOutcome(code: number): number {
  return code & (LEASE_EXPIRED - 1);
}

export function isAdmitted(code: number): boolean {
  const outcome = claimOutcome(code);
  return outcome === CLAIM.admitted || outcome === CLAIM.replayed;
}

/**
 * A key's state as a Redis seen-set entry stores it: the number lua/seen-set.lua
 * compares with, handed to it in the prelude (redis/scripts), written nowhere else.
 */
export const KEY_STATE = { seen: 0, pending: 1, released: 2 } as const;

/**
 * The memory seen-set folds the state into the entry's `deadline`:
 * SEEN_DEADLINE a seen key, a time > 0 a pending one (its lease's end),
 * RELEASED_DEADLINE a released one.
 */
export const SEEN_DEADLINE = 0;
export const RELEASED_DEADLINE = -1;
