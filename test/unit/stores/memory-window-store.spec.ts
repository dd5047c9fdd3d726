/**
 * The memory window store's own side of issue 29's state: the jump
 * candidate is kept with the record, told to the journal when it changes
 * (so the saved state keeps it), read back by entry(), and put back by
 * restore(); a value-mode baseline keeps its value. The decisions
 * themselves are the contract suite's (test/contract).
 */
import assert from 'node:assert/strict';
import type { Ping } from '../../../src/core/window/sliding-window';
import { RecordWriter, windowCodec } from '../../../src/persist/codecs';
import { MemoryWindowStore, type MemoryWindowSettings, type WindowEntry } from '../../../src/stores/memory-window-store';

const T0 = 1_780_000_000_000;
const SETTINGS: MemoryWindowSettings = { minSeconds: 60, minMetres: 25, ttlSeconds: 3600, maxAssets: 100, maxSpeedKmh: 150 };
/** Metres north, as degrees of latitude. */
const north = (metres: number): number => metres / ((6_371_008.8 * Math.PI) / 180);
const at = (seconds: number, metresNorth: number, assetId = 'veh'): Ping => ({ assetId, t: T0 + seconds * 1000, lat: 52.52 + north(metresNorth), lon: 13.4 });

describe('stores/memory-window-store: the jump candidate and the value (issue 29)', () => {
  it('keeps the candidate with the record and tells the journal when it changes, and only then', () => {
    const store = new MemoryWindowStore(SETTINGS, () => T0);
    const changed: string[] = [];
    store.onChange = (id) => changed.push(id);
    const reason = (p: Ping): string => {
      changed.length = 0;
      return store.decideNow(p).reason;
    };
    assert.equal(reason(at(0, 0)), 'first');
    assert.deepEqual(changed, ['veh']);
    assert.equal(reason(at(10, 0)), 'window');
    assert.deepEqual(changed, [], 'a plain suppression writes nothing, as before');
    assert.equal(reason(at(20, 5000)), 'jump');
    assert.deepEqual(changed, ['veh'], 'a new candidate is saved');
    const entry = store.entry('veh') as WindowEntry;
    assert.equal(entry.candidate.count, 1);
    assert.equal(entry.candidate.t, T0 + 20_000);
    assert.equal(entry.t, T0, 'the baseline is still the first ping');
    assert.equal(entry.suppressed, 2);
    assert.equal(reason(at(30, 5100)), 'jump');
    assert.equal(store.entry('veh')?.candidate.count, 2);
    assert.equal(reason(at(31, 10)), 'window');
    assert.deepEqual(changed, ['veh'], 'the candidate cleared is saved too');
    assert.equal(store.entry('veh')?.candidate.count, 0);
    assert.equal(reason(at(32, 12)), 'window');
    assert.deepEqual(changed, [], 'no candidate, nothing to save');
  });

  it('puts a saved candidate back: the relocation goes on where it stopped, after a restart', () => {
    const before = new MemoryWindowStore(SETTINGS, () => T0);
    for (const p of [at(0, 0), at(10, 5000), at(20, 5150)]) before.decideNow(p);
    const out = new RecordWriter();
    windowCodec.write(out, 'veh', before.entryView('veh'));
    const after = new MemoryWindowStore(SETTINGS, () => T0);
    windowCodec.apply(out.take(), after, T0);
    assert.deepEqual(after.entry('veh'), before.entry('veh'));
    assert.equal(after.decideNow(at(30, 5300)).reason, 'relocated', 'the third agreeing jump');
    // A store that had not kept it would have counted one.
    const forgetful = new MemoryWindowStore(SETTINGS, () => T0);
    forgetful.restore({ ...(before.entry('veh') as WindowEntry), candidate: { t: 0, lat: 0, lon: 0, count: 0 } }, T0);
    assert.equal(forgetful.decideNow(at(30, 5300)).reason, 'jump');
  });

  it('starts a record that a reused slot had held with no candidate', () => {
    const store = new MemoryWindowStore({ ...SETTINGS, maxAssets: 1 }, () => T0);
    store.decideNow(at(0, 0, 'a'));
    store.decideNow(at(10, 5000, 'a'));
    assert.equal(store.entry('a')?.candidate.count, 1);
    store.decideNow(at(0, 0, 'b'));
    assert.equal(store.entry('a'), undefined, 'a is gone past the cap');
    assert.equal(store.entry('b')?.candidate.count, 0, 'b does not inherit a\'s candidate');
  });

  it('keeps a value-mode baseline\'s value exactly, through the saved state', () => {
    const store = new MemoryWindowStore({ ...SETTINGS, mode: 'value', deadband: 5 }, () => T0);
    store.decideNow({ assetId: 'bin', t: T0, lat: 0, lon: 0, value: 0.1 + 0.2 });
    assert.equal(store.entry('bin')?.value, 0.1 + 0.2);
    const out = new RecordWriter();
    windowCodec.write(out, 'bin', store.entryView('bin'));
    const after = new MemoryWindowStore({ ...SETTINGS, mode: 'value', deadband: 5 }, () => T0);
    windowCodec.apply(out.take(), after, T0);
    assert.equal(after.entry('bin')?.value, 0.1 + 0.2);
  });
});

describe('stores/memory-window-store: without the jump guard', () => {
  it('holds no candidate columns, so a record costs what it did before the guard existed', () => {
    const off = new MemoryWindowStore({ ...SETTINGS, maxSpeedKmh: undefined }, () => T0);
    const on = new MemoryWindowStore(SETTINGS, () => T0);
    for (let i = 0; i < 50; i++) for (const store of [off, on]) store.decideNow(at(0, 0, `veh-${i}`));
    const held = (store: MemoryWindowStore): boolean => (store as unknown as { candidates: { held: boolean } }).candidates.held;
    assert.equal(held(off), false);
    assert.equal(held(on), true);
    off.reconfigure(SETTINGS);
    assert.equal(held(off), true, 'held from the redeploy that turns the guard on');
    assert.equal(off.decideNow(at(10, 5000, 'veh-7')).reason, 'jump');
    assert.equal(off.entry('veh-7')?.candidate.count, 1);
  });

  it('keeps no candidate: none after a redeploy turns the guard off, none restored into a node without it', () => {
    const store = new MemoryWindowStore(SETTINGS, () => T0);
    for (const p of [at(0, 0), at(10, 5000), at(20, 5150)]) store.decideNow(p);
    const saved = store.entry('veh') as WindowEntry;
    assert.equal(saved.candidate.count, 2);
    store.reconfigure({ ...SETTINGS, maxSpeedKmh: undefined });
    assert.equal(store.entry('veh')?.candidate.count, 0, 'dropped with the guard');
    store.reconfigure(SETTINGS);
    assert.equal(store.decideNow(at(30, 5300)).reason, 'jump', 'the guard back on starts counting again');
    const off = new MemoryWindowStore({ ...SETTINGS, maxSpeedKmh: 0 }, () => T0);
    off.restore(saved, T0);
    assert.equal(off.entry('veh')?.candidate.count, 0);
    assert.equal(off.decideNow(at(30, 5300)).reason, 'moved');
  });

  it('forgets every record, told to the journal, when a redeploy changes the mode, and only then', () => {
    const store = new MemoryWindowStore(SETTINGS, () => T0);
    let cleared = 0;
    store.onClear = () => cleared++;
    store.decideNow(at(0, 0));
    store.reconfigure({ ...SETTINGS, minSeconds: 30 });
    assert.equal(store.size, 1, 'other changes keep the records');
    store.reconfigure({ ...SETTINGS, mode: 'value', deadband: 5 });
    assert.equal(store.size, 0, 'a position baseline is no reading');
    assert.equal(cleared, 1, 'the saved state forgets them too');
    assert.equal(store.decideNow({ assetId: 'veh', t: T0 + 10_000, lat: 0, lon: 0, value: 40 }).reason, 'first');
    store.reconfigure({ ...SETTINGS, mode: 'value', deadband: 2 });
    assert.equal(store.size, 1, 'the same mode keeps them');
    store.reconfigure(SETTINGS);
    assert.equal(store.size, 0, 'nor is a reading a position');
    assert.equal(cleared, 2);
    assert.equal(store.decideNow(at(20, 0)).reason, 'first');
  });
});
