/**
 * The dedup-stats report (src/insight/stats-report.ts): totals by reason,
 * the share suppressed, and the per-minute rates between two reports, on
 * counts and times given by the test.
 */
import assert from 'node:assert/strict';
import { WINDOW_REASONS } from '../../../src/core/window/window-reasons';
import { WINDOW_SLOTS } from '../../../src/telemetry/decision-slots';
import { nodeStats, shareOf, type CountsIn } from '../../../src/insight/stats-report';

const SINCE = 1_000_000;

/** A sliding-window node's counts: admitted by `elapsed`, suppressed by `late` and `window`. */
function counts(elapsed: number, late: number, window: number, rejected = 0): CountsIn {
  const decisions = new Float64Array(WINDOW_SLOTS.length);
  decisions[WINDOW_REASONS.elapsed.code] = elapsed;
  decisions[WINDOW_REASONS.late.code] = late;
  decisions[WINDOW_REASONS.window.code] = window;
  return {
    id: 'n1',
    name: 'vans',
    type: 'sliding-window-dedup',
    flow: 'Fleet',
    store: 'memory',
    running: true,
    since: SINCE,
    totals: { admitted: elapsed, suppressed: late + window, rejected },
    decisions,
    top: [{ id: 'a', suppressed: 3, admitted: 1 }],
  };
}

describe('stats report', function () {
  it('counts by reason as the metrics word them, every reason of the node present', function () {
    const { stats } = nodeStats(counts(6, 1, 3), SINCE + 60_000, undefined, true);
    assert.deepEqual(stats.reasons, {
      admitted: { 'store-unavailable': 0, first: 0, replayed: 0, elapsed: 6, event: 0, moved: 0, turned: 0, relocated: 0, changed: 0 },
      suppressed: { ahead: 0, late: 1, window: 3, 'no-fix': 0, 'poor-fix': 0, jump: 0, unchanged: 0 },
    });
    assert.equal(stats.shareSuppressed, 0.4);
    assert.deepEqual(stats.top, [{ id: 'a', suppressed: 3, admitted: 1 }]);
  });

  it('takes the first report\'s rates since the node started, and the next ones since the report before', function () {
    const first = nodeStats(counts(6, 1, 3, 2), SINCE + 120_000, undefined, true);
    assert.equal(first.stats.perMinute.seconds, 120);
    assert.deepEqual([first.stats.perMinute.admitted, first.stats.perMinute.suppressed, first.stats.perMinute.rejected], [3, 2, 1]);
    assert.equal(first.stats.perMinute.reasons?.suppressed.late, 0.5);
    // 30 s on: 3 more admitted, 3 more late.
    const second = nodeStats(counts(9, 4, 3, 2), SINCE + 150_000, first.reading, true);
    assert.equal(second.stats.perMinute.seconds, 30);
    assert.deepEqual([second.stats.perMinute.admitted, second.stats.perMinute.suppressed, second.stats.perMinute.rejected], [6, 6, 0]);
    assert.deepEqual(second.stats.perMinute.reasons?.suppressed, { ahead: 0, late: 6, window: 0, 'no-fix': 0, 'poor-fix': 0, jump: 0, unchanged: 0 });
    assert.equal(second.stats.perMinute.shareSuppressed, 0.5);
    assert.deepEqual(second.stats.totals, { admitted: 9, suppressed: 7, rejected: 2 });
  });

  it('starts over from the node\'s start when its counts went down (deleted and made again under its id)', function () {
    const first = nodeStats(counts(60, 0, 0), SINCE + 60_000, undefined, true);
    const after = nodeStats({ ...counts(2, 0, 0), since: SINCE + 90_000 }, SINCE + 120_000, first.reading, true);
    assert.equal(after.stats.perMinute.seconds, 30);
    assert.equal(after.stats.perMinute.admitted, 4);
  });

  it('gives 0, not NaN or Infinity, before any decision and in the millisecond a node starts', function () {
    const { stats } = nodeStats(counts(0, 0, 0), SINCE, undefined, true);
    assert.equal(stats.shareSuppressed, 0);
    assert.deepEqual([stats.perMinute.admitted, stats.perMinute.suppressed, stats.perMinute.shareSuppressed, stats.perMinute.seconds], [0, 0, 0, 0]);
    assert.equal(shareOf(0, 0), 0);
  });

  it('leaves the reasons out when they are not counted', function () {
    const { stats } = nodeStats(counts(1, 1, 0), SINCE + 1000, undefined, false);
    assert.equal(stats.reasons, null);
    assert.equal(stats.perMinute.reasons, null);
    assert.deepEqual(stats.totals, { admitted: 1, suppressed: 1, rejected: 0 });
  });
});
