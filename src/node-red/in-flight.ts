/**
 * Counts the decisions still waiting on a store, so that a node being closed
 * (redeploy, shutdown) lets them finish and call done() before the Redis
 * connection goes away.
 */
export class InFlight {
  private count = 0;
  private waiters: (() => void)[] = [];

  get size(): number {
    return this.count;
  }

  track<T>(promise: Promise<T>): Promise<T> {
    this.count++;
    const release = (): void => {
      this.count--;
      if (this.count === 0) for (const wake of this.waiters.splice(0)) wake();
    };
    promise.then(release, release);
    return promise;
  }

  /** Resolves when nothing is in flight, or after limitMs, whichever is first. */
  drained(limitMs: number): Promise<void> {
    if (this.count === 0) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, limitMs);
      this.waiters.push(() => {
        clearTimeout(timer);
        resolve();
      });
    });
  }
}
