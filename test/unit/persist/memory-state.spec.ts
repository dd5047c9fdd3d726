/**
 * Memory stores held by node id (node-red/memory-state): kept across a
 * redeploy, saved across a restart, reconfigured when thresholds change,
 * their saving turned off, on or moved, and removed with their files when
 * the node is deleted. Each test uses its own temporary directory; "a
 * restart" is forgetHeldStores(), as a fresh process holds nothing.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'fs';
import { tmpdir } from 'os';
import { join } from 'path';
import type { Ping } from '../../../src/core/window/sliding-window';
import type { NodeAPI } from '../../../src/node-red/api';
import {
  dropMemoryStore,
  fileNameOf,
  legacyFileNameOf,
  forgetHeldStores,
  holdMemoryStore,
  persistenceOf,
  releaseMemoryStore,
  type HeldStore,
  type Persistence,
} from '../../../src/node-red/memory-state';
import { seenCodec, windowCodec } from '../../../src/persist/codecs';
import { MemorySeenStore } from '../../../src/stores/memory-seen-store';
import { MemoryWindowStore, type MemoryWindowSettings } from '../../../src/stores/memory-window-store';

// The real clock: a restart loads at Date.now(), dropping what expired by then.
const T0 = Date.now();
const WINDOW: MemoryWindowSettings = { minSeconds: 60, minMetres: 25, ttlSeconds: 3600, maxAssets: 1000 };
const TYPE = 'sliding-window-dedup';
let now = T0;

const ping = (asset: string, seconds: number): Ping => ({ assetId: asset, t: T0 + seconds * 1000, lat: 52.52, lon: 13.4 });

async function until(predicate: () => boolean, what: string, ms = 3000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!predicate()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

describe('node-red/memory-state', function () {
  let root: string;
  let warnings: string[];

  /** The store a sliding-window node with this id and these settings gets on (re)deploy. */
  function hold(id: string, persistence: Persistence, settings: MemoryWindowSettings = WINDOW, reused: MemoryWindowStore[] = []): HeldStore<MemoryWindowStore> {
    return holdMemoryStore(
      id,
      TYPE,
      persistence,
      windowCodec,
      () => new MemoryWindowStore(settings, () => now),
      (store) => {
        reused.push(store);
        store.reconfigure(settings);
      },
      (text) => warnings.push(text),
    );
  }

  const saving = (id: string, intervalMs = 10_000): Persistence => ({ dir: join(root, fileNameOf(id)), intervalMs });

  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), 'dedup-memory-state-test-'));
    warnings = [];
    now = T0;
  });

  afterEach(() => {
    forgetHeldStores();
    rmSync(root, { recursive: true, force: true });
  });

  it('keeps a node’s store, the same object, across a redeploy, and hands it to reuse()', async () => {
    const first = hold('n1', saving('n1'));
    first.store.decideNow(ping('veh-1', 0));
    await releaseMemoryStore('n1', false);
    const reused: MemoryWindowStore[] = [];
    const second = hold('n1', saving('n1'), WINDOW, reused);
    assert.equal(second.store, first.store);
    assert.deepEqual(reused, [first.store]);
    assert.equal(second.store.decideNow(ping('veh-1', 4)).reason, 'window', 'the baseline survived the deploy');
    assert.equal(second.journal, first.journal, 'the same journal goes on');
  });

  it('keeps the state with changed thresholds, and applies them (a lower cap at once)', async () => {
    const first = hold('n1', saving('n1'));
    for (const asset of ['a', 'b', 'c']) first.store.decideNow(ping(asset, 0));
    await releaseMemoryStore('n1', false);
    const second = hold('n1', saving('n1'), { ...WINDOW, minSeconds: 3, maxAssets: 2 });
    assert.deepEqual(second.store.keys(), ['b', 'c']);
    assert.equal(second.store.decideNow(ping('c', 4)).reason, 'elapsed', 'the new minSeconds decides against the kept baseline');
  });

  it('saves on close and loads the state back after a restart', async () => {
    const first = hold('n1', saving('n1'));
    first.store.decideNow(ping('veh-1', 0));
    first.store.decideNow(ping('veh-2', 0));
    await releaseMemoryStore('n1', false);
    forgetHeldStores();
    const restarted = hold('n1', saving('n1'));
    assert.notEqual(restarted.store, first.store);
    assert.deepEqual(restarted.store.keys(), ['veh-1', 'veh-2']);
    assert.equal(restarted.store.decideNow(ping('veh-1', 4)).reason, 'window');
    assert.deepEqual(warnings, []);
  });

  it('gives a node of another type under the same id a new store', async () => {
    const first = hold('n1', saving('n1'));
    first.store.decideNow(ping('veh-1', 0));
    await releaseMemoryStore('n1', false);
    const seen = holdMemoryStore(
      'n1',
      'sensor-reconnect-dedup',
      { dir: undefined, intervalMs: 0 },
      seenCodec,
      () => new MemorySeenStore({ ttlSeconds: 60, maxKeys: 10, confirm: false, leaseSeconds: 30, keyMode: 'reading' }),
      () => assert.fail('not reused'),
      (text) => warnings.push(text),
    );
    assert.ok(seen.store instanceof MemorySeenStore);
  });

  it('removes the store and its files when the node is deleted', async () => {
    const first = hold('n1', saving('n1'));
    first.store.decideNow(ping('veh-1', 0));
    await releaseMemoryStore('n1', false);
    assert.ok(existsSync(join(root, 'n1')));
    await releaseMemoryStore('n1', true);
    assert.equal(existsSync(join(root, 'n1')), false);
    const again = hold('n1', saving('n1'));
    assert.notEqual(again.store, first.store);
    assert.equal(again.store.size, 0);
  });

  it('drops the store and its files when the node moves to the Redis store', async () => {
    const first = hold('n1', saving('n1'));
    first.store.decideNow(ping('veh-1', 0));
    await releaseMemoryStore('n1', false);
    await dropMemoryStore('n1');
    assert.equal(existsSync(join(root, 'n1')), false);
    await dropMemoryStore('n1'); // nothing held: nothing happens
    forgetHeldStores();
    assert.equal(hold('n1', saving('n1')).store.size, 0);
  });

  it('removes a state saved earlier when saving is off (Save every 0), and keeps none', async () => {
    const first = hold('n1', saving('n1'));
    first.store.decideNow(ping('veh-1', 0));
    await releaseMemoryStore('n1', false);
    forgetHeldStores();
    const off = hold('n1', saving('n1', 0));
    assert.equal(off.journal, undefined);
    assert.equal(off.store.size, 0, 'not loaded: saving is off');
    await until(() => !existsSync(join(root, 'n1')), 'the stale state is removed');
    off.store.decideNow(ping('veh-2', 0));
    await releaseMemoryStore('n1', false);
    assert.equal(existsSync(join(root, 'n1')), false);
  });

  it('turns saving off and on again for a kept store: files removed, then all of the state saved at once', async () => {
    const first = hold('n1', saving('n1'));
    for (const asset of ['a', 'b']) first.store.decideNow(ping(asset, 0));
    await releaseMemoryStore('n1', false);
    const off = hold('n1', saving('n1', 0));
    assert.equal(off.store, first.store);
    assert.equal(off.journal, undefined);
    await until(() => !existsSync(join(root, 'n1')), 'the saved state is removed');
    off.store.decideNow(ping('c', 0));
    await releaseMemoryStore('n1', false);
    const on = hold('n1', saving('n1'));
    assert.equal(on.store, first.store);
    assert.ok(on.journal);
    await until(() => existsSync(join(root, 'n1', 'snapshot')), 'a snapshot of the whole store is written');
    on.store.decideNow(ping('d', 0));
    await releaseMemoryStore('n1', false);
    forgetHeldStores();
    assert.deepEqual(hold('n1', saving('n1')).store.keys(), ['a', 'b', 'c', 'd']);
  });

  it('keeps the saved state when saving is turned off and on again before the first removal has finished', async () => {
    const first = hold('n1', saving('n1'));
    for (const asset of ['a', 'b']) first.store.decideNow(ping(asset, 0));
    await releaseMemoryStore('n1', false);
    hold('n1', saving('n1', 0));
    await releaseMemoryStore('n1', false);
    hold('n1', saving('n1'));
    await releaseMemoryStore('n1', false);
    assert.deepEqual(warnings, []);
    forgetHeldStores();
    assert.deepEqual(hold('n1', saving('n1')).store.keys(), ['a', 'b']);
  });

  it('moves the saved state when its directory changes (dedupStateDir), leaving nothing behind', async () => {
    const first = hold('n1', saving('n1'));
    first.store.decideNow(ping('a', 0));
    await releaseMemoryStore('n1', false);
    const elsewhere: Persistence = { dir: join(root, 'elsewhere', 'n1'), intervalMs: 10_000 };
    const moved = hold('n1', elsewhere);
    assert.equal(moved.store, first.store);
    await until(() => existsSync(join(root, 'elsewhere', 'n1', 'snapshot')) && !existsSync(join(root, 'n1')), 'the state moved');
    await releaseMemoryStore('n1', false);
    forgetHeldStores();
    assert.deepEqual(hold('n1', elsewhere).store.keys(), ['a']);
  });

  it('follows the new interval after a redeploy changed it', async () => {
    const first = hold('n1', saving('n1', 60_000));
    await releaseMemoryStore('n1', false);
    const faster = hold('n1', saving('n1', 20));
    faster.store.decideNow(ping('a', 0));
    await until(() => existsSync(join(root, 'n1')), 'saved by the 20 ms timer');
    assert.equal(faster.store, first.store);
  });

  it('starts empty with a warning, never throwing, when the saved state cannot be read at all', () => {
    const dir = join(root, 'n1');
    mkdirSync(join(dir, 'snapshot'), { recursive: true }); // a directory where the file should be
    let held: HeldStore<MemoryWindowStore> | undefined;
    assert.doesNotThrow(() => {
      held = hold('n1', saving('n1'));
    });
    assert.equal(held?.store.size, 0);
    assert.equal(warnings.length, 1);
    assert.match(warnings[0] as string, /could not read the saved state in .*n1.*starting empty/);
  });

  it('starts empty with a warning when the saved state is damaged', () => {
    const dir = join(root, 'n1');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'snapshot'), 'garbage that is long enough');
    const held = hold('n1', saving('n1'));
    assert.equal(held.store.size, 0);
    assert.equal(warnings.length, 1);
    assert.match(warnings[0] as string, /not a saved dedup state/);
    assert.ok(readdirSync(dir).includes('snapshot.bad'));
  });

  it('loads a state the previous release saved under its old directory name, moving it to the new one', async () => {
    const id = '3f2a9c1b.7e4d5a';
    const legacyDir = join(root, legacyFileNameOf(id));
    const old = hold(id, { dir: legacyDir, intervalMs: 10_000 });
    old.store.decideNow(ping('a', 0));
    await releaseMemoryStore(id, false);
    forgetHeldStores();
    const persistence: Persistence = { dir: join(root, fileNameOf(id)), legacyDir, intervalMs: 10_000 };
    const loaded = hold(id, persistence);
    assert.deepEqual(loaded.store.keys(), ['a']);
    assert.deepEqual(readdirSync(root), [fileNameOf(id)], 'moved, not copied');
    assert.deepEqual(warnings, []);
    // Once moved, a directory under the old name (another id's, of old) is left alone.
    mkdirSync(legacyDir);
    forgetHeldStores();
    assert.deepEqual(hold(id, persistence).store.keys(), ['a']);
    assert.ok(existsSync(legacyDir));
  });

  it('tells the node when saving fails and when it works again, and a redeployed node at once', async () => {
    const dir = join(root, 'n1');
    writeFileSync(dir, 'a file where the directory should be');
    const causes: (string | undefined)[] = [];
    const first = holdMemoryStore('n1', TYPE, saving('n1'), windowCodec, () => new MemoryWindowStore(WINDOW, () => now), () => undefined, (text) => warnings.push(text), (cause) => causes.push(cause));
    first.store.decideNow(ping('a', 0));
    await first.journal?.save();
    assert.deepEqual(causes, ['EEXIST']);
    const later: (string | undefined)[] = [];
    holdMemoryStore('n1', TYPE, saving('n1'), windowCodec, () => new MemoryWindowStore(WINDOW, () => now), () => undefined, (text) => warnings.push(text), (cause) => later.push(cause));
    assert.deepEqual(later, ['EEXIST'], 'the new node object is told at once');
    rmSync(dir);
    await first.journal?.save();
    assert.deepEqual(later, ['EEXIST', undefined]);
    assert.match(warnings.join('\n'), /works again/);
  });

  describe('persistenceOf and fileNameOf', () => {
    const red = (settings: Record<string, unknown>): NodeAPI => ({ settings }) as unknown as NodeAPI;

    it('saves under <userDir>/dedup-state/<node id> by default, every persistSeconds', () => {
      assert.deepEqual(persistenceOf(red({ userDir: '/home/nr/.node-red' }), 'a1b2c3', 10), { dir: join('/home/nr/.node-red', 'dedup-state', 'a1b2c3'), intervalMs: 10_000 });
    });

    it('saves under dedupStateDir when set, and nowhere when it is false or there is no user directory', () => {
      assert.equal(persistenceOf(red({ userDir: '/u', dedupStateDir: '/var/lib/dedup' }), 'n', 5).dir, join('/var/lib/dedup', 'n'));
      assert.equal(persistenceOf(red({ userDir: '/u', dedupStateDir: '  ' }), 'n', 5).dir, join('/u', 'dedup-state', 'n'), 'blank: the default');
      assert.equal(persistenceOf(red({ userDir: '/u', dedupStateDir: false }), 'n', 5).dir, undefined);
      assert.equal(persistenceOf(red({}), 'n', 5).dir, undefined);
      assert.equal(persistenceOf(red({ userDir: '/u' }), 'n', 0).intervalMs, 0);
    });

    it('uses a Node-RED id as it is and encodes any other, so that no id can leave the directory', () => {
      assert.equal(fileNameOf('a1b2c3d4e5f60718'), 'a1b2c3d4e5f60718');
      assert.equal(fileNameOf('3f2a9c1b.7e4d5a'), '3f2a9c1b.7e4d5a', 'the older Node-RED ids too');
      for (const id of ['../../etc', 'a/b', '.', '..', 'x y', 'ü', '', 'node_1-x', 'ABC', 'con', 'nul.txt', 'a.', '-a', 'a\\b', 'c:']) {
        const name = fileNameOf(id);
        assert.match(name, /^_[a-z0-9-]{0,32}_[0-9a-f]{32}$/, id);
      }
    });

    it('gives two ids two names: ids the previous release mixed up, ids differing only in case, long ids', () => {
      const ids = ['é', 'xc3a9', 'abc', 'ABC', 'Abc', 'a/b', 'a.b', 'a_b', 'a-b', `${'é'.repeat(60)}1`, `${'é'.repeat(60)}2`, 'x'.repeat(64), 'x'.repeat(65), 'x'.repeat(66)];
      const names = ids.map(fileNameOf);
      assert.equal(new Set(names).size, ids.length, names.join('\n'));
      // Compared as a case-insensitive file system (FAT, exFAT, NTFS, APFS by default) compares them.
      assert.equal(new Set(names.map((n) => n.toLowerCase())).size, ids.length);
      for (const name of names) assert.ok(Buffer.byteLength(name) <= 66, name);
      // What the previous release did with them.
      assert.equal(legacyFileNameOf('é'), legacyFileNameOf('xc3a9'));
      assert.equal(legacyFileNameOf(`${'é'.repeat(60)}1`), legacyFileNameOf(`${'é'.repeat(60)}2`));
    });

    it('names the previous release\'s directory when it differs, to move it', () => {
      assert.deepEqual(persistenceOf(red({ userDir: '/u' }), 'Node_1', 5), {
        dir: join('/u', 'dedup-state', fileNameOf('Node_1')),
        legacyDir: join('/u', 'dedup-state', 'Node_1'),
        intervalMs: 5000,
      });
      assert.equal(persistenceOf(red({ userDir: '/u' }), 'a1b2c3', 5).legacyDir, undefined);
      assert.equal(persistenceOf(red({ userDir: '/u' }), '3f2a9c1b.7e4d5a', 5).legacyDir, join('/u', 'dedup-state', `x${Buffer.from('3f2a9c1b.7e4d5a').toString('hex')}`));
    });
  });
});
