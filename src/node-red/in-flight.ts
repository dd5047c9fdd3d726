/**
 * Counts the decisions still waiting on a store, so that a node being closed
 * (redeploy, shutdown) lets them finish and call done() before the Redis
 * connection goes away.
 */
export class InFlight {
  private waiting = 0;
  private waiters: (() => void)[] = [];

  /**
   * Counts one decision in; end() counts it out. A pair of calls rather than
   * a wrapper around the promise, which would add a promise and a reaction to
   * every message (measurable with thousands of messages in flight).
   */
  begin(): void {
    this.waiting++;
  }

  get count(): number {
    return this.waiting;
  }

  end(): void {
    this.waiting--;
    if (this.waiting === 0) for (const wake of this.waiters.splice(0)) wake();
  }

  /** Resolves when nothing is in flight, or after limitMs, whichever is first. */
  drained(limitMs: number): Promise<void> {
    if (this.waiting === 0) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, limitMs);
      this.waiters.push(() => {
        clearTimeout(timer);
        resolve();
      });
    });
  }
}
