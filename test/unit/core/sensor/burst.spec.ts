/**
 * A burst of readings through the seen-set, apart from any store: repeats
 * inside one message, the store's codes read back into admitted and
 * suppressed readings, and the audit counts, whose sum always adds up.
 */
import assert from 'node:assert/strict';
import { auditReason, auditValue, countsOf, prepareReadings, settleReadings, undecidedCounts, type Counts, type KeyResult, type Prepared } from '../../../../src/core/sensor/burst';
import { CLAIM, LEASE_EXPIRED } from '../../../../src/core/sensor/seen-codes';
import { BoundedSeenSet } from '../../../../src/core/sensor/seen-set';

/** Readings are `{ k: <key> }`; anything else is rejected, as a bad reading is. */
function keyOf(raw: unknown): KeyResult {
  const key = (raw as { k?: unknown } | null)?.k;
  if (typeof key !== 'string') return { ok: false, path: null, value: String(key), problem: 'has no key' };
  return { ok: true, key, group: key.split(':')[0] as string };
}

const r = (k: string): { k: string } => ({ k });

/** received = unique + duplicates_suppressed + rejected, and the parts are parts. */
function assertAddsUp(counts: Counts): void {
  assert.equal(counts.received, counts.unique + counts.duplicates_suppressed + counts.rejected, JSON.stringify(counts));
  assert.ok(counts.in_flight <= counts.duplicates_suppressed);
  assert.ok(counts.lease_expired <= counts.unique);
}

describe('core/sensor/burst', () => {
  describe('prepareReadings', () => {
    it('claims each key once, in order, and points every reading at its claim', () => {
      const prepared = prepareReadings([r('d1:1'), r('d1:2'), r('d2:1')], true, keyOf);
      assert.equal(prepared.burst, true);
      assert.equal(prepared.received, 3);
      assert.deepEqual(prepared.claims, [
        { key: 'd1:1', group: 'd1' },
        { key: 'd1:2', group: 'd1' },
        { key: 'd2:1', group: 'd2' },
      ]);
      assert.deepEqual(prepared.keyed.map((k) => [k.index, k.key, k.claimAt]), [
        [0, 'd1:1', 0],
        [1, 'd1:2', 1],
        [2, 'd2:1', 2],
      ]);
    });

    it('collapses a key repeated inside one message to its first occurrence', () => {
      const prepared = prepareReadings([r('a'), r('b'), r('a'), r('a')], true, keyOf);
      assert.deepEqual(prepared.claims.map((c) => c.key), ['a', 'b']);
      assert.deepEqual(prepared.keyed.map((k) => k.claimAt < 0), [false, false, true, true]);
    });

    it('rejects readings without a key, with where and why, and counts sparse holes too', () => {
      // A hole (a sparse array) is what is being tested.
      const readings = [r('a'), , 7, r('b')];
      const prepared = prepareReadings(readings, true, keyOf);
      assert.equal(prepared.received, 4);
      assert.deepEqual(prepared.rejected.map((x) => [x.index, x.value, x.problem]), [
        [1, 'undefined', 'has no key'],
        [2, 'undefined', 'has no key'],
      ]);
      assert.equal(prepared.rejected[1]?.raw, 7);
      assert.equal('where' in (prepared.rejected[0] as object), false);
    });

    it('keeps where a key was read when the key function says', () => {
      const prepared = prepareReadings([{}], false, () => ({ ok: false, path: null, value: 'null', problem: 'is missing', where: 'msg.topic' }));
      assert.equal(prepared.rejected[0]?.where, 'msg.topic');
      assert.equal(prepared.burst, false);
    });
  });

  describe('settleReadings and countsOf', () => {
    it('admits what the store admitted and suppresses the rest, in input order, repeats as duplicates', () => {
      const prepared = prepareReadings([r('a'), r('b'), r('a'), r('c'), 'bad'], true, keyOf);
      const settled = settleReadings(prepared, [CLAIM.admitted, CLAIM.duplicate, CLAIM.admitted]);
      assert.deepEqual(settled.admitted.map((k) => k.index), [0, 3]);
      assert.deepEqual(settled.suppressed.map((s) => [s.keyed.index, s.reason]), [
        [1, 'duplicate'],
        [2, 'duplicate'],
      ]);
      const counts = countsOf(prepared, settled);
      assert.deepEqual(counts, { received: 5, unique: 2, duplicates_suppressed: 2, rejected: 1, in_flight: 0, lease_expired: 0 });
      assertAddsUp(counts);
    });

    it('counts a pending key (and its repeats in the message) as in flight', () => {
      const prepared = prepareReadings([r('a'), r('a'), r('b')], true, keyOf);
      const settled = settleReadings(prepared, [CLAIM.inFlight, CLAIM.admitted]);
      assert.deepEqual(settled.suppressed.map((s) => s.reason), ['in-flight', 'in-flight']);
      const counts = countsOf(prepared, settled);
      assert.deepEqual(counts, { received: 3, unique: 1, duplicates_suppressed: 2, rejected: 0, in_flight: 2, lease_expired: 0 });
      assertAddsUp(counts);
    });

    it('a repeat of an admitted key in the same message is a duplicate, not in flight', () => {
      const prepared = prepareReadings([r('a'), r('a')], true, keyOf);
      const settled = settleReadings(prepared, [CLAIM.admitted]);
      assert.deepEqual(settled.suppressed.map((s) => s.reason), ['duplicate']);
    });

    it('counts an admission past an expired lease, and a replayed message, as admitted', () => {
      const prepared = prepareReadings([r('a'), r('b'), r('c')], true, keyOf);
      const settled = settleReadings(prepared, [CLAIM.admitted | LEASE_EXPIRED, CLAIM.replayed, CLAIM.admitted]);
      assert.equal(settled.admitted.length, 3);
      assert.equal(settled.leaseExpired, 1);
      assert.equal(settled.replayed, 1);
      const counts = countsOf(prepared, settled);
      assert.equal(counts.lease_expired, 1);
      assertAddsUp(counts);
    });

    it('admits every first occurrence when the store failed, keeps in-message repeats suppressed, and says why', () => {
      const prepared = prepareReadings([r('a'), r('a'), r('b'), {}], true, keyOf);
      const settled = settleReadings(prepared, undefined, 'Redis did not answer within 200 ms');
      assert.equal(settled.storeError, 'Redis did not answer within 200 ms');
      assert.deepEqual(settled.admitted.map((k) => k.key), ['a', 'b']);
      assert.deepEqual(settled.suppressed.map((s) => [s.keyed.index, s.reason]), [[1, 'duplicate']]);
      const counts = countsOf(prepared, settled);
      assertAddsUp(counts);
      assert.equal(counts.unique, 2);
      assert.equal('storeError' in settleReadings(prepared, [CLAIM.admitted, CLAIM.admitted]), false);
    });

    it('counts a message that could not be decided at all (store failed, policy: error) as rejected, still adding up', () => {
      const prepared = prepareReadings([r('a'), r('a'), 'bad'], true, keyOf);
      const counts = undecidedCounts(prepared);
      assert.deepEqual(counts, { received: 3, unique: 0, duplicates_suppressed: 0, rejected: 3, in_flight: 0, lease_expired: 0 });
      assertAddsUp(counts);
    });

    it('adds up for random bursts through a real seen-set, whatever the mix', () => {
      const seen = new BoundedSeenSet({ ttlMs: 60_000, maxKeys: 50, leaseMs: 1000 });
      let seed = 7;
      const random = (n: number): number => {
        seed = (seed * 1103515245 + 12345) % 2 ** 31;
        return seed % n;
      };
      for (let message = 0; message < 300; message++) {
        const readings: unknown[] = [];
        const size = 1 + random(12);
        for (let i = 0; i < size; i++) readings.push(random(10) === 0 ? null : r(`d${random(3)}:${random(40)}`));
        const prepared: Prepared = prepareReadings(readings, true, keyOf);
        const now = message * 100;
        const pending = random(2) === 0;
        const codes = prepared.claims.map((claim) => seen.claim(claim.key, message + 1, pending, now));
        const counts = countsOf(prepared, settleReadings(prepared, codes));
        assertAddsUp(counts);
        assert.equal(counts.received, size);
      }
    });
  });

  describe('auditReason', () => {
    const reasonOf = (readings: unknown[], codes: number[] | undefined, storeError?: string, pending = false): string => {
      const prepared = prepareReadings(readings, true, keyOf);
      return auditReason(prepared, settleReadings(prepared, codes, storeError, pending));
    };

    it('is new only when some reading was admitted', () => {
      assert.equal(reasonOf([r('d:1'), r('d:2')], [CLAIM.admitted, CLAIM.duplicate]), 'new');
      assert.equal(reasonOf([r('d:1')], undefined, 'ECONNREFUSED'), 'store-unavailable');
    });

    it('says why nothing was admitted', () => {
      assert.equal(reasonOf([r('d:1'), r('d:2'), null], [CLAIM.inFlight, CLAIM.duplicate]), 'duplicate');
      assert.equal(reasonOf([r('d:1'), r('d:1')], [CLAIM.inFlight]), 'in-flight');
      assert.equal(reasonOf([null, 7], []), 'rejected');
      assert.equal(reasonOf([], []), 'empty');
    });
  });

  describe('auditValue', () => {
    const shown = (given: unknown): unknown => auditValue({ given, value: 'rendered' });

    it('keeps numbers, booleans, null and short strings as the reading held them', () => {
      assert.equal(shown(150), 150);
      assert.equal(shown(-0.5), -0.5);
      assert.equal(shown(false), false);
      assert.equal(shown(null), null);
      assert.equal(shown('150'), '150');
    });

    it('shows anything else as its error message does', () => {
      for (const given of [undefined, Number.NaN, Infinity, { level: 3 }, [1], 'x'.repeat(81)]) assert.equal(shown(given), 'rendered');
    });
  });
});
