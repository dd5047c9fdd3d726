/**
 * Keys mapped to numbered slots, chained in the order they were last
 * written, oldest first: the skeleton both memory stores hang their columns
 * (typed arrays indexed by slot) on.
 *
 * Columns rather than an object per entry: measured with npm run bench at
 * 100,000 entries, an object per window record cost 205 bytes against 134
 * in columns (V8 boxes the doubles of an object one by one), and a write
 * allocates nothing, so a busy node spends less time collecting garbage.
 *
 * The chain gives the oldest entry in constant time, for the TTL and the
 * size cap alike. (The first entry of a Map is not constant time to reach
 * in V8: a deleted entry stays as a hole until the table is rebuilt, and
 * every new iterator steps over the holes that earlier deletions left at
 * the front; popping the oldest key per write had grown quadratic.)
 */
export const NONE = -1;
const FIRST_CAPACITY = 64;

export class RecencyIndex {
  private readonly slotOf = new Map<string, number>();
  private keys: (string | undefined)[] = [];
  private older = new Int32Array(0);
  private newer = new Int32Array(0);
  private oldestSlot = NONE;
  private newestSlot = NONE;
  /** Slots below `used` have been handed out; freed ones wait in `free`. */
  private used = 0;
  private free: number[] = [];

  /**
   * @param maxEntries the most keys held: insert() drops the oldest at it,
   *   so the columns never grow past it
   * @param resize called with the new capacity whenever the columns must
   *   grow (or, after clear(), shrink to 0); copy what fits
   */
  constructor(
    private maxEntries: number,
    private readonly resize: (capacity: number) => void,
  ) {}

  get size(): number {
    return this.slotOf.size;
  }

  get oldest(): number {
    return this.oldestSlot;
  }

  /** The slot after this one in the chain (written later), or NONE. */
  next(slot: number): number {
    return this.newer[slot] as number;
  }

  slot(key: string): number | undefined {
    return this.slotOf.get(key);
  }

  keyAt(slot: number): string {
    return this.keys[slot] as string;
  }

  /** Every key, oldest write first. */
  keysInOrder(): string[] {
    // Sized once: grown by push, a list of 100,000 keys was a GC pause of its own.
    const keys = new Array<string>(this.size);
    let at = 0;
    for (let slot = this.oldestSlot; slot !== NONE; slot = this.newer[slot] as number) keys[at++] = this.keys[slot] as string;
    return keys;
  }

  /** Lowers or raises the cap; a lower one drops the oldest keys down to it at once. */
  setMaxEntries(maxEntries: number): void {
    this.maxEntries = maxEntries;
    while (this.slotOf.size > maxEntries) this.remove(this.oldestSlot);
  }

  /**
   * A slot for a new key, chained as the newest; at the cap the oldest key
   * makes room first (which leaves the same keys as adding and then
   * dropping, without growing the columns). The key must not be present.
   */
  insert(key: string): number {
    if (this.slotOf.size >= this.maxEntries) this.remove(this.oldestSlot);
    // Flattened before it is kept: V8 holds a key built by concatenation as
    // a rope of its parts (and a part cut from a longer string keeps all of
    // it), and reading a character flattens it in place. Measured on seen
    // keys, `<device>:<seq>:<hash>`: 283 bytes per key kept as built, 88
    // flattened, and the claim got faster, not slower.
    key.charCodeAt(0);
    const slot = this.allocate();
    this.keys[slot] = key;
    this.slotOf.set(key, slot);
    this.link(slot);
    return slot;
  }

  /** The key's slot moved to the newest end, or a new one for it as insert() gives. */
  upsert(key: string): number {
    const slot = this.slotOf.get(key);
    if (slot === undefined) return this.insert(key);
    this.touch(slot);
    return slot;
  }

  /** Moves a slot to the newest end of the chain. */
  touch(slot: number): void {
    if (slot === this.newestSlot) return;
    this.unlink(slot);
    this.link(slot);
  }

  remove(slot: number): void {
    this.unlink(slot);
    this.slotOf.delete(this.keys[slot] as string);
    this.keys[slot] = undefined;
    this.free.push(slot);
  }

  /** Removes the key if it is there; true when it was. */
  removeKey(key: string): boolean {
    const slot = this.slotOf.get(key);
    if (slot === undefined) return false;
    this.remove(slot);
    return true;
  }

  /**
   * Removes the oldest keys while their time in `expiry` (a column indexed by
   * slot) is at or before `now`: an owner that writes a key's expiry when it
   * chains the key as the newest finds the expired keys at the old end.
   */
  removeExpired(expiry: Float64Array, now: number): void {
    let oldest = this.oldestSlot;
    while (oldest !== NONE && (expiry[oldest] as number) <= now) {
      this.remove(oldest);
      oldest = this.oldestSlot;
    }
  }

  clear(): void {
    this.slotOf.clear();
    this.keys = [];
    this.older = new Int32Array(0);
    this.newer = new Int32Array(0);
    this.oldestSlot = this.newestSlot = NONE;
    this.used = 0;
    this.free = [];
    this.resize(0);
  }

  private allocate(): number {
    const reused = this.free.pop();
    if (reused !== undefined) return reused;
    if (this.used === this.older.length) {
      // Doubling, but never past the cap: insert() frees a slot at the cap.
      const capacity = Math.min(Math.max(FIRST_CAPACITY, this.used * 2), Math.max(this.maxEntries, this.used + 1));
      this.older = grown(this.older, capacity);
      this.newer = grown(this.newer, capacity);
      this.resize(capacity);
    }
    return this.used++;
  }

  private link(slot: number): void {
    this.older[slot] = this.newestSlot;
    this.newer[slot] = NONE;
    if (this.newestSlot === NONE) this.oldestSlot = slot;
    else this.newer[this.newestSlot] = slot;
    this.newestSlot = slot;
  }

  private unlink(slot: number): void {
    const before = this.older[slot] as number;
    const after = this.newer[slot] as number;
    if (before === NONE) this.oldestSlot = after;
    else this.newer[before] = after;
    if (after === NONE) this.newestSlot = before;
    else this.older[after] = before;
  }
}

/** A column of the new capacity holding what fits of the old one. */
export function grown<T extends Float64Array | Int32Array | Uint16Array | Uint8Array>(column: T, capacity: number): T {
  const Column = column.constructor as new (length: number) => T;
  const next = new Column(capacity);
  next.set(column.subarray(0, Math.min(column.length, capacity)));
  return next;
}
