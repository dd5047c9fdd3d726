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
 * renamed over the old one; a compaction starts the next journal before it
 * writes the snapshot, so a crash at any moment leaves a snapshot and the
 * journals that complete it. Every frame carries a CRC-32 (see frames.ts): a
 * journal cut short by a crash keeps its whole frames, with a warning, and a
 * damaged or newer-format file is set aside as `<name>.bad` with a warning,
 * the store starting empty. Never a crash.
 *
 * Never a long pause: records are encoded in slices (of SLICE entries or
 * SLICE_MS, whichever ends first), each
 * its own frame, with a turn of the event loop between slices, and written
 * asynchronously; npm run bench measures the longest event-loop delay
 * during a save of 100,000 entries.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, truncateSync } from 'fs';
import { open, rename, rm, unlink } from 'fs/promises';
import { join } from 'path';
import { performance } from 'perf_hooks';
import { writeClear, RecordWriter, type RestoreTarget, type StateCodec } from './codecs';
import { decodeHeader, encodeFrame, encodeHeader, END_FRAME, HEADER_BYTES, readFrames } from './frames';

export interface JournalSource<E> {
  /**
   * The current entry of a key; undefined when it is gone. It may be one
   * object reused from call to call (the journal encodes it at once): an
   * object per entry was most of a large save's garbage.
   */
  entry(key: string): E | undefined;
  /** Every key, oldest write first. */
  keys(): string[];
  target: RestoreTarget<E>;
}

export interface JournalOptions {
  dir: string;
  intervalMs: number;
  warn: (text: string) => void;
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

const SNAPSHOT = 'snapshot';
const JOURNAL_PREFIX = 'journal-';

const turn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/**
 * Runs each(i) for i from 0 to count - 1 in slices of about SLICE_MS, with
 * a turn of the event loop between them; sliceDone() after each slice
 * (each slice becomes a frame).
 */
async function inSlices(count: number, each: (i: number) => void, sliceDone: () => void): Promise<void> {
  let i = 0;
  while (i < count) {
    const until = performance.now() + SLICE_MS;
    const last = Math.min(i + SLICE, count);
    do {
      const end = Math.min(i + 32, last);
      for (; i < end; i++) each(i);
    } while (i < last && performance.now() < until);
    sliceDone();
    if (i < count) await turn();
  }
}
const nothing = (): void => undefined;

export class StateJournal<E> {
  private dirty = new Set<string>();
  private cleared = false;
  private generation = 0;
  private journalBytes = 0;
  private snapshotBytes = 0;
  private timer: NodeJS.Timeout | undefined;
  private busy: Promise<void> = Promise.resolve();
  private lastWarning = -Infinity;
  private removed = false;
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
    if (options.after !== undefined) this.busy = options.after.then(nothing, nothing);
  }

  get directory(): string {
    return this.options.dir;
  }

  /** A key was written or removed. */
  changed(key: string): void {
    // Moved to the end: a save writes the keys in the order of their last
    // change, as the store chains them, so that a cap applied on loading
    // keeps the entries written last.
    this.dirty.delete(key);
    this.dirty.add(key);
  }

  /** Everything was reset: what was pending is moot. */
  clearedAll(): void {
    this.dirty.clear();
    this.cleared = true;
  }

  /** Saves every intervalMs while something changed; a new interval replaces the old. */
  start(intervalMs: number, warn: (text: string) => void): void {
    this.options = { ...this.options, intervalMs, warn };
    if (this.timer !== undefined) clearInterval(this.timer);
    this.timer = setInterval(() => {
      if (this.dirty.size > 0 || this.cleared) void this.save();
    }, intervalMs);
    // A pending save must not keep Node-RED from exiting; close() saves.
    this.timer.unref();
  }

  stop(): void {
    if (this.timer !== undefined) clearInterval(this.timer);
    this.timer = undefined;
  }

  /**
   * Loads the saved state into the source's target, synchronously (a node
   * must not decide before its state is back). Returns how many records
   * were applied.
   */
  load(nowMs: number): number {
    const dir = this.options.dir;
    if (!existsSync(dir)) return 0;
    let applied = 0;
    const snapshotPath = join(dir, SNAPSHOT);
    let fromGeneration = 0;
    if (existsSync(snapshotPath)) {
      const data = readFileSync(snapshotPath);
      const header = decodeHeader(data, this.codec.kind);
      const frames = header.ok ? readFrames(data) : undefined;
      const problem = !header.ok ? header.problem : frames?.damage ?? (frames?.ended ? undefined : 'ends without its last frame (truncated)');
      if (problem !== undefined || !header.ok || frames === undefined) {
        this.setAside(snapshotPath, `snapshot ${problem ?? ''}`);
        for (const name of this.journalNames()) this.setAside(join(dir, name.file), undefined);
        return 0;
      }
      try {
        for (const payload of frames.payloads) {
          this.codec.apply(payload, this.source.target, nowMs);
          applied++;
        }
      } catch (error) {
        this.source.target.clearAll();
        this.setAside(snapshotPath, `snapshot has a damaged record (${error instanceof Error ? error.message : String(error)})`);
        return 0;
      }
      fromGeneration = header.generation;
      this.generation = header.generation;
      this.snapshotBytes = data.length;
    }
    for (const { file, generation } of this.journalNames()) {
      const path = join(dir, file);
      if (generation < fromGeneration) {
        rmSync(path, { force: true });
        continue;
      }
      const data = readFileSync(path);
      const header = decodeHeader(data, this.codec.kind);
      if (!header.ok) {
        this.setAside(path, `${file} ${header.problem}`);
        continue;
      }
      const frames = readFrames(data);
      // A journal has no end frame: an empty one is damage too (a crash can
      // leave an append's space as zeros), and appends after it would never
      // be read.
      if (frames.ended && frames.damage === undefined) frames.damage = `an empty frame after ${frames.payloads.length} frames`;
      let good = HEADER_BYTES;
      try {
        for (const payload of frames.payloads) {
          this.codec.apply(payload, this.source.target, nowMs);
          good += payload.length + 8;
          applied++;
        }
      } catch (error) {
        frames.damage = `a damaged record (${error instanceof Error ? error.message : String(error)})`;
      }
      if (frames.damage !== undefined) {
        // Keep the whole frames; cut the rest, so that later appends stay readable.
        this.options.warn(`saved state ${file}: ${frames.damage}; kept what came before it`);
        truncateSync(path, good);
      }
      this.generation = Math.max(this.generation, generation);
      if (generation === this.generation) this.journalBytes = Math.min(good, statSync(path).size);
    }
    return applied;
  }

  /** Appends what changed since the last save (and compacts when the journal has grown). */
  save(): Promise<void> {
    this.busy = this.busy
      .then(() => this.append())
      .then(() => (this.needsCompaction() ? this.compactNow() : undefined))
      .catch((error: unknown) => this.failed(error));
    return this.busy;
  }

  /** Writes a fresh snapshot and starts a new journal, after any save under way. */
  compact(): Promise<void> {
    this.busy = this.busy.then(() => this.compactNow()).catch((error: unknown) => this.failed(error));
    return this.busy;
  }

  private async compactNow(): Promise<void> {
    if (this.removed) return;
    const dir = this.ensureDir();
    if (dir === undefined) return;
    // The next journal starts now: what changes while the snapshot is being
    // written goes there, and is replayed after the snapshot on loading.
    // Whatever is still unsaved is saved to it as well.
    const previous = this.generation;
    this.generation++;
    this.journalBytes = 0;
    const keys = this.source.keys();
    const tmp = join(dir, `${SNAPSHOT}.tmp`);
    const handle = await open(tmp, 'w');
    let bytes = 0;
    try {
      const header = encodeHeader(this.codec.kind, this.generation);
      await handle.write(header);
      bytes += header.length;
      const out = new RecordWriter();
      const pending: Buffer[] = [];
      await inSlices(keys.length, (i) => {
        const key = keys[i] as string;
        const entry = this.source.entry(key);
        if (entry !== undefined) this.codec.write(out, key, entry);
      }, () => {
        if (out.length > 0) pending.push(encodeFrame(out.take()));
      });
      for (const frame of pending) {
        await handle.write(frame);
        bytes += frame.length;
      }
      await handle.write(END_FRAME);
      bytes += END_FRAME.length;
      await handle.sync();
    } finally {
      await handle.close();
    }
    if (this.removed) {
      await rm(tmp, { force: true });
      return;
    }
    await rename(tmp, join(dir, SNAPSHOT));
    for (const { file, generation } of this.journalNames()) {
      if (generation <= previous) await unlink(join(dir, file)).catch(() => undefined);
    }
    this.snapshotBytes = bytes;
    this.stats.compactionBytes += bytes;
    this.stats.compactions++;
    this.stats.lastSave = Date.now();
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
    await this.busy;
    await rm(this.options.dir, { recursive: true, force: true });
  }

  private needsCompaction(): boolean {
    return !this.removed && this.journalBytes > Math.max(MIN_COMPACTION_BYTES, 2 * this.snapshotBytes);
  }

  private async append(): Promise<void> {
    if (this.removed || (this.dirty.size === 0 && !this.cleared)) return;
    // The set itself is taken (not copied: 100,000 keys copied were a
    // pause of their own); what changes from now on goes to a new one.
    const keys = this.dirty;
    const cleared = this.cleared;
    this.dirty = new Set();
    this.cleared = false;
    try {
      const dir = this.ensureDir();
      if (dir === undefined) throw new Error(`cannot create ${this.options.dir}`);
      const frames: Buffer[] = [];
      const out = new RecordWriter();
      if (cleared) writeClear(out);
      const pending = keys.values();
      await inSlices(keys.size, () => {
        const key = pending.next().value as string;
        this.codec.write(out, key, this.source.entry(key));
      }, () => {
        if (out.length > 0) frames.push(encodeFrame(out.take()));
      });
      if (this.journalBytes === 0) frames.unshift(encodeHeader(this.codec.kind, this.generation));
      // Frame by frame: one Buffer.concat of a large save held the loop 7 ms on its own.
      let written = 0;
      const handle = await open(join(dir, `${JOURNAL_PREFIX}${this.generation}`), 'a');
      try {
        for (const frame of frames) {
          await handle.write(frame);
          written += frame.length;
        }
      } finally {
        await handle.close();
      }
      this.journalBytes += written;
      this.stats.journalBytes += written;
      this.stats.records += keys.size + (cleared ? 1 : 0);
      this.stats.lastSave = Date.now();
    } catch (error) {
      // Not saved: try again next time, with whatever changed meanwhile.
      for (const key of keys) this.dirty.add(key);
      if (cleared) this.cleared = true;
      this.failed(error);
    }
  }

  private failed(error: unknown): void {
    const now = Date.now();
    if (now - this.lastWarning < 60_000) return;
    this.lastWarning = now;
    this.options.warn(`could not save the state to ${this.options.dir}: ${error instanceof Error ? error.message : String(error)}`);
  }

  private ensureDir(): string | undefined {
    try {
      mkdirSync(this.options.dir, { recursive: true });
      return this.options.dir;
    } catch (error) {
      this.failed(error);
      return undefined;
    }
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

  /** Moves an unusable file out of the way, with a warning, so that the store starts afresh. */
  private setAside(path: string, problem: string | undefined): void {
    if (problem !== undefined) this.options.warn(`saved state ${problem}; starting with an empty store (the file is kept as ${path}.bad)`);
    try {
      renameSync(path, `${path}.bad`);
    } catch {
      rmSync(path, { force: true });
    }
    if (this.generation === 0) this.generation = Math.max(0, ...this.journalNames().map((j) => j.generation)) + 1;
  }
}
