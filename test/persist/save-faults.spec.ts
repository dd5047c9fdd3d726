/**
 * Saving with faults injected (issue 19): ENOSPC, EIO and short writes at
 * every step of a save and of a compaction, and a disk of a fixed size that
 * fills up and frees again. Through the real StateJournal and stores, on a
 * temporary directory, with the file operations wrapped (persist/save-files):
 * whatever fails, nothing saved before is damaged, what failed is saved by
 * the next save that works, and a load afterwards has every key, without a
 * word of damage.
 */
import assert from 'node:assert/strict';
import { cpSync, mkdtempSync, readdirSync, rmSync, statSync } from 'fs';
import { tmpdir } from 'os';
import { join } from 'path';
import { seenCodec, windowCodec } from '../../src/persist/codecs';
import { realFiles, type SaveFile, type SaveFiles } from '../../src/persist/save-files';
import { StateJournal, WARN_EVERY_MS } from '../../src/persist/state-journal';
import { MemorySeenStore } from '../../src/stores/memory-seen-store';
import { MemoryWindowStore } from '../../src/stores/memory-window-store';

const T0 = 1_780_000_000_000;
type Fault = 'ENOSPC' | 'EIO' | 'short';
type Op = 'mkdir' | 'open' | 'size' | 'write' | 'truncate' | 'sync' | 'close' | 'rename' | 'unlink';

function systemError(code: string): Error {
  return Object.assign(new Error(`${code}: injected`), { code });
}

/**
 * The real file operations, counting each call; the call numbered `at`
 * fails with `fault` (a short write writes half and returns; the write after
 * it then fails with ENOSPC, as a full disk does).
 */
class FaultyFiles implements SaveFiles {
  calls: Op[] = [];
  at = -1;
  fault: Fault = 'ENOSPC';
  private shortPending = false;

  private step(op: Op): Fault | undefined {
    this.calls.push(op);
    if (op === 'write' && this.shortPending) {
      this.shortPending = false;
      return 'ENOSPC';
    }
    if (this.calls.length - 1 !== this.at) return undefined;
    if (this.fault === 'short' && op !== 'write') return 'ENOSPC';
    return this.fault;
  }

  private fail(op: Op): void {
    const fault = this.step(op);
    if (fault !== undefined) throw systemError(fault);
  }

  mkdir(dir: string): void {
    this.fail('mkdir');
    realFiles.mkdir(dir);
  }

  async open(path: string, mode: 'update' | 'replace'): Promise<SaveFile> {
    this.fail('open');
    const file = await realFiles.open(path, mode);
    return {
      size: async () => {
        this.fail('size');
        return file.size();
      },
      write: async (data, position) => {
        const fault = this.step('write');
        if (fault === 'short') {
          this.shortPending = true;
          return file.write(data.subarray(0, Math.max(1, data.length >> 1)), position);
        }
        if (fault !== undefined) throw systemError(fault);
        return file.write(data, position);
      },
      truncate: async (length) => {
        this.fail('truncate');
        return file.truncate(length);
      },
      sync: async () => {
        this.fail('sync');
        return file.sync();
      },
      close: async () => {
        // The descriptor is closed whatever is reported, as the system does.
        await file.close();
        this.fail('close');
      },
    };
  }

  async rename(from: string, to: string): Promise<void> {
    this.fail('rename');
    return realFiles.rename(from, to);
  }

  async unlink(path: string): Promise<void> {
    this.fail('unlink');
    return realFiles.unlink(path);
  }
}

/** The real file operations on a disk of `capacity` bytes (every file in dir counted): writes past it stop short, then fail with ENOSPC. */
class SmallDisk implements SaveFiles {
  constructor(
    private readonly dir: string,
    public capacity: number,
  ) {}

  used(): number {
    let total = 0;
    try {
      for (const name of readdirSync(this.dir)) total += statSync(join(this.dir, name)).size;
    } catch {
      return 0;
    }
    return total;
  }

  mkdir(dir: string): void {
    realFiles.mkdir(dir);
  }

  async open(path: string, mode: 'update' | 'replace'): Promise<SaveFile> {
    const file = await realFiles.open(path, mode);
    return {
      ...file,
      write: async (data, position) => {
        const size = await file.size();
        const grows = Math.max(0, position + data.length - size);
        const room = this.capacity - this.used();
        if (grows <= room) return file.write(data, position);
        const fits = Math.max(0, size - position) + Math.max(0, room);
        if (fits <= 0) throw systemError('ENOSPC');
        return file.write(data.subarray(0, fits), position);
      },
    };
  }

  rename = realFiles.rename;
  unlink = realFiles.unlink;
}

interface Rig<S> {
  store: S;
  journal: StateJournal<unknown>;
  warnings: string[];
  causes: (string | undefined)[];
}

const asset = (i: number): string => `veh-${String(i).padStart(6, '0')}`;

function windows(dir: string, files: SaveFiles, clock: { ms: number }, maxAssets = 100_000): Rig<MemoryWindowStore> {
  const store = new MemoryWindowStore({ minSeconds: 60, minMetres: 25, ttlSeconds: 3600, maxAssets }, () => T0);
  const warnings: string[] = [];
  const causes: (string | undefined)[] = [];
  const journal = new StateJournal(
    windowCodec,
    { entry: (key) => store.entry(key), keys: () => store.keys(), limit: () => store.maxEntries, target: store },
    { dir, intervalMs: 10_000, warn: (text) => warnings.push(text), saving: (cause) => causes.push(cause), files, now: () => clock.ms },
  );
  store.onChange = (key) => journal.changed(key);
  store.onClear = () => journal.clearedAll();
  return { store, journal: journal as StateJournal<unknown>, warnings, causes };
}

function admit(store: MemoryWindowStore, from: number, to: number): void {
  for (let i = from; i < to; i++) store.decideNow({ assetId: asset(i), t: T0, lat: 52.5, lon: 13.4 + i * 1e-4 });
}

/** What a restart loads: the keys, and the warnings it gave. */
function reload(dir: string, maxAssets = 100_000): { keys: string[]; warnings: string[] } {
  const fresh = windows(dir, realFiles, { ms: T0 }, maxAssets);
  fresh.journal.load(T0);
  return { keys: fresh.store.keys(), warnings: fresh.warnings };
}

const range = (from: number, to: number): string[] => Array.from({ length: to - from }, (_, i) => asset(from + i));

describe('persist: saving with faults injected', function () {
  this.timeout(20_000);
  let root: string;
  let dir: string;
  const clock = { ms: T0 };

  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), 'dedup-save-faults-'));
    dir = join(root, 'node');
    clock.ms = T0;
  });

  afterEach(() => {
    rmSync(root, { recursive: true, force: true });
  });

  /**
   * A saved state (snapshot of 0-4, journal of 5-6), then `work` with the
   * fault at call `at`; the fault gone, 20-21 changed and saved again.
   */
  async function withFault(work: 'save' | 'compact', at: number, fault: Fault): Promise<{ calls: Op[]; rig: Rig<MemoryWindowStore> }> {
    const files = new FaultyFiles();
    const rig = windows(dir, files, clock);
    admit(rig.store, 0, 5);
    await rig.journal.compact();
    admit(rig.store, 5, 7);
    await rig.journal.save();
    files.calls = [];
    files.at = at;
    files.fault = fault;
    admit(rig.store, 10, 13);
    await rig.journal[work]();
    const calls = files.calls;
    // Right after the failure (a crash now): nothing saved before is damaged.
    // Loaded from a copy, as a load cuts a torn tail off, which would hide one from what follows.
    const copy = join(root, `crash-${at}`);
    cpSync(dir, copy, { recursive: true });
    const crash = reload(copy);
    rmSync(copy, { recursive: true, force: true });
    for (const key of range(0, 7)) assert.ok(crash.keys.includes(key), `${work} failing at call ${at} (${calls[at]}, ${fault}): ${key} kept`);
    assert.deepEqual(crash.warnings.filter((w) => !/ends in a frame/.test(w) || !/journal/.test(w)), [], `${work} at ${at}: no damage but a torn tail at most`);
    files.at = -1;
    admit(rig.store, 20, 22);
    await rig.journal.save();
    return { calls, rig };
  }

  for (const work of ['save', 'compact'] as const) {
    for (const fault of ['ENOSPC', 'EIO', 'short'] as const) {
      it(`${work}: ${fault} at every step leaves nothing torn, and what failed is saved by the next save`, async () => {
        // How many calls the work makes when nothing fails.
        const { calls } = await withFault(work, -1, fault);
        rmSync(dir, { recursive: true, force: true });
        assert.ok(calls.length >= (work === 'save' ? 5 : 8), calls.join(' '));
        if (fault === 'short') assert.ok(calls.includes('write'));
        for (let at = 0; at < calls.length; at++) {
          if (fault === 'short' && calls[at] !== 'write') continue;
          const { rig } = await withFault(work, at, fault);
          const loaded = reload(dir);
          assert.deepEqual(loaded.keys, [...range(0, 7), ...range(10, 13), ...range(20, 22)], `${work} failing at call ${at} (${calls[at]}, ${fault})`);
          assert.deepEqual(loaded.warnings, [], `${work} at ${at}`);
          assert.equal(rig.journal.notSaving, undefined, 'saving again');
          assert.equal(rig.journal.pending, 0);
          rmSync(dir, { recursive: true, force: true });
        }
      });
    }
  }

  it('a failed save tells its cause, keeps it pending, and says when it works again', async () => {
    const files = new FaultyFiles();
    const rig = windows(dir, files, clock);
    admit(rig.store, 0, 3);
    files.at = 0;
    await rig.journal.save();
    assert.equal(rig.journal.notSaving, 'ENOSPC');
    assert.deepEqual(rig.causes, ['ENOSPC']);
    assert.equal(rig.journal.pending, 3);
    await rig.journal.save();
    assert.deepEqual(rig.causes, ['ENOSPC', undefined]);
    assert.equal(rig.journal.pending, 0);
    assert.deepEqual(reload(dir).keys, range(0, 3));
  });

  it('logs each cause at most once a minute (on its clock), a new cause at once', async () => {
    const files = new FaultyFiles();
    const rig = windows(dir, files, clock);
    const failOnce = async (fault: Fault, advance: number): Promise<void> => {
      clock.ms += advance;
      files.calls = [];
      files.at = 0;
      files.fault = fault;
      admit(rig.store, 0, 1);
      await rig.journal.save();
    };
    await failOnce('ENOSPC', 0);
    await failOnce('ENOSPC', 30_000);
    await failOnce('ENOSPC', WARN_EVERY_MS - 30_000 - 1);
    assert.equal(rig.warnings.length, 1, rig.warnings.join('\n'));
    await failOnce('EIO', 1);
    assert.equal(rig.warnings.length, 2);
    await failOnce('ENOSPC', 1);
    assert.equal(rig.warnings.length, 3, 'a minute after the first ENOSPC');
    assert.match(rig.warnings[0] as string, /could not save the state to .*node \(ENOSPC: injected\); it stays pending and is saved once saving works again/);
    assert.match(rig.warnings[1] as string, /EIO/);
  });

  it('never has more keys pending than the store\'s cap while saves fail: the next save that works writes a snapshot', async () => {
    const files = new FaultyFiles();
    const rig = windows(dir, files, clock, 100);
    for (let round = 0; round < 10; round++) {
      files.calls = [];
      files.at = 0;
      admit(rig.store, round * 100, round * 100 + 100);
      assert.ok(rig.journal.pending <= 100, `${rig.journal.pending} pending`);
      await rig.journal.save();
      assert.ok(rig.journal.pending <= 100, `${rig.journal.pending} pending after a failed save`);
    }
    files.at = -1;
    await rig.journal.save();
    assert.equal(rig.journal.pending, 0);
    assert.deepEqual(reload(dir, 100).keys, range(900, 1000), 'the store as it is: its last 100 keys');
    assert.deepEqual(readdirSync(dir).sort(), ['snapshot']);
  });

  it('a disk that fills up and frees again: 3,000 saved, 5,000 while full, 2,000 after: all 10,000 load, without a word of damage', async () => {
    const disk = new SmallDisk(join(root, 'node'), 0);
    const rig = windows(dir, disk, clock);
    admit(rig.store, 0, 3000);
    disk.capacity = 1 << 30;
    await rig.journal.save();
    disk.capacity = disk.used() + 10_000; // room for part of the next save only
    admit(rig.store, 3000, 8000);
    await rig.journal.save();
    assert.equal(rig.journal.notSaving, 'ENOSPC');
    assert.equal(rig.journal.pending, 5000);
    assert.equal(statSync(join(dir, 'journal-0')).size, disk.used(), 'cut back: nothing after the last whole frame');
    const duringFull = reload(dir);
    assert.deepEqual(duringFull.keys, range(0, 3000));
    assert.deepEqual(duringFull.warnings, []);
    disk.capacity = 1 << 30;
    admit(rig.store, 8000, 10_000);
    await rig.journal.save();
    assert.equal(rig.journal.notSaving, undefined);
    const loaded = reload(dir);
    assert.equal(loaded.keys.length, 10_000);
    assert.deepEqual(loaded.keys, range(0, 10_000));
    assert.deepEqual(loaded.warnings, []);
  });

  it('loads a journal that a save left shorter than its header (the disk filled on its first bytes) as nothing, without a warning', async () => {
    const files = new FaultyFiles();
    const rig = windows(dir, files, clock);
    admit(rig.store, 0, 3);
    files.fault = 'short';
    files.at = 3; // mkdir, open, size, then the header's write
    await rig.journal.save();
    assert.equal(rig.journal.notSaving, 'ENOSPC');
    assert.deepEqual(reload(dir), { keys: [], warnings: [] });
  });
});

// The seen-set's codec goes through the same journal; one disk-full round for it.
describe('persist: a seen-set on a disk that fills', function () {
  it('keeps every key through a full disk', async () => {
    const root = mkdtempSync(join(tmpdir(), 'dedup-save-faults-seen-'));
    try {
      const dir = join(root, 'node');
      const disk = new SmallDisk(dir, 1 << 30);
      const store = new MemorySeenStore({ ttlSeconds: 3600, maxKeys: 100_000, confirm: false, leaseSeconds: 30, keyMode: 'reading' }, () => T0);
      const journal = new StateJournal(seenCodec, { entry: (k) => store.entry(k), keys: () => store.keys(), limit: () => store.maxEntries, target: store }, { dir, intervalMs: 10_000, warn: () => undefined, files: disk });
      store.onChange = (key) => journal.changed(key);
      const claim = (from: number, to: number): void => {
        const claims = Array.from({ length: to - from }, (_, i) => ({ key: `bin-1:${from + i}:00`, group: 'bin-1' }));
        store.claim({ claims, token: 1 }, { value: () => undefined, error: (e) => assert.fail(String(e)) }, undefined);
      };
      claim(0, 100);
      await journal.save();
      disk.capacity = disk.used() + 100; // less than the next save needs, even compressed
      claim(100, 300);
      await journal.save();
      assert.equal(journal.notSaving, 'ENOSPC');
      disk.capacity = 1 << 30;
      await journal.save();
      const again = new MemorySeenStore({ ttlSeconds: 3600, maxKeys: 100_000, confirm: false, leaseSeconds: 30, keyMode: 'reading' }, () => T0);
      const warnings: string[] = [];
      new StateJournal(seenCodec, { entry: (k) => again.entry(k), keys: () => again.keys(), target: again }, { dir, intervalMs: 10_000, warn: (t) => warnings.push(t) }).load(T0);
      assert.equal(again.size, 300);
      assert.deepEqual(warnings, []);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
