/**
 * ioredis resends a command that was in flight when the connection dropped,
 * so a script that already ran can run again with the same arguments. The
 * call token makes the second run report what the first one decided for an
 * admitted ping/reading, instead of suppressing it as a duplicate of itself.
 * Simulated here by sending the identical call twice.
 */
import assert from 'node:assert/strict';
import { createHash } from 'crypto';
import { seenKey, windowRecordKey } from '../../src/redis/key-names';
import { decodeOutcomes, decodeWindowRecord, encodePings, type WindowRecord } from '../../src/stores/redis-window-store';
import { BASE_SECONDS, LAT, LON } from '../contract/window-store.contract';
import { scriptedClientPerTest } from '../support/scripted-redis';

const RULE_ARGS = ['60', '25', '3600'];

describe('redis scripts: a resent call is recognised by its token', () => {
  const client = scriptedClientPerTest();

  describe('sliding window', () => {
    const key = windowRecordKey('replay:', 'veh-1');
    const at = (seconds: number, lat = LAT, lon = LON): Triple => [(BASE_SECONDS + seconds) * 1000, lat, lon];
    type Triple = [t: number, lat: number, lon: number];
    /** reason, dtSeconds, distanceMetres, accepted, suppressed of each ping. */
    type Row = [string, number | null, number | null, number, number];
    const call = async (token: string, ...pings: Triple[]): Promise<Row[]> => {
      const packed = encodePings(pings.map(([t, lat, lon]) => ({ t, lat, lon })));
      const reply = await client().dedupSlidingWindowBuffer(pings.length, pings.map(() => key), RULE_ARGS, token, packed);
      return decodeOutcomes(reply).map((o) => [o.reason, o.dtSeconds, o.distanceMetres, o.accepted, o.suppressed]);
    };
    const record = async (): Promise<WindowRecord> => decodeWindowRecord((await client().getBuffer(key)) as Buffer);
    const callId = (token: string): string => createHash('sha1').update(token).digest('hex').slice(0, 12);

    it('reports an admitted ping as replayed, not late, and does not count it twice', async () => {
      assert.deepEqual(await call('tok-1', at(0)), [['first', null, null, 1, 0]]);
      assert.deepEqual(await call('tok-1', at(0)), [['replayed', null, null, 1, 0]]);
      // A different call with the same ping is a genuine duplicate.
      assert.deepEqual(await call('tok-2', at(0)), [['late', 0, null, 1, 1]]);
    });

    it('still suppresses a resent ping that the first run suppressed', async () => {
      await call('tok-1', at(0));
      assert.equal((await call('tok-2', at(4)))[0]?.[0], 'window');
      assert.equal((await call('tok-2', at(4)))[0]?.[0], 'window');
    });

    it('recognises every ping the call admitted, and repeats its suppressions, when it admitted several of one asset', async () => {
      const pings = [at(0), at(4), at(61), at(122)]; // first, window, elapsed, elapsed
      const first = await call('tok-5', ...pings);
      assert.deepEqual(first.map((row) => row[0]), ['first', 'window', 'elapsed', 'elapsed']);
      const resent = await call('tok-5', ...pings);
      // Pings 1, 3 and 4 were admitted by the first run: none may now be
      // reported as late behind the record that run itself wrote; ping 2 is
      // suppressed again for the reason, and with the figures, it had.
      assert.deepEqual(resent.map((row) => row[0]), ['replayed', 'window', 'replayed', 'replayed']);
      assert.deepEqual(resent[1]?.slice(0, 3), first[1]?.slice(0, 3));
      assert.deepEqual(resent.map((row) => row.slice(3)), [[3, 1], [3, 1], [3, 1], [3, 1]], 'counts as they stand, not counted again');
      const written = await record();
      assert.deepEqual([written.first, written.call, written.before], [1, callId('tok-5'), null]);
    });

    it('re-derives suppressions before the call\'s first admission from the baseline kept for it', async () => {
      await call('tok-a', at(0));
      // A redelivery (window), then the vehicle moved (admitted), then jitter
      // near the new position (window), then an old ping (late).
      const moved = LAT + 0.001;
      const pings = [at(4), at(10, moved), at(12, moved), at(1)];
      const first = await call('tok-b', ...pings);
      assert.deepEqual(first.map((row) => row[0]), ['window', 'moved', 'window', 'late']);
      const written = await record();
      assert.equal(written.first, 2);
      assert.deepEqual(written.before, { t: at(0)[0], lat: LAT, lon: LON }, 'the baseline from before tok-b');
      const resent = await call('tok-b', ...pings);
      assert.deepEqual(resent.map((row) => row.slice(0, 3)), first.map((row, i) => (i === 1 ? ['replayed', null, null] : row.slice(0, 3))));
      assert.deepEqual(await record(), written, 'the resend wrote nothing');
      // The next admission by another call drops the kept baseline.
      await call('tok-c', at(200, moved));
      assert.equal((await record()).before, null);
    });

    it('still recognises a resend after another call only suppressed pings of the asset', async () => {
      await call('tok-7', at(0), at(61));
      await call('tok-8', at(70));
      assert.deepEqual(await call('tok-7', at(0), at(61)), [['replayed', null, null, 2, 1], ['replayed', null, null, 2, 1]]);
    });

    it('does not mistake another call whose indices match for this one', async () => {
      await call('tok-6', at(0));
      // Same index 1, different token: a genuine duplicate, not a replay.
      assert.equal((await call('tok-66', at(0)))[0]?.[0], 'late');
      assert.equal((await call('tok-', at(0)))[0]?.[0], 'late');
    });

    it('leaves the record exactly as the first run wrote it', async () => {
      await call('tok-1', at(0));
      const before = (await client().getBuffer(key)) as Buffer;
      await call('tok-1', at(0));
      assert.deepEqual((await client().getBuffer(key)) as Buffer, before);
      const written = decodeWindowRecord(before);
      assert.deepEqual(
        { t: written.t, lat: written.lat, lon: written.lon, accepted: written.accepted, suppressed: written.suppressed, layout: written.layout, first: written.first, call: written.call },
        { t: at(0)[0], lat: LAT, lon: LON, accepted: 1, suppressed: 0, layout: 'compact', first: 1, call: callId('tok-1') },
      );
    });
  });

  describe('sliding window record', () => {
    const key = windowRecordKey('replay:', 'veh-2');
    const call = async (token: string, t: number, lat: number, lon: number): Promise<string> => {
      const reply = await client().dedupSlidingWindowBuffer(1, [key], RULE_ARGS, token, encodePings([{ t, lat, lon }]));
      return decodeOutcomes(reply)[0]?.reason ?? '?';
    };
    const T0 = BASE_SECONDS * 1000;

    it('is a string with the TTL, 28 bytes while the values fit the compact layout', async () => {
      await call('r-1', T0, LAT, LON);
      assert.equal(await client().type(key), 'string');
      assert.equal(await client().strlen(key), 28);
      const ttl = await client().ttl(key);
      assert.ok(ttl > 3590 && ttl <= 3600, String(ttl));
    });

    it('falls back to exact doubles (42 bytes) for values the compact layout cannot hold', async () => {
      // Fractional milliseconds, and coordinates with more than seven decimals.
      const t = T0 + 0.25;
      const lat = 52.520008712345;
      const lon = -13.4049547000001;
      await call('r-2', t, lat, lon);
      assert.equal(await client().strlen(key), 42);
      const written = decodeWindowRecord((await client().getBuffer(key)) as Buffer);
      assert.deepEqual([written.layout, written.t, written.lat, written.lon], ['full', t, lat, lon]);
      // The baseline is the exact ping: a ping a hair later in time and place is judged against it.
      assert.equal(await call('r-3', t + 0.25, lat, lon), 'window');
      assert.equal(await call('r-4', t, lat, lon), 'late');
    });

    it('keeps the TTL of the last admission when it only counts a suppression', async () => {
      await call('r-5', T0, LAT, LON);
      await client().expire(key, 100);
      assert.equal(await call('r-6', T0 + 4000, LAT, LON), 'window');
      const ttl = await client().ttl(key);
      assert.ok(ttl > 90 && ttl <= 100, `TTL ${ttl}: a suppression must not extend the record's life`);
      assert.equal(decodeWindowRecord((await client().getBuffer(key)) as Buffer).suppressed, 1);
      assert.equal(await call('r-7', T0 + 61_000, LAT, LON), 'elapsed');
      assert.ok((await client().ttl(key)) > 3590, 'an admission starts the TTL again');
    });

    it('reads a record of the earlier hash layout as absent and replaces it', async () => {
      await client().hset(key, 't', String(T0), 'lat', String(LAT), 'lon', String(LON), 'id', 'old.1', 'acc', '5');
      await client().expire(key, 3600);
      assert.equal(await call('r-8', T0 + 4000, LAT, LON), 'first');
      assert.equal(await client().type(key), 'string');
      assert.equal(await call('r-9', T0 + 8000, LAT, LON), 'window');
    });

    it('accepts the pings as decimal text arguments too (for tools such as redis-benchmark)', async () => {
      const text = (token: string, seconds: number): Promise<Buffer> =>
        client().dedupSlidingWindowBuffer(1, [key], RULE_ARGS, token, String((BASE_SECONDS + seconds) * 1000), String(LAT), String(LON));
      assert.equal(decodeOutcomes(await text('x-1', 0))[0]?.reason, 'first');
      assert.equal(decodeOutcomes(await text('x-2', 4))[0]?.reason, 'window');
      assert.equal(decodeOutcomes(await text('x-2', 4))[0]?.reason, 'window');
      assert.equal(await call('x-3', T0 + 61_000, LAT, LON), 'elapsed');
    });
  });

  describe('seen set', () => {
    const k1 = seenKey('replay:', 'bin-A17', 41, '76c73ee2946cc70e');
    const k2 = seenKey('replay:', 'bin-A17', 42, 'ed9b14ef6ee4c460');

    it('reports claimed keys as admitted again when the same call is resent', async () => {
      assert.deepEqual(await client().dedupSeenSet(2, k1, k2, '3600', 'tok-A'), [1, 1]);
      assert.deepEqual(await client().dedupSeenSet(2, k1, k2, '3600', 'tok-A'), [1, 1]);
      // Another call claiming the same keys: duplicates.
      assert.deepEqual(await client().dedupSeenSet(2, k1, k2, '3600', 'tok-B'), [0, 0]);
    });

    it('keeps an in-burst replay a duplicate when the burst is resent', async () => {
      assert.deepEqual(await client().dedupSeenSet(3, k1, k1, k2, '3600', 'tok-C'), [1, 0, 1]);
      assert.deepEqual(await client().dedupSeenSet(3, k1, k1, k2, '3600', 'tok-C'), [1, 0, 1]);
    });

    it('claims with SET NX EX: the key holds the first call and has a TTL', async () => {
      await client().dedupSeenSet(1, k1, '3600', 'tok-D');
      await client().dedupSeenSet(1, k1, '3600', 'tok-E');
      assert.equal(await client().get(k1), 'tok-D.1', 'first write wins');
      const ttl = await client().ttl(k1);
      assert.ok(ttl > 3590 && ttl <= 3600, String(ttl));
    });
  });
});
