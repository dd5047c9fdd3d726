/**
 * What a node does when its store cannot decide (Redis down, not answering):
 * `admit` (the default) lets the message through, since a duplicate is
 * better than lost data; `error` hands it to a Catch node instead. Either
 * way the status turns red; the warning is repeated at most every
 * WARN_INTERVAL_MS so that an outage does not flood the debug sidebar.
 */
import type { Node } from './api';
import { errorMessage } from '../core/parse/errors';
import type { StoreHealth } from './store-health';

export type OnStoreError = 'admit' | 'error';

const WARN_INTERVAL_MS = 10_000;

export class StoreFailurePolicy {
  private lastWarning = -Infinity;

  constructor(
    private readonly node: Pick<Node, 'warn'>,
    readonly policy: OnStoreError,
    private readonly health: StoreHealth,
    private readonly t: (key: string, subs?: Record<string, string | number>) => string,
  ) {}

  /** Returns the error for done(), or undefined when the message is to be admitted. */
  failed(error: unknown): Error | undefined {
    this.health.storeFailed(error);
    const reason = errorMessage(error);
    if (this.policy === 'error') return new Error(this.t('errors.storeFailed', { error: reason }));
    const now = Date.now();
    if (now - this.lastWarning >= WARN_INTERVAL_MS) {
      this.lastWarning = now;
      this.node.warn(this.t('warnings.admittedOnStoreFailure', { error: reason }));
    }
    return undefined;
  }
}
