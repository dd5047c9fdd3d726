/**
 * A set of idempotency keys bounded by age and by size, first write wins:
 * memory stays flat however long the process runs (the unbounded set is the
 * leak the reference design warns about).
 *
 * Each key is held by the token of the message that claimed it, and is
 * either seen, or (confirm mode) pending until its lease runs out, or a
 * released key kept for a lease so that a repeated release is recognised.
 * lua/seen-set.lua is the same logic for Redis; the contract suite holds the
 * two to the same answers (codes in ./seen-codes).
 *
 * Entries are chained in order of last write, so expiry and the size cap
 * each take the oldest in constant time. An entry's age is checked where it
 * is read as well: after the TTL is shortened, or for a released key (kept
 * only a lease), a younger entry can expire before an older one.
 */
import { CLAIM, LEASE_EXPIRED, RELEASED_DEADLINE, SEEN_DEADLINE, SETTLE } from './seen-codes';
import { grown, NONE, RecencyIndex } from '../structures/recency-index';

export interface SeenSetSettings {
  ttlMs: number;
  maxKeys: number;
  /** How long a pending claim holds its key (confirm mode). */
  leaseMs: number;
}

/** One entry, as persisted and restored. */
export interface SeenEntry {
  key: string;
  expiry: number;
  /** SEEN_DEADLINE, a pending claim's deadline, or RELEASED_DEADLINE. */
  deadline: number;
  token: number;
}

export class BoundedSeenSet {
  private readonly index: RecencyIndex;
  private expiry = new Float64Array(0);
  private deadline = new Float64Array(0);
  private token = new Float64Array(0);
  private settings: SeenSetSettings;
  private readonly view = {} as SeenEntry;
  /** Told of every key written or removed, and of clear(): the journal of the persisted state. */
  onChange: ((key: string) => void) | undefined;
  onClear: (() => void) | undefined;

  constructor(settings: SeenSetSettings) {
    this.settings = checked(settings);
    this.index = new RecencyIndex(settings.maxKeys, (capacity) => {
      this.expiry = grown(this.expiry, capacity);
      this.deadline = grown(this.deadline, capacity);
      this.token = grown(this.token, capacity);
    });
  }

  get size(): number {
    return this.index.size;
  }

  /** Keys held pending (confirm mode) whose lease still runs: a walk of the slots, for a metrics scrape, not per message. */
  pendingCount(nowMs: number): number {
    let count = 0;
    for (let slot = this.index.oldest; slot !== NONE; slot = this.index.next(slot)) {
      const deadline = this.deadline[slot] as number;
      if (deadline > SEEN_DEADLINE && deadline > nowMs) count++;
    }
    return count;
  }

  /** New limits for the same keys (a redeploy with changed options); the cap applies at once. */
  reconfigure(settings: SeenSetSettings): void {
    this.settings = checked(settings);
    this.index.setMaxEntries(settings.maxKeys);
  }

  /**
   * Claims a key for the message with this token: a CLAIM code, with
   * LEASE_EXPIRED set when it took over a pending claim whose lease ran out.
   * `pending` (confirm mode) holds the key for a lease instead of marking it seen.
   */
  claim(key: string, token: number, pending: boolean, nowMs: number): number {
    this.expire(nowMs);
    let slot = this.live(key, nowMs);
    let flags = 0;
    if (slot !== undefined) {
      const deadline = this.deadline[slot] as number;
      if (this.token[slot] === token && deadline !== RELEASED_DEADLINE) {
        // The same message again: its earlier decision was lost on the way.
        // A pending one gets a fresh lease, as it is being delivered again.
        if (deadline > SEEN_DEADLINE) this.write(slot, nowMs, nowMs + this.settings.leaseMs, token);
        return CLAIM.replayed;
      }
      if (deadline === SEEN_DEADLINE) return CLAIM.duplicate;
      if (deadline > nowMs) return CLAIM.inFlight;
      if (deadline !== RELEASED_DEADLINE) flags = LEASE_EXPIRED;
    } else {
      // At the cap the oldest key goes, not journalled: a restore applies the cap itself, oldest first.
      slot = this.index.insert(key);
    }
    this.write(slot, nowMs, pending ? nowMs + this.settings.leaseMs : SEEN_DEADLINE, token);
    return CLAIM.admitted | flags;
  }

  /**
   * Confirms (marks seen for the TTL) or releases (forgets) a pending key, if
   * this token holds it. A seen key is not released (SETTLE.kept): once a
   * delivery was confirmed, a later failure elsewhere in the flow must not
   * let the replay through a second time.
   */
  settle(key: string, token: number, action: 'confirm' | 'release', nowMs: number): number {
    this.expire(nowMs);
    const slot = this.live(key, nowMs);
    if (slot === undefined || this.token[slot] !== token) return SETTLE.notHeld;
    const deadline = this.deadline[slot] as number;
    if (deadline === RELEASED_DEADLINE) return action === 'release' ? SETTLE.settled : SETTLE.notHeld;
    if (deadline === SEEN_DEADLINE && action === 'release') return SETTLE.kept;
    const late = deadline !== SEEN_DEADLINE && deadline <= nowMs;
    // A second confirm of a seen key changes nothing: resent confirms are harmless.
    if (action === 'confirm' && deadline !== SEEN_DEADLINE) this.write(slot, nowMs, SEEN_DEADLINE, token);
    if (action === 'release') this.write(slot, nowMs, RELEASED_DEADLINE, token);
    return late ? SETTLE.lateSettled : SETTLE.settled;
  }

  /** True while the key blocks a new claim (seen, or pending within its lease). */
  has(key: string, nowMs: number): boolean {
    const slot = this.live(key, nowMs);
    if (slot === undefined) return false;
    const deadline = this.deadline[slot] as number;
    return deadline === SEEN_DEADLINE || deadline > nowMs;
  }

  /** Removes one key (announced, as deleteWhere does); true when it was there. */
  delete(key: string): boolean {
    const slot = this.index.slot(key);
    if (slot === undefined) return false;
    this.drop(slot);
    return true;
  }

  /** Removes the keys the predicate selects; returns how many. */
  deleteWhere(predicate: (key: string) => boolean): number {
    const doomed: number[] = [];
    for (let slot = this.index.oldest; slot !== -1; slot = this.index.next(slot)) {
      if (predicate(this.index.keyAt(slot))) doomed.push(slot);
    }
    for (const slot of doomed) this.drop(slot);
    return doomed.length;
  }

  clear(): void {
    this.index.clear();
    this.onClear?.();
  }

  /** The live entry of a key; undefined when it is gone. */
  entry(key: string): SeenEntry | undefined {
    const slot = this.index.slot(key);
    return slot === undefined ? undefined : this.entryAt(slot, key, {} as SeenEntry);
  }

  /** entry(), filling one object reused from call to call: for the journal, which encodes it at once. */
  entryView(key: string): SeenEntry | undefined {
    const slot = this.index.slot(key);
    return slot === undefined ? undefined : this.entryAt(slot, key, this.view);
  }

  /** Every key, oldest write first. */
  keys(): string[] {
    return this.index.keysInOrder();
  }

  /** Forgets every key, unannounced (a journal being replayed). */
  clearAll(): void {
    this.index.clear();
  }

  /** Puts back a persisted entry as the newest (loading oldest first keeps the order); expired ones are skipped. */
  restore(entry: SeenEntry, nowMs: number): void {
    if (entry.expiry <= nowMs) {
      this.index.removeKey(entry.key);
      return;
    }
    const slot = this.index.upsert(entry.key);
    this.expiry[slot] = entry.expiry;
    this.deadline[slot] = entry.deadline;
    this.token[slot] = entry.token;
  }

  /** Forgets a key on a restore (a delete in the journal). */
  forget(key: string): void {
    this.index.removeKey(key);
  }

  /** The slot of a key that has not expired; an expired one is removed. */
  private live(key: string, nowMs: number): number | undefined {
    const slot = this.index.slot(key);
    if (slot === undefined) return undefined;
    if ((this.expiry[slot] as number) > nowMs) return slot;
    this.index.remove(slot);
    return undefined;
  }

  private entryAt(slot: number, key: string, into: SeenEntry): SeenEntry {
    into.key = key;
    into.expiry = this.expiry[slot] as number;
    into.deadline = this.deadline[slot] as number;
    into.token = this.token[slot] as number;
    return into;
  }

  private write(slot: number, nowMs: number, deadline: number, token: number): void {
    const { ttlMs, leaseMs } = this.settings;
    // A pending key outlives its lease; a released one is kept a lease, to
    // recognise a repeated release.
    this.expiry[slot] = nowMs + (deadline === RELEASED_DEADLINE ? leaseMs : deadline > SEEN_DEADLINE ? Math.max(ttlMs, leaseMs) : ttlMs);
    this.deadline[slot] = deadline;
    this.token[slot] = token;
    this.index.touch(slot);
    this.onChange?.(this.index.keyAt(slot));
  }

  private expire(nowMs: number): void {
    // Not journalled: a restore drops expired entries itself.
    this.index.removeExpired(this.expiry, nowMs);
  }

  private drop(slot: number): void {
    const key = this.index.keyAt(slot);
    this.index.remove(slot);
    this.onChange?.(key);
  }
}

function checked(settings: SeenSetSettings): SeenSetSettings {
  if (!(settings.ttlMs > 0)) throw new RangeError('ttlMs must be positive');
  if (!(settings.leaseMs > 0)) throw new RangeError('leaseMs must be positive');
  if (!(Number.isInteger(settings.maxKeys) && settings.maxKeys > 0)) throw new RangeError('maxKeys must be a positive integer');
  return { ...settings };
}
