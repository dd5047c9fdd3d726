/**
 * examples/fleet-with-events.json does what its comment says: each vehicle
 * shows its fleet rule in msg.dedup.reason, in the debug sidebar: van-07's
 * ignition changes are `event`, bus-12's corners `turned` (and its sides
 * `moved`), car-parked's GPS jitter within its accuracy never `moved`, and
 * trk-2027, a year ahead, always `ahead`.
 */
import assert from 'node:assert/strict';
import { until, type Msg } from '../support/node-red-helper';
import { examplesInThisBlock, type RunningExample } from './example-runtime';

const VEHICLES = ['van-07', 'bus-12', 'car-parked', 'trk-2027'];
const TICKS = 40;

interface Decision {
  tick: number;
  admitted: boolean;
  reason: string;
  distanceMetres: number | null;
  headingChange: number | null;
}

async function drive(ex: RunningExample, ticks: number): Promise<Map<string, Decision[]>> {
  const admitted = ex.arrivals(ex.idOf('admitted', 'debug'));
  const suppressed = ex.arrivals(ex.idOf('suppressed', 'debug'));
  const byVehicle = new Map<string, Decision[]>(VEHICLES.map((v) => [v, []]));
  const seen = { admitted: 0, suppressed: 0 };
  for (let tick = 1; tick <= ticks; tick++) {
    ex.press('every 2 s');
    await until(() => admitted.length + suppressed.length === tick * VEHICLES.length, `the pings of tick ${tick}`);
    for (const [list, isAdmitted] of [[admitted, true], [suppressed, false]] as const) {
      const key = isAdmitted ? 'admitted' : 'suppressed';
      for (const msg of list.slice(seen[key])) {
        const d = msg.dedup as Record<string, unknown>;
        byVehicle.get(String(d.assetId))?.push({
          tick,
          admitted: isAdmitted,
          reason: String(d.reason),
          distanceMetres: d.distanceMetres as number | null,
          headingChange: d.headingChange as number | null,
        });
        assert.equal(d.decision, isAdmitted ? 'admitted' : 'suppressed');
      }
      seen[key] = list.length;
    }
  }
  return byVehicle;
}

const reasonsOf = (decisions: Decision[] | undefined): string[] => (decisions ?? []).map((d) => d.reason);
const ticksOf = (decisions: Decision[] | undefined, reason: string): number[] => (decisions ?? []).filter((d) => d.reason === reason).map((d) => d.tick);

describe('example: fleet with events', function () {
  this.timeout(30_000);
  const run = examplesInThisBlock();

  it('shows each fleet rule as a reason: event, turned and moved, window within the accuracy, ahead', async function () {
    const ex = await run('fleet-with-events', { manualInjects: true });
    const decisions = await drive(ex, TICKS);

    // van-07: admitted only when its ignition changes (every 6 ticks), standing still.
    const van = decisions.get('van-07');
    assert.deepEqual(ticksOf(van, 'event'), [7, 13, 19, 25, 31, 37]);
    assert.deepEqual([...new Set(reasonsOf(van))].sort(), ['event', 'first', 'window']);

    // bus-12: a turn at each corner, a few metres after the last admitted ping.
    const bus = decisions.get('bus-12');
    assert.deepEqual(ticksOf(bus, 'turned'), [13, 25, 37]);
    for (const d of (bus ?? []).filter((x) => x.reason === 'turned')) {
      assert.ok((d.distanceMetres ?? Infinity) < 25, `turned within ${d.distanceMetres} m`);
      assert.equal(d.headingChange, 90);
    }
    assert.ok(ticksOf(bus, 'moved').length >= 3, 'moved along the sides');
    assert.ok(!reasonsOf(bus).includes('elapsed'));

    // car-parked: jitter farther than the Movement, yet within the accuracies: window.
    const car = decisions.get('car-parked') ?? [];
    assert.ok(!reasonsOf(car).includes('moved'), 'GPS jitter is never a move');
    const farJitter = car.filter((d) => d.reason === 'window' && (d.distanceMetres ?? 0) >= 25);
    assert.ok(farJitter.length >= 3, `suppressed jitter of 25 m or more: ${JSON.stringify(farJitter)}`);
    assert.deepEqual(ticksOf(car, 'elapsed'), [16, 31], 'admitted once per 30 s heartbeat');

    // trk-2027: every ping ahead, none admitted.
    const tracker = decisions.get('trk-2027') ?? [];
    assert.equal(tracker.length, TICKS);
    assert.deepEqual([...new Set(reasonsOf(tracker))], ['ahead']);

    // The tally in the sidebar and its status agree.
    const tallies = ex.arrivals(ex.idOf('reasons by vehicle'));
    const tally = (tallies.at(-1) as Msg).payload as Record<string, Record<string, number>>;
    assert.equal(tally['trk-2027']?.ahead, TICKS);
    assert.equal(tally['van-07']?.event, 6);
    assert.equal(tally['bus-12']?.turned, 3);
    assert.match(String(ex.statuses(ex.idOf('count by vehicle and reason')).at(-1)?.text), /van-07 event 6 · bus-12 turned 3 · car-parked window \d+ · trk-2027 ahead 40/);
    assert.deepEqual(ex.logged(), []);
  });

  it('control: with the fleet rules off, the ignition change, the turn and the jitter come out differently', async function () {
    const ex = await run('fleet-with-events', {
      manualInjects: true,
      edit: (flow) => {
        Object.assign(flow.find((n) => n.type === 'sliding-window-dedup') ?? {}, { eventFields: '', minHeadingDegrees: '', accuracyProperty: '', maxAheadSeconds: '' });
      },
    });
    const decisions = await drive(ex, 20);
    assert.deepEqual(ticksOf(decisions.get('van-07'), 'event'), []);
    assert.deepEqual(ticksOf(decisions.get('bus-12'), 'turned'), []);
    assert.ok(ticksOf(decisions.get('car-parked'), 'moved').length > 0, 'without the accuracy, far jitter is a move');
    assert.equal(reasonsOf(decisions.get('trk-2027'))[0], 'first', 'without the clock guard, the tracker sets its baseline a year ahead');
  });
});
