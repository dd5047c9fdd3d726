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
 * Never a long pause: records are encoded in slices (of SLICE entries or
 * SLICE_MS, whichever ends first), each its own frame, with a turn of the
 * event loop between slices, and written asynchronously; bench/saving.ts
 * measures the longest event-loop delay during a save of 100,000 entries.
 */
import { copyFileSync, existsSync, readdirSync, readFileSync, renameSync, rmSync, truncateSync } from 'fs';
import { rm } from 'fs/promises';
import { basename, join } from 'path';
import { performance } from 'perf_hooks';
import { writeClear, RecordWriter, type RestoreTarget, type StateCodec } from './codecs';
import { decodeHeader, encodeFrame, encodeHeader, END_FRAME, FRAME_HEAD_BYTES, HEADER_BYTES, packRecords, readFrames, unpackRecords } from './frames';
import { realFiles, writeAll, type SaveFiles } from './save-files';
import { errorMessage } from '../core/parse/errors';

export interface JournalSource<E> {
  /**
   * The current entry of a key; undefined when it is gone. It may be one
   * object reused from call to call (the journal encodes it at once): an
   * object per entry was most of a large save's garbage.
   */
  entry(key: string): E | undefined;
  /** Every key, oldest write first. */
  keys(): string[];
  /** The store's cap: the most keys a save can have pending (past it, the next save is a snapshot). */
  limit?(): number;
  target: RestoreTarget<E>;
}

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

/**
 * A slice of encoding ends after SLICE entries or SLICE_MS of the event
 * loop, whichever comes first: cut by time as well as by count, so that a
 * cold start (code not yet optimised, measured at 60 ms for 4,000 entries)
 * or a slow machine still yields often.
 */
export const SLICE = 2000;
export const SLICE_MS = 2;
/** No compaction before the journal holds this much, whatever the snapshot's size. */
const MIN_COMPACTION_BYTES = 1 << 20;
/** The same cause of a failed save is logged at most this often. */
export const WARN_EVERY_MS = 60_000;

const SNAPSHOT = 'snapshot';
const JOURNAL_PREFIX = 'journal-';

const turn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/**
 * Runs each(i) for i from 0 to count - 1 in slices of about SLICE_MS;
 * sliceDone() after each slice (each slice becomes a frame), which resolves
 * after a turn of the event loop, when the next slice may start.
 */
async function inSlices(count: number, each: (i: number) => void, sliceDone: () => Promise<unknown>): Promise<void> {
  let i = 0;
  while (i < count) {
    const until = performance.now() + SLICE_MS;
    const last = Math.min(i + SLICE, count);
    do {
      const end = Math.min(i + 32, last);
      for (; i < end; i++) each(i);
    } while (i < last && performance.now() < until);
    const next = sliceDone();
    if (i < count) await next;
  }
}
const nothing = (): void => undefined;

/**
 * The frames of slices being compressed, in order. Each frame's CRC is
 * computed after a turn of the loop of its own: a slice's CRC is some
 * 30 KB of bytes, cheap, but 50 of them in a row were not.
 */
/**
 * Turns slices of records into frames: each slice is compressed in the
 * thread pool while the next one is encoded, at most one behind, so that a
 * save of 100,000 entries never holds 50 compressors (and their native
 * memory, which V8 answers with a full collection) at once.
 */
class Packer {
  readonly frames: Buffer[] = [];
  private last: Promise<void> = Promise.resolve();

  /** Starts compressing what `out` holds; resolves after a turn of the loop, once the slice before it is a frame. */
  add(out: RecordWriter): Promise<unknown> {
    const previous = this.last;
    if (out.length > 0) {
      const packed = packRecords(out.take());
      this.last = previous.then(() => packed).then((frame) => void this.frames.push(encodeFrame(frame)));
      // Seen by done() or the next add(), never as an unhandled rejection meanwhile.
      this.last.catch(nothing);
    }
    return Promise.all([previous, turn()]);
  }

  async done(): Promise<Buffer[]> {
    await this.last;
    return this.frames;
  }
}

/** The cause of a failed save as the status shows it: the system's code (ENOSPC, EIO), else the message. */
export function causeOf(error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code === 'string' && code !== '') return code;
  return errorMessage(error);
}

/** A snapshot's frames: one that does not end in its empty frame was cut short. */
function snapshotFrames(data: Buffer, start: number): ReturnType<typeof readFrames> {
  const frames = readFrames(data, start);
  if (!frames.ended && frames.damage === undefined) frames.damage = 'no end frame (it was cut short)';
  return frames;
}

/** What of a damaged snapshot was used, in words: where its damage is, and what came before it. */
function usedOf(kept: { applied: number; damage: string | undefined }): string {
  const before = kept.applied === 0 ? 'nothing of it could be used, what it held is lost' : `the ${count(kept.applied, 'frame')} of records before it were loaded, the rest of it is lost`;
  if (kept.damage === undefined) return `all of its records were loaded (${count(kept.applied, 'frame')})`;
  return `${kept.damage}: ${before}`;
}

const count = (n: number, one: string, many = `${one}s`): string => `${n.toLocaleString('en-US')} ${n === 1 ? one : many}`;

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
   * must not decide before its state is back). Returns how many frames
   * were applied.
   */
  load(nowMs: number): number {
    const dir = this.options.dir;
    if (!existsSync(dir)) return 0;
    let applied = 0;
    const snapshotPath = join(dir, SNAPSHOT);
    // Journals older than a whole snapshot it supersedes; undefined while no
    // snapshot can vouch for its generation (none, or a damaged one): then
    // every journal is replayed.
    let fromGeneration: number | undefined;
    /** What a damaged snapshot cost, for the warning given once the journals are read. */
    let snapshotLoss: string | undefined;
    if (existsSync(snapshotPath)) {
      const data = readFileSync(snapshotPath);
      const header = decodeHeader(data, this.codec.kind);
      if (!header.ok) {
        // A header failing only its checksum, of the right kind, still leads to frames worth reading.
        const unusable = !/checksum/.test(header.problem) || data[5] !== this.codec.kind;
        if (unusable) {
          const aside = this.setAside(snapshotPath);
          snapshotLoss = `the snapshot ${header.problem}; ${aside}; what it held (${count(data.length, 'byte')}) is lost`;
        } else {
          // Only the header is in doubt (its generation above all): its frames
          // carry their own checksums, so they are kept, and every journal is
          // replayed after them, none skipped as older.
          const kept = this.applyFrames(snapshotFrames(data, HEADER_BYTES), nowMs, HEADER_BYTES, true);
          applied += kept.applied;
          const aside = this.copyAside(snapshotPath);
          snapshotLoss = `the snapshot ${header.problem} (its generation cannot be trusted); ${usedOf(kept)}; ${aside}`;
        }
        this.whole = true;
      } else {
        const kept = this.applyFrames(snapshotFrames(data, header.bytes), nowMs, header.bytes, header.deflated);
        applied += kept.applied;
        fromGeneration = header.generation;
        this.generation = header.generation;
        this.snapshotBytes = data.length;
        // The previous format's snapshot is rewritten in this one by the first save.
        if (!header.deflated) this.whole = true;
        if (kept.damage !== undefined) {
          const aside = this.copyAside(snapshotPath);
          snapshotLoss = `the snapshot has ${usedOf(kept)}; ${aside}`;
          this.whole = true;
        }
      }
    }
    const journalsKept: string[] = [];
    for (const { file, generation } of this.journalNames()) {
      const path = join(dir, file);
      if (fromGeneration !== undefined && generation < fromGeneration) {
        // Superseded by a whole snapshot (a crash came between its rename and this removal).
        if (snapshotLoss === undefined) rmSync(path, { force: true });
        continue;
      }
      this.generation = Math.max(this.generation, generation);
      const data = readFileSync(path);
      const header = decodeHeader(data, this.codec.kind);
      if (!header.ok) {
        if (data.length < HEADER_BYTES && /shorter than its header/.test(header.problem)) {
          // A journal whose first save failed before its header was whole: it holds nothing.
          rmSync(path, { force: true });
          continue;
        }
        this.options.warn(`saved state in ${dir}: ${file} ${header.problem}; ${this.setAside(path)}; the changes it held (${count(data.length, 'byte')}) are lost, the rest was loaded`);
        this.whole = true;
        continue;
      }
      const frames = readFrames(data, header.bytes);
      // A journal has no end frame: an empty one is damage too (a crash can
      // leave an append's space as zeros), and appends after it would never
      // be read.
      if (frames.ended && frames.damage === undefined) frames.damage = `an empty frame after ${count(frames.payloads.length, 'frame')}`;
      const kept = this.applyFrames(frames, nowMs, header.bytes, header.deflated);
      applied += kept.applied;
      journalsKept.push(file);
      if (kept.damage !== undefined) {
        // Keep the whole frames; cut the rest, so that later appends are read.
        this.options.warn(`saved state in ${dir}: ${file} ends in ${kept.damage} (a save cut short); kept the ${count(kept.applied, 'whole frame')} before it`);
        try {
          truncateSync(path, kept.good);
        } catch {
          // Cannot cut it here: the next save writes a new snapshot (and a new journal) instead.
          this.whole = true;
        }
      }
      if (generation === this.generation) {
        this.journalBytes = kept.good;
        // Compressed frames never follow the previous format's: its journal is finished by a new snapshot.
        if (!header.deflated) this.whole = true;
      }
    }
    if (snapshotLoss !== undefined) {
      const journals = journalsKept.length > 0 ? `the journals after it were loaded (${journalsKept.join(', ')})` : 'there were no journals after it';
      this.options.warn(`saved state in ${dir}: ${snapshotLoss}; ${journals}; the next save writes a new snapshot`);
    }
    return applied;
  }

  /** Applies whole frames until the first damaged one (or damaged record): how many, and where the whole ones end. */
  private applyFrames(frames: ReturnType<typeof readFrames>, nowMs: number, start: number, deflated: boolean): { applied: number; good: number; damage: string | undefined } {
    let applied = 0;
    let good = start;
    let damage = frames.damage;
    try {
      for (const payload of frames.payloads) {
        this.codec.apply(deflated ? unpackRecords(payload) : payload, this.source.target, nowMs);
        good += payload.length + FRAME_HEAD_BYTES;
        applied++;
      }
    } catch (error) {
      damage = `a damaged record at byte ${good} (${errorMessage(error)})`;
    }
    return { applied, good, damage };
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
    const dir = this.options.dir;
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
    const tmp = join(dir, `${SNAPSHOT}.tmp`);
    let bytes = 0;
    try {
      this.files.mkdir(dir);
      const keys = this.source.keys();
      const file = await this.files.open(tmp, 'replace');
      try {
        const header = encodeHeader(this.codec.kind, next);
        await writeAll(file, header, 0);
        bytes += header.length;
        const out = new RecordWriter();
        const packer = new Packer();
        await inSlices(keys.length, (i) => {
          const key = keys[i] as string;
          const entry = this.source.entry(key);
          if (entry !== undefined) this.codec.write(out, key, entry);
        }, () => packer.add(out));
        const frames = await packer.done();
        frames.push(END_FRAME);
        for (const frame of frames) {
          await writeAll(file, frame, bytes);
          bytes += frame.length;
        }
        await file.sync();
      } finally {
        await file.close();
      }
      if (this.removed) {
        await this.files.unlink(tmp).catch(nothing);
        return;
      }
      await this.files.rename(tmp, join(dir, SNAPSHOT));
    } catch (error) {
      // Nothing changed on disk but a temporary file, which goes (it holds space a full disk needs).
      await this.files.unlink(tmp).catch(nothing);
      this.putBack(taken, cleared);
      if (whole) this.whole = true;
      throw error;
    }
    const previous = this.generation;
    this.generation = next;
    this.journalBytes = 0;
    for (const { file, generation } of this.journalNames()) {
      if (generation <= previous) await this.files.unlink(join(dir, file)).catch(nothing);
    }
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
      const dir = this.options.dir;
      this.files.mkdir(dir);
      const out = new RecordWriter();
      if (cleared) writeClear(out);
      const pending = keys.values();
      const packer = new Packer();
      await inSlices(keys.size, () => {
        const key = pending.next().value as string;
        this.codec.write(out, key, this.source.entry(key));
      }, () => packer.add(out));
      // A reset with nothing after it is a slice of its own.
      if (out.length > 0) void packer.add(out);
      const frames = await packer.done();
      if (this.journalBytes === 0) frames.unshift(encodeHeader(this.codec.kind, this.generation));
      const start = this.journalBytes;
      let at = start;
      const file = await this.files.open(join(dir, `${JOURNAL_PREFIX}${this.generation}`), 'update');
      try {
        // A failed write of an earlier save may have left part of a frame
        // after the last whole one, if it could not be cut back then.
        const size = await file.size();
        if (size > start) await file.truncate(start);
        else if (size < start) throw new Error(`the journal is ${size} bytes long, shorter than the ${start} saved to it`);
        // Frame by frame: one Buffer.concat of a large save held the loop 7 ms on its own.
        for (const frame of frames) {
          await writeAll(file, frame, at);
          at += frame.length;
        }
      } catch (error) {
        // Cut back to the last whole frame, so that nothing is written after a torn one.
        await file.truncate(start).catch(nothing);
        throw error;
      } finally {
        await file.close().catch(nothing);
      }
      this.journalBytes = at;
      this.stats.journalBytes += at - start;
      this.stats.records += keys.size + (cleared ? 1 : 0);
      this.saved();
      return true;
    } catch (error) {
      // Not saved: it stays pending, and goes with whatever changes meanwhile.
      this.putBack(keys, cleared);
      if (/shorter than the/.test(error instanceof Error ? error.message : '')) this.whole = true;
      this.failed(error);
      return false;
    }
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

  private journalNames(): { file: string; generation: number }[] {
    let files: string[];
    try {
      files = readdirSync(this.options.dir);
    } catch {
      return [];
    }
    return files
      .filter((file) => file.startsWith(JOURNAL_PREFIX) && /^\d+$/.test(file.slice(JOURNAL_PREFIX.length)))
      .map((file) => ({ file, generation: Number(file.slice(JOURNAL_PREFIX.length)) }))
      .sort((a, b) => a.generation - b.generation);
  }

  /** A name beside path that no file has yet: `<name>.bad`, then `<name>.bad-2`, ... (an earlier one is never overwritten). */
  private asideName(path: string): string {
    for (let n = 1; ; n++) {
      const candidate = n === 1 ? `${path}.bad` : `${path}.bad-${n}`;
      if (!existsSync(candidate)) return candidate;
    }
  }

  /** Moves an unusable file out of the way; says where it went (or why it could not). */
  private setAside(path: string): string {
    const aside = this.asideName(path);
    try {
      renameSync(path, aside);
      return `it is set aside as ${basename(aside)}`;
    } catch (error) {
      // Left where it is: the next save writes past it (a new snapshot, a new journal).
      return `it could not be set aside (${causeOf(error)}) and is left as it is`;
    }
  }

  /** Keeps a copy of a damaged file that stays in use until the next save replaces it. */
  private copyAside(path: string): string {
    const aside = this.asideName(path);
    try {
      copyFileSync(path, aside);
      return `a copy of it is kept as ${basename(aside)}`;
    } catch (error) {
      return `no copy of it could be kept (${causeOf(error)})`;
    }
  }
}
