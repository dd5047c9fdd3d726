/**
 * Bounds only the memory stores have (Redis is bounded by TTL and by the
 * server's maxmemory policy): maxAssets and maxKeys.
 */
import assert from 'node:assert/strict';
import { MemorySeenStore } from '../../src/stores/memory-seen-store';
import { MemoryWindowStore } from '../../src/stores/memory-window-store';
import { ping } from './window-store.contract';
import { reading } from './seen-store.contract';

const SETTINGS = { minSeconds: 60, minMetres: 25, ttlSeconds: 3600 };

describe('MemoryWindowStore bounds', () => {
  it('past maxAssets drops the asset whose record was written longest ago', () => {
    const store = new MemoryWindowStore({ ...SETTINGS, maxAssets: 3 }, () => 0);
    for (const id of ['a', 'b', 'c']) store.decide(ping(id, 0));
    // A new admission for a rewrites its record: b is now the oldest write.
    assert.equal(store.decide(ping('a', 61)).reason, 'elapsed');
    // A suppression does not rewrite: c stays where it was.
    assert.equal(store.decide(ping('c', 4)).reason, 'window');
    store.decide(ping('d', 0));
    assert.equal(store.size, 3);
    assert.equal(store.decide(ping('b', 62)).reason, 'first', 'b was dropped');
    // Adding b back dropped c, the next oldest write.
    assert.equal(store.decide(ping('c', 62)).reason, 'first', 'c was dropped next');
    assert.equal(store.decide(ping('d', 4)).reason, 'window', 'd kept');
  });

  it('stays at maxAssets under an endless stream of new assets', () => {
    const store = new MemoryWindowStore({ ...SETTINGS, maxAssets: 500 }, () => 0);
    for (let i = 0; i < 20_000; i++) store.decide(ping(`veh-${i}`, 0));
    assert.equal(store.size, 500);
  });

  it('frees expired records without being asked', () => {
    let now = 0;
    const store = new MemoryWindowStore({ ...SETTINGS, ttlSeconds: 1, maxAssets: 1_000_000 }, () => now);
    for (let i = 0; i < 10_000; i++) {
      now = i;
      store.decide(ping(`veh-${i}`, 0));
    }
    assert.ok(store.size <= 1001, `size ${store.size}`);
  });
});

describe('MemorySeenStore bounds', () => {
  it('past maxKeys forgets the oldest key first', () => {
    const store = new MemorySeenStore({ ttlSeconds: 3600, maxKeys: 2 }, () => 0);
    assert.deepEqual(store.claim([reading(1, 1), reading(2, 2), reading(3, 3)]), [true, true, true]);
    assert.equal(store.size, 2);
    assert.deepEqual(store.claim([reading(2, 2), reading(3, 3)]), [false, false]);
    assert.deepEqual(store.claim([reading(1, 1)]), [true], 'seq 1 was the oldest and went first');
  });

  it('stays at maxKeys under an endless stream of new readings', () => {
    const store = new MemorySeenStore({ ttlSeconds: 3600, maxKeys: 1000 }, () => 0);
    for (let seq = 0; seq < 20_000; seq++) store.claim([reading(seq, 50)]);
    assert.equal(store.size, 1000);
  });
});
