/**
 * The file operations a save makes, behind one small interface: the real
 * ones (node's fs), or a test's, which fails any of them with ENOSPC, EIO
 * or a short write (test/unit/persist) to check that no failure at any step of a
 * save or a compaction leaves a torn frame that later frames follow.
 *
 * Writes are positional (pwrite): a journal is opened for update, never in
 * append mode, so that the next append is written where the last whole
 * frame ended, whatever a failed write left after it.
 */
import { constants, mkdirSync } from 'fs';
import { open, rename, unlink } from 'fs/promises';
import { errorMessage } from '../core/parse/errors';

export interface SaveFile {
  size(): Promise<number>;
  /** Writes at `position`; resolves to the bytes written, which may be fewer than asked (a short write). */
  write(data: Buffer, position: number): Promise<number>;
  truncate(length: number): Promise<void>;
  sync(): Promise<void>;
  close(): Promise<void>;
}

export interface SaveFiles {
  mkdir(dir: string): void;
  /** `update`: read-write, created when missing, never truncated; `replace`: created or truncated. */
  open(path: string, mode: 'update' | 'replace'): Promise<SaveFile>;
  rename(from: string, to: string): Promise<void>;
  unlink(path: string): Promise<void>;
}

export const realFiles: SaveFiles = {
  mkdir(dir) {
    mkdirSync(dir, { recursive: true });
  },
  async open(path, mode) {
    const handle = await open(path, mode === 'update' ? constants.O_RDWR | constants.O_CREAT : 'w');
    return {
      size: async () => (await handle.stat()).size,
      write: async (data, position) => (await handle.write(data, 0, data.length, position)).bytesWritten,
      truncate: (length) => handle.truncate(length),
      sync: () => handle.sync(),
      close: () => handle.close(),
    };
  },
  rename: (from, to) => rename(from, to),
  unlink: (path) => unlink(path),
};

/** An error for a write that wrote nothing and said nothing (the disk's way of saying it is full, at times). */
export class ShortWriteError extends Error {
  readonly code = 'ESHORTWRITE';
  constructor(wanted: number, position: number) {
    super(`a write of ${wanted} bytes at byte ${position} wrote none`);
  }
}

/**
 * Writes all of data at position, again and again after short writes (a
 * write may stop early when the disk fills, and fail only on the next).
 */
export async function writeAll(file: SaveFile, data: Buffer, position: number): Promise<void> {
  let done = 0;
  while (done < data.length) {
    const wrote = await file.write(done === 0 ? data : data.subarray(done), position + done);
    if (wrote <= 0) throw new ShortWriteError(data.length - done, position + done);
    done += wrote;
  }
}

/** The cause of a failed save as the status shows it: the system's code (ENOSPC, EIO, ESHORTWRITE), else the message. */
export function causeOf(error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code === 'string' && code !== '') return code;
  return errorMessage(error);
}
