/**
 * The names of a node's saved state in its directory (see
 * state-journal.ts), for its reader and its writer alike: the snapshot,
 * `snapshot`, and the journals after it, `journal-<generation>`.
 */
import { readdirSync } from 'fs';

export const SNAPSHOT = 'snapshot';
const JOURNAL_PREFIX = 'journal-';

/** The file name of a generation's journal. */
export function journalFile(generation: number): string {
  return `${JOURNAL_PREFIX}${generation}`;
}

/** The journals in dir, oldest generation first; none when dir cannot be read. */
export function journalNames(dir: string): { file: string; generation: number }[] {
  let files: string[];
  try {
    files = readdirSync(dir);
  } catch {
    return [];
  }
  return files
    .filter((file) => file.startsWith(JOURNAL_PREFIX) && /^\d+$/.test(file.slice(JOURNAL_PREFIX.length)))
    .map((file) => ({ file, generation: Number(file.slice(JOURNAL_PREFIX.length)) }))
    .sort((a, b) => a.generation - b.generation);
}
