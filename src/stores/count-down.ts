/**
 * One answer for a request that went out as several script calls (a reset
 * of every slot of a Cluster, a burst split by slot): the value once every
 * part has answered, or the first error, exactly once either way.
 */
import type { Replies } from './types';

export class CountDown<T, C> {
  private left: number;
  private done = false;

  /**
   * `value` is answered as it stands when the last part is in, so a caller
   * may fill it from the parts' answers (a burst's codes, put back in order).
   */
  constructor(
    parts: number,
    private readonly replies: Replies<T, C>,
    private readonly context: C,
    private readonly value: T,
  ) {
    this.left = parts;
  }

  readonly one = (): void => {
    if (this.done || --this.left > 0) return;
    this.done = true;
    this.replies.value(this.value, this.context);
  };

  readonly failed = (error: unknown): void => {
    if (this.done) return;
    this.done = true;
    this.replies.error(error, this.context);
  };
}
