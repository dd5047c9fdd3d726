/**
 * Bounds only the memory stores have (Redis is bounded by TTL and by the
 * server's maxmemory policy): maxAssets and maxKeys, pending keys included.
 */
import assert from 'node:assert/strict';
import { MemorySeenStore } from '../../src/stores/memory-seen-store';
import { MemoryWindowStore } from '../../src/stores/memory-window-store';
import type { SeenClaim } from '../../src/stores/types';
import { claim } from '../support/ask';
import { claimNames, newToken, reading } from './seen-store.contract';
import { ping } from './window-store.contract';

const SETTINGS = { minSeconds: 60, minMetres: 25, ttlSeconds: 3600 };
const SEEN = { ttlSeconds: 3600, confirm: false, leaseSeconds: 60, keyMode: 'reading' as const };

describe('MemoryWindowStore bounds', () => {
  it('past maxAssets drops the asset whose record was written longest ago', () => {
    const store = new MemoryWindowStore({ ...SETTINGS, maxAssets: 3 }, () => 0);
    for (const id of ['a', 'b', 'c']) store.decideNow(ping(id, 0));
    // A new admission for a rewrites its record: b is now the oldest write.
    assert.equal(store.decideNow(ping('a', 61)).reason, 'elapsed');
    // A suppression does not rewrite: c stays where it was.
    assert.equal(store.decideNow(ping('c', 4)).reason, 'window');
    store.decideNow(ping('d', 0));
    assert.equal(store.size, 3);
    assert.equal(store.decideNow(ping('b', 62)).reason, 'first', 'b was dropped');
    // Adding b back dropped c, the next oldest write.
    assert.equal(store.decideNow(ping('c', 62)).reason, 'first', 'c was dropped next');
    assert.equal(store.decideNow(ping('d', 4)).reason, 'window', 'd kept');
  });

  it('stays at maxAssets under an endless stream of new assets', () => {
    const store = new MemoryWindowStore({ ...SETTINGS, maxAssets: 500 }, () => 0);
    for (let i = 0; i < 20_000; i++) store.decideNow(ping(`veh-${i}`, 0));
    assert.equal(store.size, 500);
  });

  it('frees expired records without being asked', () => {
    let now = 0;
    const store = new MemoryWindowStore({ ...SETTINGS, ttlSeconds: 1, maxAssets: 1_000_000 }, () => now);
    for (let i = 0; i < 10_000; i++) {
      now = i;
      store.decideNow(ping(`veh-${i}`, 0));
    }
    assert.ok(store.size <= 1001, `size ${store.size}`);
  });

  it('applies a lower maxAssets at once on reconfigure, keeping the newest records', () => {
    const store = new MemoryWindowStore({ ...SETTINGS, maxAssets: 10 }, () => 0);
    for (let i = 0; i < 10; i++) store.decideNow(ping(`veh-${i}`, 0));
    store.reconfigure({ ...SETTINGS, maxAssets: 4 });
    assert.equal(store.size, 4);
    assert.deepEqual(store.keys(), ['veh-6', 'veh-7', 'veh-8', 'veh-9']);
  });
});

describe('MemorySeenStore bounds', () => {
  const claimAs = async (store: MemorySeenStore, claims: SeenClaim[]): Promise<string[]> => claimNames(await claim(store, { claims, token: newToken() }));

  it('past maxKeys forgets the oldest key first', async () => {
    const store = new MemorySeenStore({ ...SEEN, maxKeys: 2 }, () => 0);
    assert.deepEqual(await claimAs(store, [reading(1, 1), reading(2, 2), reading(3, 3)]), ['admitted', 'admitted', 'admitted']);
    assert.equal(store.size, 2);
    assert.deepEqual(await claimAs(store, [reading(2, 2), reading(3, 3)]), ['duplicate', 'duplicate']);
    assert.deepEqual(await claimAs(store, [reading(1, 1)]), ['admitted'], 'seq 1 was the oldest and went first');
  });

  it('stays at maxKeys under an endless stream of new readings', async () => {
    const store = new MemorySeenStore({ ...SEEN, maxKeys: 1000 }, () => 0);
    for (let seq = 0; seq < 20_000; seq++) await claim(store, { claims: [reading(seq, 50)], token: seq + 1 });
    assert.equal(store.size, 1000);
  });

  it('counts pending keys against maxKeys (confirm mode), oldest claim first', async () => {
    const store = new MemorySeenStore({ ...SEEN, confirm: true, maxKeys: 2 }, () => 0);
    assert.deepEqual(await claimAs(store, [reading(1, 1), reading(2, 2)]), ['admitted', 'admitted']);
    assert.deepEqual(await claimAs(store, [reading(1, 1), reading(2, 2)]), ['inFlight', 'inFlight']);
    assert.deepEqual(await claimAs(store, [reading(3, 3)]), ['admitted']);
    assert.equal(store.size, 2);
    assert.deepEqual(await claimAs(store, [reading(1, 1)]), ['admitted'], 'the oldest pending key made room');
  });

  it('expires leases by the clock, without a timer per key', async () => {
    let now = 0;
    const store = new MemorySeenStore({ ...SEEN, confirm: true, leaseSeconds: 1, maxKeys: 100_000 }, () => now);
    const timers = process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;
    for (let seq = 0; seq < 1000; seq++) await claim(store, { claims: [reading(seq, 50)], token: seq + 1 });
    const grown = process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length - timers;
    assert.ok(grown < 10, `${grown} more timers after 1,000 pending claims`);
    now = 1001;
    assert.deepEqual(await claimAs(store, [reading(0, 50)]), ['admitted+leaseExpired'], 'the lease ran out by the clock alone');
  });
});
