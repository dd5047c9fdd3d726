/**
 * A burst of readings (or a single one) through the seen-set, apart from
 * any store: keying the readings, collapsing the repeats inside one message,
 * and reading the store's answers back into what is admitted, what is
 * suppressed and why, and the audit counts.
 *
 * received = unique + duplicates_suppressed + rejected, always; in_flight is
 * the part of duplicates_suppressed whose key was pending (another copy is
 * being delivered, confirm mode), lease_expired and replayed the parts of
 * unique admitted because an earlier claim's lease had run out, or because
 * the message itself is being retried.
 */
import type { PropertyPath } from '../parse/property-path';
import { CLAIM, claimOutcome, isAdmitted, LEASE_EXPIRED } from './seen-codes';

/** One idempotency key to claim. */
export interface SeenClaim {
  /** As users see it: `<device_id>:<seq>:<hash>`, or a property's value in key mode `property`. */
  key: string;
  /** The prefix of `key` naming its group: the device id (its keys share a Cluster slot and are reset together), or the whole key. */
  group: string;
}

export type KeyResult =
  | { ok: true; key: string; group: string }
  /**
   * `value`: the offending value rendered for an error message; `given`: the
   * value itself (undefined when missing); `where`: where the key was read,
   * when it was not inside the reading (key mode `property`).
   */
  | { ok: false; path: PropertyPath | null; value: string; given?: unknown; problem: string; where?: string };

/** A reading that has a key, with its place in the input. */
export interface Keyed {
  index: number;
  raw: unknown;
  key: string;
  /** Index into the claims; for a repeat of a key earlier in the same message, -1 - the index of that key's claim. */
  claimAt: number;
}

/**
 * The claim whose answer decides a keyed reading: a repeat keeps its first
 * occurrence's index encoded negative, so that its sign alone marks it a repeat.
 */
export function claimIndex(keyed: Keyed): number {
  return keyed.claimAt >= 0 ? keyed.claimAt : -1 - keyed.claimAt;
}

export interface Rejected {
  index: number;
  raw: unknown;
  path: PropertyPath | null;
  value: string;
  given?: unknown;
  problem: string;
  where?: string;
}

/** One message, read: its readings in order, and the keys to claim. */
export interface Prepared {
  /** True when msg.payload was an array; a single reading is routed whole. */
  burst: boolean;
  received: number;
  keyed: Keyed[];
  rejected: Rejected[];
  claims: SeenClaim[];
}

export function prepareReadings(readings: readonly unknown[], burst: boolean, keyOf: (raw: unknown, index: number) => KeyResult): Prepared {
  const prepared: Prepared = { burst, received: readings.length, keyed: [], rejected: [], claims: [] };
  // A key repeated inside one message is a duplicate whatever the store
  // says, so only its first occurrence is claimed: that also keeps an
  // in-burst replay collapsed when the store is down.
  const claimOfKey = new Map<string, number>();
  // An index loop, not forEach: a sparse array's holes must be counted (and
  // rejected), or received would exceed what the audit accounts for.
  for (let index = 0; index < readings.length; index++) {
    const raw = readings[index];
    const result = keyOf(raw, index);
    if (!result.ok) {
      prepared.rejected.push({
        index,
        raw,
        path: result.path,
        value: result.value,
        given: result.given,
        problem: result.problem,
        ...(result.where !== undefined ? { where: result.where } : {}),
      });
      continue;
    }
    const earlier = claimOfKey.get(result.key);
    if (earlier !== undefined) {
      prepared.keyed.push({ index, raw, key: result.key, claimAt: -1 - earlier });
      continue;
    }
    claimOfKey.set(result.key, prepared.claims.length);
    prepared.keyed.push({ index, raw, key: result.key, claimAt: prepared.claims.length });
    prepared.claims.push({ key: result.key, group: result.group });
  }
  return prepared;
}

export type SuppressReason = 'duplicate' | 'in-flight';

export interface Suppressed {
  keyed: Keyed;
  reason: SuppressReason;
}

export interface Settled {
  admitted: Keyed[];
  suppressed: Suppressed[];
  replayed: number;
  leaseExpired: number;
  /** Set when the store failed and the readings were admitted without it. */
  storeError?: string;
}

/**
 * The store's answers (a CLAIM code per claim) as admitted and suppressed
 * readings, in input order. codes undefined: the store failed, and every
 * first occurrence is admitted. `pending` (confirm mode): an admitted key is
 * held pending, so a repeat of it inside the same message is `in-flight`.
 */
export function settleReadings(prepared: Prepared, codes: readonly number[] | undefined, storeError?: string, pending = false): Settled {
  const settled: Settled = { admitted: [], suppressed: [], replayed: 0, leaseExpired: 0 };
  if (storeError !== undefined) settled.storeError = storeError;
  for (const keyed of prepared.keyed) {
    const code = codes === undefined ? CLAIM.admitted : (codes[claimIndex(keyed)] as number);
    const outcome = claimOutcome(code);
    const admitted = isAdmitted(code);
    if (keyed.claimAt < 0) {
      // A repeat inside the message: a duplicate of its first occurrence, or
      // pending with it.
      const inFlight = admitted ? pending && storeError === undefined : outcome === CLAIM.inFlight;
      settled.suppressed.push({ keyed, reason: inFlight ? 'in-flight' : 'duplicate' });
      continue;
    }
    if (admitted) {
      settled.admitted.push(keyed);
      if (outcome === CLAIM.replayed) settled.replayed++;
      if (code & LEASE_EXPIRED) settled.leaseExpired++;
    } else {
      settled.suppressed.push({ keyed, reason: outcome === CLAIM.inFlight ? 'in-flight' : 'duplicate' });
    }
  }
  return settled;
}

/** Every reason a burst audit's `msg.dedup.reason` can give. */
export type AuditReason = 'new' | 'store-unavailable' | SuppressReason | 'rejected' | 'empty';

/**
 * The reason a burst audit carries: `new` when some reading was admitted
 * (`store-unavailable` when admitted without the store); when none was, why
 * not: `duplicate` when any reading was a duplicate, else `in-flight`, else
 * `rejected`, and `empty` for an empty burst.
 */
export function auditReason(prepared: Prepared, settled: Settled): AuditReason {
  if (settled.admitted.length > 0) return settled.storeError === undefined ? 'new' : 'store-unavailable';
  if (settled.suppressed.some((s) => s.reason === 'duplicate')) return 'duplicate';
  if (settled.suppressed.length > 0) return 'in-flight';
  return prepared.rejected.length > 0 ? 'rejected' : 'empty';
}

/**
 * A rejected reading's value as the audit shows it: a number, boolean, null
 * or short string as the reading held it (150 stays 150, not "150");
 * anything else (missing, an object, a long string, NaN) as the rendering
 * its error message has, so the audit never carries a whole payload twice.
 */
export function auditValue(r: Pick<Rejected, 'given' | 'value'>): unknown {
  const given = r.given;
  if (typeof given === 'number') return Number.isFinite(given) ? given : r.value;
  if (typeof given === 'boolean' || given === null) return given;
  if (typeof given === 'string' && given.length <= AUDIT_STRING_MAX) return given;
  return r.value;
}

/** Strings longer than this are shown in the audit as their error message shows them (cut at 80 characters). */
export const AUDIT_STRING_MAX = 80;

export interface Counts {
  received: number;
  unique: number;
  duplicates_suppressed: number;
  rejected: number;
  in_flight: number;
  lease_expired: number;
}

export function countsOf(prepared: Prepared, settled: Settled): Counts {
  let inFlight = 0;
  for (const s of settled.suppressed) if (s.reason === 'in-flight') inFlight++;
  return {
    received: prepared.received,
    unique: settled.admitted.length,
    duplicates_suppressed: settled.suppressed.length,
    rejected: prepared.rejected.length,
    in_flight: inFlight,
    lease_expired: settled.leaseExpired,
  };
}

/** The counts of a message none of whose readings could be decided (the store failed and raised an error). */
export function undecidedCounts(prepared: Prepared): Counts {
  return {
    received: prepared.received,
    unique: 0,
    duplicates_suppressed: 0,
    rejected: prepared.rejected.length + prepared.keyed.length,
    in_flight: 0,
    lease_expired: 0,
  };
}
