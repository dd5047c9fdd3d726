/**
 * Window records in this Node-RED process: atomic because JavaScript runs one
 * handler at a time; not shared between instances. Held by node id across
 * redeploys and saved to the user directory across restarts (see
 * node-red/memory-state and persist/).
 *
 * Bounded twice: a record expires ttlSeconds after its last admission, as the
 * Redis key does, and past maxAssets the record admitted longest ago goes.
 * The records live in columns indexed by slot (see core/structures/recency-index); a
 * suppression changes only a count (and, for a `jump`, the jump candidate)
 * and leaves the record's place in the chain, as it leaves the Redis key's
 * TTL.
 *
 * A record is the asset's baseline, its counts, and its jump candidate
 * (core/window/sliding-window's jump guard), which the rule reads and
 * leaves as it should be after each ping. A change of candidate is told to
 * the journal like an admission, so the saved state keeps it; jumps are
 * rare, so this costs nothing on the usual path.
 */
import { baselineOf, clearCandidate, decideWindow, type JumpCandidate, type Ping, type WindowBaseline } from '../core/window/sliding-window';
import { grown, RecencyIndex } from '../core/structures/recency-index';
import { CandidateColumns } from '../core/window/candidate-columns';
import { RuleColumns } from '../core/window/rule-columns';
import { withCounts, type Replies, type WindowOutcome, type WindowSettings, type WindowStore } from './types';

export interface MemoryWindowSettings extends WindowSettings {
  maxAssets: number;
}

/** One record, as persisted and restored. */
export interface WindowEntry extends WindowBaseline {
  assetId: string;
  expiresAt: number;
  accepted: number;
  suppressed: number;
  /** The jump candidate; count 0: none. */
  candidate: JumpCandidate;
}

export class MemoryWindowStore implements WindowStore {
  private readonly index: RecencyIndex;
  private settings: MemoryWindowSettings;
  /** Each record's baseline, by slot. */
  private readonly baselines = new RuleColumns();
  private expiresAt = new Float64Array(0);
  private accepted = new Float64Array(0);
  private suppressed = new Float64Array(0);
  /** Each record's jump candidate, by slot, held while the jump guard is on. */
  private readonly candidates = new CandidateColumns();
  /** What entryView() fills. */
  private readonly view = { candidate: noCandidate() } as WindowEntry;
  /** Handed to decideWindow, which reads it and keeps nothing. */
  private readonly baseline: WindowBaseline = { t: 0, lat: 0, lon: 0, heading: NaN, accuracy: 0, events: 0, value: NaN };
  /** Handed to decideWindow, which leaves in it the candidate after the ping. */
  private readonly candidate: JumpCandidate = noCandidate();
  /** Told of every admission (a record written) and reset: the journal of the persisted state. */
  onChange: ((assetId: string) => void) | undefined;
  onClear: (() => void) | undefined;

  constructor(
    settings: MemoryWindowSettings,
    private readonly now: () => number = Date.now,
  ) {
    this.settings = { ...settings };
    this.index = new RecencyIndex(settings.maxAssets, (capacity) => {
      this.baselines.resize(capacity);
      this.expiresAt = grown(this.expiresAt, capacity);
      this.accepted = grown(this.accepted, capacity);
      this.suppressed = grown(this.suppressed, capacity);
      if (this.jumpGuard) this.candidates.resize(capacity);
    });
  }

  get size(): number {
    return this.index.size;
  }

  get maxEntries(): number {
    return this.settings.maxAssets;
  }

  /** New thresholds for the same records (a redeploy with changed options); the cap applies at once. */
  reconfigure(settings: MemoryWindowSettings): void {
    const modeChanged = (settings.mode ?? 'position') !== (this.settings.mode ?? 'position');
    this.settings = { ...settings };
    if (modeChanged && this.index.size > 0) {
      // A position baseline is no reading, nor a reading a position: every
      // record is forgotten (the saved state too), and each asset starts
      // with `first` in the new mode.
      this.index.clear();
      this.onClear?.();
    }
    this.index.setMaxEntries(settings.maxAssets);
    // A jump guard turned off keeps no candidates (none is left to be found if it is turned on again); turned on, it starts with none.
    if (this.jumpGuard !== this.candidates.held) this.candidates.hold(this.jumpGuard ? this.baselines.capacity : 0);
  }

  /** Whether the rule keeps jump candidates: without the guard none is read or written, and a decision costs what it did before it existed. */
  private get jumpGuard(): boolean {
    return (this.settings.maxSpeedKmh ?? 0) > 0;
  }

  decide<C>(ping: Ping, replies: Replies<WindowOutcome, C>, context: C): void {
    replies.value(this.decideNow(ping), context);
  }

  reset<C>(assetId: string | undefined, replies: Replies<void, C>, context: C): void {
    if (assetId === undefined) {
      this.index.clear();
      this.onClear?.();
    } else if (this.index.removeKey(assetId)) {
      this.onChange?.(assetId);
    }
    replies.value(undefined, context);
  }

  /** The decision, returned: what decide() answers with. */
  decideNow(ping: Ping): WindowOutcome {
    const now = this.now();
    this.expire(now);
    let slot = this.index.slot(ping.assetId);
    // Expiry pops the oldest records only; after the TTL was shortened (a
    // redeploy), a younger record can be past its TTL behind older ones.
    if (slot !== undefined && (this.expiresAt[slot] as number) <= now) {
      this.index.remove(slot);
      slot = undefined;
    }
    const candidate = this.candidate;
    if (slot === undefined) {
      // No record, so no candidate either; a ping suppressed here (ahead,
      // no-fix, poor-fix) writes no record and counts in none.
      const verdict = decideWindow(undefined, ping, this.settings, now);
      if (!verdict.admit) return withCounts(verdict, 0, 0);
      // A new record, perhaps in a slot another asset held: its candidate starts empty.
      clearCandidate(candidate);
      this.write(this.index.insert(ping.assetId), ping, now, 1, 0, this.jumpGuard ? candidate : undefined);
      return withCounts(verdict, 1, 0);
    }
    const guarded = this.jumpGuard;
    const countBefore = guarded ? this.candidates.read(slot, candidate) : 0;
    const { t: tBefore, lat: latBefore, lon: lonBefore } = candidate;
    const verdict = decideWindow(this.baselines.read(slot, this.baseline), ping, this.settings, now, guarded ? candidate : undefined);
    const accepted = this.accepted[slot] as number;
    const suppressed = this.suppressed[slot] as number;
    if (verdict.reason === 'replayed') return withCounts(verdict, accepted, suppressed);
    if (verdict.admit) {
      this.write(slot, ping, now, accepted + 1, suppressed, guarded ? candidate : undefined);
      this.index.touch(slot);
      return withCounts(verdict, accepted + 1, suppressed);
    }
    this.suppressed[slot] = suppressed + 1;
    // A jump dated as the candidate but elsewhere moves it with its count unchanged: the position is compared too.
    if (guarded && (candidate.count !== countBefore || candidate.t !== tBefore || candidate.lat !== latBefore || candidate.lon !== lonBefore)) {
      this.candidates.write(slot, candidate);
      this.onChange?.(ping.assetId);
    }
    return withCounts(verdict, accepted, suppressed + 1);
  }

  /** The record of an asset; undefined when there is none. */
  entry(assetId: string): WindowEntry | undefined {
    const slot = this.index.slot(assetId);
    return slot === undefined ? undefined : this.entryAt(slot, { candidate: noCandidate() } as WindowEntry);
  }

  /** entry(), filling one object reused from call to call: for the journal, which encodes it at once. */
  entryView(assetId: string): WindowEntry | undefined {
    const slot = this.index.slot(assetId);
    return slot === undefined ? undefined : this.entryAt(slot, this.view);
  }

  /** Every asset, oldest admission first. */
  keys(): string[] {
    return this.index.keysInOrder();
  }

  /** Forgets every asset, unannounced (a journal being replayed). */
  clearAll(): void {
    this.index.clear();
  }

  /** Puts back a persisted record as the newest (loading oldest first keeps the order); expired ones are skipped. */
  restore(entry: WindowEntry, nowMs: number): void {
    if (entry.expiresAt <= nowMs) {
      this.index.removeKey(entry.assetId);
      return;
    }
    const slot = this.index.upsert(entry.assetId);
    this.put(slot, entry, entry.expiresAt, entry.accepted, entry.suppressed);
    // Saved while a jump guard was on, restored without one: not kept (see reconfigure).
    this.candidates.write(slot, entry.candidate);
  }

  /** Forgets an asset on a restore (a delete in the journal). */
  forget(assetId: string): void {
    this.index.removeKey(assetId);
  }

  /** `candidate`: the record's candidate after the ping; undefined: the candidate columns are not touched (no jump guard). */
  private write(slot: number, ping: Ping, now: number, accepted: number, suppressed: number, candidate: JumpCandidate | undefined): void {
    this.put(slot, baselineOf(ping), now + this.settings.ttlSeconds * 1000, accepted, suppressed);
    if (candidate !== undefined) this.candidates.write(slot, candidate);
    this.onChange?.(ping.assetId);
  }

  private put(slot: number, stored: WindowBaseline, expiresAt: number, accepted: number, suppressed: number): void {
    this.baselines.write(slot, stored);
    this.expiresAt[slot] = expiresAt;
    this.accepted[slot] = accepted;
    this.suppressed[slot] = suppressed;
  }

  private entryAt(slot: number, into: WindowEntry): WindowEntry {
    into.assetId = this.index.keyAt(slot);
    this.baselines.read(slot, into);
    into.expiresAt = this.expiresAt[slot] as number;
    into.accepted = this.accepted[slot] as number;
    into.suppressed = this.suppressed[slot] as number;
    this.candidates.read(slot, into.candidate);
    return into;
  }

  private expire(now: number): void {
    this.index.removeExpired(this.expiresAt, now);
  }
}

function noCandidate(): JumpCandidate {
  return { t: 0, lat: 0, lon: 0, count: 0 };
}
