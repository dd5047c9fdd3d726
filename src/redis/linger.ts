/**
 * The adaptive linger of the tick batcher (redis/tick-batcher): whether the
 * requests of this turn wait a little for the next turns' before their
 * calls go out. Pure: it is told the time and the count, and keeps no timer.
 *
 * Why. Every script call costs Redis a fixed amount however few pings it
 * carries: waking up for the command, reading it, looking the script up,
 * building its KEYS and ARGV, writing the reply. On a busy server that is
 * about 14 µs of CPU, on a quiet one (a call every millisecond or so, the
 * server asleep between them) several times more, against 3 to 4 µs per
 * ping; npm run bench measures both ("Redis CPU per decision"). At 2,000
 * msg/s the tick batcher sent a call of 2 or 3 pings every millisecond, and
 * the fixed cost was most of Redis' work. Waiting a few milliseconds turns
 * several such calls into one.
 *
 * When it waits. Only while all of these hold:
 * - the requests not yet sent, this turn's and those already waiting,
 *   number fewer than ENOUGH: a call of ENOUGH pings already spreads its
 *   fixed cost thin, so at a high rate, where a turn brings that many, the
 *   linger is zero;
 * - requests come closer together than the linger: when the turn before
 *   brought requests longer ago than that, waiting would most likely
 *   gather nothing and only add delay (a trickle of messages is sent at
 *   once, as without a linger);
 * - the oldest waiting request has waited less than the linger;
 * - the last wait filled its calls: when it ended with calls of several
 *   groups carrying fewer than MIN_SHARE requests each on average, the
 *   linger rests for REST_MS. That is a Cluster at a quiet rate, where each
 *   of the 12 buckets' calls still carries about one request after a wait:
 *   npm run bench measured a few per cent less Redis CPU there for the
 *   whole delay, so there it waits once a second, to see whether the
 *   traffic has grown. One group's call (one server) is never judged so: a
 *   wait that gathered one request there is a pause of the traffic or of
 *   the process, not a sign that waiting does not pay.
 * The batcher sends what waits when the linger ends, when ENOUGH have
 * gathered, and at once when the node closes (TickBatcher.drain). Calls of
 * every group (on a Cluster, every bucket) wait and go out together, so a
 * primary reads them in one go.
 *
 * The linger is bounded by half the store's timeout (effectiveLinger), and
 * the give-up clock of a call that waited runs from when its first request
 * began to wait: a message never waits past the timeout because of it.
 */

/** Requests (pings, or sensor keys) that make a call worth sending without waiting for more. */
export const LINGER_ENOUGH = 16;
/** Requests per call a wait must gather on average to be worth its delay. */
export const LINGER_MIN_SHARE = 2;
/** How long the linger rests after a wait that did not fill its calls. */
export const LINGER_REST_MS = 1000;

/** The linger a store uses: the one asked for, but never more than half its timeout (Redis keeps at least the other half to answer). */
export function effectiveLinger(lingerMs: number, timeoutMs: number): number {
  if (!(lingerMs > 0)) return 0;
  return Math.min(lingerMs, timeoutMs / 2);
}

export class Linger {
  /** When the last turn that brought requests ended. */
  private lastTurn = -Infinity;
  /** When the oldest request waiting now began to wait; undefined while none waits. */
  private waitingSince: number | undefined;
  /** Until when the linger rests (its last wait did not fill its calls). */
  private restUntil = -Infinity;

  constructor(
    /** At most this many milliseconds; 0: off. */
    readonly maxMs: number,
    readonly enough: number = LINGER_ENOUGH,
  ) {}

  get on(): boolean {
    return this.maxMs > 0;
  }

  /** When the oldest waiting request began to wait, or undefined. */
  get since(): number | undefined {
    return this.waitingSince;
  }

  /** When what waits must go out. */
  get deadline(): number {
    return (this.waitingSince ?? Number.NaN) + this.maxMs;
  }

  /**
   * At the end of a turn that brought requests: whether the `unsent`
   * requests (this turn's and those already waiting) wait for more.
   * `now` is the end of the turn.
   */
  holds(unsent: number, now: number): boolean {
    const gap = now - this.lastTurn;
    this.lastTurn = now;
    if (this.maxMs <= 0 || unsent >= this.enough) return false;
    if (this.waitingSince === undefined) {
      if (gap > this.maxMs || now < this.restUntil) return false;
      this.waitingSince = now;
    }
    return now - this.waitingSince < this.maxMs;
  }

  /** What waited has been sent. */
  sent(): void {
    this.waitingSince = undefined;
  }

  /** A wait ended with `requests` in `calls` calls: if they were spread over several calls without sharing them, the linger rests. */
  filled(calls: number, requests: number, now: number): void {
    if (calls > 1 && requests < LINGER_MIN_SHARE * calls) this.restUntil = now + LINGER_REST_MS;
  }
}
