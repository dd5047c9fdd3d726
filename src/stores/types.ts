import type { Ping, WindowRule, WindowVerdict } from '../core/sliding-window';

/**
 * The two state stores of each dedup node. The memory and Redis versions
 * make identical decisions (test/contract holds them to it); a memory store
 * answers synchronously, which keeps the common case free of promise turns.
 */
export type MaybePromise<T> = T | Promise<T>;

export interface WindowSettings extends WindowRule {
  ttlSeconds: number;
}

/** A verdict plus the asset's running counts, as stored with its record. */
export type WindowOutcome = WindowVerdict & { accepted: number; suppressed: number };

/**
 * The outcome of a verdict: the same object `{ ...verdict, accepted,
 * suppressed }` would give, spelled out because V8's object spread over
 * verdicts of varying shapes cost more than the whole rest of a memory
 * store decision (profiled with npm run bench).
 */
export function withCounts(verdict: WindowVerdict, accepted: number, suppressed: number): WindowOutcome {
  return {
    admit: verdict.admit,
    reason: verdict.reason,
    dtSeconds: verdict.dtSeconds,
    distanceMetres: verdict.distanceMetres,
    accepted,
    suppressed,
  } as WindowOutcome;
}

export interface WindowStore {
  decide(ping: Ping): MaybePromise<WindowOutcome>;
  /**
   * decide() through callbacks instead of a promise, for a store that answers
   * later (Redis): calls onOutcome or onError exactly once, never before
   * decideThen() has returned, with the context it was given. Optional: a
   * store without it is asked through decide().
   */
  decideThen?<C>(ping: Ping, onOutcome: (outcome: WindowOutcome, context: C) => void, onError: (error: unknown, context: C) => void, context: C): void;
  /** Forgets one asset, or every asset. */
  reset(assetId?: string): MaybePromise<void>;
}

/** One idempotency key to claim, with the parts its Redis key is built from. */
export interface SeenClaim {
  deviceId: string;
  seq: number;
  hash: string;
  /** `<device_id>:<seq>:<hash>` */
  key: string;
}

export interface SeenStore {
  /**
   * Claims the keys of one burst in order; true where the reading is the
   * first with its key (admit), false where the key was already claimed,
   * earlier in the same burst included (first write wins).
   */
  claim(claims: readonly SeenClaim[]): MaybePromise<boolean[]>;
  /** Forgets one device's keys, or every key. */
  reset(deviceId?: string): MaybePromise<void>;
}

export function isPromise<T>(value: MaybePromise<T>): value is Promise<T> {
  return typeof (value as Promise<T> | undefined)?.then === 'function';
}
