/**
 * Saving the memory stores to disk (snapshot + journal), in a temporary
 * directory per test: what is saved loads back exactly, through the real
 * MemoryWindowStore and MemorySeenStore; TTL and cap apply on loading; a
 * compaction, a crash in the middle of one, a torn append and every kind of
 * bad file leave a loadable state; and what is written grows with the
 * changes, not with the size of the set.
 */
import assert from 'node:assert/strict';
import { createHash } from 'crypto';
import { appendFileSync, cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'fs';
import { tmpdir } from 'os';
import { join } from 'path';
import { CLAIM } from '../../../src/core/sensor/seen-codes';
import type { Ping } from '../../../src/core/window/sliding-window';
import { RecordWriter, seenCodec, windowCodec, type StateCodec } from '../../../src/persist/codecs';
import { encodeFrame, encodeHeader, FORMAT_VERSION, HEADER_BYTES, readFrames, SEEN_STATE, unpackRecords } from '../../../src/persist/frames';
import { SLICE, StateJournal } from '../../../src/persist/state-journal';
import { MemorySeenStore, type MemorySeenSettings } from '../../../src/stores/memory-seen-store';
import { MemoryWindowStore, type MemoryWindowSettings } from '../../../src/stores/memory-window-store';
import type { Persistable } from '../../../src/node-red/memory-state';

const T0 = 1_780_000_000_000;
const WINDOW: MemoryWindowSettings = { minSeconds: 60, minMetres: 25, ttlSeconds: 3600, maxAssets: 100_000 };
const SEEN: MemorySeenSettings = { ttlSeconds: 3600, maxKeys: 100_000, confirm: false, leaseSeconds: 30, keyMode: 'reading' };

/** A clock the test moves. */
class Clock {
  ms = T0;
  readonly now = (): number => this.ms;
}

/** A store wired to a journal as node-red/memory-state wires them, and the warnings it gave. */
interface Saved<S> {
  store: S;
  journal: StateJournal<unknown>;
  warnings: string[];
}

function wire<S extends Persistable<E>, E>(store: S, codec: StateCodec<E>, dir: string): Saved<S> {
  const warnings: string[] = [];
  const journal = new StateJournal<E>(codec, { entry: (key) => store.entry(key), keys: () => store.keys(), target: store }, {
    dir,
    intervalMs: 10_000,
    warn: (text) => warnings.push(text),
  });
  store.onChange = (key) => journal.changed(key);
  store.onClear = () => journal.clearedAll();
  return { store, journal, warnings };
}

function windows(dir: string, clock: Clock, settings: Partial<MemoryWindowSettings> = {}): Saved<MemoryWindowStore> {
  return wire(new MemoryWindowStore({ ...WINDOW, ...settings }, clock.now), windowCodec, dir);
}

function seenSet(dir: string, clock: Clock, settings: Partial<MemorySeenSettings> = {}): Saved<MemorySeenStore> {
  return wire(new MemorySeenStore({ ...SEEN, ...settings }, clock.now), seenCodec, dir);
}

/** A fresh store of the same kind loaded from dir at the clock's time. */
function reloadWindows(dir: string, clock: Clock, settings: Partial<MemoryWindowSettings> = {}): Saved<MemoryWindowStore> {
  const loaded = windows(dir, clock, settings);
  loaded.journal.load(clock.ms);
  return loaded;
}

function reloadSeen(dir: string, clock: Clock, settings: Partial<MemorySeenSettings> = {}): Saved<MemorySeenStore> {
  const loaded = seenSet(dir, clock, settings);
  loaded.journal.load(clock.ms);
  return loaded;
}

/** Asset ids of one width, so that every record has the same size. */
const asset = (i: number): string => `veh-${String(i).padStart(6, '0')}`;
const ping = (i: number, seconds: number, lat = 52.52): Ping => ({ assetId: asset(i), t: T0 + seconds * 1000, lat, lon: 13.4 + i * 1e-4, heading: (i * 7) % 360, accuracy: 3.3, events: i });

/** Every record of a window store, in order, as comparable values. */
function windowState(store: MemoryWindowStore): unknown[] {
  return store.keys().map((key) => {
    const entry = store.entry(key);
    return { ...entry, heading: String(entry?.heading) };
  });
}

function seenState(store: MemorySeenStore): unknown[] {
  return store.keys().map((key) => store.entry(key));
}

function claim(store: MemorySeenStore, keys: string[], token: number): number[] {
  let codes: number[] = [];
  store.claim({ claims: keys.map((key) => ({ key, group: key.split(':')[0] as string })), token }, { value: (v) => (codes = v), error: (e) => assert.fail(String(e)) }, undefined);
  return codes;
}

function settle(store: MemorySeenStore, keys: string[], token: number, action: 'confirm' | 'release'): number[] {
  let codes: number[] = [];
  store.settle({ claims: keys.map((key) => ({ key, group: key })), token, action }, { value: (v) => (codes = v), error: (e) => assert.fail(String(e)) }, undefined);
  return codes;
}

function reset(store: MemoryWindowStore | MemorySeenStore, id: string | undefined): void {
  store.reset(id, { value: () => undefined, error: (e) => assert.fail(String(e)) }, undefined);
}

const files = (dir: string): string[] => (existsSync(dir) ? readdirSync(dir).sort() : []);
const journalFile = (dir: string): string => {
  const journals = files(dir).filter((f) => /^journal-\d+$/.test(f));
  assert.equal(journals.length, 1, `one journal in ${files(dir).join(', ')}`);
  return join(dir, journals[0] as string);
};

describe('persist/state-journal StateJournal', function () {
  let root: string;
  let dir: string;
  let clock: Clock;

  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), 'dedup-journal-test-'));
    dir = join(root, 'node-1');
    clock = new Clock();
  });

  afterEach(() => {
    rmSync(root, { recursive: true, force: true });
  });

  describe('round trip', () => {
    it('loads a window store back exactly, in the same order, and it decides as the original does', async () => {
      const saved = windows(dir, clock);
      for (let i = 0; i < 50; i++) saved.store.decideNow(ping(i, 0));
      clock.ms += 61_000;
      for (let i = 0; i < 50; i += 3) saved.store.decideNow(ping(i, 61)); // elapsed: re-admitted, now the newest
      for (let i = 1; i < 50; i += 3) saved.store.decideNow(ping(i, 61.5)); // suppressed: counts only
      await saved.journal.save();
      assert.deepEqual(saved.warnings, []);

      const loaded = reloadWindows(dir, clock);
      assert.deepEqual(windowState(loaded.store), windowState(saved.store).slice());
      // Counts changed by suppressions alone are saved with the next admission, not on their own.
      clock.ms += 1000;
      for (let i = 0; i < 50; i++) {
        const next = ping(i, 63, 52.52 + (i % 2) * 0.001);
        const a = saved.store.decideNow(next);
        const b = loaded.store.decideNow(next);
        assert.equal(b.reason, a.reason, asset(i));
        assert.equal(b.distanceMetres, a.distanceMetres);
      }
      assert.deepEqual(loaded.warnings, []);
    });

    it('loads a seen-set back exactly: seen, pending and released keys, with their tokens', async () => {
      const saved = seenSet(dir, clock, { confirm: true });
      assert.deepEqual(claim(saved.store, ['d1:1:a', 'd1:2:b', 'd2:1:c', 'd2:2:d'], 11), [1, 1, 1, 1]);
      settle(saved.store, ['d1:1:a', 'd1:2:b'], 11, 'confirm');
      settle(saved.store, ['d2:1:c'], 11, 'release');
      await saved.journal.save();

      const loaded = reloadSeen(dir, clock, { confirm: true });
      assert.deepEqual(seenState(loaded.store), seenState(saved.store));
      assert.deepEqual(claim(loaded.store, ['d1:1:a', 'd2:2:d', 'd2:1:c'], 12), [CLAIM.duplicate, CLAIM.inFlight, CLAIM.admitted]);
      assert.deepEqual(claim(loaded.store, ['d2:2:d'], 11), [CLAIM.replayed], 'the pending key is still held by its token');
    });

    it('replays resets: one asset, one device, and everything', async () => {
      const saved = windows(dir, clock);
      for (let i = 0; i < 5; i++) saved.store.decideNow(ping(i, 0));
      await saved.journal.save();
      reset(saved.store, asset(2));
      await saved.journal.save();
      assert.deepEqual(reloadWindows(dir, clock).store.keys(), [0, 1, 3, 4].map(asset));
      reset(saved.store, undefined);
      saved.store.decideNow(ping(9, 1));
      await saved.journal.save();
      assert.deepEqual(reloadWindows(dir, clock).store.keys(), [asset(9)]);

      const seenDir = join(root, 'seen');
      const seen = seenSet(seenDir, clock);
      claim(seen.store, ['bin-1:1:a', 'bin-1:2:b', 'bin-2:1:c'], 1);
      await seen.journal.save();
      reset(seen.store, 'bin-1');
      await seen.journal.save();
      assert.deepEqual(reloadSeen(seenDir, clock).store.keys(), ['bin-2:1:c']);
    });

    it('starts empty, without a warning, when nothing was saved yet (a new node)', () => {
      const loaded = reloadWindows(dir, clock);
      assert.equal(loaded.store.size, 0);
      assert.deepEqual(loaded.warnings, []);
      assert.equal(existsSync(dir), false, 'loading writes nothing');
    });

    it('writes nothing when nothing changed', async () => {
      const saved = windows(dir, clock);
      await saved.journal.save();
      assert.equal(existsSync(dir), false);
      saved.store.decideNow(ping(1, 0));
      await saved.journal.save();
      const size = statSync(journalFile(dir)).size;
      saved.store.decideNow(ping(1, 1)); // suppressed: nothing to save
      await saved.journal.save();
      assert.equal(statSync(journalFile(dir)).size, size);
    });
  });

  describe('bounds on loading', () => {
    it('drops entries past their TTL', async () => {
      const saved = windows(dir, clock, { ttlSeconds: 100 });
      saved.store.decideNow(ping(1, 0));
      clock.ms += 50_000;
      saved.store.decideNow(ping(2, 50));
      await saved.journal.compact();
      saved.store.decideNow(ping(3, 50));
      await saved.journal.save();
      clock.ms = T0 + 100_000; // asset 1 expires now, the others at 150 s
      assert.deepEqual(reloadWindows(dir, clock, { ttlSeconds: 100 }).store.keys(), [asset(2), asset(3)]);
      clock.ms = T0 + 150_000;
      assert.equal(reloadWindows(dir, clock, { ttlSeconds: 100 }).store.size, 0);

      const seenDir = join(root, 'seen');
      clock.ms = T0;
      const seen = seenSet(seenDir, clock, { ttlSeconds: 10 });
      claim(seen.store, ['a:1:x'], 1);
      await seen.journal.save();
      clock.ms = T0 + 10_000;
      assert.equal(reloadSeen(seenDir, clock, { ttlSeconds: 10 }).store.size, 0);
    });

    it('applies the cap, keeping the entries written last (from the snapshot and from the journal)', async () => {
      const saved = windows(dir, clock);
      for (let i = 0; i < 10; i++) saved.store.decideNow(ping(i, 0));
      await saved.journal.compact();
      clock.ms += 61_000;
      saved.store.decideNow(ping(10, 61));
      saved.store.decideNow(ping(11, 61));
      saved.store.decideNow(ping(3, 61)); // re-admitted after 10 and 11: the newest
      saved.store.decideNow(ping(12, 61));
      saved.store.decideNow(ping(10, 122)); // written again: newer than 3 and 12
      await saved.journal.save();
      assert.deepEqual(saved.store.keys().slice(-4), [11, 3, 12, 10].map(asset));
      const loaded = reloadWindows(dir, clock, { maxAssets: 4 });
      assert.deepEqual(loaded.store.keys(), [11, 3, 12, 10].map(asset));
    });
  });

  describe('compaction', () => {
    it('writes a new snapshot and starts a new journal when the journal outgrows twice the snapshot (and 1 MiB)', async function () {
      this.timeout(30_000);
      const saved = seenSet(dir, clock, { maxKeys: 30_000 });
      let token = 0;
      let compactions = 0;
      let snapshotBytes = 0;
      for (let round = 0; round < 200 && compactions < 2; round++) {
        const keys: string[] = [];
        // Long keys: fewer records to write for the megabytes a compaction needs.
        // Hashes, not repeated letters: the frames are compressed.
        for (let i = 0; i < 250; i++) {
          const noise = createHash('sha512').update(`${round}:${i}`).digest('hex').slice(0, 120);
          keys.push(`dev-${round % 7}-${noise}:${round * 1000 + i}:0123456789abcdef`);
        }
        claim(saved.store, keys, ++token);
        const before = files(dir).some((f) => f.startsWith('journal-')) ? statSync(journalFile(dir)).size : 0;
        const written = saved.journal.stats.journalBytes;
        await saved.journal.save();
        const journalAtSave = before + saved.journal.stats.journalBytes - written;
        const threshold = Math.max(1 << 20, 2 * snapshotBytes);
        if (saved.journal.stats.compactions > compactions) {
          compactions = saved.journal.stats.compactions;
          assert.ok(journalAtSave > threshold, `compacted at ${journalAtSave} B, threshold ${threshold} B`);
          snapshotBytes = statSync(join(dir, 'snapshot')).size;
          // The old journal is gone; the next one starts with the next change.
          assert.deepEqual(files(dir), ['snapshot']);
          assert.equal(saved.journal.stats.compactionBytes > 0, true);
        } else {
          assert.ok(journalAtSave <= threshold, `not compacted at ${journalAtSave} B, threshold ${threshold} B`);
        }
      }
      assert.equal(compactions, 2, 'two compactions happened');
      assert.ok(snapshotBytes > 1 << 20, 'the second threshold was twice a snapshot of more than 1 MiB');
      claim(saved.store, ['after:1:x'], ++token);
      await saved.journal.save();
      assert.deepEqual(files(dir), ['journal-2', 'snapshot']);
      const loaded = reloadSeen(dir, clock, { maxKeys: 30_000 });
      const keys = saved.store.keys();
      assert.deepEqual(loaded.store.keys(), keys);
      for (let i = 0; i < keys.length; i += 97) assert.deepEqual(loaded.store.entry(keys[i] as string), saved.store.entry(keys[i] as string));
      assert.deepEqual(loaded.warnings, []);
    });

    it('writes a large snapshot in slices, one frame each', async () => {
      const saved = seenSet(dir, clock);
      const count = 2 * SLICE + 10;
      const keys: string[] = [];
      for (let i = 0; i < count; i++) keys.push(`d:${i}:h`);
      claim(saved.store, keys, 1);
      await saved.journal.compact();
      const scan = readFrames(readFileSync(join(dir, 'snapshot')));
      assert.equal(scan.ended, true);
      // At most SLICE entries a slice; a slow slice ends sooner, on time.
      assert.ok(scan.payloads.length >= 3, `${scan.payloads.length} frames`);
      assert.equal(reloadSeen(dir, clock).store.size, count);
    });

    it('keeps the changes made while a compaction is being written, between its slices', async () => {
      const store = new MemoryWindowStore(WINDOW, clock.now);
      const count = 2 * SLICE + 10;
      let reads = 0;
      let changedMeanwhile = false;
      const journal = new StateJournal(
        windowCodec,
        {
          // The first read of the second slice: the first is written, the
          // second not yet read. What changes now is what changes between them.
          entry: (key) => {
            if (++reads === SLICE + 1 && !changedMeanwhile) {
              changedMeanwhile = true;
              clock.ms += 61_000;
              store.decideNow(ping(count - 1, 61)); // in the second slice, not yet read
              store.decideNow(ping(0, 61)); // in the first slice, already written
              store.decideNow(ping(count + 1, 61)); // new
              reset(store, asset(count - 2)); // in the second slice
            }
            return store.entry(key);
          },
          keys: () => store.keys(),
          target: store,
        },
        { dir, intervalMs: 10_000, warn: (text) => assert.fail(text) },
      );
      store.onChange = (key) => journal.changed(key);
      for (let i = 0; i < count; i++) store.decideNow(ping(i, 0));
      await journal.save();
      await journal.compact();
      assert.ok(changedMeanwhile);
      await journal.save();
      const loaded = reloadWindows(dir, clock);
      assert.deepEqual(windowState(loaded.store), windowState(store));
    });

    it('keeps everything through a crash in the middle of a compaction', async () => {
      const saved = windows(dir, clock);
      for (let i = 0; i < 20; i++) saved.store.decideNow(ping(i, 0));
      await saved.journal.compact(); // snapshot of generation 1
      clock.ms += 61_000;
      for (let i = 0; i < 10; i++) saved.store.decideNow(ping(i, 61));
      await saved.journal.save(); // journal-1
      const before = join(root, 'before');
      cpSync(dir, before, { recursive: true });

      // The compaction starts journal-2; changes made meanwhile go there.
      await saved.journal.compact();
      clock.ms += 61_000;
      for (let i = 5; i < 25; i++) saved.store.decideNow(ping(i, 122));
      reset(saved.store, asset(19));
      await saved.journal.save(); // journal-2
      assert.deepEqual(files(dir), ['journal-2', 'snapshot']);

      // Crash before the new snapshot was renamed into place: the old
      // snapshot, both journals, and a half-written temporary file.
      const crashed = join(root, 'crashed');
      cpSync(before, crashed, { recursive: true });
      cpSync(join(dir, 'journal-2'), join(crashed, 'journal-2'));
      writeFileSync(join(crashed, 'snapshot.tmp'), readFileSync(join(dir, 'snapshot')).subarray(0, 100));
      assert.deepEqual(files(crashed), ['journal-1', 'journal-2', 'snapshot', 'snapshot.tmp']);
      const fromCrash = reloadWindows(crashed, clock);
      assert.deepEqual(windowState(fromCrash.store), windowState(saved.store));
      assert.deepEqual(fromCrash.warnings, []);

      // Crash after the rename, before the old journal was deleted.
      const renamed = join(root, 'renamed');
      cpSync(dir, renamed, { recursive: true });
      cpSync(join(before, 'journal-1'), join(renamed, 'journal-1'));
      const fromRenamed = reloadWindows(renamed, clock);
      assert.deepEqual(windowState(fromRenamed.store), windowState(saved.store));
      assert.equal(existsSync(join(renamed, 'journal-1')), false, 'the journal the snapshot replaced is removed on loading');
    });

    it('loads and goes on saving after a reload, into the journal of the loaded generation', async () => {
      const saved = windows(dir, clock);
      saved.store.decideNow(ping(1, 0));
      await saved.journal.compact();
      saved.store.decideNow(ping(2, 0));
      await saved.journal.save();
      const loaded = reloadWindows(dir, clock);
      loaded.store.decideNow(ping(3, 0));
      await loaded.journal.save();
      assert.deepEqual(files(dir), ['journal-1', 'snapshot']);
      assert.deepEqual(reloadWindows(dir, clock).store.keys(), [1, 2, 3].map(asset));
    });
  });

  describe('damage', () => {
    /** A window state with a snapshot (assets 0-4) and a journal of two saves (5-6, then 7). */
    async function savedState(): Promise<Saved<MemoryWindowStore>> {
      const saved = windows(dir, clock);
      for (let i = 0; i < 5; i++) saved.store.decideNow(ping(i, 0));
      await saved.journal.compact();
      saved.store.decideNow(ping(5, 0));
      saved.store.decideNow(ping(6, 0));
      await saved.journal.save();
      saved.store.decideNow(ping(7, 0));
      await saved.journal.save();
      return saved;
    }

    it('keeps the whole frames of a journal cut short, with a warning, and later appends stay readable', async () => {
      await savedState();
      const path = journalFile(dir);
      const whole = readFileSync(path);
      for (const cut of [1, 5, 20]) {
        writeFileSync(path, whole.subarray(0, whole.length - cut));
        const loaded = reloadWindows(dir, clock);
        assert.deepEqual(loaded.store.keys(), [0, 1, 2, 3, 4, 5, 6].map(asset), `cut ${cut}`);
        assert.equal(loaded.warnings.length, 1);
        assert.match(loaded.warnings[0] as string, /journal-1 ends in a frame .*cut short at byte \d+ \(a save cut short\); kept the 1 whole frame before it$/);
        assert.doesNotMatch(loaded.warnings[0] as string, /empty store/);
        // The torn tail was cut off, so what is appended now is read.
        loaded.store.decideNow(ping(8, 0));
        await loaded.journal.save();
        const again = reloadWindows(dir, clock);
        assert.deepEqual(again.store.keys(), [0, 1, 2, 3, 4, 5, 6, 8].map(asset));
        assert.deepEqual(again.warnings, []);
        writeFileSync(path, whole);
      }
    });

    it('keeps the whole frames of a journal whose tail is zeros (space a crash left unwritten), and later appends stay readable', async () => {
      await savedState();
      const path = journalFile(dir);
      appendFileSync(path, Buffer.alloc(4096));
      const loaded = reloadWindows(dir, clock);
      assert.deepEqual(loaded.store.keys(), [0, 1, 2, 3, 4, 5, 6, 7].map(asset));
      assert.equal(loaded.warnings.length, 1, 'a warning');
      loaded.store.decideNow(ping(8, 0));
      await loaded.journal.save();
      assert.deepEqual(reloadWindows(dir, clock).store.keys(), [0, 1, 2, 3, 4, 5, 6, 7, 8].map(asset));
    });

    it('keeps the frames before one that fails its checksum', async () => {
      await savedState();
      const path = journalFile(dir);
      const data = readFileSync(path);
      data[data.length - 3] = (data[data.length - 3] as number) ^ 0xff;
      writeFileSync(path, data);
      const loaded = reloadWindows(dir, clock);
      assert.deepEqual(loaded.store.keys(), [0, 1, 2, 3, 4, 5, 6].map(asset));
      assert.match(loaded.warnings.join('\n'), /failing its checksum/);
    });

    const ALL = [0, 1, 2, 3, 4, 5, 6, 7].map(asset);
    const JOURNALS_ONLY = [5, 6, 7].map(asset);
    for (const [name, damage, problem, kept] of [
      ['cut short', (data: Buffer) => data.subarray(0, data.length - 10), /cut short/, JOURNALS_ONLY],
      ['missing its end frame', (data: Buffer) => data.subarray(0, data.length - 8), /no end frame \(it was cut short\)/, ALL],
      ['corrupt', (data: Buffer) => flip(data, 40), /checksum|damaged record/, JOURNALS_ONLY],
      ['shorter than its header', (data: Buffer) => data.subarray(0, 5), /shorter than its header/, JOURNALS_ONLY],
      ['empty', () => Buffer.alloc(0), /shorter than its header/, JOURNALS_ONLY],
      ['foreign', () => Buffer.from('{"not":"ours"}'), /not a saved dedup state/, JOURNALS_ONLY],
      ['of a newer format', (data: Buffer) => withVersion(data, FORMAT_VERSION + 1), /newer release/, JOURNALS_ONLY],
      ['of the other kind', (data: Buffer) => Buffer.concat([encodeHeader(SEEN_STATE, 1), data.subarray(HEADER_BYTES)]), /other kind/, JOURNALS_ONLY],
      ['one with a flipped generation byte', (data: Buffer) => flip(data, 8), /header failing its checksum/, ALL],
    ] as const) {
      it(`keeps what it can, with one warning naming what is lost, never throwing, when the snapshot is ${name}, and saves afresh`, async () => {
        await savedState();
        const snapshot = join(dir, 'snapshot');
        const original = readFileSync(snapshot);
        writeFileSync(snapshot, damage(original));
        let loaded: Saved<MemoryWindowStore> | undefined;
        assert.doesNotThrow(() => {
          loaded = reloadWindows(dir, clock);
        });
        assert.ok(loaded);
        assert.deepEqual(loaded.store.keys(), kept);
        assert.equal(loaded.warnings.length, 1, loaded.warnings.join('\n'));
        const warning = loaded.warnings[0] as string;
        if (process.env.SHOW_WARNINGS) console.log(warning);
        assert.match(warning, problem);
        assert.match(warning, /^saved state in .*node-1: the snapshot /);
        assert.match(warning, kept === ALL ? /the 1 frame of records before it were loaded|all of its records were loaded \(1 frame\)/ : /what it held (\(\d+ bytes\) )?is lost/);
        assert.match(warning, /the journals after it were loaded \(journal-1\); the next save writes a new snapshot$/);
        assert.doesNotMatch(warning, /empty store|snapshot a frame/);
        assert.ok(existsSync(`${snapshot}.bad`), 'the damaged file is kept aside');
        assert.ok(existsSync(journalFile(dir)), 'the journal is kept');
        // The next save writes all of it as a new snapshot; it loads whole, and the copy aside stays.
        loaded.store.decideNow(ping(9, 0));
        await loaded.journal.save();
        const again = reloadWindows(dir, clock);
        assert.deepEqual(again.store.keys(), [...kept, asset(9)]);
        assert.deepEqual(again.warnings, []);
        assert.ok(existsSync(`${snapshot}.bad`));
      });
    }

    it('loads a state saved in the previous format (12-byte headers, records not compressed), and the next save rewrites it', async () => {
      const legacyHeader = (generation: number): Buffer => {
        const header = Buffer.alloc(12);
        header.writeUInt32LE(0x4444524e, 0);
        header[4] = 1;
        header[5] = 1; // a window state
        header.writeUInt32LE(generation, 8);
        return header;
      };
      const records = (from: number, to: number): Buffer => {
        const out = new RecordWriter();
        const source = windows(join(root, 'scratch'), clock);
        for (let i = from; i < to; i++) source.store.decideNow(ping(i, 0));
        for (let i = from; i < to; i++) windowCodec.write(out, asset(i), source.store.entry(asset(i)));
        return out.take();
      };
      mkdirSync(dir, { recursive: true });
      writeFileSync(join(dir, 'snapshot'), Buffer.concat([legacyHeader(3), encodeFrame(records(0, 4)), Buffer.alloc(8)]));
      writeFileSync(join(dir, 'journal-2'), Buffer.concat([legacyHeader(2), encodeFrame(records(90, 91))]));
      writeFileSync(join(dir, 'journal-3'), Buffer.concat([legacyHeader(3), encodeFrame(records(4, 6))]));
      const loaded = reloadWindows(dir, clock);
      assert.deepEqual(loaded.store.keys(), [0, 1, 2, 3, 4, 5].map(asset), 'journal-2 is older than the snapshot');
      assert.deepEqual(loaded.warnings, []);
      loaded.store.decideNow(ping(6, 0));
      await loaded.journal.save();
      assert.deepEqual(files(dir), ['snapshot']);
      assert.equal(readFileSync(join(dir, 'snapshot'))[4], FORMAT_VERSION);
      const again = reloadWindows(dir, clock);
      assert.deepEqual(again.store.keys(), [0, 1, 2, 3, 4, 5, 6].map(asset));
      assert.deepEqual(again.warnings, []);
    });

    it('never overwrites a file set aside earlier', async () => {
      await savedState();
      const snapshot = join(dir, 'snapshot');
      for (const text of ['first', 'second', 'third']) {
        writeFileSync(snapshot, `not ours: ${text}`);
        reloadWindows(dir, clock);
      }
      assert.equal(readFileSync(`${snapshot}.bad`, 'utf8'), 'not ours: first');
      assert.equal(readFileSync(`${snapshot}.bad-2`, 'utf8'), 'not ours: second');
      assert.equal(readFileSync(`${snapshot}.bad-3`, 'utf8'), 'not ours: third');
    });

    it('never deletes a journal on the word of a damaged header: a flipped generation byte (30,000 keys in journal-1)', async () => {
      const saved = seenSet(dir, clock, { maxKeys: 100_000 });
      await saved.journal.compact(); // an empty snapshot of generation 1
      const keys = Array.from({ length: 30_000 }, (_, i) => `bin-1:${i}:00`);
      claim(saved.store, keys, 1);
      await saved.journal.save();
      const snapshot = join(dir, 'snapshot');
      const data = readFileSync(snapshot);
      data[8] = 7; // generation 1 becomes 7, past journal-1
      writeFileSync(snapshot, data);
      const loaded = reloadSeen(dir, clock);
      assert.equal(loaded.store.size, 30_000, 'every key of journal-1 is back');
      assert.match(loaded.warnings.join('\n'), /header failing its checksum.*journal-1/);
      assert.ok(existsSync(join(dir, 'journal-1')));
    });

    it('sets aside a journal of a newer format with a warning, keeping the snapshot', async () => {
      await savedState();
      const path = journalFile(dir);
      writeFileSync(path, withVersion(readFileSync(path), FORMAT_VERSION + 1));
      const loaded = reloadWindows(dir, clock);
      assert.deepEqual(loaded.store.keys(), [0, 1, 2, 3, 4].map(asset));
      assert.match(loaded.warnings.join('\n'), new RegExp(`journal-1 was written in format ${FORMAT_VERSION + 1} by a newer release.*set aside as journal-1.bad; the changes it held \\(\\d+ bytes\\) are lost, the rest was loaded`));
      assert.doesNotMatch(loaded.warnings.join('\n'), /empty store/);
      loaded.store.decideNow(ping(8, 0));
      await loaded.journal.save();
      assert.deepEqual(reloadWindows(dir, clock).store.keys(), [0, 1, 2, 3, 4, 8].map(asset));
    });

    it('warns (once a minute at most) when it cannot save, and saves the changes once it can', async () => {
      const blocked = join(root, 'blocked');
      writeFileSync(blocked, 'a file where the directory should be');
      const saved = windows(join(blocked, 'node'), clock);
      saved.store.decideNow(ping(1, 0));
      await saved.journal.save();
      saved.store.decideNow(ping(2, 0));
      await saved.journal.save();
      assert.equal(saved.warnings.length, 1);
      assert.match(saved.warnings[0] as string, /could not save the state to .*blocked/);
      rmSync(blocked);
      mkdirSync(blocked);
      await saved.journal.save();
      assert.deepEqual(reloadWindows(join(blocked, 'node'), clock).store.keys(), [asset(1), asset(2)]);
    });
  });

  describe('what is written', () => {
    /** Bytes appended for `changes` admissions into a set of `size` entries that was just compacted. */
    async function bytesPerSave(size: number, changes: number): Promise<number> {
      const here = join(root, `size-${size}`);
      const saved = windows(here, clock);
      for (let i = 0; i < size; i++) saved.store.decideNow(ping(i, 0));
      await saved.journal.compact();
      await saved.journal.save();
      const before = saved.journal.stats.journalBytes;
      for (let i = 0; i < changes; i++) saved.store.decideNow(ping(size + i, 0));
      await saved.journal.save();
      return saved.journal.stats.journalBytes - before;
    }

    it('grows with the changes, not with the size of the set', async function () {
      this.timeout(20_000);
      const small = await bytesPerSave(100, 100);
      const large = await bytesPerSave(20_000, 100);
      // The same records (ids of one width), compressed: equal within a few bytes.
      assert.ok(Math.abs(large - small) <= small * 0.02, `${large} B for 100 admissions into 20,000 entries, ${small} B into 100`);
      // One record per admission (45 bytes plus the id) in one frame (8 bytes), compressed, after the new journal's header.
      const perRecord = 45 + asset(0).length;
      assert.ok(small > HEADER_BYTES + 8 && small < HEADER_BYTES + 8 + 100 * perRecord / 2, `${small} B`);
    });

    it('writes one record per entry per save, however often it changed meanwhile', async () => {
      const saved = windows(dir, clock);
      saved.store.decideNow(ping(1, 0));
      await saved.journal.save();
      for (let s = 61; s < 61 * 20; s += 61) saved.store.decideNow(ping(1, s));
      await saved.journal.save();
      const data = readFileSync(journalFile(dir));
      const scan = readFrames(data);
      assert.equal(scan.payloads.length, 2, 'a frame per save');
      const restored: unknown[] = [];
      windowCodec.apply(unpackRecords(scan.payloads[1] as Buffer), { restore: (entry) => restored.push({ ...entry }), forget: () => assert.fail(), clearAll: () => assert.fail() }, T0);
      assert.equal(restored.length, 1);
      assert.equal((restored[0] as { t: number }).t, T0 + 61 * 19 * 1000, 'its last value');
    });
  });

  describe('the timer, close and remove', () => {
    it('saves every interval while something changed, and close() saves the rest', async () => {
      const saved = windows(dir, clock);
      saved.journal.start(20, (text) => saved.warnings.push(text));
      saved.store.decideNow(ping(1, 0));
      const deadline = Date.now() + 2000;
      while (!existsSync(dir) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 5));
      assert.ok(existsSync(dir), 'saved by the timer');
      saved.store.decideNow(ping(2, 0));
      await saved.journal.close();
      assert.deepEqual(reloadWindows(dir, clock).store.keys(), [asset(1), asset(2)]);
      // Stopped: a later change is not saved by any timer.
      saved.store.decideNow(ping(3, 0));
      await new Promise((resolve) => setTimeout(resolve, 60));
      assert.deepEqual(reloadWindows(dir, clock).store.keys(), [asset(1), asset(2)]);
    });

    it('remove() deletes the saved state, and nothing is written after it', async () => {
      const saved = windows(dir, clock);
      saved.store.decideNow(ping(1, 0));
      await saved.journal.compact();
      await saved.journal.remove();
      assert.equal(existsSync(dir), false);
      saved.store.decideNow(ping(2, 0));
      await saved.journal.save();
      await saved.journal.compact();
      assert.equal(existsSync(dir), false);
    });
  });
});

function flip(data: Buffer, at: number): Buffer {
  const copy = Buffer.from(data);
  copy[at] = (copy[at] as number) ^ 0xff;
  return copy;
}

function withVersion(data: Buffer, version: number): Buffer {
  const copy = Buffer.from(data);
  copy[4] = version;
  return copy;
}

