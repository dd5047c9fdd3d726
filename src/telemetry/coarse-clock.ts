/**
 * The time of a decision, to the quarter second: Date.now() costs more than
 * everything else a record's write does (it is a system call on some
 * virtual machines), so it is read every 250 ms by a timer, and every 1024
 * reads besides, for a burst that holds the event loop longer than that.
 * Ten-second rate buckets, "last ping" times and the what-if's clock need
 * no finer.
 */
let coarseNow = Date.now();
let readsSinceNow = 0;
let timer: NodeJS.Timeout | undefined;

export function decisionTime(): number {
  if (++readsSinceNow >= 1024) {
    readsSinceNow = 0;
    coarseNow = Date.now();
  }
  return coarseNow;
}

/** Starts the timer (once; it never keeps the process alive). */
export function startClock(): void {
  if (timer !== undefined) return;
  coarseNow = Date.now();
  timer = setInterval(() => {
    coarseNow = Date.now();
    readsSinceNow = 0;
  }, 250);
  timer.unref();
}
