/**
 * The sliding-window node's fleet rules (issue 11) as a flow sees them, on
 * both stores: events, turns, GPS accuracy and the clock guard, the reason
 * each gives in msg.dedup, headingChange, and the errors a Catch node gets
 * for a heading or accuracy that cannot be read.
 */
import assert from 'node:assert/strict';
import { useRedis } from '../support/global-hooks';
import { helper, loadDedup, sleep, startServer, stopServer, until, type DedupHarness, type StoreKind } from '../support/node-red-helper';

const LAT = 52.5200087;
const LON = 13.4049547;
/** About one metre of latitude. */
const METRE = 1 / 111_195;

const RULES = {
  version: 2,
  minSeconds: '60',
  minMetres: '25',
  eventFields: 'payload.ignition, payload.alarm',
  minHeadingDegrees: '10',
  headingProperty: 'payload.heading',
  accuracyProperty: 'payload.accuracy',
  maxAheadSeconds: '300',
};

/** Epoch seconds a little in the past, so that the clock guard leaves them alone. */
const BASE = Math.floor(Date.now() / 1000) - 3600;

function fix(seconds: number, more: Record<string, unknown> = {}, metresNorth = 0): Record<string, unknown> {
  return { assetId: 'veh-1', ts: BASE + seconds, lat: LAT + metresNorth * METRE, lon: LON, ...more };
}

async function decideAll(h: DedupHarness, payloads: Record<string, unknown>[], errors = 0): Promise<string[]> {
  const start = h.completed.length + h.caught.length;
  const before = h.admitted.length + h.second.length;
  for (const payload of payloads) h.send(payload);
  await until(() => h.completed.length + h.caught.length >= start + payloads.length, 'every ping decided');
  await sleep(10);
  assert.equal(h.caught.length, errors, JSON.stringify(h.caught.map((m) => m.error?.message)));
  return [...h.admitted, ...h.second]
    .sort((a, b) => Number((a.payload as { ts: number }).ts) - Number((b.payload as { ts: number }).ts))
    .slice(before)
    .map((m) => String(m.dedup?.reason));
}

function storeSuite(store: StoreKind): void {
  describe(`sliding-window dedup fleet rules, ${store} store`, function () {
    if (store === 'redis') useRedis();
    before(startServer);
    after(stopServer);
    afterEach(async function () {
      await helper.unload();
    });

    it('admits an ignition change 10 s and 5 m after the last admitted ping (event)', async function () {
      const h = await loadDedup('sliding-window-dedup', store, RULES);
      const reasons = await decideAll(h, [
        fix(0, { ignition: true }),
        fix(10, { ignition: true }, 5),
        fix(20, { ignition: false }, 5),
        fix(30, { ignition: false, alarm: 'tow' }, 5),
        fix(40, { ignition: false }, 5),
      ]);
      // An alarm property that appears is a change, and so is one that disappears.
      assert.deepEqual(reasons, ['first', 'window', 'event', 'event', 'event']);
    });

    it('admits a turn at a junction (turned), with the shortest angle across north', async function () {
      const h = await loadDedup('sliding-window-dedup', store, RULES);
      await decideAll(h, [fix(0, { heading: 355 }), fix(5, { heading: 3 }, 10), fix(10, { heading: 20 }, 15)]);
      const [first, across, turned] = [...h.admitted, ...h.second].sort((a, b) => Number((a.payload as { ts: number }).ts) - Number((b.payload as { ts: number }).ts));
      assert.equal(first?.dedup?.reason, 'first');
      assert.equal(across?.dedup?.reason, 'window');
      assert.equal(across?.dedup?.headingChange, 8, '355 to 3 degrees is 8 degrees, not 352');
      assert.equal(turned?.dedup?.reason, 'turned');
      assert.equal(turned?.dedup?.headingChange, 25);
    });

    it('takes the fixes\' accuracy into account: jitter of a parked vehicle stays suppressed', async function () {
      const h = await loadDedup('sliding-window-dedup', store, RULES);
      const reasons = await decideAll(h, [
        fix(0, { accuracy: 15 }),
        fix(5, { accuracy: 15 }, 28), // 28 m, but within 15 + 15 m of uncertainty
        fix(10, {}, 28), // accuracy missing on one side counts as 0: 28 > 15
        fix(15, { accuracy: 3 }, 60),
      ]);
      assert.deepEqual(reasons, ['first', 'window', 'moved', 'moved']);
    });

    it('suppresses a ping from a clock a year ahead without letting it become the baseline (ahead)', async function () {
      const h = await loadDedup('sliding-window-dedup', store, RULES);
      const year = 365 * 86_400;
      const reasons = await decideAll(h, [fix(year), fix(0), fix(year + 1), fix(61)]);
      assert.equal(reasons.length, 4, 'four decisions');
      const byTs = new Map([...h.admitted, ...h.second].map((m) => [Number((m.payload as { ts: number }).ts) - BASE, m.dedup]));
      assert.equal(byTs.get(year)?.reason, 'ahead', 'the first ping, a year ahead, does not set a baseline');
      assert.equal(byTs.get(0)?.reason, 'first');
      assert.equal(byTs.get(year + 1)?.reason, 'ahead');
      assert.equal(byTs.get(61)?.reason, 'elapsed', 'real pings go on as if the bad one never came');
    });

    it('sends a heading or accuracy that cannot be read to the Catch node, naming the property', async function () {
      const h = await loadDedup('sliding-window-dedup', store, RULES);
      await decideAll(h, [fix(0, { heading: 400 }), fix(1, { accuracy: -2 }), fix(2, { heading: null })], 2);
      assert.deepEqual(
        h.caught.map((m) => m.error?.message),
        ['Error: msg.payload.heading = 400: must be between 0 and 360', 'Error: msg.payload.accuracy = -2: must be 0 or more metres'],
      );
      assert.equal(h.admitted[0]?.dedup?.reason, 'first', 'a null heading is no heading');
    });

    it('refuses a turn threshold outside (0, 180] with a configuration error', async function () {
      const h = await loadDedup('sliding-window-dedup', store, { ...RULES, minHeadingDegrees: '270' });
      h.send(fix(0));
      await until(() => h.caught.length === 1, 'the configuration error');
      assert.match(h.caught[0]?.error?.message ?? '', /Invalid configuration: minHeadingDegrees must be more than 0 and at most 180/);
    });
  });
}

storeSuite('memory');
storeSuite('redis');
