/**
 * The bounded seen-set of the memory store: first write wins, claims held
 * by their message's token, confirm mode's pending claims with a lease, and
 * the bounds (TTL, cap) that keep it from growing without end.
 */
import assert from 'node:assert/strict';
import { CLAIM, claimOutcome, isAdmitted, LEASE_EXPIRED, RELEASED_DEADLINE, SEEN_DEADLINE, SETTLE } from '../../../../src/core/sensor/seen-codes';
import { BoundedSeenSet, type SeenEntry, type SeenSetSettings } from '../../../../src/core/sensor/seen-set';

const HOUR = 3_600_000;
const LEASE = 30_000;
const KEY = 'bin-A17:41:76c73ee2946cc70e';

function seenSet(settings: Partial<SeenSetSettings> = {}): BoundedSeenSet {
  return new BoundedSeenSet({ ttlMs: HOUR, maxKeys: 100, leaseMs: LEASE, ...settings });
}

describe('core/sensor/seen-codes', () => {
  it('keeps the flag apart from the outcome, and admits only admitted and replayed', () => {
    assert.equal(claimOutcome(CLAIM.admitted | LEASE_EXPIRED), CLAIM.admitted);
    for (const code of Object.values(CLAIM)) assert.ok(code < LEASE_EXPIRED, 'every outcome fits below the flag');
    assert.equal(isAdmitted(CLAIM.admitted), true);
    assert.equal(isAdmitted(CLAIM.admitted | LEASE_EXPIRED), true);
    assert.equal(isAdmitted(CLAIM.replayed), true);
    assert.equal(isAdmitted(CLAIM.duplicate), false);
    assert.equal(isAdmitted(CLAIM.inFlight), false);
    assert.equal(new Set([...Object.values(CLAIM)]).size, 4, 'codes are distinct');
    assert.equal(new Set([...Object.values(SETTLE)]).size, Object.keys(SETTLE).length);
    assert.ok(RELEASED_DEADLINE < SEEN_DEADLINE, 'a released key never reads as pending');
  });
});

describe('core/sensor/seen-set BoundedSeenSet', () => {
  describe('claims (no confirm mode)', () => {
    it('admits a key once: first write wins, another message’s claim is a duplicate', () => {
      const seen = seenSet();
      assert.equal(seen.claim(KEY, 1, false, 0), CLAIM.admitted);
      assert.equal(seen.claim(KEY, 2, false, 1), CLAIM.duplicate);
      assert.equal(seen.claim('bin-A17:42:ed9b14ef6ee4c460', 3, false, 2), CLAIM.admitted);
      assert.equal(seen.size, 2);
      assert.equal(seen.has(KEY, 3), true);
    });

    it('admits the same message again as replayed (its earlier decision was lost), not as a duplicate', () => {
      const seen = seenSet();
      assert.equal(seen.claim(KEY, 7, false, 0), CLAIM.admitted);
      assert.equal(seen.claim(KEY, 7, false, 10), CLAIM.replayed);
      assert.equal(seen.claim(KEY, 8, false, 20), CLAIM.duplicate, 'another token still sees a duplicate');
    });

    it('does not refresh a key on a refused replay: its age counts from the claim', () => {
      const seen = seenSet({ ttlMs: 1000 });
      assert.equal(seen.claim('k', 1, false, 0), CLAIM.admitted);
      assert.equal(seen.claim('k', 2, false, 900), CLAIM.duplicate);
      // Had the duplicate at 900 refreshed it, the key would still be held at 1500.
      assert.equal(seen.claim('k', 3, false, 1500), CLAIM.admitted);
    });
  });

  describe('confirm mode: pending claims with a lease', () => {
    it('holds a pending key against other messages (in flight) while its lease runs', () => {
      const seen = seenSet();
      assert.equal(seen.claim(KEY, 1, true, 0), CLAIM.admitted);
      assert.equal(seen.has(KEY, 1), true);
      assert.equal(seen.claim(KEY, 2, true, LEASE - 1), CLAIM.inFlight);
      assert.equal(seen.claim(KEY, 2, false, LEASE - 1), CLAIM.inFlight);
    });

    it('lets another message take a key whose lease ran out, flagged LEASE_EXPIRED', () => {
      const seen = seenSet();
      seen.claim(KEY, 1, true, 0);
      assert.equal(seen.has(KEY, LEASE), false, 'a lapsed lease no longer blocks');
      const code = seen.claim(KEY, 2, true, LEASE);
      assert.equal(code, CLAIM.admitted | LEASE_EXPIRED);
      // The key is now the new message's: the first one can no longer settle it.
      assert.equal(seen.settle(KEY, 1, 'confirm', LEASE + 1), SETTLE.notHeld);
      assert.equal(seen.settle(KEY, 2, 'confirm', LEASE + 1), SETTLE.settled);
      assert.equal(seen.claim(KEY, 3, false, LEASE + 2), CLAIM.duplicate);
    });

    it('gives a pending key re-sent by its own message a fresh lease (replayed)', () => {
      const seen = seenSet();
      seen.claim(KEY, 1, true, 0);
      assert.equal(seen.claim(KEY, 1, true, LEASE - 10), CLAIM.replayed);
      // The lease now runs from LEASE - 10.
      assert.equal(seen.claim(KEY, 2, true, LEASE + 10), CLAIM.inFlight);
      assert.equal(seen.claim(KEY, 2, true, 2 * LEASE - 10), CLAIM.admitted | LEASE_EXPIRED);
    });

    it('confirms a pending key: seen for the TTL from the confirm; a second confirm changes nothing', () => {
      const seen = seenSet({ ttlMs: 100_000 });
      seen.claim(KEY, 1, true, 0);
      assert.equal(seen.settle(KEY, 1, 'confirm', 1000), SETTLE.settled);
      assert.deepEqual(seen.entry(KEY), { key: KEY, expiry: 101_000, deadline: SEEN_DEADLINE, token: 1 });
      assert.equal(seen.settle(KEY, 1, 'confirm', 2000), SETTLE.settled);
      assert.equal(seen.entry(KEY)?.expiry, 101_000, 'the resent confirm did not refresh the key');
      assert.equal(seen.claim(KEY, 2, true, LEASE * 2), CLAIM.duplicate, 'seen, not pending: past the lease it still holds');
      assert.equal(seen.claim(KEY, 2, true, 101_000), CLAIM.admitted, 'gone after its TTL');
    });

    it('says lateSettled for a confirm that comes after the lease ran out, when nobody took the key meanwhile', () => {
      const seen = seenSet();
      seen.claim(KEY, 1, true, 0);
      assert.equal(seen.settle(KEY, 1, 'confirm', LEASE + 5), SETTLE.lateSettled);
      assert.equal(seen.claim(KEY, 2, false, LEASE + 6), CLAIM.duplicate);
    });

    it('refuses a settle from a token that does not hold the key, or for a key it does not have', () => {
      const seen = seenSet();
      seen.claim(KEY, 1, true, 0);
      assert.equal(seen.settle(KEY, 9, 'confirm', 1), SETTLE.notHeld);
      assert.equal(seen.settle(KEY, 9, 'release', 1), SETTLE.notHeld);
      assert.equal(seen.settle('other', 1, 'confirm', 1), SETTLE.notHeld);
      assert.equal(seen.claim(KEY, 2, true, 2), CLAIM.inFlight, 'the refused settles changed nothing');
    });

    it('releases a key (the delivery failed): the next copy is admitted without the lease flag', () => {
      const seen = seenSet();
      seen.claim(KEY, 1, true, 0);
      assert.equal(seen.settle(KEY, 1, 'release', 10), SETTLE.settled);
      assert.equal(seen.has(KEY, 11), false);
      assert.equal(seen.claim(KEY, 2, true, 20), CLAIM.admitted);
    });

    it('keeps a released key as a tombstone for a lease, so that a repeated release is recognised, then forgets it', () => {
      const seen = seenSet();
      seen.claim(KEY, 1, true, 0);
      assert.equal(seen.settle(KEY, 1, 'release', 10), SETTLE.settled);
      assert.deepEqual(seen.entry(KEY), { key: KEY, expiry: 10 + LEASE, deadline: RELEASED_DEADLINE, token: 1 });
      assert.equal(seen.settle(KEY, 1, 'release', 20), SETTLE.settled, 'a resent release is fine');
      assert.equal(seen.settle(KEY, 1, 'confirm', 30), SETTLE.notHeld, 'a released key cannot be confirmed');
      assert.equal(seen.settle(KEY, 1, 'release', 10 + LEASE), SETTLE.notHeld, 'the tombstone is gone after a lease');
      assert.equal(seen.size, 0);
    });

    it('keeps a key that is seen when a release comes for it: a delivery that succeeded is never undone', () => {
      const seen = seenSet();
      seen.claim(KEY, 1, false, 0); // confirm off: seen at once
      assert.equal(seen.settle(KEY, 1, 'release', 10), SETTLE.kept);
      seen.claim('confirmed', 2, true, 0);
      seen.settle('confirmed', 2, 'confirm', 5);
      assert.equal(seen.settle('confirmed', 2, 'release', 10), SETTLE.kept);
      assert.equal(seen.claim(KEY, 3, false, 20), CLAIM.duplicate);
      assert.equal(seen.claim('confirmed', 3, false, 20), CLAIM.duplicate);
      assert.equal(seen.settle(KEY, 9, 'release', 30), SETTLE.notHeld, 'another token still holds nothing');
    });

    it('admits the releasing message itself again after a release (not replayed: it was let go)', () => {
      const seen = seenSet();
      seen.claim(KEY, 1, true, 0);
      seen.settle(KEY, 1, 'release', 10);
      assert.equal(seen.claim(KEY, 1, true, 20), CLAIM.admitted);
    });

    it('keeps a pending key for its lease even when the TTL is shorter', () => {
      const seen = seenSet({ ttlMs: 1000 });
      seen.claim(KEY, 1, true, 0);
      assert.equal(seen.claim(KEY, 2, true, 5000), CLAIM.inFlight);
      assert.equal(seen.entry(KEY)?.expiry, LEASE);
    });
  });

  describe('bounds', () => {
    it('forgets a key once its TTL has passed, and removes it rather than hiding it', () => {
      const seen = seenSet({ ttlMs: 1000 });
      seen.claim('a', 1, false, 0);
      seen.claim('b', 2, false, 500);
      assert.equal(seen.has('a', 999), true);
      assert.equal(seen.has('a', 1000), false);
      assert.equal(seen.claim('c', 3, false, 1001), CLAIM.admitted);
      assert.deepEqual(seen.keys(), ['b', 'c'], 'the expired key is removed, not just hidden');
      assert.equal(seen.claim('a', 4, false, 1001), CLAIM.admitted);
      assert.equal(seen.claim('b', 5, false, 1600), CLAIM.admitted);
    });

    it('evicts the key written longest ago when the cap is reached', () => {
      const seen = seenSet({ maxKeys: 3 });
      for (const [i, key] of ['k1', 'k2', 'k3', 'k4'].entries()) seen.claim(key, i + 1, false, i);
      assert.equal(seen.size, 3);
      assert.deepEqual(seen.keys(), ['k2', 'k3', 'k4']);
      // A refused duplicate of k2 does not make it young again: it is next out.
      assert.equal(seen.claim('k2', 99, false, 5), CLAIM.duplicate);
      seen.claim('k5', 6, false, 6);
      assert.deepEqual(seen.keys(), ['k3', 'k4', 'k5']);
    });

    it('keeps memory flat under an endless stream of new keys, by the cap and by the TTL', () => {
      const seen = seenSet({ maxKeys: 1000 });
      let peak = 0;
      for (let i = 0; i < 50_000; i++) {
        seen.claim(`dev:${i}:h`, i + 1, false, i);
        peak = Math.max(peak, seen.size);
      }
      assert.equal(peak, 1000);
      const byAge = seenSet({ ttlMs: 1000, maxKeys: 1_000_000 });
      for (let i = 0; i < 20_000; i++) byAge.claim(`k${i}`, i + 1, false, i);
      assert.ok(byAge.size <= 1001, `size ${byAge.size}`);
    });

    it('refuses settings that would make it unbounded or useless', () => {
      const good: SeenSetSettings = { ttlMs: 1000, maxKeys: 10, leaseMs: 1000 };
      for (const bad of [
        { ttlMs: 0 },
        { ttlMs: Number.NaN },
        { leaseMs: 0 },
        { leaseMs: -1 },
        { maxKeys: 0 },
        { maxKeys: 1.5 },
        { maxKeys: Infinity },
      ]) {
        assert.throws(() => new BoundedSeenSet({ ...good, ...bad }), RangeError, JSON.stringify(bad));
        assert.throws(() => new BoundedSeenSet(good).reconfigure({ ...good, ...bad }), RangeError, JSON.stringify(bad));
      }
    });
  });

  describe('reconfigure', () => {
    it('keeps the keys, applies a lower cap at once (oldest out first), and a new TTL to later writes', () => {
      const seen = seenSet({ ttlMs: 1000 });
      for (let i = 0; i < 5; i++) seen.claim(`k${i}`, i + 1, false, i);
      seen.reconfigure({ ttlMs: 10_000, maxKeys: 3, leaseMs: LEASE });
      assert.deepEqual(seen.keys(), ['k2', 'k3', 'k4']);
      assert.equal(seen.claim('k4', 99, false, 10), CLAIM.duplicate, 'still seen after the redeploy');
      seen.claim('new', 100, false, 10);
      assert.equal(seen.entry('new')?.expiry, 10_010);
      assert.equal(seen.entry('k4')?.expiry, 1004, 'an existing key keeps the expiry it was written with');
      assert.deepEqual(seen.keys(), ['k3', 'k4', 'new'], 'the new cap holds for new keys');
    });
  });

  describe('deleting, clearing and the change listeners', () => {
    it('deletes one key by name, reported as deleteWhere reports it', () => {
      const seen = seenSet();
      for (const [i, key] of ['a:1:x', 'b:1:x'].entries()) seen.claim(key, i + 1, false, 0);
      const changed: string[] = [];
      seen.onChange = (key) => changed.push(key);
      assert.equal(seen.delete('a:1:x'), true);
      assert.equal(seen.delete('a:1:x'), false);
      assert.deepEqual(changed, ['a:1:x']);
      assert.equal(seen.has('a:1:x', 1), false);
      assert.equal(seen.has('b:1:x', 1), true);
    });

    it('deletes the keys a predicate selects, counts them, and reports each', () => {
      const seen = seenSet();
      for (const [i, key] of ['a:1:x', 'a:2:x', 'b:1:x'].entries()) seen.claim(key, i + 1, false, 0);
      const changed: string[] = [];
      let cleared = 0;
      seen.onChange = (key) => changed.push(key);
      seen.onClear = () => cleared++;
      assert.equal(seen.deleteWhere((key) => key.startsWith('a:')), 2);
      assert.deepEqual(changed, ['a:1:x', 'a:2:x']);
      assert.equal(seen.has('a:1:x', 1), false);
      assert.equal(seen.has('b:1:x', 1), true);
      seen.clear();
      assert.equal(seen.size, 0);
      assert.equal(cleared, 1);
    });

    it('reports every write (claim, replay with a fresh lease, confirm, release), and no refused claim', () => {
      const seen = seenSet();
      const changed: string[] = [];
      seen.onChange = (key) => changed.push(key);
      seen.claim('a', 1, true, 0);
      seen.claim('a', 2, true, 1); // in flight: nothing written
      seen.claim('a', 1, true, 2); // replayed: a fresh lease
      seen.settle('a', 1, 'confirm', 3);
      seen.settle('a', 1, 'confirm', 4); // changes nothing
      seen.claim('b', 3, true, 5);
      seen.claim('b', 4, false, 6); // in flight
      seen.settle('b', 3, 'release', 7);
      seen.claim('c', 5, false, 8);
      seen.settle('c', 5, 'release', 9); // kept: nothing written
      assert.deepEqual(changed, ['a', 'a', 'a', 'b', 'b', 'c']);
    });

    it('clearAll() forgets everything without telling the listeners (a journal being replayed)', () => {
      const seen = seenSet();
      seen.claim('a', 1, false, 0);
      let told = 0;
      seen.onClear = () => told++;
      seen.onChange = () => told++;
      seen.clearAll();
      assert.equal(seen.size, 0);
      assert.equal(told, 0);
    });
  });

  describe('restore', () => {
    const entry = (key: string, expiry: number, deadline = SEEN_DEADLINE, token = 1): SeenEntry => ({ key, expiry, deadline, token });

    it('puts entries back exactly, each as the newest, and they decide as before', () => {
      const seen = seenSet();
      seen.restore(entry('seen', 10_000, SEEN_DEADLINE, 5), 0);
      seen.restore(entry('pending', 50_000, 4000, 6), 0);
      seen.restore(entry('released', 3000, RELEASED_DEADLINE, 7), 0);
      assert.deepEqual(seen.keys(), ['seen', 'pending', 'released']);
      assert.deepEqual(seen.entry('pending'), entry('pending', 50_000, 4000, 6));
      assert.equal(seen.claim('seen', 9, false, 1), CLAIM.duplicate);
      assert.equal(seen.claim('pending', 9, false, 1), CLAIM.inFlight);
      assert.equal(seen.claim('pending', 6, false, 2), CLAIM.replayed, 'its own token');
      assert.equal(seen.settle('released', 7, 'release', 3), SETTLE.settled, 'a repeated release is still recognised');
    });

    it('skips entries past their expiry, and one that expired removes an older copy of its key', () => {
      const seen = seenSet();
      seen.restore(entry('old', 100), 200);
      assert.equal(seen.size, 0);
      seen.restore(entry('k', 1000), 200);
      seen.restore(entry('k', 150), 200); // a later record of the same key, already expired
      assert.equal(seen.size, 0);
    });

    it('applies the cap, oldest out, and moves a re-restored key to the newest end', () => {
      const seen = seenSet({ maxKeys: 2 });
      seen.restore(entry('a', 10_000), 0);
      seen.restore(entry('b', 10_000), 0);
      seen.restore(entry('a', 10_000, SEEN_DEADLINE, 2), 0);
      assert.deepEqual(seen.keys(), ['b', 'a']);
      seen.restore(entry('c', 10_000), 0);
      assert.deepEqual(seen.keys(), ['a', 'c']);
    });

    it('tells no listener while restoring, and forget() removes a key quietly', () => {
      const seen = seenSet();
      let told = 0;
      seen.onChange = () => told++;
      seen.restore(entry('a', 10_000), 0);
      seen.forget('a');
      seen.forget('never there');
      assert.equal(seen.size, 0);
      assert.equal(told, 0);
    });
  });
});
