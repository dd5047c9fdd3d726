/**
 * Saves a memory store to the Node-RED user directory so that it outlives a
 * restart, without wearing out an SD card: what is written grows with the
 * changes, not with the size of the set.
 *
 * A node's directory holds a snapshot (`snapshot`, every entry, written now
 * and then) and a journal (`journal-<generation>`, appended to): at most
 * every intervalMs, the entries changed since the last save are appended to
 * the journal, each as its whole current value (an admission is one record,
 * however often the entry changed meanwhile). When the journal has grown to
 * twice the snapshot, a new snapshot is written and the journal starts
 * afresh (a compaction). Loading reads the snapshot, then replays the
 * journals of its generation and later, in order; entries past their TTL
 * are dropped and the store's cap applies as they are put back.
 *
 * Atomic: a snapshot is written to a temporary file, flushed to the disk and
 * renamed over the old one, and only then does the next journal start, so a
 * crash at any moment leaves a snapshot and the journals that complete it.
 *
 * A full disk damages nothing: an append is written where the journal's last
 * whole frame ends, and a write that fails or stops short is cut back off
 * (or, when even that fails, before the next append), so no torn frame is
 * ever followed by later ones. What could not be saved stays pending, and is
 * saved by the first save that succeeds. While saves fail, the pending keys
 * never outnumber the store's own cap: past it the next save writes a whole
 * snapshot instead, which needs no list of what changed.
 *
 * Every frame and every header carries a CRC-32 (see frames.ts): a journal
 * cut short keeps its whole frames, with a warning; a damaged snapshot keeps
 * what it can (its whole frames, and every journal), says what is lost, and
 * is rewritten by the next save; an unusable file (another kind of node's,
 * a newer format's) is set aside under a name of its own. Never a crash.
 *
 * Never a long pause: records are encoded in slices, each its own frame,
 * with a turn of the event loop between slices, and written asynchronously.
 *
 * This file keeps the books (what is pending, when to save, when to compact,
 * what failed); journal-reader.ts reads the files back and journal-writer.ts
 * writes them.
 */
import { rm } from 'fs/promises';
import { readSavedState } from './journal-reader';
import { appendJournal, JournalShrunkError, removeJournals, writeSnapshot, type JournalSource, type SaveTarget } from './journal-writer';
import type { StateCodec } from './codecs';
import { causeOf, realFiles, type SaveFiles } from './save-files';
import { errorMessage } from '../core/parse/errors';

// What the journal's users name from here: what it saves from, its slice, a failure's cause.
export type { JournalSource } from './journal-writer';
export { SLICE } from './journal-writer';
export { causeOf } from './save-files';

export interface JournalOptions {
  dir: string;
  intervalMs: number;
  warn: (text: string) => void;
  /** Told when saving starts failing (with its cause, e.g. `ENOSPC`) and when it works again (undefined). */
  saving?: (cause: string | undefined) => void;
  /** The clock of the once-a-minute warnings; Date.now unless a test moves its own. */
  now?: () => number;
  /** The file operations of a save; the real ones unless a test injects faults. */
  files?: SaveFiles;
  /**
   * Work this journal's writes must wait for: the removal of files an
   * earlier journal of the node left in the same directory, which would
   * otherwise delete what this one writes.
   */
  after?: Promise<unknown>;
}

export interface JournalStats {
  /** Bytes written by journal appends and by compactions, since this process started. */
  journalBytes: number;
  compactionBytes: number;
  records: number;
  compactions: number;
  /** Epoch ms of the last save that completed, or undefined. */
  lastSave: number | undefined;
}

/** No compaction before the journal holds this much, whatever the snapshot's size. */
const MIN_COMPACTION_BYTES = 1 << 20;
/** The same cause of a failed save is logged at most this often. */
export const WARN_EVERY_MS = 60_000;

const nothing = (): void => undefined;

export class StateJournal<E> {
  private dirty = new Set<string>();
  private cleared = false;
  /** The next save writes a whole snapshot: too many keys were pending, or what is on disk needs rewriting. */
  private whole = false;
  private generation = 0;
  /** Where the current journal's last whole frame ends; 0 while it has not been started. */
  private journalBytes = 0;
  private snapshotBytes = 0;
  private timer: NodeJS.Timeout | undefined;
  private busy: Promise<void> = Promise.resolve();
  private readonly warned = new Map<string, number>();
  private failure: string | undefined;
  private removed = false;
  private readonly files: SaveFiles;
  readonly stats: JournalStats = { journalBytes: 0, compactionBytes: 0, records: 0, compactions: 0, lastSave: undefined };

  /** Bytes of saved state on disk now: the last snapshot and the journal written since. */
  get savedBytes(): number {
    return this.snapshotBytes + this.journalBytes;
  }

  constructor(
    private readonly codec: StateCodec<E>,
    private readonly source: JournalSource<E>,
    private options: JournalOptions,
  ) {
    this.files = options.files ?? realFiles;
    if (options.after !== undefined) this.busy = options.after.then(nothing, nothing);
  }

  get directory(): string {
    return this.options.dir;
  }

  /** Why saving fails now (e.g. `ENOSPC`), or undefined while it works. */
  get notSaving(): string | undefined {
    return this.failure;
  }

  /** How many keys wait for the next save (for tests and the sidebar). */
  get pending(): number {
    return this.dirty.size;
  }

  /** A key was written or removed. */
  changed(key: string): void {
    // Moved to the end: a save writes the keys in the order of their last
    // change, as the store chains them, so that a cap applied on loading
    // keeps the entries written last.
    this.dirty.delete(key);
    this.dirty.add(key);
    if (this.dirty.size > this.limit()) this.overflow();
  }

  /** Everything was reset: what was pending is moot. */
  clearedAll(): void {
    this.dirty.clear();
    this.cleared = true;
  }

  /**
   * Saves every intervalMs while something changed; a new interval replaces
   * the old. `warn` and `saving` are the (new) node's: a redeploy hands the
   * kept journal to a new node object, which is told at once whether saving
   * fails.
   */
  start(intervalMs: number, warn: (text: string) => void, saving?: (cause: string | undefined) => void): void {
    this.options = { ...this.options, intervalMs, warn, ...(saving !== undefined ? { saving } : {}) };
    if (this.timer !== undefined) clearInterval(this.timer);
    this.timer = setInterval(() => {
      if (this.dirty.size > 0 || this.cleared || this.whole) void this.save();
    }, intervalMs);
    // A pending save must not keep Node-RED from exiting; close() saves.
    this.timer.unref();
    if (this.failure !== undefined) saving?.(this.failure);
  }

  stop(): void {
    if (this.timer !== undefined) clearInterval(this.timer);
    this.timer = undefined;
  }

  /**
   * Loads the saved state into the source's target, synchronously (a node
   * must not decide before its state is back), before the first save.
   * Returns how many frames were applied.
   */
  load(nowMs: number): number {
    const state = readSavedState({ dir: this.options.dir, codec: this.codec, target: this.source.target, nowMs, warn: this.options.warn });
    this.generation = state.generation;
    this.snapshotBytes = state.snapshotBytes;
    this.journalBytes = state.journalBytes;
    if (state.rewrite) this.whole = true;
    return state.applied;
  }

  /** Appends what changed since the last save, or writes a whole snapshot (when one is due, or the journal has grown). */
  save(): Promise<void> {
    this.busy = this.busy.then(() => this.saveNow()).catch((error: unknown) => this.failed(error));
    return this.busy;
  }

  /** Writes a fresh snapshot and starts a new journal, after any save under way. */
  compact(): Promise<void> {
    this.busy = this.busy.then(() => this.compactNow()).catch((error: unknown) => this.failed(error));
    return this.busy;
  }

  private async saveNow(): Promise<void> {
    if (this.removed) return;
    if (this.whole) {
      await this.compactNow();
      return;
    }
    if ((await this.append()) && this.needsCompaction()) await this.compactNow();
  }

  private async compactNow(): Promise<void> {
    if (this.removed) return;
    // What is pending is in the snapshot (each entry read as it is now); what
    // changes while the snapshot is being written stays pending, and goes to
    // the next journal, replayed after the snapshot on loading.
    const taken = this.dirty;
    const cleared = this.cleared;
    const whole = this.whole;
    this.dirty = new Set();
    this.cleared = false;
    this.whole = false;
    const next = this.generation + 1;
    let bytes: number | undefined;
    try {
      bytes = await writeSnapshot(this.target(), next, () => this.removed);
    } catch (error) {
      this.putBack(taken, cleared);
      if (whole) this.whole = true;
      throw error;
    }
    if (bytes === undefined) return;
    const previous = this.generation;
    this.generation = next;
    this.journalBytes = 0;
    await removeJournals(this.options.dir, this.files, previous);
    this.snapshotBytes = bytes;
    this.stats.compactionBytes += bytes;
    this.stats.compactions++;
    this.saved();
  }

  /** Stops the timer and saves what changed (a redeploy or a shutdown). */
  async close(): Promise<void> {
    this.stop();
    await this.save();
  }

  /** Stops and deletes the saved state (the node was deleted, or saving turned off). */
  async remove(): Promise<void> {
    this.stop();
    this.removed = true;
    this.dirty.clear();
    this.cleared = false;
    this.whole = false;
    await this.busy;
    await rm(this.options.dir, { recursive: true, force: true });
  }

  private limit(): number {
    const limit = this.source.limit?.();
    return limit !== undefined && limit > 0 ? limit : Infinity;
  }

  /** More keys pending than the store can hold: forget the list, and write a whole snapshot next. */
  private overflow(): void {
    this.dirty = new Set();
    this.cleared = false;
    this.whole = true;
  }

  /** Keys a failed save had taken are pending again, before those changed since (which are newer). */
  private putBack(keys: Set<string>, cleared: boolean): void {
    if (this.cleared) return; // reset meanwhile: what failed is moot
    this.cleared = cleared;
    for (const key of this.dirty) {
      keys.delete(key);
      keys.add(key);
    }
    this.dirty = keys;
    if (this.dirty.size > this.limit()) this.overflow();
  }

  private needsCompaction(): boolean {
    return !this.removed && this.journalBytes > Math.max(MIN_COMPACTION_BYTES, 2 * this.snapshotBytes);
  }

  /** Appends what is pending to the journal; false when it could not (then it stays pending). */
  private async append(): Promise<boolean> {
    if (this.dirty.size === 0 && !this.cleared) return true;
    // The set itself is taken (not copied: 100,000 keys copied were a
    // pause of their own); what changes from now on goes to a new one.
    const keys = this.dirty;
    const cleared = this.cleared;
    this.dirty = new Set();
    this.cleared = false;
    try {
      const start = this.journalBytes;
      const at = await appendJournal(this.target(), { keys, cleared, generation: this.generation, start });
      this.journalBytes = at;
      this.stats.journalBytes += at - start;
      this.stats.records += keys.size + (cleared ? 1 : 0);
      this.saved();
      return true;
    } catch (error) {
      // Not saved: it stays pending, and goes with whatever changes meanwhile.
      this.putBack(keys, cleared);
      if (error instanceof JournalShrunkError) this.whole = true;
      this.failed(error);
      return false;
    }
  }

  /** Where a save writes, and what from. */
  private target(): SaveTarget<E> {
    return { dir: this.options.dir, files: this.files, codec: this.codec, source: this.source };
  }

  private saved(): void {
    this.stats.lastSave = Date.now();
    if (this.failure === undefined) return;
    const cause = this.failure;
    this.failure = undefined;
    this.warned.clear();
    this.options.warn(`saving the state to ${this.options.dir} works again (it failed with ${cause}); what had failed is saved`);
    this.options.saving?.(undefined);
  }

  private failed(error: unknown): void {
    const cause = causeOf(error);
    const changed = cause !== this.failure;
    this.failure = cause;
    if (changed) this.options.saving?.(cause);
    const now = (this.options.now ?? Date.now)();
    const last = this.warned.get(cause);
    if (last !== undefined && now - last < WARN_EVERY_MS) return;
    // Causes are codes, or messages when there is none: a few, but never let them pile up.
    if (this.warned.size >= 32) this.warned.clear();
    this.warned.set(cause, now);
    const text = errorMessage(error);
    this.options.warn(`could not save the state to ${this.options.dir} (${text}); it stays pending and is saved once saving works again`);
  }
}
