/**
 * The stores' callback interface (src/stores/types.ts) as promises, for
 * tests: one call, one promise, settled by the store's answer.
 *
 * The calls are made synchronously, so several asks in one turn reach a
 * batching store in the order they were written, exactly as Node-RED's
 * messages of one turn do. Each request must be answered exactly once: a
 * second answer throws from inside the store's callback, which the Redis
 * stores raise again as an uncaught exception, so mocha fails the test.
 */
import type { Ping } from '../../src/core/window/sliding-window';
import type { ClaimRequest, Replies, SeenStore, SettleRequest, WindowOutcome, WindowStore } from '../../src/stores/types';

interface Pending<T> {
  resolve(value: T): void;
  reject(error: unknown): void;
  answered: boolean;
  what: string;
}

function settleOnce<T>(pending: Pending<T>): void {
  if (pending.answered) throw new Error(`${pending.what} was answered twice`);
  pending.answered = true;
}

// One replies object for every request: the context says whose answer it is.
const replies: Replies<unknown, Pending<unknown>> = {
  value(value, pending) {
    settleOnce(pending);
    pending.resolve(value);
  },
  error(error, pending) {
    settleOnce(pending);
    pending.reject(error);
  },
};

function ask<T>(what: string, send: (replies: Replies<T, Pending<T>>, pending: Pending<T>) => void): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    send(replies, { resolve, reject, answered: false, what });
  });
}

export function decide(store: WindowStore, ping: Ping): Promise<WindowOutcome> {
  return ask('decide', (r, p) => store.decide(ping, r, p));
}

export function resetWindow(store: WindowStore, assetId?: string): Promise<void> {
  return ask('reset', (r, p) => store.reset(assetId, r, p));
}

export function claim(store: SeenStore, request: ClaimRequest): Promise<number[]> {
  return ask('claim', (r, p) => store.claim(request, r, p));
}

export function settle(store: SeenStore, request: SettleRequest): Promise<number[]> {
  return ask('settle', (r, p) => store.settle(request, r, p));
}

export function resetSeen(store: SeenStore, group?: string): Promise<void> {
  return ask('reset', (r, p) => store.reset(group, r, p));
}

/** Resolves with the error a promise rejected with; fails when it resolved. */
export async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected a rejection, got an answer');
}
