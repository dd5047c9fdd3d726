/**
 * Reads a node's saved state back (the format is frames.ts's, the records
 * codecs.ts's; state-journal.ts writes it): the snapshot, then the journals
 * of its generation and later, in order, synchronously, since a node must
 * not decide before its state is back. Entries past their TTL are dropped
 * and the store's cap applies as they are put back.
 *
 * Never a crash: a journal cut short keeps its whole frames (the rest is
 * cut off, so that later appends are read), with a warning; a damaged
 * snapshot keeps what it can (its whole frames, and every journal), says
 * what is lost, and a copy of it is kept until the next save rewrites it;
 * an unusable file (another kind of node's, a newer format's) is set aside
 * under a name of its own.
 */
import { copyFileSync, existsSync, readFileSync, renameSync, rmSync, truncateSync } from 'fs';
import { basename, join } from 'path';
import type { RestoreTarget, StateCodec } from './codecs';
import { decodeHeader, FRAME_HEAD_BYTES, HEADER_BYTES, readFrames, unpackRecords } from './frames';
import { journalNames, SNAPSHOT } from './journal-names';
import { causeOf } from './save-files';
import { errorMessage } from '../core/parse/errors';

export interface SavedStateRead<E> {
  dir: string;
  codec: StateCodec<E>;
  /** Where the entries go. */
  target: RestoreTarget<E>;
  /** The time entries' TTLs are measured against. */
  nowMs: number;
  warn: (text: string) => void;
}

/** What was read, and what the journal that goes on from it needs to know. */
export interface SavedState {
  /** Frames applied. */
  applied: number;
  /** The newest generation on disk: the current journal's (0 when there was none). */
  generation: number;
  /** Bytes of the snapshot, when it was whole and its generation can be trusted; else 0. */
  snapshotBytes: number;
  /** Where the current journal's last whole frame ends; 0 when it has none. */
  journalBytes: number;
  /** What is on disk must be rewritten (damage, the previous format): the next save writes a whole snapshot. */
  rewrite: boolean;
}

type Frames = ReturnType<typeof readFrames>;

/** Whole frames applied until the first damaged one (or damaged record): how many, and where the whole ones end. */
interface Applied {
  applied: number;
  good: number;
  damage: string | undefined;
}

const count = (n: number, one: string, many = `${one}s`): string => `${n.toLocaleString('en-US')} ${n === 1 ? one : many}`;

/** Loads the saved state in `read.dir` into its target. */
export function readSavedState<E>(read: SavedStateRead<E>): SavedState {
  const { dir, codec, warn } = read;
  const state: SavedState = { applied: 0, generation: 0, snapshotBytes: 0, journalBytes: 0, rewrite: false };
  if (!existsSync(dir)) return state;
  const snapshotPath = join(dir, SNAPSHOT);
  // Journals older than a whole snapshot it supersedes; undefined while no
  // snapshot can vouch for its generation (none, or a damaged one): then
  // every journal is replayed.
  let fromGeneration: number | undefined;
  /** What a damaged snapshot cost, for the warning given once the journals are read. */
  let snapshotLoss: string | undefined;
  if (existsSync(snapshotPath)) {
    const data = readFileSync(snapshotPath);
    const header = decodeHeader(data, codec.kind);
    if (!header.ok) {
      // A header failing only its checksum, of the right kind, still leads to frames worth reading.
      const unusable = !/checksum/.test(header.problem) || data[5] !== codec.kind;
      if (unusable) {
        const aside = setAside(snapshotPath);
        snapshotLoss = `the snapshot ${header.problem}; ${aside}; what it held (${count(data.length, 'byte')}) is lost`;
      } else {
        // Only the header is in doubt (its generation above all): its frames
        // carry their own checksums, so they are kept, and every journal is
        // replayed after them, none skipped as older.
        const kept = applyFrames(read, snapshotFrames(data, HEADER_BYTES), HEADER_BYTES, true);
        state.applied += kept.applied;
        const aside = copyAside(snapshotPath);
        snapshotLoss = `the snapshot ${header.problem} (its generation cannot be trusted); ${usedOf(kept)}; ${aside}`;
      }
      state.rewrite = true;
    } else {
      const kept = applyFrames(read, snapshotFrames(data, header.bytes), header.bytes, header.deflated);
      state.applied += kept.applied;
      fromGeneration = header.generation;
      state.generation = header.generation;
      state.snapshotBytes = data.length;
      // The previous format's snapshot is rewritten in this one by the first save.
      if (!header.deflated) state.rewrite = true;
      if (kept.damage !== undefined) {
        const aside = copyAside(snapshotPath);
        snapshotLoss = `the snapshot has ${usedOf(kept)}; ${aside}`;
        state.rewrite = true;
      }
    }
  }
  const journalsKept: string[] = [];
  for (const { file, generation } of journalNames(dir)) {
    const path = join(dir, file);
    if (fromGeneration !== undefined && generation < fromGeneration) {
      // Superseded by a whole snapshot (a crash came between its rename and this removal).
      if (snapshotLoss === undefined) rmSync(path, { force: true });
      continue;
    }
    state.generation = Math.max(state.generation, generation);
    const data = readFileSync(path);
    const header = decodeHeader(data, codec.kind);
    if (!header.ok) {
      if (data.length < HEADER_BYTES && /shorter than its header/.test(header.problem)) {
        // A journal whose first save failed before its header was whole: it holds nothing.
        rmSync(path, { force: true });
        continue;
      }
      warn(`saved state in ${dir}: ${file} ${header.problem}; ${setAside(path)}; the changes it held (${count(data.length, 'byte')}) are lost, the rest was loaded`);
      state.rewrite = true;
      continue;
    }
    const frames = readFrames(data, header.bytes);
    // A journal has no end frame: an empty one is damage too (a crash can
    // leave an append's space as zeros), and appends after it would never
    // be read.
    if (frames.ended && frames.damage === undefined) frames.damage = `an empty frame after ${count(frames.payloads.length, 'frame')}`;
    const kept = applyFrames(read, frames, header.bytes, header.deflated);
    state.applied += kept.applied;
    journalsKept.push(file);
    if (kept.damage !== undefined) {
      // Keep the whole frames; cut the rest, so that later appends are read.
      warn(`saved state in ${dir}: ${file} ends in ${kept.damage} (a save cut short); kept the ${count(kept.applied, 'whole frame')} before it`);
      try {
        truncateSync(path, kept.good);
      } catch {
        // Cannot cut it here: the next save writes a new snapshot (and a new journal) instead.
        state.rewrite = true;
      }
    }
    if (generation === state.generation) {
      state.journalBytes = kept.good;
      // Compressed frames never follow the previous format's: its journal is finished by a new snapshot.
      if (!header.deflated) state.rewrite = true;
    }
  }
  if (snapshotLoss !== undefined) {
    const journals = journalsKept.length > 0 ? `the journals after it were loaded (${journalsKept.join(', ')})` : 'there were no journals after it';
    warn(`saved state in ${dir}: ${snapshotLoss}; ${journals}; the next save writes a new snapshot`);
  }
  return state;
}

function applyFrames<E>(read: SavedStateRead<E>, frames: Frames, start: number, deflated: boolean): Applied {
  let applied = 0;
  let good = start;
  let damage = frames.damage;
  try {
    for (const payload of frames.payloads) {
      read.codec.apply(deflated ? unpackRecords(payload) : payload, read.target, read.nowMs);
      good += payload.length + FRAME_HEAD_BYTES;
      applied++;
    }
  } catch (error) {
    damage = `a damaged record at byte ${good} (${errorMessage(error)})`;
  }
  return { applied, good, damage };
}

/** A snapshot's frames: one that does not end in its empty frame was cut short. */
function snapshotFrames(data: Buffer, start: number): Frames {
  const frames = readFrames(data, start);
  if (!frames.ended && frames.damage === undefined) frames.damage = 'no end frame (it was cut short)';
  return frames;
}

/** What of a damaged snapshot was used, in words: where its damage is, and what came before it. */
function usedOf(kept: Applied): string {
  const before = kept.applied === 0 ? 'nothing of it could be used, what it held is lost' : `the ${count(kept.applied, 'frame')} of records before it were loaded, the rest of it is lost`;
  if (kept.damage === undefined) return `all of its records were loaded (${count(kept.applied, 'frame')})`;
  return `${kept.damage}: ${before}`;
}

/** A name beside path that no file has yet: `<name>.bad`, then `<name>.bad-2`, ... (an earlier one is never overwritten). */
function asideName(path: string): string {
  for (let n = 1; ; n++) {
    const candidate = n === 1 ? `${path}.bad` : `${path}.bad-${n}`;
    if (!existsSync(candidate)) return candidate;
  }
}

/** Moves an unusable file out of the way; says where it went (or why it could not). */
function setAside(path: string): string {
  const aside = asideName(path);
  try {
    renameSync(path, aside);
    return `it is set aside as ${basename(aside)}`;
  } catch (error) {
    // Left where it is: the next save writes past it (a new snapshot, a new journal).
    return `it could not be set aside (${causeOf(error)}) and is left as it is`;
  }
}

/** Keeps a copy of a damaged file that stays in use until the next save replaces it. */
function copyAside(path: string): string {
  const aside = asideName(path);
  try {
    copyFileSync(path, aside);
    return `a copy of it is kept as ${basename(aside)}`;
  } catch (error) {
    return `no copy of it could be kept (${causeOf(error)})`;
  }
}
