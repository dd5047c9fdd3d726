/**
 * examples/bin-fill-levels.json does what its comment says: the sliding-window
 * node in value mode (deadband 5 points, heartbeat 6 h, keyed on msg.topic)
 * over three bins read every 15 simulated minutes. bin-07 reads 40, 41, 42,
 * 46, 46 (issue 29's deadband case): admitted, suppressed, suppressed,
 * admitted (changed, 6 from 40), suppressed, and, staying at 46, admitted
 * again 6 h after its last forwarded reading. 14 of the 84 readings are
 * forwarded.
 */
import assert from 'node:assert/strict';
import { until, type Msg } from '../support/node-red-helper';
import { examplesInThisBlock } from './example-runtime';

const TICKS = 28;
const BINS = 3;

interface Decided {
  decision: string;
  reason: string;
  value: number;
  valueChange: unknown;
}

describe('example: bin fill levels', function () {
  this.timeout(60_000);
  const run = examplesInThisBlock();

  it('bin-07 reads 40, 41, 42, 46, 46: admitted, suppressed, suppressed, admitted (changed: 6 from 40), suppressed; a level that stays put is admitted at 6 h', async function () {
    const ex = await run('bin-fill-levels', { manualInjects: true });
    const forwarded = ex.arrivals(ex.idOf('forwarded'));
    const heldBack = ex.arrivals(ex.idOf('held back'));
    for (let tick = 1; tick <= TICKS; tick++) {
      ex.press('every second');
      await until(() => forwarded.length + heldBack.length === tick * BINS, `the readings of tick ${tick}`);
    }

    // Each bin's readings in the order they were taken (the two outputs interleave).
    const payloadOf = (m: Msg): { fill_pct: number; ts: string } => m.payload as { fill_pct: number; ts: string };
    const of = (bin: string): Decided[] =>
      [...forwarded, ...heldBack]
        .filter((m) => m.topic === `bins/${bin}`)
        .sort((a, b) => payloadOf(a).ts.localeCompare(payloadOf(b).ts))
        .map((m) => ({ decision: String(m.dedup?.decision), reason: String(m.dedup?.reason), value: payloadOf(m).fill_pct, valueChange: m.dedup?.valueChange }));
    const admittedAt = (bin: string): number[] => of(bin).flatMap((d, at) => (d.decision === 'admitted' ? [at] : []));

    const bin07 = of('bin-07');
    assert.equal(bin07.length, TICKS);
    assert.deepEqual(
      bin07.slice(0, 5).map((d) => `${d.value} ${d.decision} ${d.reason}`),
      ['40 admitted first', '41 suppressed unchanged', '42 suppressed unchanged', '46 admitted changed', '46 suppressed unchanged'],
    );
    assert.equal(bin07[3]?.valueChange, 6, 'changed: 6 from 40');
    // 46 since the fourth reading (15-minute steps): 6 h later is the 28th.
    assert.deepEqual(admittedAt('bin-07'), [0, 3, 27]);
    assert.equal(bin07[27]?.reason, 'elapsed');

    // Fills 2 points a reading: every third one is 6 points on; emptied at the 21st (5 h), then 5 points up at the 26th.
    assert.deepEqual(admittedAt('bin-12'), [0, 3, 6, 9, 12, 15, 18, 20, 25]);
    assert.deepEqual(admittedAt('bin-31'), [0, 24], 'a level that stays put: first, then at 6 h');
    assert.equal(of('bin-31')[24]?.reason, 'elapsed');

    assert.equal(forwarded.length, 14, 'of 84 readings, 14 forwarded');
    const node = ex.idOf('fill level: 5 points or 6 h');
    await until(() => ex.statuses(node).at(-1)?.text === '14 admitted / 70 suppressed / 0 rejected', "the counts in the node's status");
  });
});
