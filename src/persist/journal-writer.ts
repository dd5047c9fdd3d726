/**
 * Writes a node's saved state (state-journal.ts decides when, and what:
 * the keys changed since the last save, or every key): a whole snapshot,
 * and an append to the current journal.
 *
 * Atomic: a snapshot is written to a temporary file, flushed to the disk and
 * renamed over the old one; only then may the journals it supersedes go.
 * An append is written where the journal's last whole frame ends, and a
 * write that fails or stops short is cut back off, so that no torn frame is
 * ever followed by later ones.
 *
 * Never a long pause: records are encoded in slices (of SLICE entries or
 * SLICE_MS, whichever ends first), each its own frame, compressed in the
 * thread pool while the next is encoded, with a turn of the event loop
 * between slices, and written asynchronously; bench/saving.ts measures the
 * longest event-loop delay during a save of 100,000 entries.
 */
import { join } from 'path';
import { performance } from 'perf_hooks';
import { writeClear, RecordWriter, type RestoreTarget, type StateCodec } from './codecs';
import { encodeFrame, encodeHeader, END_FRAME, packRecords } from './frames';
import { journalFile, journalNames, SNAPSHOT } from './journal-names';
import { writeAll, type SaveFiles } from './save-files';

/** What a save reads: the store's entries. */
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

/** Where a save writes, and what from. */
export interface SaveTarget<E> {
  dir: string;
  files: SaveFiles;
  codec: StateCodec<E>;
  source: JournalSource<E>;
}

/**
 * A slice of encoding ends after SLICE entries or SLICE_MS of the event
 * loop, whichever comes first: cut by time as well as by count, so that a
 * cold start (code not yet optimised, measured at 60 ms for 4,000 entries)
 * or a slow machine still yields often.
 */
export const SLICE = 2000;
export const SLICE_MS = 2;

const turn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));
const nothing = (): void => undefined;

/** An append found the journal shorter than what was saved to it: only a whole snapshot can follow. */
export class JournalShrunkError extends Error {
  constructor(size: number, saved: number) {
    super(`the journal is ${size} bytes long, shorter than the ${saved} saved to it`);
  }
}

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

/** The frames of what `out` holds and of each(i) for i < count, written to `out` a slice at a time. */
async function recordFrames(out: RecordWriter, count: number, each: (i: number) => void): Promise<Buffer[]> {
  const packer = new Packer();
  await inSlices(count, each, () => packer.add(out));
  // Records written before the slices with none after them (a reset alone) are a slice of their own.
  if (out.length > 0) void packer.add(out);
  return packer.done();
}

/**
 * Writes a snapshot of every entry as generation `generation`, in place of
 * the last: its size in bytes, or undefined when `dropped()` (asked once
 * it is written) says the state went meanwhile, and it was not put in place.
 * Throws when it could not be written; the old snapshot is then as it was.
 */
export async function writeSnapshot<E>(to: SaveTarget<E>, generation: number, dropped: () => boolean): Promise<number | undefined> {
  const { dir, files, codec, source } = to;
  const tmp = join(dir, `${SNAPSHOT}.tmp`);
  let bytes = 0;
  try {
    files.mkdir(dir);
    const keys = source.keys();
    const file = await files.open(tmp, 'replace');
    try {
      const header = encodeHeader(codec.kind, generation);
      await writeAll(file, header, 0);
      bytes += header.length;
      const out = new RecordWriter();
      const frames = await recordFrames(out, keys.length, (i) => {
        const key = keys[i] as string;
        const entry = source.entry(key);
        if (entry !== undefined) codec.write(out, key, entry);
      });
      frames.push(END_FRAME);
      for (const frame of frames) {
        await writeAll(file, frame, bytes);
        bytes += frame.length;
      }
      await file.sync();
    } finally {
      await file.close();
    }
    if (dropped()) {
      await files.unlink(tmp).catch(nothing);
      return undefined;
    }
    await files.rename(tmp, join(dir, SNAPSHOT));
  } catch (error) {
    // Nothing changed on disk but a temporary file, which goes (it holds space a full disk needs).
    await files.unlink(tmp).catch(nothing);
    throw error;
  }
  return bytes;
}

/** Deletes the journals of generation `through` and older: a snapshot in place supersedes them. */
export async function removeJournals(dir: string, files: SaveFiles, through: number): Promise<void> {
  for (const { file, generation } of journalNames(dir)) {
    if (generation <= through) await files.unlink(join(dir, file)).catch(nothing);
  }
}

/** An append: the keys whose entries it writes (after a reset, when cleared), to which journal, and where. */
export interface Append {
  keys: Set<string>;
  cleared: boolean;
  generation: number;
  /** Where the journal's last whole frame ends; 0 while it has not been started (the append writes its header). */
  start: number;
}

/**
 * Appends the current entries of `append.keys` (a key whose entry is gone
 * as its deletion) to the journal: where its last whole frame ends now.
 * Throws when it could not, the journal cut back to where it ended (a
 * JournalShrunkError when it was already shorter than that).
 */
export async function appendJournal<E>(to: SaveTarget<E>, append: Append): Promise<number> {
  const { dir, files, codec, source } = to;
  files.mkdir(dir);
  const out = new RecordWriter();
  if (append.cleared) writeClear(out);
  const pending = append.keys.values();
  const frames = await recordFrames(out, append.keys.size, () => {
    const key = pending.next().value as string;
    codec.write(out, key, source.entry(key));
  });
  const start = append.start;
  if (start === 0) frames.unshift(encodeHeader(codec.kind, append.generation));
  let at = start;
  const file = await files.open(join(dir, journalFile(append.generation)), 'update');
  try {
    // A failed write of an earlier save may have left part of a frame
    // after the last whole one, if it could not be cut back then.
    const size = await file.size();
    if (size > start) await file.truncate(start);
    else if (size < start) throw new JournalShrunkError(size, start);
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
  return at;
}
