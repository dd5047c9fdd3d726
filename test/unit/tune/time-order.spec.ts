/**
 * tune/time-order: a file's pings in time order, stably, for any order of
 * the rows (sorted by vehicle, shuffled, already in order).
 */
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { PingColumnsBuilder } from '../../../src/core/window/ping-columns';
import { inTimeOrder, timeOrder, toTimeOrder } from '../../../src/tune/time-order';

describe('tune/time-order', function () {
  it('orders by time as a stable sort does, whatever the runs', function () {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 20 }), { maxLength: 200 }), (times) => {
        const t = Float64Array.from(times);
        const expected = times.map((_, i) => i).sort((a, b) => (times[a] as number) - (times[b] as number) || a - b);
        assert.deepEqual(Array.from(timeOrder(t, t.length)), expected);
      }),
      { numRuns: 500 },
    );
  });

  it('moves every column with its ping, and leaves columns in order as they are', function () {
    const builder = new PingColumnsBuilder();
    const rows: [string, number][] = [['a', 30], ['a', 40], ['b', 10], ['b', 35], ['c', 20]];
    rows.forEach(([assetId, t], i) => builder.add({ assetId, t, lat: i, lon: 0 - i, heading: i * 10, accuracy: i + 1, events: i * 100, retry: false }, i * 1000));
    const columns = toTimeOrder(builder.build());
    assert.deepEqual(Array.from(columns.t), [10, 20, 30, 35, 40]);
    assert.deepEqual(Array.from(columns.asset, (a) => columns.names[a]), ['b', 'c', 'a', 'b', 'a']);
    for (const [name, scale] of [['lat', 1], ['lon', -1], ['heading', 10], ['events', 100], ['arrival', 1000]] as const) {
      assert.deepEqual(Array.from(columns[name]), [2, 4, 0, 3, 1].map((i) => i * scale || 0), name);
    }
    assert.deepEqual(Array.from(columns.accuracy), [3, 5, 1, 4, 2]);
    assert.equal(inTimeOrder(columns), true);
    const t = columns.t;
    assert.equal(toTimeOrder(columns).t, t, 'in order already: not copied');
  });
});
