/**
 * The sliding-window dedup node in a real Node-RED runtime, once with the
 * memory store and once with the Redis store: the same cases, so the two
 * stores cannot drift apart as the users see them.
 */
import assert from 'node:assert/strict';
import { closeRedisClient, flushRedis, newRedisClient, sharedRedis, useRedis } from '../support/global-hooks';
import { freePort } from '../support/redis-server';
import {
  collect,
  coreNodes,
  dedupFlow,
  helper,
  loadDedup,
  node,
  packNodes,
  runtimeSettings,
  startServer,
  stopServer,
  until,
  watchCompletions,
  type DedupHarness,
  type FlowNode,
  type Msg,
  type StoreKind,
} from '../support/node-red-helper';
import { ttlPassage } from '../support/ttl-passage';

const BASE = 1_780_000_000; // epoch seconds
const LAT = 52.5200087;
const LON = 13.4049547;

const WINDOW_NODES = ['dedup-redis', 'sliding-window-dedup'];
const WINDOW: Record<string, unknown> = { minSeconds: '60', minMetres: '25', ttlSeconds: '21600' };

interface Harness extends DedupHarness {
  /** Output 2. */
  suppressed: Msg[];
}

function ping(assetId: unknown, ts: unknown, lat: unknown = LAT, lon: unknown = LON): Record<string, unknown> {
  return { assetId, ts, lat, lon };
}

async function load(store: StoreKind, overrides: Record<string, unknown> = {}, redisOverrides: Record<string, unknown> = {}): Promise<Harness> {
  const h = await loadDedup('sliding-window-dedup', store, { ...WINDOW, ...overrides }, redisOverrides);
  return { ...h, suppressed: h.second };
}

/** Sends pings one at a time, each after the previous one was done, and returns the decisions. */
async function decide(h: Harness, payloads: unknown[]): Promise<string[]> {
  const decisions: string[] = [];
  for (const payload of payloads) {
    const before = h.completed.length + h.caught.length;
    h.send(payload);
    await until(() => h.completed.length + h.caught.length > before, 'the node to finish the message');
    const last = [...h.admitted, ...h.suppressed].find((m) => m.payload === payload);
    decisions.push(last === undefined ? 'error' : `${String(last.dedup?.decision)}:${String(last.dedup?.reason)}`);
  }
  return decisions;
}

function storeSuite(store: StoreKind): void {
  describe(`sliding-window dedup node, ${store} store`, function () {
    if (store === 'redis') useRedis();
    before(startServer);
    after(stopServer);
    beforeEach(async function () {
      if (store === 'redis') await flushRedis();
    });
    afterEach(async function () {
      await helper.unload();
    });

    describe('the seed verification cases', function () {
      it('collapses the boundary pair, four seconds apart', async function () {
        const h = await load(store);
        assert.deepEqual(await decide(h, [ping('veh-1', BASE), ping('veh-1', BASE + 4)]), [
          'admitted:first',
          'suppressed:window',
        ]);
      });

      it('admits movement inside the window (distance is an OR)', async function () {
        const h = await load(store);
        assert.deepEqual(await decide(h, [ping('veh-2', BASE), ping('veh-2', BASE + 5, LAT + 0.002)]), [
          'admitted:first',
          'admitted:moved',
        ]);
      });

      it('lets a parked vehicle heartbeat (time is an OR too)', async function () {
        const h = await load(store);
        assert.deepEqual(await decide(h, [ping('veh-3', BASE), ping('veh-3', BASE + 30), ping('veh-3', BASE + 61)]), [
          'admitted:first',
          'suppressed:window',
          'admitted:elapsed',
        ]);
      });

      it('does not let a late ping rewind the baseline', async function () {
        const h = await load(store);
        assert.deepEqual(
          await decide(h, [ping('veh-4', BASE + 100), ping('veh-4', BASE), ping('veh-4', BASE + 130)]),
          ['admitted:first', 'suppressed:late', 'suppressed:window'],
        );
      });
    });

    it('admits exactly at the time threshold and treats an equal time as late', async function () {
      const h = await load(store);
      assert.deepEqual(await decide(h, [ping('a', BASE), ping('a', BASE), ping('a', BASE + 59.999), ping('a', BASE + 60)]), [
        'admitted:first',
        'suppressed:late',
        'suppressed:window',
        'admitted:elapsed',
      ]);
    });

    it('measures the short way across the antimeridian', async function () {
      const h = await load(store);
      // 0.0002 degrees of longitude at the equator is about 22 m.
      const decisions = await decide(h, [ping('pacific', BASE, 0, 179.9999), ping('pacific', BASE + 5, 0, -179.9999)]);
      assert.deepEqual(decisions, ['admitted:first', 'suppressed:window']);
      const distance = h.suppressed[0]?.dedup?.distanceMetres as number;
      assert.ok(Math.abs(distance - 22.24) < 0.05, `distance ${distance}`);
    });

    it('measures correctly near the pole', async function () {
      const h = await load(store);
      // At 89 degrees, 0.01 degrees of longitude is about 19 m; 0.02 about 39 m.
      const decisions = await decide(h, [
        ping('polar', BASE, 89, 10),
        ping('polar', BASE + 5, 89, 10.01),
        ping('polar', BASE + 10, 89, 10.02),
      ]);
      assert.deepEqual(decisions, ['admitted:first', 'suppressed:window', 'admitted:moved']);
      const moved = h.admitted[1]?.dedup?.distanceMetres as number;
      assert.ok(Math.abs(moved - 38.85) < 0.1, `distance ${moved}`);
    });

    it('reads every time format as the same instant', async function () {
      const h = await load(store);
      const instant = new Date(BASE * 1000);
      const decisions = await decide(h, [
        ping('clock', '2026-05-28T20:26:40Z'),
        ping('clock', '2026-05-28T20:26:40'),
        ping('clock', '2026-05-28T22:26:40+02:00'),
        ping('clock', BASE),
        ping('clock', BASE * 1000),
        ping('clock', String(BASE)),
        ping('clock', instant),
      ]);
      assert.equal(instant.toISOString(), '2026-05-28T20:26:40.000Z');
      assert.deepEqual(decisions, ['admitted:first', ...Array<string>(6).fill('suppressed:late')]);
      const laterMs = await decide(h, [ping('clock', BASE * 1000 + 60_000)]);
      assert.deepEqual(laterMs, ['admitted:elapsed']);
    });

    it('keeps per-asset counts of accepted and suppressed pings', async function () {
      const h = await load(store);
      await decide(h, [ping('c', BASE), ping('c', BASE + 1), ping('c', BASE + 2), ping('c', BASE + 61), ping('other', BASE)]);
      const last = h.admitted.find((m) => (m.payload as { ts: number }).ts === BASE + 61);
      assert.equal(last?.dedup?.accepted, 2);
      assert.equal(last?.dedup?.suppressed, 2);
      assert.equal(h.admitted.at(-1)?.dedup?.accepted, 1, 'another asset has its own counts');
      assert.equal(h.admitted.at(-1)?.dedup?.store, store);
    });

    it('reports every unreadable ping to a Catch node, naming the field and value', async function () {
      const h = await load(store);
      const bad: [unknown, RegExp][] = [
        [ping(undefined, BASE), /msg\.payload\.assetId = undefined: must be a non-empty string/],
        [ping('', BASE), /msg\.payload\.assetId = "": must not be empty/],
        [ping({ id: 1 }, BASE), /msg\.payload\.assetId = \{"id":1\}/],
        [ping('v', 'yesterday'), /msg\.payload\.ts = "yesterday": is not an ISO-8601 date-time/],
        [ping('v', '2026-02-30T00:00:00Z'), /is not a valid calendar date-time/],
        [ping('v', NaN), /msg\.payload\.ts = NaN/],
        [ping('v', BASE, 91), /msg\.payload\.lat = 91: must be between -90 and 90/],
        [ping('v', BASE, NaN), /msg\.payload\.lat = NaN: must be a finite number/],
        [ping('v', BASE, LAT, 'east'), /msg\.payload\.lon = "east": is not a number/],
        [ping('v', BASE, LAT, -180.5), /msg\.payload\.lon = -180.5/],
        ['not an object', /^Error: msg\.payload is a string, not an object: parse it first/],
      ];
      for (const [payload] of bad) h.send(payload);
      await until(() => h.caught.length === bad.length, `${bad.length} errors at the Catch node`);
      bad.forEach(([, pattern], i) => {
        assert.match(h.caught[i]?.error?.message ?? '', pattern);
        assert.equal(h.caught[i]?.error?.source?.id, 'dedup');
      });
      assert.equal(h.admitted.length + h.suppressed.length, 0, 'nothing unreadable is routed');
      // And the node is still deciding afterwards.
      assert.deepEqual(await decide(h, [ping('v', BASE)]), ['admitted:first']);
    });

    it('reads the properties configured in the editor', async function () {
      const h = await load(store, { assetIdProperty: 'topic', timeProperty: 'payload.fix.time', latProperty: 'payload.fix.pos[0]', lonProperty: 'payload.fix.pos[1]' });
      node('dedup').receive({ topic: 'bus-7', payload: { fix: { time: BASE, pos: [LAT, LON] } } });
      node('dedup').receive({ topic: 'bus-7', payload: { fix: { time: BASE + 2, pos: [LAT, LON] } } });
      await until(() => h.admitted.length + h.suppressed.length === 2, 'two decisions');
      assert.equal(h.admitted[0]?.dedup?.assetId, 'bus-7');
      assert.equal(h.suppressed[0]?.dedup?.reason, 'window');
    });

    it('forgets one asset, or all, on msg.reset', async function () {
      const h = await load(store);
      await decide(h, [ping('r1', BASE), ping('r2', BASE)]);
      h.send(undefined, { reset: 'r1' });
      await until(() => h.completed.length === 3, 'the reset to finish');
      assert.deepEqual(await decide(h, [ping('r1', BASE + 1), ping('r2', BASE + 1)]), ['admitted:first', 'suppressed:window']);
      h.send(undefined, { reset: true });
      await until(() => h.completed.length === 6, 'the reset to finish');
      assert.deepEqual(await decide(h, [ping('r2', BASE + 2)]), ['admitted:first']);
      assert.equal(h.admitted.length + h.suppressed.length, 5, 'reset messages are not passed on');
    });

    it('forgets an asset after ttlSeconds without an admitted ping', async function () {
      const time = ttlPassage(store);
      try {
        const h = await load(store, { ttlSeconds: '1', minSeconds: '1' });
        assert.deepEqual(await decide(h, [ping('ttl', BASE), ping('ttl', BASE - 100)]), ['admitted:first', 'suppressed:late']);
        await time.pass(1000, h.keyPrefix);
        assert.deepEqual(await decide(h, [ping('ttl', BASE - 100)]), ['admitted:first']);
      } finally {
        time.restore();
      }
    });

    it('decides a burst of pings of one asset in arrival order', async function () {
      const h = await load(store);
      const pings = Array.from({ length: 200 }, (_, i) => ping('burst', BASE + i * 30));
      for (const p of pings) h.send(p);
      await until(() => h.completed.length === pings.length, 'all pings done');
      // 30 s apart, 60 s heartbeat: every second ping passes, in order.
      const admittedTimes = h.admitted.map((m) => (m.payload as { ts: number }).ts);
      assert.deepEqual(admittedTimes, pings.filter((_, i) => i % 2 === 0).map((p) => p.ts));
      assert.equal(h.suppressed.length, 100);
    });

    it('answers every message with the configuration error when the config is invalid', async function () {
      const h = await load(store, { minSeconds: '-5' });
      h.send(ping('x', BASE));
      await until(() => h.caught.length === 1, 'the error at the Catch node');
      assert.match(h.caught[0]?.error?.message ?? '', /minSeconds must be a positive number/);
    });

    it('refuses an option value it does not know instead of reading it as the default', async function () {
      const h = await load(store, { onStoreError: 'Error' });
      h.send(ping('x', BASE));
      await until(() => h.caught.length === 1, 'the error at the Catch node');
      assert.match(h.caught[0]?.error?.message ?? '', /onStoreError must be "admit" or "error", not "Error"/);
      assert.equal(h.admitted.length + h.suppressed.length, 0);
    });
  });
}

storeSuite('memory');
storeSuite('redis');

describe('sliding-window dedup node, memory store bounds', function () {
  before(startServer);
  after(stopServer);
  afterEach(async function () {
    await helper.unload();
    runtimeSettings({});
  });

  it('forgets the asset admitted longest ago when maxAssets is reached', async function () {
    const h = await load('memory', { maxAssets: '2' });
    await decide(h, [ping('a', BASE), ping('b', BASE), ping('a', BASE + 61), ping('c', BASE)]);
    // 'b' was written longest ago when 'c' arrived; 'a' was admitted again since.
    assert.deepEqual(await decide(h, [ping('a', BASE + 62), ping('b', BASE + 1)]), ['suppressed:window', 'admitted:first']);
  });

  it('takes maxAssets from the slidingWindowDedupMaxAssets runtime setting when left blank', async function () {
    runtimeSettings({ slidingWindowDedupMaxAssets: 1 });
    const h = await load('memory', { maxAssets: '' });
    await decide(h, [ping('a', BASE), ping('b', BASE)]);
    assert.deepEqual(await decide(h, [ping('a', BASE + 1)]), ['admitted:first'], "'a' was forgotten to make room for 'b'");
  });
});

describe('sliding-window dedup node, Redis-only behaviour', function () {
  useRedis();
  before(startServer);
  after(stopServer);
  beforeEach(flushRedis);
  afterEach(async function () {
    await helper.unload();
  });

  it('never lets two workers admit the same (asset, t), each with its own connection', async function () {
    this.timeout(30_000);
    const shared = { host: '127.0.0.1', port: String(sharedRedis().port), keyPrefix: 'race:', timeoutMs: '5000' };
    const worker = (n: number): FlowNode[] => [
      { id: `dedup${n}`, type: 'sliding-window-dedup', z: 'tab', store: 'redis', redis: `conn${n}`, minSeconds: '60', minMetres: '25', wires: [[`admitted${n}`], [`suppressed${n}`]] },
      { id: `admitted${n}`, type: 'helper', z: 'tab' },
      { id: `suppressed${n}`, type: 'helper', z: 'tab' },
      { id: `conn${n}`, type: 'dedup-redis', ...shared },
    ];
    await helper.load([...packNodes(WINDOW_NODES), ...coreNodes()], [{ id: 'tab', type: 'tab' }, ...worker(1), ...worker(2)]);
    const admitted = collect('admitted1');
    const admitted2 = collect('admitted2');
    const suppressed1 = collect('suppressed1');
    const suppressed2 = collect('suppressed2');
    // 1,000 redelivered pings: 50 assets x 20 pings, every ping delivered to both workers.
    const pings = Array.from({ length: 1000 }, (_, i) => ping(`asset-${i % 50}`, BASE + Math.floor(i / 50) * 61));
    for (const p of pings) {
      node('dedup1').receive({ payload: { ...p } });
      node('dedup2').receive({ payload: { ...p } });
    }
    await until(
      () => admitted.length + admitted2.length + suppressed1.length + suppressed2.length === 2000,
      'both workers to decide every ping',
      20_000,
    );
    const seen = new Set<string>();
    for (const m of [...admitted, ...admitted2]) {
      const p = m.payload as { assetId: string; ts: number };
      const id = `${p.assetId}@${p.ts}`;
      assert.ok(!seen.has(id), `${id} admitted twice`);
      seen.add(id);
    }
    // Each ping is 61 s after the previous one of its asset, so exactly one copy of each passes.
    assert.equal(seen.size, 1000);
  });

  it('admits with reason store-unavailable when Redis is unreachable, within the timeout', async function () {
    const closedPort = await freePort();
    const h = await load('redis', {}, { port: String(closedPort), timeoutMs: '300' });
    const started = Date.now();
    h.send(ping('down', BASE));
    await until(() => h.admitted.length === 1, 'the fail-open admission', 3000);
    assert.ok(Date.now() - started < 2000, `took ${Date.now() - started} ms`);
    assert.equal(h.admitted[0]?.dedup?.reason, 'store-unavailable');
    assert.equal(h.caught.length, 0);
  });

  it('raises an error for a Catch node instead when configured to', async function () {
    const closedPort = await freePort();
    const h = await load('redis', { onStoreError: 'error' }, { port: String(closedPort), timeoutMs: '300' });
    h.send(ping('down', BASE));
    h.send(ping('down', BASE + 61));
    await until(() => h.caught.length === 2, 'the errors at the Catch node', 3000);
    assert.match(h.caught[0]?.error?.message ?? '', /store could not decide/);
    assert.equal(h.admitted.length + h.suppressed.length, 0);
    // The status counts them: not "0 admitted / 0 suppressed / 0 rejected" as if nothing came.
    const texts = (): string[] => h.statuses.map((m) => String((m.status as { text?: string }).text));
    await until(() => texts().some((t) => t.endsWith('0 admitted / 0 suppressed / 0 rejected / store errors: 2')), `the store errors in the status: ${texts().join(' | ')}`, 3000);
  });

  it('finishes every in-flight message when redeployed, and leaks no connection', async function () {
    this.timeout(20_000);
    const clientCount = async (): Promise<number> => {
      const probe = newRedisClient();
      const list = (await probe.client('LIST')) as string;
      await closeRedisClient(probe);
      return list.split('\n').filter((line) => line.includes('name=node-red-dedup')).length;
    };
    const h = await load('redis');
    const completions = watchCompletions('dedup');
    try {
      for (let i = 0; i < 2000; i++) h.send(ping(`a${i % 100}`, BASE + i));
      // A full redeploy while the messages are still out at Redis.
      await helper.setFlows(dedupFlow('sliding-window-dedup', 'redis', WINDOW), 'full');
      await until(() => completions.total() === 2000, 'done() for every message', 10_000);
      assert.equal(completions.perMessage.size, 2000, 'each message completed');
      assert.ok([...completions.perMessage.values()].every((n) => n === 1), 'done() called once per message');
    } finally {
      completions.dispose();
    }
    await helper.unload();
    assert.equal(await clientCount(), 0, 'the connection closed with its last user');
  });
});
