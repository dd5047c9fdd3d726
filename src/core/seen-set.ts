/**
 * A set of idempotency keys bounded by age and by size: first write wins,
 * and memory stays flat however long the process runs (the unbounded set is
 * the leak the reference design warns about).
 *
 * A Map iterates in insertion order, and every key is inserted once with the
 * same TTL, so the first entry is always both the oldest admission and the
 * next to expire: expiry and the size cap are each a pop from the front.
 */
export class BoundedSeenSet {
  /** key -> expiry, in milliseconds since the epoch. */
  private readonly expiries = new Map<string, number>();
  /**
   * The same keys in insertion order, oldest at `head`. The front of the Map
   * itself is not cheap to reach: V8 keeps a deleted entry as a hole until it
   * rebuilds the table, and `keys().next()` steps over every hole left at the
   * front, so popping the oldest key on each claim grew quadratic (at maxKeys
   * it was over half the time of a burst; see npm run bench). A queue pops in
   * constant time. Invariant: queue[head..] holds exactly the keys of the Map,
   * and queueExpiry[i] the expiry of queue[i] (read there, the check for an
   * expired key needs no lookup in a Map of 100,000 keys on every claim).
   */
  private queue: (string | undefined)[] = [];
  private queueExpiry: number[] = [];
  private head = 0;

  constructor(
    private readonly ttlMs: number,
    private readonly maxKeys: number,
  ) {
    if (!(ttlMs > 0)) throw new RangeError('ttlMs must be positive');
    if (!(Number.isInteger(maxKeys) && maxKeys > 0)) throw new RangeError('maxKeys must be a positive integer');
  }

  get size(): number {
    return this.expiries.size;
  }

  /** True when the key is new (admit), false when it was seen within the TTL. */
  claim(key: string, nowMs: number): boolean {
    this.expire(nowMs);
    if (this.expiries.has(key)) return false;
    const expiry = nowMs + this.ttlMs;
    this.expiries.set(key, expiry);
    this.queue.push(key);
    this.queueExpiry.push(expiry);
    if (this.expiries.size > this.maxKeys) this.dropOldest();
    return true;
  }

  has(key: string, nowMs: number): boolean {
    this.expire(nowMs);
    return this.expiries.has(key);
  }

  /** Removes the keys the predicate selects; returns how many. */
  deleteWhere(predicate: (key: string) => boolean): number {
    let removed = 0;
    for (const key of this.expiries.keys()) {
      if (predicate(key)) {
        this.expiries.delete(key);
        removed++;
      }
    }
    // Rare (a reset): rebuilt rather than kept in step key by key.
    if (removed > 0) {
      this.queue = [...this.expiries.keys()];
      this.queueExpiry = [...this.expiries.values()];
      this.head = 0;
    }
    return removed;
  }

  clear(): void {
    this.expiries.clear();
    this.queue = [];
    this.queueExpiry = [];
    this.head = 0;
  }

  private expire(nowMs: number): void {
    while (this.head < this.queue.length && (this.queueExpiry[this.head] as number) <= nowMs) {
      this.dropOldest();
    }
  }

  private dropOldest(): void {
    if (this.head === this.queue.length) return;
    this.expiries.delete(this.queue[this.head] as string);
    this.queue[this.head++] = undefined;
    // Drop the popped part once it is most of the array: linear work once
    // per as many pops, so constant per pop, and the array stays at most
    // twice the number of keys.
    if (this.head > 1024 && this.head * 2 > this.queue.length) {
      this.queue = this.queue.slice(this.head);
      this.queueExpiry = this.queueExpiry.slice(this.head);
      this.head = 0;
    }
  }
}
