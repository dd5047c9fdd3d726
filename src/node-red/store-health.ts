import { errorMessage } from '../core/parse/errors';
import type { ConnectionEvent } from '../redis/shared-connection';

/**
 * How a node's store is doing, as its status line tells it: the Redis
 * connection's state, the latest failure of a request, and why the memory
 * store's state is not being saved. Written by the store's binding (the
 * connection's events, the journal's), the failure policy and the replies
 * of requests; read by the status board, told of each change.
 */
export class StoreHealth {
  private connectionEvent: ConnectionEvent | undefined;
  private lastFailure: string | undefined;
  private savingProblem: string | undefined;
  private listener: (() => void) | undefined;

  get connection(): ConnectionEvent | undefined {
    return this.connectionEvent;
  }

  /** The latest request that failed, until the store works again. */
  get failure(): string | undefined {
    return this.lastFailure;
  }

  /** Why the memory store's state is not being saved (e.g. ENOSPC), while it is not. */
  get notSaving(): string | undefined {
    return this.savingProblem;
  }

  /** Tells `listener` of every change from now on. */
  follow(listener: () => void): void {
    this.listener = listener;
  }

  connectionChanged(event: ConnectionEvent): void {
    this.connectionEvent = event;
    if (event.state === 'ready') this.lastFailure = undefined;
    this.listener?.();
  }

  storeFailed(error: unknown): void {
    this.lastFailure = errorMessage(error);
    this.listener?.();
  }

  storeWorked(): void {
    if (this.lastFailure === undefined) return;
    this.lastFailure = undefined;
    this.listener?.();
  }

  /** Saving the memory store's state started failing (its cause) or works again (undefined). */
  savingChanged(cause: string | undefined): void {
    if (cause === this.savingProblem) return;
    this.savingProblem = cause;
    this.listener?.();
  }
}
