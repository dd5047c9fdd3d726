/**
 * The linger's rule alone (src/redis/linger.ts): when a turn's requests
 * wait, and for how long. The batcher's use of it, with its timer, is in
 * tick-batcher.spec.ts.
 */
import assert from 'node:assert/strict';
import { effectiveLinger, Linger, LINGER_ENOUGH, LINGER_MIN_SHARE, LINGER_REST_MS } from '../../../src/redis/linger';

describe('redis/linger', () => {
  describe('effectiveLinger', () => {
    it('is the linger asked for, at most half the timeout, and 0 for none', () => {
      assert.equal(effectiveLinger(2, 2000), 2);
      assert.equal(effectiveLinger(5000, 2000), 1000);
      assert.equal(effectiveLinger(0, 2000), 0);
      assert.equal(effectiveLinger(-1, 2000), 0);
      assert.equal(effectiveLinger(Number.NaN, 2000), 0);
    });
  });

  describe('Linger.holds', () => {
    it('never holds when off', () => {
      const linger = new Linger(0);
      assert.equal(linger.on, false);
      assert.equal(linger.holds(1, 0), false);
      assert.equal(linger.holds(1, 0.1), false);
    });

    it('does not hold the first turn, nor one that comes longer than the linger after the turn before', () => {
      const linger = new Linger(3);
      assert.equal(linger.holds(1, 100), false, 'nothing came before');
      assert.equal(linger.holds(1, 103.5), false, '3.5 ms after the turn before');
      assert.equal(linger.since, undefined);
    });

    it('holds turns that come closer together, until the oldest has waited the linger', () => {
      const linger = new Linger(3);
      linger.holds(1, 100);
      assert.equal(linger.holds(2, 101), true);
      assert.equal(linger.since, 101);
      assert.equal(linger.deadline, 104);
      assert.equal(linger.holds(4, 103.9), true);
      assert.equal(linger.holds(5, 104), false, 'the oldest has waited 3 ms');
      linger.sent();
      assert.equal(linger.since, undefined);
      assert.equal(linger.holds(1, 104.5), true, 'the next turn, 0.5 ms later, starts a new wait');
      assert.equal(linger.since, 104.5);
    });

    it(`rests ${LINGER_REST_MS} ms after a wait whose calls carried fewer than ${LINGER_MIN_SHARE} requests each (a Cluster at a quiet rate)`, () => {
      const linger = new Linger(3);
      linger.holds(1, 100);
      assert.equal(linger.holds(2, 101), true);
      linger.filled(12, 14, 104);
      linger.sent();
      assert.equal(linger.holds(1, 104.5), false, 'resting');
      assert.equal(linger.holds(1, 105), false);
      assert.equal(linger.holds(1, 104 + LINGER_REST_MS - 0.5), false);
      assert.equal(linger.holds(1, 104 + LINGER_REST_MS + 0.1), true, 'and waits again after the rest');
    });

    it('goes on waiting after a wait that filled its calls, and after any wait of one call (one server: a pause, not a spread)', () => {
      const linger = new Linger(3);
      linger.holds(1, 100);
      assert.equal(linger.holds(2, 101), true);
      assert.equal(linger.holds(4, 103), true);
      linger.filled(1, 7, 104);
      linger.sent();
      assert.equal(linger.holds(2, 104.5), true);
      assert.equal(linger.holds(3, 106), true);
      linger.filled(1, 1, 107.5);
      linger.sent();
      assert.equal(linger.holds(1, 108), true, 'one call of one request: no rest');
    });

    it(`does not hold ${LINGER_ENOUGH} requests or more: a busy rate has no linger`, () => {
      const linger = new Linger(3);
      linger.holds(1, 100);
      assert.equal(linger.holds(LINGER_ENOUGH, 100.5), false);
      assert.equal(linger.holds(LINGER_ENOUGH - 1, 101), true);
      assert.equal(linger.holds(LINGER_ENOUGH, 101.5), false, 'what waited is now enough');
    });
  });
});
