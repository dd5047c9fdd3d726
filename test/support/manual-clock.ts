/**
 * A clock that moves only when a test says so: the give-up clock's time and
 * timers (src/redis/tick-batcher BatcherClock), so that a test of a timeout
 * advances time instead of sleeping through it.
 */
import type { BatcherClock } from '../../src/redis/tick-batcher';

interface Timer {
  at: number;
  run: () => void;
}

export class ManualClock implements BatcherClock {
  private time: number;
  private readonly timers = new Set<Timer>();

  constructor(start = 1_780_000_000_000) {
    this.time = start;
  }

  readonly now = (): number => this.time;

  readonly setTimer = (run: () => void, ms: number): unknown => {
    const timer = { at: this.time + Math.max(0, ms), run };
    this.timers.add(timer);
    return timer;
  };

  readonly clearTimer = (timer: unknown): void => {
    this.timers.delete(timer as Timer);
  };

  /** Timers set and not yet run. */
  get waiting(): number {
    return this.timers.size;
  }

  /** Moves time on by ms, running every timer that falls due, in time order (a timer set by one that runs is run too when due). */
  advance(ms: number): void {
    const until = this.time + ms;
    for (;;) {
      let next: Timer | undefined;
      for (const timer of this.timers) if (timer.at <= until && (next === undefined || timer.at < next.at)) next = timer;
      if (next === undefined) break;
      this.timers.delete(next);
      this.time = next.at;
      next.run();
    }
    this.time = until;
  }
}
