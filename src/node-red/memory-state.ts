/**
 * Memory stores held by node id (in node-red/node-registry), not by node object: Node-RED builds a new
 * node object on every deploy that touches a node (and on a full deploy or
 * "restart flows", every node), and a store that lived in the old object
 * would start empty, so a bin replaying its buffer right after an unrelated
 * deploy would have every reading admitted a second time. A store lives
 * here from its node's first start until the node is deleted (or switched
 * to the Redis store), and, when saving is on, in the user directory across
 * restarts (persist/state-journal).
 */
import { createHash } from 'crypto';
import { existsSync, mkdirSync, renameSync } from 'fs';
import { rm } from 'fs/promises';
import { dirname, join } from 'path';
import type { RestoreTarget, StateCodec } from '../persist/codecs';
import { causeOf, StateJournal } from '../persist/state-journal';
import type { NodeAPI } from './api';
import { errorMessage } from '../core/parse/errors';
import { drop, keep, NodeSlot, recordOf, recordsIn } from './node-registry';

export interface Persistable<E> extends RestoreTarget<E> {
  entry(key: string): E | undefined;
  /** entry(), possibly filling one reused object: what the journal reads. */
  entryView(key: string): E | undefined;
  keys(): string[];
  /** The store's cap: the most keys a failing save keeps pending. */
  readonly maxEntries: number;
  onChange: ((key: string) => void) | undefined;
  onClear: (() => void) | undefined;
}

export interface Persistence {
  /** Where this node's state is saved; undefined when it is not. */
  dir: string | undefined;
  /** Save at most this often while something changed. */
  intervalMs: number;
  /** Where the previous release saved this node's state, when that was another name: moved to dir on loading. */
  legacyDir?: string;
}

/**
 * Where a node saves its state: `<userDir>/dedup-state/<name>/` (see
 * fileNameOf), or under the runtime setting `dedupStateDir`; nowhere when
 * that setting is false, when the node's *Save every* is 0, or when the
 * runtime has no user directory (as under the test helper).
 */
export function persistenceOf(RED: NodeAPI, nodeId: string, persistSeconds: number): Persistence {
  const setting = RED.settings.dedupStateDir;
  const userDir = RED.settings.userDir;
  let base: string | undefined;
  if (typeof setting === 'string' && setting.trim() !== '') base = setting;
  else if (setting !== false && typeof userDir === 'string' && userDir !== '') base = join(userDir, 'dedup-state');
  if (base === undefined || setting === false) return { dir: undefined, intervalMs: persistSeconds * 1000 };
  const name = fileNameOf(nodeId);
  const legacy = legacyFileNameOf(nodeId);
  return { dir: join(base, name), intervalMs: persistSeconds * 1000, ...(legacy !== name ? { legacyDir: join(base, legacy) } : {}) };
}

/** Names Windows keeps for devices, whatever the extension: never a directory's. */
const DEVICE_NAMES = /^(con|prn|aux|nul|com\d|lpt\d)(\.|$)/;

/**
 * A node id as a directory name, one name per id, safe on every file
 * system (FAT on an SD card too: case-insensitive, no `:` or `\\`), at most
 * 66 bytes. Node-RED's own ids (`3f2a9c1b7e4d5a60`, the older
 * `3f2a9c1b.7e4d5a`) are used as they are: lower-case letters, digits,
 * dots and dashes, starting and ending with a letter or digit. Any other id
 * becomes `_<readable prefix>_<first 32 hex of its SHA-256>`; only those
 * names hold a `_`, so no encoded id can take a plain id's name, and two
 * ids that differ only in case, in characters the prefix drops, or after
 * their first bytes still differ in their hash.
 */
export function fileNameOf(nodeId: string): string {
  if (/^[a-z0-9](?:[a-z0-9.-]{0,62}[a-z0-9])?$/.test(nodeId) && !DEVICE_NAMES.test(nodeId)) return nodeId;
  const readable = nodeId.toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-+|-+$/g, '').slice(0, 32);
  const hash = createHash('sha256').update(nodeId, 'utf8').digest('hex').slice(0, 32);
  return `_${readable}_${hash}`;
}

/**
 * The previous release's name, read once to move a saved state to its new
 * name: a plain id as it was, any other hex-encoded and cut at 100 bytes
 * (which is why `é` and `xc3a9`, or two long ids, could share one).
 */
export function legacyFileNameOf(nodeId: string): string {
  return /^[A-Za-z0-9_-]{1,100}$/.test(nodeId) ? nodeId : `x${Buffer.from(nodeId, 'utf8').toString('hex').slice(0, 200)}`;
}

/**
 * Moves a state the previous release saved under its old name to the new
 * one, unless the new one exists already. When two ids shared the old name
 * (see legacyFileNameOf), the first to start takes it: it held the state of
 * both.
 */
function moveLegacy(persistence: Persistence, warn: (text: string) => void): void {
  const { dir, legacyDir } = persistence;
  if (dir === undefined || legacyDir === undefined || existsSync(dir) || !existsSync(legacyDir)) return;
  try {
    mkdirSync(dirname(dir), { recursive: true });
    renameSync(legacyDir, dir);
  } catch (error) {
    warn(`could not move the saved state from ${legacyDir} to ${dir} (${causeOf(error)}); it is left where it is and not loaded`);
  }
}

/** A node's memory store as it is kept between its starts. */
export interface HeldMemory {
  type: string;
  store: Persistable<unknown>;
  journal: StateJournal<unknown> | undefined;
  /** The directory the state of a node with saving turned off may still hold. */
  dir: string | undefined;
  /** The removal of saved files still under way: a journal started meanwhile waits for it. */
  removal: Promise<void> | undefined;
}

const MEMORY = new NodeSlot<HeldMemory>('memory');

export interface HeldStore<S> {
  store: S;
  journal: StateJournal<unknown> | undefined;
}

/**
 * The memory store of a node: the one it had before a redeploy (given the
 * node's new settings through `reuse`), or a new one, loaded from its saved
 * state when there is one.
 */
export function holdMemoryStore<S extends Persistable<E>, E>(
  nodeId: string,
  type: string,
  persistence: Persistence,
  codec: StateCodec<E>,
  make: () => S,
  reuse: (store: S) => void,
  warn: (text: string) => void,
  saving?: (cause: string | undefined) => void,
): HeldStore<S> {
  const existing = recordOf(nodeId, MEMORY);
  if (existing !== undefined && existing.type === type) {
    const store = existing.store as S;
    reuse(store);
    existing.journal = adjustJournal(existing, persistence, codec, warn, saving);
    return { store, journal: existing.journal };
  }
  const store = make();
  const entry: HeldMemory = { type, store, journal: undefined, dir: persistence.dir, removal: undefined };
  if (persistence.dir !== undefined && persistence.intervalMs > 0) {
    moveLegacy(persistence, warn);
    const journal = journalFor(store, persistence, codec, warn);
    try {
      journal.load(Date.now());
    } catch (error) {
      store.clearAll();
      warn(`could not read the saved state in ${persistence.dir}: ${errorMessage(error)}; starting empty`);
    }
    attach(store, journal, persistence, warn, saving);
    entry.journal = journal;
  } else if (persistence.dir !== undefined) {
    // Saving is off: a state saved earlier would only go stale.
    entry.removal = removeDir(persistence.dir);
  }
  keep(nodeId, MEMORY, entry);
  return { store, journal: entry.journal };
}

/** On close: a deleted node's store and saved state go; otherwise the changes are saved and the store is kept. */
export async function releaseMemoryStore(nodeId: string, removed: boolean): Promise<void> {
  const entry = recordOf(nodeId, MEMORY);
  if (entry === undefined) return;
  if (removed) {
    drop(nodeId, MEMORY);
    await entry.journal?.remove();
    return;
  }
  await entry.journal?.close();
}

/** The node now keeps its state elsewhere (Redis): its memory store and saved state go. */
export async function dropMemoryStore(nodeId: string): Promise<void> {
  const entry = recordOf(nodeId, MEMORY);
  if (entry === undefined) return;
  drop(nodeId, MEMORY);
  if (entry.journal !== undefined) await entry.journal.remove();
  else if (entry.dir !== undefined) await removeDir(entry.dir);
}

/** For tests: forget every held store (as a fresh process would), without touching saved files. */
export function forgetHeldStores(): void {
  for (const [id, entry] of [...recordsIn(MEMORY)]) {
    entry.journal?.stop();
    drop(id, MEMORY);
  }
}

function journalFor<E>(
  store: Persistable<E>,
  persistence: Persistence,
  codec: StateCodec<E>,
  warn: (text: string) => void,
  after?: Promise<void>,
): StateJournal<E> {
  return new StateJournal(
    codec,
    { entry: (key) => store.entryView(key), keys: () => store.keys(), limit: () => store.maxEntries, target: store },
    { dir: persistence.dir as string, intervalMs: persistence.intervalMs, warn, ...(after !== undefined ? { after } : {}) },
  );
}

/** Deletes a saved state's directory; never rejects (there is nothing to do about a failure but try again next time). */
function removeDir(dir: string): Promise<void> {
  return rm(dir, { recursive: true, force: true }).catch(() => undefined);
}

function attach<E>(
  store: Persistable<E>,
  journal: StateJournal<E>,
  persistence: Persistence,
  warn: (text: string) => void,
  saving: ((cause: string | undefined) => void) | undefined,
): void {
  store.onChange = (key) => journal.changed(key);
  store.onClear = () => journal.clearedAll();
  journal.start(persistence.intervalMs, warn, saving);
}

/** A kept store whose node changed its saving options: start, stop or move its journal. */
function adjustJournal<E>(
  entry: HeldMemory,
  persistence: Persistence,
  codec: StateCodec<E>,
  warn: (text: string) => void,
  saving: ((cause: string | undefined) => void) | undefined,
): StateJournal<unknown> | undefined {
  const store = entry.store as Persistable<E>;
  const wanted = persistence.dir !== undefined && persistence.intervalMs > 0;
  const current = entry.journal as StateJournal<E> | undefined;
  if (current !== undefined && wanted && current.directory === persistence.dir) {
    attach(store, current, persistence, warn, saving);
    return current;
  }
  store.onChange = undefined;
  store.onClear = undefined;
  // Removals are chained on the entry: saving turned off and on again in
  // quick succession must not let the first removal delete what the new
  // journal writes.
  const removing = (work: Promise<void>): void => {
    entry.removal = Promise.all([entry.removal, work]).then(
      () => undefined,
      () => undefined,
    );
  };
  if (current !== undefined) removing(current.remove());
  else if (entry.dir !== undefined && entry.dir !== persistence.dir) removing(removeDir(entry.dir));
  entry.dir = persistence.dir;
  if (!wanted) {
    if (persistence.dir !== undefined) removing(removeDir(persistence.dir));
    return undefined;
  }
  // Saving turned on (or moved) for a store that holds state already: save all of it now.
  const journal = journalFor(store, persistence, codec, warn, entry.removal);
  attach(store, journal, persistence, warn, saving);
  void journal.compact();
  return journal;
}
