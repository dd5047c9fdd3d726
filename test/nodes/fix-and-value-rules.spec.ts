/**
 * The sliding-window node's rules of issue 29 as a flow sees them: the
 * no-fix guard (on by default), the fix's quality (satellites, HDOP), the
 * jump guard with its way out (the Traccar lock-out case), and value mode
 * (a deadband with a heartbeat, keyed by any message property, msg.topic
 * included), with the reasons and valueChange in msg.dedup and the errors
 * a Catch node gets.
 *
 * Every case runs on the memory store and on the Redis store (whose
 * lua/sliding-window.lua decides by the same rules).
 */
import assert from 'node:assert/strict';
import { flushRedis, useRedis } from '../support/global-hooks';
import { collect, dedupFlow, helper, loadDedup, sleep, startServer, stopServer, until, type DedupHarness, type Msg, type StoreKind } from '../support/node-red-helper';

const LAT = 52.5200087;
const LON = 13.4049547;
/** About one metre of latitude. */
const METRE = 1 / 111_195;
/** Epoch seconds eight hours in the past: a series of 6 h 15 min stays behind the clock guard. */
const BASE = Math.floor(Date.now() / 1000) - 8 * 3600;
const MINUTES = 60;

const POSITION = { version: 3, minSeconds: '60', minMetres: '25', ttlSeconds: '86400' };
const BINS = {
  version: 3,
  mode: 'value',
  assetIdProperty: 'payload.bin',
  valueProperty: 'payload.fill_pct',
  deadband: '5',
  deadbandUnit: 'units',
  minSeconds: '21600',
  ttlSeconds: '86400',
};

function fix(seconds: number, metresNorth = 0, more: Record<string, unknown> = {}): Record<string, unknown> {
  return { assetId: 'veh-1', ts: BASE + seconds, lat: LAT + metresNorth * METRE, lon: LON, ...more };
}

function reading(minutes: number, fill: unknown, bin = 'bin-A17'): Record<string, unknown> {
  return { bin, ts: BASE + minutes * MINUTES, fill_pct: fill };
}

/** Sends the payloads one after the other (each decided before the next) and gives the messages in order with their output. */
async function decideInOrder(h: DedupHarness, payloads: Record<string, unknown>[], extra: Partial<Msg>[] = []): Promise<Array<{ output: 1 | 2 | 'catch'; dedup: Record<string, unknown> | undefined; error?: string }>> {
  const out: Array<{ output: 1 | 2 | 'catch'; dedup: Record<string, unknown> | undefined; error?: string }> = [];
  for (const [i, payload] of payloads.entries()) {
    const before = [h.admitted.length, h.second.length, h.caught.length];
    const total = (): number => h.admitted.length + h.second.length + h.caught.length;
    h.send(payload, extra[i] ?? {});
    await until(() => total() > (before[0] as number) + (before[1] as number) + (before[2] as number), `a decision for ping ${i}`);
    if (h.admitted.length > (before[0] as number)) out.push({ output: 1, dedup: h.admitted.at(-1)?.dedup });
    else if (h.second.length > (before[1] as number)) out.push({ output: 2, dedup: h.second.at(-1)?.dedup });
    else out.push({ output: 'catch', dedup: undefined, error: h.caught.at(-1)?.error?.message ?? '' });
  }
  await sleep(5);
  return out;
}

const reasons = (decided: Array<{ dedup: Record<string, unknown> | undefined; error?: string }>): string[] => decided.map((d) => (d.dedup === undefined ? `catch: ${d.error ?? ''}` : String(d.dedup.reason as string)));

function storeSuite(store: StoreKind): void {
  describe(`sliding-window dedup, issue 29's rules, ${store} store`, function () {
    if (store === 'redis') useRedis();
    before(startServer);
    after(stopServer);
    beforeEach(async function () {
      if (store === 'redis') await flushRedis();
    });
    afterEach(async function () {
      await helper.unload();
    });

    describe('the no-fix guard', function () {
      it('on by default: a fix, 0,0, the same fix 20 s later give first, no-fix (suppressed), window (judged against the real baseline)', async function () {
        const h = await loadDedup('sliding-window-dedup', store, POSITION);
        const decided = await decideInOrder(h, [fix(0), { assetId: 'veh-1', ts: BASE + 10, lat: 0, lon: 0 }, fix(20)]);
        assert.deepEqual(reasons(decided), ['first', 'no-fix', 'window']);
        assert.deepEqual(decided.map((d) => d.output), [1, 2, 2]);
        assert.equal(decided[1]?.dedup?.decision, 'suppressed');
        assert.equal(decided[1]?.dedup?.distanceMetres, null, 'no distance is measured to a ping without a fix');
        assert.equal(decided[2]?.dedup?.dtSeconds, 20, 'judged against the first fix, not the 0,0 ping');
        assert.equal(decided[2]?.dedup?.distanceMetres, 0);
        assert.equal(decided[2]?.dedup?.accepted, 1);
        assert.equal(decided[2]?.dedup?.suppressed, 2);
      });

      it('reads the validity property: false, 0 and NMEA\'s "V" are no fix; before the first fix nothing is written', async function () {
        const h = await loadDedup('sliding-window-dedup', store, { ...POSITION, validProperty: 'payload.valid' });
        const decided = await decideInOrder(h, [
          fix(0, 0, { valid: 'V' }),
          fix(10, 0, { valid: 'A' }),
          fix(20, 500, { valid: false }),
          fix(30, 500, { valid: 0 }),
          fix(40, 500, { valid: true }),
        ]);
        assert.deepEqual(reasons(decided), ['no-fix', 'first', 'no-fix', 'no-fix', 'moved']);
        assert.deepEqual([decided[0]?.dedup?.accepted, decided[0]?.dedup?.suppressed], [0, 0], 'no record before the first fix');
      });

      it('turned off (noFix false), a ping at 0,0 is a position as any other', async function () {
        const h = await loadDedup('sliding-window-dedup', store, { ...POSITION, noFix: false });
        const decided = await decideInOrder(h, [fix(0), { assetId: 'veh-1', ts: BASE + 10, lat: 0, lon: 0 }]);
        assert.deepEqual(reasons(decided), ['first', 'moved']);
      });
    });

    describe('the fix\'s quality', function () {
      it('suppresses too few satellites or too high an HDOP as poor-fix, never the baseline; an unknown value passes', async function () {
        const h = await loadDedup('sliding-window-dedup', store, { ...POSITION, minSatellites: '4', satellitesProperty: 'payload.gps.sats', maxHdop: '2.5', hdopProperty: 'payload.gps.hdop' });
        const decided = await decideInOrder(h, [
          fix(0, 0, { gps: { sats: 3, hdop: 1 } }),
          fix(10, 0, { gps: { sats: 7, hdop: 1.2 } }),
          fix(20, 300, { gps: { sats: 9, hdop: 4.8 } }),
          fix(30, 10, {}),
          fix(40, 300, { gps: { sats: 4, hdop: 2.5 } }),
        ]);
        assert.deepEqual(reasons(decided), ['poor-fix', 'first', 'poor-fix', 'window', 'moved']);
        assert.equal(decided[4]?.dedup?.distanceMetres !== null && Math.round(Number(decided[4]?.dedup?.distanceMetres)), 300, 'measured from the first good fix');
      });

      it('sends a satellite count or HDOP that is not a number of 0 or more to the Catch node, naming the property', async function () {
        const h = await loadDedup('sliding-window-dedup', store, { ...POSITION, minSatellites: '4', maxHdop: '2.5' });
        const decided = await decideInOrder(h, [fix(0, 0, { satellites: 'many' }), fix(1, 0, { hdop: -1 }), fix(2, 0, { satellites: 5, hdop: null })]);
        assert.deepEqual(reasons(decided), [
          'catch: Error: msg.payload.satellites = "many": is not a number',
          'catch: Error: msg.payload.hdop = -1: must be 0 or more',
          'first',
        ]);
      });
    });

    describe('the jump guard', function () {
      const JUMPS = { ...POSITION, maxSpeedKmh: '150' };

      it('the Traccar lock-out case: silent 2 hours, back 50 km away at Max speed 150 km/h: relocated, and what follows is decided from there', async function () {
        const h = await loadDedup('sliding-window-dedup', store, JUMPS);
        const back = 2 * 3600;
        const decided = await decideInOrder(h, [fix(0), fix(back, 50_000), fix(back + 10, 50_005), fix(back + 20, 50_100)]);
        assert.deepEqual(reasons(decided), ['first', 'relocated', 'window', 'moved']);
        assert.deepEqual(decided.map((d) => d.output), [1, 1, 2, 1]);
        assert.equal(Math.round(Number(decided[2]?.dedup?.distanceMetres)), 5, 'measured from the relocated ping');
        assert.equal(decided[2]?.dedup?.dtSeconds, 10);
      });

      it('suppresses a jump (never the baseline) and relocates after three that agree with each other', async function () {
        const h = await loadDedup('sliding-window-dedup', store, JUMPS);
        const decided = await decideInOrder(h, [fix(0), fix(10, 5000), fix(20, 5100), fix(30, 10), fix(40, 5300), fix(50, 5400), fix(60, 5500), fix(70, 5505)]);
        // A ping near the baseline is no jump and starts the count over; the third agreeing jump moves the asset.
        assert.deepEqual(reasons(decided), ['first', 'jump', 'jump', 'window', 'jump', 'jump', 'relocated', 'window']);
        assert.equal(decided[1]?.dedup?.decision, 'suppressed');
        assert.equal(Math.round(Number(decided[1]?.dedup?.distanceMetres)), 5000);
      });

      it('never judges a late ping by speed, and relocates after Relocate after seconds', async function () {
        const h = await loadDedup('sliding-window-dedup', store, { ...JUMPS, relocateAfterSeconds: '300' });
        const decided = await decideInOrder(h, [fix(100), fix(50, 90_000), fix(401, 20_000)]);
        assert.deepEqual(reasons(decided), ['first', 'late', 'relocated']);
      });
    });

    describe('value mode', function () {
      it('the deadband: 40, 41, 42, 46, 46 every 15 min, deadband 5, Heartbeat 6 h: admitted, suppressed, suppressed, admitted (changed, 6 from 40), suppressed', async function () {
        const h = await loadDedup('sliding-window-dedup', store, BINS);
        const decided = await decideInOrder(h, [40, 41, 42, 46, 46].map((fill, i) => reading(i * 15, fill)));
        assert.deepEqual(decided.map((d) => d.output), [1, 2, 2, 1, 2]);
        assert.deepEqual(reasons(decided), ['first', 'unchanged', 'unchanged', 'changed', 'unchanged']);
        assert.deepEqual(decided.map((d) => d.dedup?.valueChange), [null, 1, 2, 6, 0]);
        assert.deepEqual(decided.map((d) => d.dedup?.distanceMetres), [null, null, null, null, null], 'no distance in value mode');
        assert.equal(decided[3]?.dedup?.assetId, 'bin-A17');
      });

      it('the same level for 6 h 15 min is admitted once more, at 6 h (elapsed)', async function () {
        const h = await loadDedup('sliding-window-dedup', store, BINS);
        const minutes = Array.from({ length: 26 }, (_, i) => i * 15);
        const decided = await decideInOrder(h, minutes.map((m) => reading(m, 62.5)));
        const admitted = decided.flatMap((d, i) => (d.output === 1 ? [`${minutes[i]} min ${String(d.dedup?.reason)}`] : []));
        assert.deepEqual(admitted, ['0 min first', '360 min elapsed']);
        assert.ok(decided.every((d) => d.output === 1 || d.dedup?.reason === 'unchanged'));
      });

      it('a percent deadband: a change of at least 10 % of the last admitted value', async function () {
        const h = await loadDedup('sliding-window-dedup', store, { ...BINS, deadband: '10', deadbandUnit: 'percent' });
        const decided = await decideInOrder(h, [50, 54, 55, 60, 66].map((fill, i) => reading(i * 15, fill)));
        assert.deepEqual(reasons(decided), ['first', 'unchanged', 'changed', 'unchanged', 'changed']);
      });

      it('keys by msg.topic: two bins on one topic each, interleaved, each against its own last reading', async function () {
        const h = await loadDedup('sliding-window-dedup', store, { ...BINS, assetIdProperty: 'topic' });
        const sends = [
          ['bins/A17', 40],
          ['bins/B04', 80],
          ['bins/A17', 41],
          ['bins/B04', 86],
          ['bins/A17', 46],
        ] as const;
        const decided = await decideInOrder(
          h,
          sends.map(([, fill], i) => ({ ts: BASE + i * 15 * MINUTES, fill_pct: fill })),
          sends.map(([topic]) => ({ topic })),
        );
        assert.deepEqual(reasons(decided), ['first', 'first', 'unchanged', 'changed', 'changed']);
        assert.deepEqual(decided.map((d) => d.dedup?.assetId), ['bins/A17', 'bins/B04', 'bins/A17', 'bins/B04', 'bins/A17']);
      });

      it('sends a reading that is not a number to the Catch node with the path and the value; reads no position', async function () {
        const h = await loadDedup('sliding-window-dedup', store, BINS);
        const decided = await decideInOrder(h, [reading(0, 'full'), reading(15, null), { bin: 'bin-A17', ts: BASE + 1800, fill_pct: '71.5', lat: 'none' }]);
        assert.deepEqual(reasons(decided), ['catch: Error: msg.payload.fill_pct = "full": is not a number', 'catch: Error: msg.payload.fill_pct = null: must be a number, not null', 'first']);
      });
    });
  });
}

storeSuite('memory');
storeSuite('redis');

describe('sliding-window dedup, issue 29\'s options', function () {
  before(startServer);
  after(stopServer);
  afterEach(async function () {
    await helper.unload();
  });

  for (const [option, value, expected] of [
    ['mode', 'both', /mode must be "position" or "value", not "both"/],
    ['noFix', 'yes', /noFix must be true or false, not "yes"/],
    ['minSatellites', 'four', /minSatellites must be 0 or more, not "four"/],
    ['maxHdop', '-1', /maxHdop must be 0 or more, not "-1"/],
    ['maxSpeedKmh', 'fast', /maxSpeedKmh must be 0 or more, not "fast"/],
    ['relocateAfterSeconds', '0', /relocateAfterSeconds must be a positive number, not "0"/],
    ['relocateAfterPings', '2.5', /relocateAfterPings must be a whole number, not "2.5"/],
    ['deadband', '-5', /deadband must be 0 or more, not "-5"/],
    ['deadbandUnit', 'kg', /deadbandUnit must be "units" or "percent", not "kg"/],
  ] as const) {
    it(`refuses ${option} ${JSON.stringify(value)} with a configuration error a Catch node gets`, async function () {
      const settings = option === 'deadband' || option === 'deadbandUnit' ? { ...BINS, [option]: value } : { ...POSITION, [option]: value };
      const h = await loadDedup('sliding-window-dedup', 'memory', settings);
      h.send(fix(0));
      await until(() => h.caught.length === 1, 'the configuration error');
      assert.match(h.caught[0]?.error?.message ?? '', /^Error: Invalid configuration: /);
      assert.match(h.caught[0]?.error?.message ?? '', expected);
    });
  }

  it('forgets the memory store\'s records when a redeploy changes the mode, and keeps them otherwise', async function () {
    const flow = (settings: Record<string, unknown>) => dedupFlow('sliding-window-dedup', 'memory', settings);
    const position = { ...POSITION, assetIdProperty: 'payload.bin' };
    const value = { ...BINS };
    let h = await loadDedup('sliding-window-dedup', 'memory', position);
    const at = (minutes: number, more: Record<string, unknown>): Record<string, unknown> => ({ bin: 'bin-A17', ts: BASE + minutes * MINUTES, ...more });
    assert.deepEqual(reasons(await decideInOrder(h, [at(0, { lat: LAT, lon: LON })])), ['first']);
    const deploy = async (settings: Record<string, unknown>): Promise<DedupHarness> => {
      await helper.setFlows(flow(settings), 'full');
      return { ...h, admitted: collect('out-admitted'), second: collect('out-second'), caught: collect('out-caught'), completed: collect('out-completed'), statuses: collect('out-status') };
    };
    h = await deploy({ ...position, minSeconds: '120' });
    assert.deepEqual(reasons(await decideInOrder(h, [at(1, { lat: LAT, lon: LON })])), ['window'], 'a redeploy in the same mode keeps the baseline');
    h = await deploy(value);
    assert.deepEqual(reasons(await decideInOrder(h, [at(2, { fill_pct: 40 }), at(3, { fill_pct: 41 })])), ['first', 'unchanged'], 'value mode starts afresh');
    h = await deploy(position);
    assert.deepEqual(reasons(await decideInOrder(h, [at(4, { lat: LAT, lon: LON })])), ['first'], 'and so does position mode, back again');
  });
});
