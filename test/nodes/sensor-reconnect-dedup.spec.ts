/**
 * The sensor reconnect dedup node in a real Node-RED runtime, once with the
 * memory store and once with the Redis store: one suite, so the two stores
 * cannot drift apart as the users see them.
 */
import assert from 'node:assert/strict';
import { idempotencyKey } from '../../src/core/sensor/idempotency-key';
import { useRedis } from '../support/global-hooks';
import {
  helper,
  loadDedup,
  runtimeSettings,
  startServer,
  stopServer,
  until,
  type DedupHarness as Harness,
  type Msg,
  type StoreKind,
} from '../support/node-red-helper';
import { ttlPassage } from '../support/ttl-passage';
import { freePort } from '../support/redis-server';
import { assertReconciled, countsOf, deliver, type Counts, type Outcome } from '../support/sensor-delivery';

// ---------------------------------------------------------------------------
// Readings

interface RawReading {
  device_id?: unknown;
  seq?: unknown;
  ts?: unknown;
  fill_pct?: unknown;
  [field: string]: unknown;
}

const at = (second: number, day = 16): string => `2026-07-${day}T09:00:${String(second).padStart(2, '0')}Z`;

function bin(seq: unknown, fill: unknown, second = 0, device: unknown = 'bin-A17'): RawReading {
  return { device_id: device, seq, ts: at(second), fill_pct: fill };
}

/**
 * The three reference key vectors, as readings and keys: the keys the
 * reference design's idempotency_key gives these readings, which a Python
 * worker sharing the seen-set must match byte for byte.
 */
const VECTORS: [RawReading, string][] = [
  [bin(41, 62.5), 'bin-A17:41:76c73ee2946cc70e'],
  [bin(42, 71), 'bin-A17:42:ed9b14ef6ee4c460'],
  [bin(8, 15, 5, 'bin-B04'), 'bin-B04:8:22b0c123bd3acdfd'],
];

// ---------------------------------------------------------------------------
// The flow and what comes out of it

function load(store: StoreKind, overrides: Record<string, unknown> = {}, redisOverrides: Record<string, unknown> = {}): Promise<Harness> {
  // loadDedup gives the node its en-US catalog, so messages read as users see them.
  return loadDedup('sensor-reconnect-dedup', store, overrides, redisOverrides);
}

/** The one audit message of a burst, with the counts expected. */
function audit(outcome: Outcome, expected: Counts): Record<string, unknown> {
  assert.equal(outcome.second.length, 1, 'one audit message per burst');
  const msg = outcome.second[0] as Msg;
  assert.equal(msg.dedup?.decision, 'audit');
  assertReconciled(msg);
  assert.deepEqual(countsOf(msg.payload as Record<string, unknown>), expected);
  return msg.payload as Record<string, unknown>;
}

/** The one output-1 message of a burst: its readings and keys. */
function admittedBurst(outcome: Outcome): { readings: RawReading[]; keys: string[]; dedup: Record<string, unknown> } {
  assert.equal(outcome.admitted.length, 1, 'one message of admitted readings');
  const msg = outcome.admitted[0] as Msg;
  assert.ok(Array.isArray(msg.payload), 'the admitted burst is an array');
  assert.equal(msg.dedup?.decision, 'admitted');
  return { readings: msg.payload as RawReading[], keys: msg.dedup?.keys as string[], dedup: msg.dedup };
}

function suppressedIndexes(payload: Record<string, unknown>): number[] {
  return (payload.suppressed as { index: number }[]).map((s) => s.index);
}

// ---------------------------------------------------------------------------

function storeSuite(store: StoreKind): void {
  describe(`sensor reconnect dedup node, ${store} store`, function () {
    if (store === 'redis') useRedis();
    before(startServer);
    after(stopServer);
    afterEach(async function () {
      await helper.unload();
    });

    describe('the seed verification cases', function () {
      it('a replayed burst yields the same unique set as one delivery', async function () {
        const h = await load(store);
        const original = [bin(41, 62.5), bin(42, 71.0), bin(43, 80.0)];
        const first = await deliver(h, original);
        assert.deepEqual(admittedBurst(first).readings, original);
        audit(first, { received: 3, unique: 3, duplicates_suppressed: 0, rejected: 0 });

        const replay = await deliver(h, original.map((r) => ({ ...r })));
        assert.equal(replay.admitted.length, 0, 'nothing admitted: no message on output 1');
        const replayAudit = audit(replay, { received: 3, unique: 0, duplicates_suppressed: 3, rejected: 0 });
        assert.equal(first.second[0]?.dedup?.reason, 'new', 'the first delivery admitted readings');
        assert.equal(replay.second[0]?.dedup?.reason, 'duplicate', 'nothing was admitted: the audit says why, not "new"');
        assert.deepEqual(suppressedIndexes(replayAudit), [0, 1, 2]);
        assert.deepEqual(
          (replayAudit.suppressed as { key: string }[]).map((s) => s.key),
          admittedBurst(first).keys,
          'the replay is suppressed under the keys the first delivery admitted',
        );
      });

      it('keeps two distinct readings that share a timestamp', async function () {
        const h = await load(store);
        const outcome = await deliver(h, [bin(41, 62.5), bin(42, 71.0)]);
        assert.equal(admittedBurst(outcome).readings.length, 2);
        audit(outcome, { received: 2, unique: 2, duplicates_suppressed: 0, rejected: 0 });
      });

      it('collapses an exact replay within one burst (first write wins)', async function () {
        const h = await load(store);
        const first = bin(41, 62.5);
        const outcome = await deliver(h, [first, { ...first }]);
        const burst = admittedBurst(outcome);
        assert.deepEqual(burst.readings, [first]);
        const payload = audit(outcome, { received: 2, unique: 1, duplicates_suppressed: 1, rejected: 0 });
        assert.deepEqual(suppressedIndexes(payload), [1], 'the later copy is the one suppressed');
      });
    });

    it('gives the reference key vectors, in input order, and the reference burst counts', async function () {
      const h = await load(store);
      const [a41, a42, b8] = VECTORS.map(([r]) => r) as [RawReading, RawReading, RawReading];
      const outcome = await deliver(h, [a41, { ...a41 }, a42, b8]);
      const burst = admittedBurst(outcome);
      assert.deepEqual(burst.keys, VECTORS.map(([, key]) => key));
      assert.deepEqual(burst.readings, [a41, a42, b8]);
      assert.equal(burst.dedup.reason, 'new');
      assert.equal(burst.dedup.store, store);
      const payload = audit(outcome, { received: 4, unique: 3, duplicates_suppressed: 1, rejected: 0 });
      assert.deepEqual(payload.suppressed, [{ index: 1, key: VECTORS[0]?.[1], reason: 'duplicate', reading: a41 }]);
      assert.deepEqual(outcome.second[0]?.dedup?.keys, burst.keys);
    });

    it('routes a single reading whole: admitted on output 1, its replay on output 2', async function () {
      const h = await load(store);
      const [reading, key] = VECTORS[1] as [RawReading, string];
      const first = await deliver(h, reading);
      assert.equal(first.admitted.length, 1);
      assert.equal(first.second.length, 0);
      assert.equal(first.admitted[0]?.payload, reading);
      const { token, ...admitted } = first.admitted[0]?.dedup ?? {};
      assert.ok(Number.isSafeInteger(token) && (token as number) > 0, `the claim's token: ${String(token)}`);
      assert.deepEqual(admitted, {
        decision: 'admitted', reason: 'new', key, received: 1, unique: 1, duplicates_suppressed: 0, rejected: 0, in_flight: 0, lease_expired: 0, store, node: 'dedup',
      });
      const again = await deliver(h, { ...reading });
      assert.equal(again.admitted.length, 0);
      assert.equal(again.second.length, 1);
      assert.deepEqual(again.second[0]?.payload, reading);
      assert.deepEqual(again.second[0]?.dedup, {
        decision: 'suppressed', reason: 'duplicate', key, received: 1, unique: 0, duplicates_suppressed: 1, rejected: 0, in_flight: 0, lease_expired: 0, store,
      });
    });

    it('admits a reading after a battery swap restarts seq, when its content is new', async function () {
      const h = await load(store);
      const before = await deliver(h, [bin(41, 62.5), bin(42, 71.0)]);
      audit(before, { received: 2, unique: 2, duplicates_suppressed: 0, rejected: 0 });
      // New battery: the counter starts again at 41, a day later, with another fill level.
      const swapped = { device_id: 'bin-A17', seq: 41, ts: at(0, 17), fill_pct: 12.0 };
      const after = await deliver(h, [swapped, bin(41, 62.5)]);
      const burst = admittedBurst(after);
      assert.deepEqual(burst.readings, [swapped]);
      assert.ok(burst.keys[0]?.startsWith('bin-A17:41:'));
      assert.notEqual(burst.keys[0], VECTORS[0]?.[1], 'same device and seq, different key');
      const payload = audit(after, { received: 2, unique: 1, duplicates_suppressed: 1, rejected: 0 });
      assert.deepEqual(suppressedIndexes(payload), [1], 'the old reading is still known');
    });

    it('gives one key to one instant, whatever the time format', async function () {
      const h = await load(store);
      const instant = new Date(Date.UTC(2026, 6, 16, 9, 0, 0));
      const formats: unknown[] = [
        '2026-07-16T09:00:00Z',
        '2026-07-16T11:00:00+02:00',
        '2026-07-16T04:00:00-05:00',
        '2026-07-16T09:00:00',
        '2026-07-16T09:00:00.000Z',
        instant.getTime() / 1000,
        instant.getTime(),
        String(instant.getTime() / 1000),
        instant,
      ];
      const outcome = await deliver(h, formats.map((ts) => ({ device_id: 'bin-A17', seq: 41, ts, fill_pct: 62.5 })));
      const burst = admittedBurst(outcome);
      assert.deepEqual(burst.keys, [VECTORS[0]?.[1]]);
      const payload = audit(outcome, { received: formats.length, unique: 1, duplicates_suppressed: formats.length - 1, rejected: 0 });
      assert.ok((payload.suppressed as { key: string }[]).every((s) => s.key === VECTORS[0]?.[1]));
      // The same instant a microsecond later is another reading.
      const later = await deliver(h, { device_id: 'bin-A17', seq: 41, ts: '2026-07-16T09:00:00.000001Z', fill_pct: 62.5 });
      assert.equal(later.admitted.length, 1);
    });

    it('admits a key again once ttlSeconds have passed', async function () {
      const time = ttlPassage(store);
      try {
        const h = await load(store, { ttlSeconds: '1' });
        const reading = bin(41, 62.5);
        assert.equal((await deliver(h, reading)).admitted.length, 1);
        assert.equal((await deliver(h, { ...reading })).second[0]?.dedup?.decision, 'suppressed');
        await time.pass(1000, h.keyPrefix);
        const again = await deliver(h, [{ ...reading }]);
        assert.equal(admittedBurst(again).readings.length, 1);
        audit(again, { received: 1, unique: 1, duplicates_suppressed: 0, rejected: 0 });
      } finally {
        time.restore();
      }
    });

    it('reports each bad reading of a burst to a Catch node and admits the rest', async function () {
      const h = await load(store);
      const good1 = bin(1, 10);
      const good2 = bin(2, 20);
      const bad: [unknown, RegExp][] = [
        [{ seq: 3, ts: at(0), fill_pct: 1 }, /^Error: msg\.payload\[1\]\.device_id = undefined: is missing$/],
        [bin(4, 1, 0, ''), /^Error: msg\.payload\[2\]\.device_id = "": must not be empty$/],
        [bin(1.5, 1), /^Error: msg\.payload\[3\]\.seq = 1\.5: must be a whole number, 0 or more$/],
        [bin(-1, 1), /^Error: msg\.payload\[4\]\.seq = -1: must be a whole number, 0 or more$/],
        [bin('first', 1), /^Error: msg\.payload\[5\]\.seq = "first": is not a number/],
        [{ ...bin(6, 1), ts: 'yesterday' }, /^Error: msg\.payload\[6\]\.ts = "yesterday": is not an ISO-8601 date-time$/],
        [bin(7, 100.5), /^Error: msg\.payload\[7\]\.fill_pct = 100\.5: must be between 0 and 100$/],
        [bin(8, -3), /^Error: msg\.payload\[8\]\.fill_pct = -3: must be between 0 and 100$/],
        [bin(9, 'full'), /^Error: msg\.payload\[9\]\.fill_pct = "full": is not a number$/],
        [bin(10, null), /^Error: msg\.payload\[10\]\.fill_pct = null: must be a number, not null$/],
        ['not a reading', /^Error: msg\.payload\[11\] = "not a reading": must be an object, not a string$/],
        [null, /^Error: msg\.payload\[12\] = null: must be an object, not null$/],
      ];
      const burst = [good1, ...bad.map(([r]) => r), good2];
      const outcome = await deliver(h, burst, { completes: 1, errors: bad.length });
      assert.deepEqual(admittedBurst(outcome).readings, [good1, good2]);
      const payload = audit(outcome, { received: burst.length, unique: 2, duplicates_suppressed: 0, rejected: bad.length });
      assert.deepEqual(
        (payload.rejections as { index: number }[]).map((r) => r.index),
        bad.map((_, i) => i + 1),
      );
      // The offending values as the readings held them: numbers stay numbers.
      assert.deepEqual(
        (payload.rejections as { value: unknown }[]).map((r) => r.value),
        ['undefined', '', 1.5, -1, 'first', 'yesterday', 100.5, -3, 'full', null, 'not a reading', null],
      );
      bad.forEach(([reading, pattern], i) => {
        const caught = outcome.caught[i] as Msg;
        assert.match(caught.error?.message ?? '', pattern);
        assert.equal(caught.error?.source?.id, 'dedup');
        assert.deepEqual(caught.payload, reading, 'the Catch message carries the bad reading');
        assert.equal(caught.dedup?.decision, 'rejected');
        assert.equal(caught.dedup?.index, i + 1);
      });
    });

    it('reports a bad single reading once, through done(err), and passes nothing on', async function () {
      const h = await load(store);
      const bad: [unknown, RegExp][] = [
        [{ seq: 3, ts: at(0), fill_pct: 1 }, /msg\.payload\.device_id = undefined: is missing/],
        [bin(4, 1, 0, ''), /msg\.payload\.device_id = "": must not be empty/],
        [bin(1.5, 1), /msg\.payload\.seq = 1\.5: must be a whole number/],
        [bin(-2, 1), /msg\.payload\.seq = -2: must be a whole number, 0 or more/],
        [{ ...bin(6, 1), ts: '2026-02-30T00:00:00Z' }, /msg\.payload\.ts = "2026-02-30T00:00:00Z": is not a valid calendar date-time/],
        [bin(7, 101), /msg\.payload\.fill_pct = 101: must be between 0 and 100/],
        [bin(9, { level: 3 }), /msg\.payload\.fill_pct = \{"level":3\}: must be a number/],
        ['full', /msg\.payload is a string, not an object: parse it first \(a json node, or set the mqtt-in node to output a parsed JSON object\)/],
        [42, /msg\.payload = 42: must be one reading/],
        [null, /msg\.payload = null: must be one reading/],
      ];
      for (const [payload, pattern] of bad) {
        const outcome = await deliver(h, payload, { completes: 0, errors: 1 });
        assert.match(outcome.caught[0]?.error?.message ?? '', pattern);
        assert.equal(outcome.admitted.length + outcome.second.length, 0);
      }
      // Still deciding afterwards.
      assert.equal((await deliver(h, bin(1, 1))).admitted.length, 1);
    });

    it('sends a burst of only bad readings to Catch, one error each, and still audits it', async function () {
      const h = await load(store);
      const outcome = await deliver(h, [bin(-1, 1), bin(2, 150)], { completes: 1, errors: 2 });
      assert.equal(outcome.admitted.length, 0);
      const payload = audit(outcome, { received: 2, unique: 0, duplicates_suppressed: 0, rejected: 2 });
      assert.equal(outcome.second[0]?.dedup?.reason, 'rejected');
      assert.deepEqual(payload.rejections, [
        { index: 0, field: 'seq', value: -1, problem: 'must be a whole number, 0 or more' },
        { index: 1, field: 'fill_pct', value: 150, problem: 'must be between 0 and 100' },
      ]);
    });

    it('counts a hole in a sparse array as a rejected reading', async function () {
      const h = await load(store);
      const sparse: unknown[] = [bin(1, 1)];
      sparse[2] = bin(2, 2);
      const outcome = await deliver(h, sparse, { errors: 1 });
      assert.match(outcome.caught[0]?.error?.message ?? '', /^Error: msg\.payload\[1\] = undefined: must be an object, not undefined$/);
      assert.equal(admittedBurst(outcome).readings.length, 2);
      audit(outcome, { received: 3, unique: 2, duplicates_suppressed: 0, rejected: 1 });
    });

    it('audits an empty burst', async function () {
      const h = await load(store);
      const outcome = await deliver(h, []);
      assert.equal(outcome.admitted.length, 0);
      audit(outcome, { received: 0, unique: 0, duplicates_suppressed: 0, rejected: 0 });
      assert.equal(outcome.second[0]?.dedup?.reason, 'empty');
    });

    it("sends one message per admitted reading in 'each' mode, and one audit", async function () {
      const h = await load(store, { outputMode: 'each' });
      const [a41, a42, b8] = VECTORS.map(([r]) => r) as [RawReading, RawReading, RawReading];
      const outcome = await deliver(h, [a41, a42, { ...a41 }, bin(-1, 1), b8], { errors: 1 });
      assert.deepEqual(outcome.admitted.map((m) => m.payload), [a41, a42, b8]);
      assert.deepEqual(outcome.admitted.map((m) => m.dedup?.key), VECTORS.map(([, key]) => key));
      assert.deepEqual(outcome.admitted.map((m) => m.dedup?.index), [0, 1, 4]);
      for (const m of outcome.admitted) assert.equal(m.dedup?.decision, 'admitted');
      const payload = audit(outcome, { received: 5, unique: 3, duplicates_suppressed: 1, rejected: 1 });
      assert.deepEqual(suppressedIndexes(payload), [2]);
    });

    it('forgets one device, or every device, on msg.reset', async function () {
      const h = await load(store);
      const [a41, , b8] = VECTORS.map(([r]) => r) as [RawReading, RawReading, RawReading];
      audit(await deliver(h, [a41, b8]), { received: 2, unique: 2, duplicates_suppressed: 0, rejected: 0 });

      const resetOne = await deliver(h, undefined, { extra: { reset: 'bin-A17' } });
      assert.equal(resetOne.admitted.length + resetOne.second.length, 0, 'a reset is not passed on');
      const afterOne = await deliver(h, [a41, b8]);
      assert.deepEqual(admittedBurst(afterOne).readings, [a41]);
      audit(afterOne, { received: 2, unique: 1, duplicates_suppressed: 1, rejected: 0 });

      const resetAll = await deliver(h, undefined, { extra: { reset: true } });
      assert.equal(resetAll.admitted.length + resetAll.second.length, 0);
      const afterAll = await deliver(h, [a41, b8]);
      assert.deepEqual(admittedBurst(afterAll).readings, [a41, b8]);
      audit(afterAll, { received: 2, unique: 2, duplicates_suppressed: 0, rejected: 0 });
    });

    it('keeps devices apart whose ids contain separators and hash-tag braces', async function () {
      const h = await load(store);
      const odd = ['a:b', 'a', '{x}', 'x', '}y{', 'bin*'];
      const readings = odd.map((device) => bin(1, 50, 0, device));
      const outcome = await deliver(h, readings);
      assert.equal(admittedBurst(outcome).readings.length, odd.length);
      audit(outcome, { received: odd.length, unique: odd.length, duplicates_suppressed: 0, rejected: 0 });
      await deliver(h, undefined, { extra: { reset: 'a' } });
      const again = await deliver(h, readings.map((r) => ({ ...r })));
      assert.deepEqual(admittedBurst(again).readings.map((r) => r.device_id), ['a'], 'only device "a" was forgotten');
      audit(again, { received: odd.length, unique: 1, duplicates_suppressed: odd.length - 1, rejected: 0 });
    });

    it('reads the fields and range of a flow saved by config version 1', async function () {
      const h = await load(store, {
        version: 1,
        deviceField: 'sensor',
        seqField: 'n',
        tsField: 'time',
        contentFields: 'level, temp_c, time',
        valueMin: '',
        valueMax: '',
      });
      const reading = { sensor: 'tank-3', n: 7, time: 1_784_192_400, level: 1250, temp_c: -4.5 };
      const outcome = await deliver(h, [reading, { ...reading, temp_c: -4 }]);
      // The timestamp is hashed as `ts`, whatever its field is called (as the reference's idempotency_key names it).
      const expected = idempotencyKey({
        deviceId: 'tank-3',
        seq: 7,
        timeField: 'ts',
        epochMicros: 1_784_192_400_000_000,
        measures: { level: 1250, temp_c: -4.5 },
      });
      const burst = admittedBurst(outcome);
      assert.equal(burst.keys[0], expected);
      assert.equal(burst.keys.length, 2, 'a different temperature is a different reading');
      audit(outcome, { received: 2, unique: 2, duplicates_suppressed: 0, rejected: 0 });
      const missing = await deliver(h, { sensor: 'tank-3', n: 8, time: 1_784_192_401, level: 1 }, { completes: 0, errors: 1 });
      assert.match(missing.caught[0]?.error?.message ?? '', /msg\.payload\.temp_c = undefined: is missing/);
    });

    it('shows received, unique, suppressed and rejected totals in its status', async function () {
      const h = await load(store);
      const [a41, a42] = VECTORS.map(([r]) => r) as [RawReading, RawReading];
      audit(await deliver(h, [a41, { ...a41 }, a42, bin(-1, 1)], { errors: 1 }), {
        received: 4, unique: 2, duplicates_suppressed: 1, rejected: 1,
      });
      await until(
        () => h.statuses.some((m) => (m.status as { text?: string }).text === '4 received / 2 unique / 1 suppressed / 1 rejected'),
        'the status to show the totals',
        2000,
      );
    });

    it('answers every message with the configuration error when the config is invalid', async function () {
      const h = await load(store, { measures: [{ path: 'fill_pct' }, { path: 'device_id' }] });
      const outcome = await deliver(h, bin(1, 1), { completes: 0, errors: 1 });
      assert.match(outcome.caught[0]?.error?.message ?? '', /Invalid configuration: the measured field "device_id"/);
    });
  });
}

storeSuite('memory');
storeSuite('redis');

describe('sensor reconnect dedup node, memory store bounds', function () {
  before(startServer);
  after(stopServer);
  afterEach(async function () {
    await helper.unload();
    runtimeSettings({});
  });

  it('evicts the oldest admission first when maxKeys is reached', async function () {
    const h = await load('memory', { maxKeys: '2' });
    const [r1, r2, r3] = [bin(1, 10), bin(2, 20), bin(3, 30)];
    audit(await deliver(h, [r1, r2, r3]), { received: 3, unique: 3, duplicates_suppressed: 0, rejected: 0 });
    // Held now: r2, r3 (r1, the oldest, went when r3 came).
    const r1Again = await deliver(h, [{ ...r1 }]);
    assert.equal(admittedBurst(r1Again).readings.length, 1, 'r1 was evicted, so it is new again');
    // Held now: r3, r1 (r2 went).
    const r3Again = await deliver(h, [{ ...r3 }]);
    audit(r3Again, { received: 1, unique: 0, duplicates_suppressed: 1, rejected: 0 });
    const r2Again = await deliver(h, [{ ...r2 }]);
    audit(r2Again, { received: 1, unique: 1, duplicates_suppressed: 0, rejected: 0 });
  });

  it('takes maxKeys from the sensorReconnectDedupMaxKeys runtime setting when left blank', async function () {
    runtimeSettings({ sensorReconnectDedupMaxKeys: 1 });
    const h = await load('memory', { maxKeys: '' });
    audit(await deliver(h, [bin(1, 10), bin(2, 20)]), { received: 2, unique: 2, duplicates_suppressed: 0, rejected: 0 });
    audit(await deliver(h, [bin(1, 10)]), { received: 1, unique: 1, duplicates_suppressed: 0, rejected: 0 });
  });
});

describe('sensor reconnect dedup node, Redis unreachable', function () {
  useRedis();
  before(startServer);
  after(stopServer);
  afterEach(async function () {
    await helper.unload();
  });

  it('admits the valid readings with reason store-unavailable, within the timeout', async function () {
    const closedPort = await freePort();
    const h = await load('redis', {}, { port: String(closedPort), timeoutMs: '300' });
    const [a41, a42] = VECTORS.map(([r]) => r) as [RawReading, RawReading];
    const outcome = await deliver(h, [a41, { ...a41 }, a42, bin(-1, 1)], { errors: 1, timeoutMs: 3000 });
    assert.ok(outcome.ms < 2000, `took ${outcome.ms} ms`);
    const burst = admittedBurst(outcome);
    assert.deepEqual(burst.readings, [a41, a42]);
    assert.equal(burst.dedup.reason, 'store-unavailable');
    assert.equal(typeof burst.dedup.error, 'string');
    const payload = audit(outcome, { received: 4, unique: 2, duplicates_suppressed: 1, rejected: 1 });
    assert.deepEqual(suppressedIndexes(payload), [1], 'a repeat within the burst is still dropped');
    assert.equal(outcome.second[0]?.dedup?.reason, 'store-unavailable');

    const single = await deliver(h, bin(5, 5), { timeoutMs: 3000 });
    assert.equal(single.admitted[0]?.dedup?.decision, 'admitted');
    assert.equal(single.admitted[0]?.dedup?.reason, 'store-unavailable');
    await until(() => h.statuses.some((m) => (m.status as { fill?: string }).fill === 'red'), 'a red status', 2000);
  });

  it('raises an error for a Catch node instead when configured to', async function () {
    const closedPort = await freePort();
    const h = await load('redis', { onStoreError: 'error' }, { port: String(closedPort), timeoutMs: '300' });
    const single = await deliver(h, bin(1, 1), { completes: 0, errors: 1, timeoutMs: 3000 });
    assert.match(single.caught[0]?.error?.message ?? '', /^Error: The store could not decide: /);
    assert.equal(single.admitted.length + single.second.length, 0);

    // A burst: its bad reading reported on its own, then one error for the burst.
    const burst = await deliver(h, [bin(2, 2), bin(-1, 1)], { completes: 0, errors: 2, timeoutMs: 3000 });
    assert.match(burst.caught[0]?.error?.message ?? '', /msg\.payload\[1\]\.seq = -1/);
    assert.match(burst.caught[1]?.error?.message ?? '', /The store could not decide/);
    assert.equal(burst.admitted.length + burst.second.length, 0);
    const texts = (): string[] => h.statuses.map((m) => String((m.status as { text?: string }).text));
    await until(() => texts().some((t) => t.endsWith('3 received / 0 unique / 0 suppressed / 3 rejected / store errors: 2')), `the store errors in the status: ${texts().join(' | ')}`, 3000);
  });
});
