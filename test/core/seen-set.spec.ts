import assert from 'node:assert/strict';
import { BoundedSeenSet } from '../../src/core/seen-set';

const HOUR = 3_600_000;

describe('core/seen-set BoundedSeenSet', () => {
  it('admits a key once: first write wins, a replay is refused', () => {
    const seen = new BoundedSeenSet(6 * HOUR, 100);
    assert.equal(seen.claim('bin-A17:41:76c73ee2946cc70e', 0), true);
    assert.equal(seen.claim('bin-A17:41:76c73ee2946cc70e', 1), false);
    assert.equal(seen.claim('bin-A17:42:ed9b14ef6ee4c460', 2), true);
    assert.equal(seen.size, 2);
  });

  it('does not refresh a key on a refused replay (its age counts from the first claim)', () => {
    const seen = new BoundedSeenSet(1000, 100);
    assert.equal(seen.claim('k', 0), true);
    assert.equal(seen.claim('k', 900), false);
    // Had the replay at 900 refreshed it, the key would still be held at 1500.
    assert.equal(seen.claim('k', 1500), true);
  });

  it('forgets a key once its TTL has passed', () => {
    const seen = new BoundedSeenSet(1000, 100);
    seen.claim('a', 0);
    seen.claim('b', 500);
    assert.equal(seen.has('a', 999), true);
    assert.equal(seen.has('a', 1001), false);
    assert.equal(seen.has('b', 1001), true);
    assert.equal(seen.size, 1, 'the expired key is removed, not just hidden');
    assert.equal(seen.claim('a', 1001), true);
    assert.equal(seen.claim('b', 1600), true);
  });

  it('evicts the oldest key first when the cap is reached', () => {
    const seen = new BoundedSeenSet(HOUR, 3);
    seen.claim('k1', 1);
    seen.claim('k2', 2);
    seen.claim('k3', 3);
    seen.claim('k4', 4);
    assert.equal(seen.size, 3);
    assert.equal(seen.has('k1', 5), false, 'k1, the oldest, goes first');
    for (const kept of ['k2', 'k3', 'k4']) assert.equal(seen.has(kept, 5), true, kept);
    // A refused replay of k2 does not make it young again: it is next out.
    assert.equal(seen.claim('k2', 6), false);
    seen.claim('k5', 7);
    assert.equal(seen.has('k2', 8), false);
    assert.equal(seen.has('k3', 8), true);
  });

  it('keeps memory flat under an endless stream of new keys', () => {
    const seen = new BoundedSeenSet(HOUR, 1000);
    let peak = 0;
    for (let i = 0; i < 50_000; i++) {
      seen.claim(`dev:${i}:h`, i);
      peak = Math.max(peak, seen.size);
    }
    assert.equal(peak, 1000);
    // And the TTL alone bounds it when the cap is larger than the traffic.
    const byAge = new BoundedSeenSet(1000, 1_000_000);
    for (let i = 0; i < 20_000; i++) byAge.claim(`k${i}`, i);
    assert.ok(byAge.size <= 1001, `size ${byAge.size}`);
  });

  it('deletes the keys a predicate selects and counts them', () => {
    const seen = new BoundedSeenSet(HOUR, 100);
    for (const key of ['a:1:x', 'a:2:x', 'b:1:x']) seen.claim(key, 0);
    assert.equal(seen.deleteWhere((key) => key.startsWith('a:')), 2);
    assert.equal(seen.has('a:1:x', 1), false);
    assert.equal(seen.has('b:1:x', 1), true);
    seen.clear();
    assert.equal(seen.size, 0);
  });

  it('refuses a TTL or a cap that would make it unbounded or useless', () => {
    assert.throws(() => new BoundedSeenSet(0, 10), RangeError);
    assert.throws(() => new BoundedSeenSet(Number.NaN, 10), RangeError);
    assert.throws(() => new BoundedSeenSet(1000, 0), RangeError);
    assert.throws(() => new BoundedSeenSet(1000, 1.5), RangeError);
    assert.throws(() => new BoundedSeenSet(1000, Infinity), RangeError);
  });
});
