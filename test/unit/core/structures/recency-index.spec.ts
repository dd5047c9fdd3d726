/**
 * The slot index both memory stores hang their columns on: keys chained
 * oldest write first, slots reused, columns grown (never past the cap) and
 * dropped on clear().
 */
import assert from 'node:assert/strict';
import { grown, NONE, RecencyIndex } from '../../../../src/core/structures/recency-index';

/** The keys from oldest to newest, walking the chain. */
function chain(index: RecencyIndex): string[] {
  const keys: string[] = [];
  for (let slot = index.oldest; slot !== NONE; slot = index.next(slot)) keys.push(index.keyAt(slot));
  return keys;
}

function indexWithCapacities(maxEntries: number): { index: RecencyIndex; capacities: number[] } {
  const capacities: number[] = [];
  const index = new RecencyIndex(maxEntries, (capacity) => capacities.push(capacity));
  return { index, capacities };
}

describe('core/structures/recency-index RecencyIndex', () => {
  it('starts empty', () => {
    const { index } = indexWithCapacities(10);
    assert.equal(index.size, 0);
    assert.equal(index.oldest, NONE);
    assert.equal(index.slot('x'), undefined);
  });

  it('chains keys in insertion order and finds each by key and by slot', () => {
    const { index } = indexWithCapacities(10);
    const slots = ['a', 'b', 'c'].map((key) => index.insert(key));
    assert.deepEqual(chain(index), ['a', 'b', 'c']);
    assert.equal(index.size, 3);
    for (const [i, key] of ['a', 'b', 'c'].entries()) {
      assert.equal(index.slot(key), slots[i]);
      assert.equal(index.keyAt(slots[i] as number), key);
    }
  });

  it('moves a touched slot to the newest end, from the front, the middle or the end', () => {
    const { index } = indexWithCapacities(10);
    for (const key of ['a', 'b', 'c', 'd']) index.insert(key);
    index.touch(index.slot('a') as number);
    assert.deepEqual(chain(index), ['b', 'c', 'd', 'a']);
    index.touch(index.slot('c') as number);
    assert.deepEqual(chain(index), ['b', 'd', 'a', 'c']);
    index.touch(index.slot('c') as number);
    assert.deepEqual(chain(index), ['b', 'd', 'a', 'c']);
  });

  it('removes from anywhere, keeps the chain whole, and reuses freed slots before growing', () => {
    const { index, capacities } = indexWithCapacities(1000);
    for (const key of ['a', 'b', 'c', 'd']) index.insert(key);
    const freedB = index.slot('b') as number;
    index.remove(freedB);
    assert.deepEqual(chain(index), ['a', 'c', 'd']);
    index.remove(index.slot('a') as number);
    const freedD = index.slot('d') as number;
    index.remove(freedD);
    assert.deepEqual(chain(index), ['c']);
    assert.equal(index.slot('b'), undefined);
    const before = capacities.length;
    index.insert('e');
    assert.equal(index.slot('e'), freedD, 'the slot freed last is reused first');
    index.insert('f');
    index.insert('g');
    assert.equal(index.slot('g'), freedB);
    assert.equal(capacities.length, before, 'freed slots are reused, no growth');
    index.remove(index.slot('f') as number);
    index.remove(index.slot('g') as number);
    assert.deepEqual(chain(index), ['c', 'e']);
    index.remove(index.slot('c') as number);
    index.remove(index.slot('e') as number);
    assert.equal(index.size, 0);
    assert.equal(index.oldest, NONE);
  });

  it('grows its columns by doubling from 64, never past the cap (plus the one the owner frees first)', () => {
    const { index, capacities } = indexWithCapacities(100);
    for (let i = 0; i < 100; i++) index.insert(`k${i}`);
    assert.deepEqual(capacities, [64, 100]);
    // At the cap the owner frees the oldest before inserting: no growth.
    index.remove(index.oldest);
    index.insert('k100');
    assert.deepEqual(capacities, [64, 100]);
    assert.equal(index.size, 100);
  });

  it('drops the oldest key to insert at the cap, without growing', () => {
    const { index, capacities } = indexWithCapacities(3);
    for (const key of ['a', 'b', 'c', 'd']) index.insert(key);
    assert.deepEqual(chain(index), ['b', 'c', 'd']);
    assert.equal(index.slot('a'), undefined);
    assert.deepEqual(capacities, [3]);
  });

  it('drops the oldest keys down to a lowered cap at once', () => {
    const { index } = indexWithCapacities(10);
    for (const key of ['a', 'b', 'c', 'd', 'e']) index.insert(key);
    index.setMaxEntries(2);
    assert.deepEqual(chain(index), ['d', 'e']);
    index.insert('f');
    assert.deepEqual(chain(index), ['e', 'f']);
  });

  it('upserts: an existing key moves to the newest end in its slot, a new one is inserted', () => {
    const { index } = indexWithCapacities(3);
    for (const key of ['a', 'b', 'c']) index.insert(key);
    const slotOfA = index.slot('a');
    assert.equal(index.upsert('a'), slotOfA);
    assert.deepEqual(chain(index), ['b', 'c', 'a']);
    index.upsert('d');
    assert.deepEqual(chain(index), ['c', 'a', 'd']);
  });

  it('removes a key by name, and says whether it was there', () => {
    const { index } = indexWithCapacities(3);
    for (const key of ['a', 'b', 'c']) index.insert(key);
    assert.equal(index.removeKey('b'), true);
    assert.equal(index.removeKey('b'), false);
    assert.deepEqual(chain(index), ['a', 'c']);
  });

  it('removes expired keys from the old end only, up to the first that has not expired', () => {
    const { index } = indexWithCapacities(10);
    const expiry = new Float64Array(10);
    for (const [key, at] of [['a', 5], ['b', 10], ['c', 20], ['d', 7]] as const) expiry[index.insert(key)] = at;
    index.removeExpired(expiry, 10);
    // d (7) is behind c (20), which has not expired: it stays for its owner to find.
    assert.deepEqual(chain(index), ['c', 'd']);
    index.removeExpired(expiry, 100);
    assert.equal(index.size, 0);
  });

  it('takes a raised cap into account when it next grows', () => {
    const { index, capacities } = indexWithCapacities(64);
    for (let i = 0; i < 64; i++) index.insert(`k${i}`);
    index.setMaxEntries(1000);
    index.insert('k64');
    assert.deepEqual(capacities, [64, 128]);
  });

  it('drops everything on clear(), columns included, and starts over', () => {
    const { index, capacities } = indexWithCapacities(100);
    for (let i = 0; i < 10; i++) index.insert(`k${i}`);
    index.clear();
    assert.equal(index.size, 0);
    assert.equal(index.oldest, NONE);
    assert.equal(index.slot('k1'), undefined);
    assert.equal(capacities.at(-1), 0);
    index.insert('again');
    assert.deepEqual(chain(index), ['again']);
    assert.equal(index.slot('again'), 0);
  });

  it('keeps the chain consistent with a model under random inserts, touches and removes', () => {
    const { index } = indexWithCapacities(50);
    const model: string[] = [];
    let seed = 12345;
    const random = (n: number): number => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed % n;
    };
    for (let step = 0; step < 5000; step++) {
      const key = `k${random(80)}`;
      const slot = index.slot(key);
      const op = random(3);
      if (slot === undefined) {
        if (model.length >= 50) {
          const oldest = model.shift() as string;
          assert.equal(index.keyAt(index.oldest), oldest);
          index.remove(index.oldest);
        }
        index.insert(key);
        model.push(key);
      } else if (op === 0) {
        index.remove(slot);
        model.splice(model.indexOf(key), 1);
      } else {
        index.touch(slot);
        model.splice(model.indexOf(key), 1);
        model.push(key);
      }
      assert.equal(index.size, model.length);
    }
    assert.deepEqual(chain(index), model);
  });
});

describe('core/structures/recency-index grown', () => {
  it('copies what fits into a column of the new size and the same type', () => {
    const column = Float64Array.from([1.5, 2.5, 3.5]);
    const bigger = grown(column, 5);
    assert.ok(bigger instanceof Float64Array);
    assert.deepEqual([...bigger], [1.5, 2.5, 3.5, 0, 0]);
    const smaller = grown(Int32Array.from([1, 2, 3]), 2);
    assert.ok(smaller instanceof Int32Array);
    assert.deepEqual([...smaller], [1, 2]);
    assert.equal(grown(column, 0).length, 0);
  });
});
