/**
 * tune/ttl-what-if: the fraction of replays a shorter Remember would have
 * let through, with the stores' boundary (a key is gone at admission + TTL).
 */
import assert from 'node:assert/strict';
import { ttlWhatIf } from '../../../src/tune/ttl-what-if';

describe('tune/ttl-what-if', function () {
  it('lets through the replays at least a TTL after their first copy', function () {
    const gaps = new Float64Array([0, 5_000, 60_000, 59_999, 3_600_000, 7_200_000]);
    const points = ttlWhatIf(gaps, 21_600, [60, 3600]);
    assert.deepEqual(points, [
      { ttlSeconds: 60, letThrough: 3, fraction: 0.5 },
      { ttlSeconds: 3600, letThrough: 2, fraction: 2 / 6 },
      { ttlSeconds: 21_600, letThrough: 0, fraction: 0 },
    ]);
  });

  it('tries only TTLs shorter than the node\'s own, and the node\'s own', function () {
    const points = ttlWhatIf(new Float64Array([1000]), 900);
    assert.deepEqual(points.map((p) => p.ttlSeconds), [10, 60, 300, 900]);
    assert.deepEqual(ttlWhatIf(new Float64Array(0), 900, [60]), [
      { ttlSeconds: 60, letThrough: 0, fraction: 0 },
      { ttlSeconds: 900, letThrough: 0, fraction: 0 },
    ]);
  });
});
