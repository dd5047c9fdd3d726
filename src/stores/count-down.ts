/**
 * One answer for a request that went out as several script calls (a reset
 * of every slot of a Cluster, a burst split by slot): the value once every
 * part has answered, or the first error, exactly once either way.
 */
import type { Replies } from './types';

export class CountDown<C> {
  private left: number;
  private done = false;

  constructor(
    parts: number,
    private readonly replies: Replies<void, C>,
    private readonly context: C,
  ) {
    this.left = parts;
  }

  readonly one = (): void => {
    if (this.done || --this.left > 0) return;
    this.done = true;
    this.replies.value(undefined, this.context);
  };

  readonly failed = (error: unknown): void => {
    if (this.done) return;
    this.done = true;
    this.replies.error(error, this.context);
  };
}
