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
    this.expiries.set(key, nowMs + this.ttlMs);
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
    return removed;
  }

  clear(): void {
    this.expiries.clear();
  }

  private expire(nowMs: number): void {
    for (const [key, expiry] of this.expiries) {
      if (expiry > nowMs) return;
      this.expiries.delete(key);
    }
  }

  private dropOldest(): void {
    const oldest = this.expiries.keys().next();
    if (!oldest.done) this.expiries.delete(oldest.value);
  }
}
