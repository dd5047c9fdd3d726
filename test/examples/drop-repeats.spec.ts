/**
 * examples/drop-repeats.json does what its comment says: of nine messages on
 * three topics, each topic's new values pass once, in order, and every copy
 * of a topic and payload already seen is a repeat (output 2, `duplicate`);
 * sent again, all nine are repeats; `msg.reset` forgets them.
 */
import assert from 'node:assert/strict';
import { until, type Msg } from '../support/node-red-helper';
import { examplesInThisBlock, type RunningExample } from './example-runtime';

const SEND = 'readings, as MQTT would bring them';

/** Presses the readings' inject and waits for its nine messages to be decided. */
async function sendReadings(ex: RunningExample): Promise<{ passed: Msg[]; repeats: Msg[] }> {
  const passed = ex.arrivals(ex.idOf('passed'));
  const repeats = ex.arrivals(ex.idOf('repeats'));
  const before = { passed: passed.length, repeats: repeats.length };
  ex.press(SEND);
  await until(() => passed.length + repeats.length === before.passed + before.repeats + 9, 'the nine messages decided');
  return { passed: passed.slice(before.passed), repeats: repeats.slice(before.repeats) };
}

const shown = (list: Msg[]): string[] => list.map((m) => `${String(m.topic)} ${JSON.stringify(m.payload)}`);

describe('example: drop repeats', function () {
  this.timeout(30_000);
  const run = examplesInThisBlock();

  it('passes each topic\'s new values once, in order, and sends every repeat to output 2', async function () {
    const ex = await run('drop-repeats', { manualInjects: true });
    const first = await sendReadings(ex);
    assert.deepEqual(shown(first.passed), [
      'home/kitchen/temperature 21.5',
      'home/hall/door "open"',
      'home/kitchen/temperature 22',
      'home/hall/door "closed"',
      'home/garden/meter {"kwh":1204.5,"w":310}',
    ]);
    assert.deepEqual(shown(first.repeats), [
      'home/kitchen/temperature 21.5',
      'home/kitchen/temperature 21.5',
      'home/hall/door "open"',
      'home/garden/meter {"kwh":1204.5,"w":310}',
    ]);
    for (const m of first.repeats) assert.equal(m.dedup?.reason, 'duplicate');
    const node = ex.idOf('drop repeats (topic + payload)');
    // The status is redrawn at most a few times a second: wait for the last one.
    await until(() => ex.statuses(node).at(-1)?.text === '9 received / 5 unique / 4 suppressed / 0 rejected', 'the counts in the node\'s status');

    const again = await sendReadings(ex);
    assert.deepEqual(again.passed, [], 'sent again, nothing passes');
    assert.equal(again.repeats.length, 9);

    ex.press('forget all');
    const afterReset = await sendReadings(ex);
    assert.equal(afterReset.passed.length, 5, 'after msg.reset the new values pass again');
  });
});
