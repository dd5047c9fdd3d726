import type { SeenClaim } from '../core/sensor/burst';
import type { Ping, WindowRule, WindowVerdict } from '../core/window/sliding-window';

export type { SeenClaim };

/**
 * The state stores of the dedup nodes. Each kind has a memory and a Redis
 * implementation that make identical decisions (test/contract holds them to
 * it), and one way to ask: a request, the callbacks for its answer, and a
 * context handed back with it. The memory stores answer before the call
 * returns, the Redis stores later; callers treat both alike. Callbacks are
 * made once per node, and the context is whatever the caller needs to
 * finish the message, so that a waiting message costs one small object
 * rather than a promise and closures (the garbage of 200,000 messages in
 * flight was measurable: npm run bench).
 */
/** The two answers of a store request; properties, not methods, so a store may hand them on alone. */
export interface Replies<T, C> {
  value: (value: T, context: C) => void;
  error: (error: unknown, context: C) => void;
}

export interface WindowSettings extends WindowRule {
  ttlSeconds: number;
}

/** A verdict plus the asset's running counts, as stored with its record. */
export type WindowOutcome = WindowVerdict & { accepted: number; suppressed: number };

/**
 * The outcome of a verdict: the same object `{ ...verdict, accepted,
 * suppressed }` would give, spelled out because V8's object spread here
 * cost more than the whole rest of a memory store decision (npm run bench).
 */
export function withCounts(verdict: WindowVerdict, accepted: number, suppressed: number): WindowOutcome {
  return {
    admit: verdict.admit,
    reason: verdict.reason,
    dtSeconds: verdict.dtSeconds,
    distanceMetres: verdict.distanceMetres,
    headingChange: verdict.headingChange,
    valueChange: verdict.valueChange,
    accepted,
    suppressed,
  };
}

export interface WindowStore {
  decide<C>(ping: Ping, replies: Replies<WindowOutcome, C>, context: C): void;
  /** Forgets one asset, or every asset, in order with the decisions asked before and after. */
  reset<C>(assetId: string | undefined, replies: Replies<void, C>, context: C): void;
}

export interface SeenSettings {
  ttlSeconds: number;
  /** Confirm mode: a claim holds its key for leaseSeconds, until confirmed or released. */
  confirm: boolean;
  leaseSeconds: number;
}

/** The keys of one message, claimed under its token (see core/structures/call-token). */
export interface ClaimRequest {
  claims: readonly SeenClaim[];
  token: number;
}

export interface SettleRequest extends ClaimRequest {
  action: 'confirm' | 'release';
}

export interface SeenStore {
  /** One code of core/sensor/seen-codes CLAIM per claim, in order; a key repeated within one request is the caller's to collapse. */
  claim<C>(request: ClaimRequest, replies: Replies<number[], C>, context: C): void;
  /** One code of core/sensor/seen-codes SETTLE per claim. */
  settle<C>(request: SettleRequest, replies: Replies<number[], C>, context: C): void;
  /** Forgets one group's keys (a device's), or every key, in order with the claims before and after. */
  reset<C>(group: string | undefined, replies: Replies<void, C>, context: C): void;
}

/** Options of a Redis store, from its dedup-redis connection. */
export interface RedisStoreOptions {
  keyPrefix: string;
  /** On a Cluster, calls are grouped per hash slot; on one server, not at all. */
  cluster: boolean;
  timeoutMs: number;
  /** Pings or keys per script call; bounds how long one call holds the server. */
  maxBatch?: number;
  /** The connection's latest error, to name the cause when Redis does not answer. */
  cause?: () => string | undefined;
  /** Told of a reply callback that threw (see TickBatcher): the node reports it; it is never raised. */
  onCallbackError?: (error: unknown) => void;
  /** Told of each script call Redis answered (see TickBatcher): the requests it carried and its milliseconds, for the metrics. */
  onAnswer?: (items: number, ms: number) => void;
  /** The error a call fails with, unsent, while the server is known to run no scripts (redis/scripting). */
  refused?: () => Error | undefined;
  /** A call's error as the pack names it (a server without scripting), or undefined to keep it as it is. */
  classify?: (error: unknown) => Error | undefined;
}
