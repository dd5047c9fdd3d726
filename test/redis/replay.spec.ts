/**
 * ioredis resends a command that was in flight when the connection dropped,
 * so a script call that already ran can run again with the same arguments.
 * The call's token makes the second run report what the first one decided
 * (an admitted ping as `replayed`, never as late behind the record the first
 * run wrote; a suppression again as the suppression it was) and write
 * nothing; a reset in a resent call raises its epoch once. Simulated here by
 * sending the identical call twice, packed from the Lua headers' layouts.
 * Also: what the records and entries hold, byte for byte, in their buckets.
 */
import assert from 'node:assert/strict';
import { epochKey, SEEN_SEGMENT, seenBucketKey, seenGroupEpochKey, WINDOW_SEGMENT, windowBucketKey } from '../../src/redis/key-names';
import { BUCKET_FIELD } from '../../src/redis/wire';
import { decodeOutcomes, decodeWindowCandidate, decodeWindowRecord, decodeWindowTail, type RecordCandidate, type WindowRecord } from '../../src/stores/redis-window-store';
import { claimNames, settleNames } from '../contract/seen-store.contract';
import { BASE_SECONDS, LAT, LON } from '../contract/window-store.contract';
import { useRedis } from '../support/global-hooks';
import {
  decodeEpoch,
  ownField,
  scriptedClientPerTest,
  seenCall,
  seenOps,
  windowCall,
  windowOps,
  windowRule,
  type RawSeenOp,
  type RawWindowOp,
} from '../support/scripted-redis';

const PREFIX = 'replay:';
const RULE = windowRule({ minSeconds: 60, minMetres: 25, minHeadingDegrees: 10, maxAheadSeconds: 300, ttlSeconds: 3600 });
const T0 = BASE_SECONDS * 1000;
const NOW = T0 + 3_600_000;

describe('redis scripts: a resent call is recognised by its token', () => {
  useRedis();
  const client = scriptedClientPerTest();

  describe('sliding window', () => {
    const epoch = epochKey(PREFIX, WINDOW_SEGMENT, undefined);
    const bucket = windowBucketKey(PREFIX, 'veh-1');
    const at = (seconds: number, lat = LAT, more: Partial<RawWindowOp> = {}): RawWindowOp => ({ op: 'ping', t: T0 + seconds * 1000, lat, lon: LON, ...more });
    /** reason (or 'reset'), dtSeconds, distanceMetres, accepted, suppressed of each operation. */
    type Row = [string, number | null, number | null, number, number] | ['reset'];
    const call = async (token: number, ...ops: RawWindowOp[]): Promise<Row[]> => {
      const keys = [epoch, ...ops.map((op) => (op.op === 'resetAll' ? epoch : bucket))];
      const ids = ops.map((op) => (op.op === 'resetAll' ? '' : 'veh-1'));
      const reply = await client().dedupSlidingWindowBuffer(keys.length, keys, RULE, windowCall(NOW, token), windowOps(ops), ids);
      return decodeOutcomes(reply).map((o) => (o === undefined ? ['reset'] : [o.reason, o.dtSeconds, o.distanceMetres, o.accepted, o.suppressed]));
    };
    const reasons = (rows: Row[]): string[] => rows.map((row) => row[0]);
    const record = async (): Promise<WindowRecord> => decodeWindowRecord((await client().hgetBuffer(bucket, 'veh-1')) as Buffer);
    const raw = async (): Promise<Buffer | null> => client().hgetBuffer(bucket, 'veh-1');
    const tail = async (): Promise<Buffer | null> => client().hgetBuffer(bucket, ownField(BUCKET_FIELD.before, 'veh-1'));

    it('reports an admitted ping as replayed, not late, and does not count it twice', async () => {
      assert.deepEqual(await call(101, at(0)), [['first', null, null, 1, 0]]);
      assert.deepEqual(await call(101, at(0)), [['replayed', null, null, 1, 0]]);
      // A different call with the same ping is a genuine duplicate.
      assert.deepEqual(await call(102, at(0)), [['late', 0, null, 1, 1]]);
    });

    it('still suppresses a resent ping that the first run suppressed', async () => {
      await call(101, at(0));
      assert.deepEqual(reasons(await call(102, at(4))), ['window']);
      assert.deepEqual(reasons(await call(102, at(4))), ['window']);
    });

    it('recognises every ping the call admitted, and repeats its suppressions, when it admitted several of one asset', async () => {
      const pings = [at(0), at(4), at(61), at(122)]; // first, window, elapsed, elapsed
      const first = await call(105, ...pings);
      assert.deepEqual(reasons(first), ['first', 'window', 'elapsed', 'elapsed']);
      const resent = await call(105, ...pings);
      // Pings 1, 3 and 4 were admitted by the first run: none may now be
      // reported as late behind the record that run itself wrote; ping 2 is
      // suppressed again for the reason, and with the figures, it had.
      assert.deepEqual(reasons(resent), ['replayed', 'window', 'replayed', 'replayed']);
      assert.deepEqual(resent[1]?.slice(0, 3), first[1]?.slice(0, 3));
      assert.deepEqual(resent.map((row) => row.slice(3)), [[3, 1], [3, 1], [3, 1], [3, 1]], 'counts as they stand, not counted again');
      const written = await record();
      assert.deepEqual([written.first, written.call, written.before], [1, 105, false]);
    });

    it('re-derives suppressions before the call\'s first admission from the baseline kept for it', async () => {
      await call(110, at(0));
      // A redelivery (window), then the vehicle moved (admitted), then jitter
      // near the new position (window), then an old ping (late).
      const moved = LAT + 0.001;
      const pings = [at(4), at(10, moved), at(12, moved), at(1)];
      const first = await call(111, ...pings);
      assert.deepEqual(reasons(first), ['window', 'moved', 'window', 'late']);
      const written = await record();
      assert.equal(written.first, 2);
      assert.equal(written.before, true, 'the record keeps the baseline from before the call beside it');
      assert.deepEqual(decodeWindowTail((await tail()) as Buffer), { t: T0, lat: LAT, lon: LON }, 'the baseline from before call 111');
      const resent = await call(111, ...pings);
      assert.deepEqual(resent.map((row) => row.slice(0, 3)), first.map((row, i) => (i === 1 ? ['replayed', null, null] : row.slice(0, 3))));
      assert.deepEqual(await record(), written, 'the resend wrote nothing');
      // The next admission by another call drops the kept baseline.
      await call(112, at(200, moved));
      assert.equal((await record()).before, false);
      assert.equal(await tail(), null);
    });

    it('still recognises a resend after another call only suppressed pings of the asset', async () => {
      await call(107, at(0), at(61));
      await call(108, at(70));
      assert.deepEqual(await call(107, at(0), at(61)), [['replayed', null, null, 2, 1], ['replayed', null, null, 2, 1]]);
    });

    it('does not mistake another call whose indices match for this one', async () => {
      await call(106, at(0));
      // Same index 1, different token: a genuine duplicate, not a replay.
      assert.deepEqual(reasons(await call(1060, at(0))), ['late']);
      assert.deepEqual(reasons(await call(2 ** 48 - 1, at(0))), ['late']);
    });

    it('leaves the record exactly as the first run wrote it', async () => {
      await call(101, at(0));
      const before = await raw();
      await call(101, at(0));
      assert.deepEqual(await raw(), before);
    });

    it('replays a resent call whose pings straddle a reset of their asset', async () => {
      // Admitted, reset, admitted again: the record written names the call.
      assert.deepEqual(reasons(await call(120, at(0), { op: 'resetAsset' }, at(4))), ['first', 'reset', 'first']);
      const written = await raw();
      assert.deepEqual(reasons(await call(120, at(0), { op: 'resetAsset' }, at(4))), ['replayed', 'reset', 'replayed']);
      assert.deepEqual(await raw(), written, 'the resend wrote and deleted nothing');
      assert.deepEqual(reasons(await call(121, at(8))), ['window'], 'the record is the one after the reset');
    });

    it('replays a suppression before a reset against the baseline from before the call', async () => {
      await call(130, at(0));
      const first = await call(131, at(4), { op: 'resetAsset' }, at(5));
      assert.deepEqual(reasons(first), ['window', 'reset', 'first']);
      const resent = await call(131, at(4), { op: 'resetAsset' }, at(5));
      assert.deepEqual(reasons(resent), ['window', 'reset', 'replayed']);
      assert.deepEqual(resent[0]?.slice(0, 3), first[0]?.slice(0, 3));
    });

    it('raises the epoch once for a reset of every asset, however often the call is resent', async () => {
      assert.deepEqual(reasons(await call(140, at(0), { op: 'resetAll' }, at(4))), ['first', 'reset', 'first']);
      assert.deepEqual(decodeEpoch(await client().getBuffer(epoch)), { count: 1, call: 140 });
      assert.deepEqual(reasons(await call(140, at(0), { op: 'resetAll' }, at(4))), ['replayed', 'reset', 'replayed']);
      assert.deepEqual(decodeEpoch(await client().getBuffer(epoch)), { count: 1, call: 140 });
      // A record written by a later call survives the resent reset.
      assert.deepEqual(reasons(await call(141, at(70))), ['elapsed']);
      await call(140, at(0), { op: 'resetAll' }, at(4));
      assert.deepEqual(reasons(await call(142, at(74))), ['window'], 'the later record survived');
      assert.equal(await client().ttl(epoch), -1, 'an epoch key of a slot never expires');
    });

    it('forgets the call\'s own pings at each reset of every asset in it, raising the epoch once', async () => {
      const ops: RawWindowOp[] = [at(0), { op: 'resetAll' }, at(4), { op: 'resetAll' }, at(8)];
      assert.deepEqual(reasons(await call(145, ...ops)), ['first', 'reset', 'first', 'reset', 'first']);
      assert.deepEqual(decodeEpoch(await client().getBuffer(epoch)), { count: 1, call: 145 });
      assert.deepEqual(reasons(await call(145, ...ops)), ['replayed', 'reset', 'replayed', 'reset', 'replayed']);
      assert.deepEqual(reasons(await call(146, at(12))), ['window'], 'the baseline is the last ping of the call');
    });

    it('writes nothing for a retried message it recognises as the baseline', async () => {
      await call(150, at(0, LAT, { events: 9 }));
      const before = await raw();
      assert.deepEqual(await call(151, at(0, LAT, { events: 9, retry: true })), [['replayed', null, null, 1, 0]]);
      assert.deepEqual(await raw(), before);
    });
  });

  describe('sliding window, with the parts of issue 29 (a value, a jump candidate)', () => {
    const epoch = epochKey(PREFIX, WINDOW_SEGMENT, undefined);
    const bucket = windowBucketKey(PREFIX, 'veh-29');
    const JUMPS = windowRule({ minSeconds: 60, minMetres: 25, ttlSeconds: 3600, maxSpeedKmh: 150 });
    const READINGS = windowRule({ minSeconds: 21_600, minMetres: 0, ttlSeconds: 3600, mode: 'value', deadband: 5 });
    /** Metres north of LAT, in degrees. */
    const north = (metres: number): number => LAT + metres / ((6_371_008.8 * Math.PI) / 180);
    const at = (seconds: number, metres = 0): RawWindowOp => ({ op: 'ping', t: T0 + seconds * 1000, lat: north(metres), lon: LON });
    const reading = (seconds: number, value: number): RawWindowOp => ({ op: 'ping', t: T0 + seconds * 1000, lat: 0, lon: 0, value });
    const callAt = async (rule: Buffer, token: number, nowMs: number, ...ops: RawWindowOp[]): Promise<string[]> => {
      const keys = [epoch, ...ops.map(() => bucket)];
      const reply = await client().dedupSlidingWindowBuffer(keys.length, keys, rule, windowCall(nowMs, token), windowOps(ops), ops.map(() => 'veh-29'));
      return decodeOutcomes(reply).map((o) => (o === undefined ? 'reset' : `${o.reason}${o.valueChange === null ? '' : ` ${o.valueChange}`}`));
    };
    const call = async (rule: Buffer, token: number, ...ops: RawWindowOp[]): Promise<string[]> => callAt(rule, token, NOW, ...ops);
    const raw = async (): Promise<Buffer> => (await client().hgetBuffer(bucket, 'veh-29')) as Buffer;
    const record = async (): Promise<WindowRecord> => decodeWindowRecord(await raw());
    const candidateField = async (): Promise<Buffer | null> => client().hgetBuffer(bucket, ownField(BUCKET_FIELD.candidate, 'veh-29'));
    const candidate = async (): Promise<RecordCandidate | undefined> => {
      const field = await candidateField();
      return field === null ? undefined : decodeWindowCandidate(field);
    };
    const tailField = async (): Promise<Buffer | null> => client().hgetBuffer(bucket, ownField(BUCKET_FIELD.before, 'veh-29'));
    /** Every field of the bucket, for "wrote nothing". */
    const all = async (): Promise<Record<string, Buffer>> => client().hgetallBuffer(bucket);

    it('keeps a reading\'s value, exactly, in the record in the place of the position (0,0); a suppression counts it alone and keeps its expiry', async () => {
      assert.deepEqual(await call(READINGS, 400, reading(0, 0.1 + 0.2)), ['first']);
      assert.equal((await raw()).length, 39, 'as long as a position\'s record');
      const admitted = await record();
      assert.equal(admitted.value, 0.30000000000000004);
      assert.deepEqual(await callAt(READINGS, 401, NOW + 100_000, reading(900, 0.3)), ['unchanged -5.551115123125783e-17']);
      assert.equal((await raw()).length, 39);
      assert.equal((await record()).suppressed, 1);
      assert.equal((await record()).expires, admitted.expires, 'a suppression does not extend the record\'s life');
    });

    it('keeps the jump candidate in a field of its own while there is one, the record keeping the expiry of the last admission', async () => {
      assert.deepEqual(await call(JUMPS, 410, at(0)), ['first']);
      assert.equal((await raw()).length, 39, 'no candidate, no part: the record of a node without guards');
      const admitted = await record();
      assert.deepEqual(await callAt(JUMPS, 411, NOW + 100_000, at(10, 5000)), ['jump']);
      assert.equal((await raw()).length, 39);
      assert.equal((await candidateField())?.length, 24);
      const jumped = await record();
      assert.deepEqual([jumped.t, jumped.suppressed, jumped.candidate], [T0, 1, true]);
      assert.deepEqual(await candidate(), { t: T0 + 10_000, lat: Math.floor(north(5000) * 1e7 + 0.5) / 1e7, lon: LON, count: 1, call: 411 });
      assert.equal(jumped.expires, admitted.expires, 'a jump neither extends nor shortens the record\'s life (what KEEPTTL kept)');
      assert.deepEqual(await callAt(JUMPS, 412, NOW + 200_000, at(20, 10)), ['window']);
      assert.equal(await candidateField(), null, 'a ping that is no jump clears the candidate, and its field goes');
      const cleared = await record();
      assert.deepEqual([cleared.suppressed, cleared.candidate, cleared.expires], [2, false, admitted.expires]);
    });

    it('answers a resent call with jumps and a relocation as the first run did, from the state kept in the tail, and writes nothing', async () => {
      await call(JUMPS, 420, at(0));
      assert.deepEqual(await call(JUMPS, 421, at(10, 5000)), ['jump']);
      const pings = [at(20, 5150), at(30, 5300), at(31, 5310)];
      assert.deepEqual(await call(JUMPS, 422, ...pings), ['jump', 'relocated', 'window']);
      const written = await all();
      assert.equal((await tailField())?.length, 26 + 24, 'the tail: the baseline and the candidate from before the call');
      const decoded = await record();
      const tail = decodeWindowTail((await tailField()) as Buffer);
      assert.deepEqual([decoded.first, decoded.candidate, tail.t, tail.candidate?.count], [2, false, T0, 1]);
      assert.equal(await candidateField(), null);
      assert.deepEqual(await call(JUMPS, 422, ...pings), ['jump', 'replayed', 'window']);
      assert.deepEqual(await all(), written, 'the resend wrote nothing');
      assert.deepEqual(await call(JUMPS, 423, at(40, 5320)), ['window'], 'decided from the relocated baseline');
    });

    it('answers a resent call of readings as the first run did, the value\'s change against the value kept in the tail', async () => {
      await call(READINGS, 430, reading(0, 40));
      const readings = [reading(900, 41), reading(1800, 46), reading(2700, 47)];
      assert.deepEqual(await call(READINGS, 431, ...readings), ['unchanged 1', 'changed 6', 'unchanged 1']);
      const written = await all();
      assert.equal((await raw()).length, 39);
      assert.equal((await tailField())?.length, 26 + 8);
      assert.deepEqual(decodeWindowTail((await tailField()) as Buffer), { t: T0, lat: 0, lon: 0, value: 40 });
      assert.deepEqual(await call(READINGS, 431, ...readings), ['unchanged 1', 'replayed', 'unchanged 1']);
      assert.deepEqual(await all(), written, 'the resend wrote nothing');
    });

    it('keeps the tail through a jump of a later call, so that the earlier call is still recognised when resent', async () => {
      await call(JUMPS, 440, at(0));
      const pings = [at(4), at(70)];
      assert.deepEqual(await call(JUMPS, 441, ...pings), ['window', 'elapsed']);
      assert.deepEqual(await call(JUMPS, 442, at(80, 5000)), ['jump']);
      const written = await record();
      assert.deepEqual([written.call, written.first, written.before, decodeWindowTail((await tailField()) as Buffer).t, (await candidate())?.count], [441, 2, true, T0, 1]);
      assert.deepEqual(await call(JUMPS, 441, ...pings), ['window', 'replayed']);
      assert.deepEqual(await record(), written);
    });

    it('answers a resent call that only suppressed pings of the asset, a jump among them, as the first run did, and writes nothing', async () => {
      const rule = windowRule({ minSeconds: 60, minMetres: 25, ttlSeconds: 3600, maxSpeedKmh: 150, relocateAfterPings: 2 });
      await call(rule, 460, at(0));
      // Two jumps that agree: a second run counting from the first run's candidate would relocate the asset.
      const pings = [at(20, 5000), at(10, 4900), at(25, 5)];
      assert.deepEqual(await call(rule, 461, ...pings.slice(0, 2)), ['jump', 'jump']);
      const written = await all();
      assert.deepEqual(await candidate(), { t: T0 + 10_000, lat: Math.floor(north(4900) * 1e7 + 0.5) / 1e7, lon: LON, count: 1, call: 461 });
      assert.deepEqual(await call(rule, 461, ...pings.slice(0, 2)), ['jump', 'jump']);
      assert.deepEqual(await all(), written, 'the resend wrote nothing, not even a count');
      // Another call's ping is decided as usual: it agrees with the candidate, and relocates.
      assert.deepEqual(await call(rule, 462, at(30, 5050)), ['relocated']);
    });

    it('reads a record of the plain layout in value mode as a baseline without a value: the next reading is changed', async () => {
      await call(JUMPS, 450, at(0));
      assert.deepEqual(await call(READINGS, 451, reading(60, 40)), ['changed NaN']);
      assert.equal((await record()).value, 40);
    });

    it('drops the candidate when a node without the jump guard admits a ping', async () => {
      await call(JUMPS, 470, at(0));
      assert.deepEqual(await call(JUMPS, 471, at(10, 5000)), ['jump']);
      assert.equal((await candidateField())?.length, 24);
      const plain = windowRule({ minSeconds: 60, minMetres: 25, ttlSeconds: 3600 });
      assert.deepEqual(await call(plain, 472, at(20, 5000)), ['moved']);
      assert.deepEqual([(await record()).candidate, await candidateField()], [false, null]);
    });
  });

  describe('sliding window record', () => {
    const epoch = epochKey(PREFIX, WINDOW_SEGMENT, undefined);
    const bucket = windowBucketKey(PREFIX, 'veh-2');
    const call = async (token: number, op: RawWindowOp, nowMs = NOW): Promise<string> => {
      const reply = await client().dedupSlidingWindowBuffer(2, [epoch, bucket], RULE, windowCall(nowMs, token), windowOps([op]), ['veh-2']);
      return decodeOutcomes(reply)[0]?.reason ?? 'reset';
    };
    const read = async (): Promise<WindowRecord> => decodeWindowRecord((await client().hgetBuffer(bucket, 'veh-2')) as Buffer);

    it('is one 49-byte field of its bucket with every field of the rules and its expiry; the bucket expires after it', async () => {
      const events = 2 ** 48 - 2;
      assert.equal(await call(201, { op: 'ping', t: T0 + 0.25, lat: 52.520008712345, lon: -13.4049547000001, heading: 359.996, accuracy: 12.34, events }), 'first');
      assert.equal(await client().type(bucket), 'hash');
      assert.equal(await client().object('ENCODING', bucket), 'listpack');
      // A fraction of a millisecond: the time as a double (51 bytes); a whole one as 6 bytes (49).
      assert.equal((await client().hgetBuffer(bucket, 'veh-2'))?.length, 51);
      assert.deepEqual(await read(), {
        expires: NOW + 3_600_000, // host clock + ttlSeconds
        epoch: 0,
        t: T0 + 0.25, // exact
        lat: 52.5200087, // to 1e-7 degrees
        lon: -13.4049547,
        accepted: 1,
        suppressed: 0,
        call: 201,
        first: 1,
        events,
        heading: 0, // 359.996 to 0.01 degrees is 360, which is north
        accuracy: 12.3, // to 0.1 m
        before: false,
        candidate: false,
      });
      assert.equal(await call(202, { op: 'ping', t: T0 + 61_000, lat: LAT, lon: LON, heading: 10, accuracy: 1, events: 1 }), 'elapsed');
      assert.equal((await client().hgetBuffer(bucket, 'veh-2'))?.length, 49);
      const pttl = await client().pttl(bucket);
      assert.ok(pttl > 3_600_000 && pttl <= 3_600_000 * 1.5, `the bucket expires a period past the period its record expires in: PTTL ${pttl}`);
    });

    it('stores a missing heading as none, and caps the accuracy', async () => {
      await call(202, { op: 'ping', t: T0, lat: LAT, lon: LON, accuracy: 1e6 });
      const written = await read();
      assert.ok(Number.isNaN(written.heading));
      assert.equal(written.accuracy, 6553.4);
    });

    it('is 39 bytes without a heading, an accuracy or event values', async () => {
      await call(203, { op: 'ping', t: T0, lat: LAT, lon: LON });
      assert.equal((await client().hgetBuffer(bucket, 'veh-2'))?.length, 39);
      assert.deepEqual([(await read()).events, (await read()).accuracy], [0, 0]);
    });

    it('leaves out a position of 0,0 (31 bytes: value mode\'s records are at 0,0), and reads it back as 0,0', async () => {
      assert.equal(await call(210, { op: 'ping', t: T0, lat: 0, lon: 0 }), 'first');
      assert.equal((await client().hgetBuffer(bucket, 'veh-2'))?.length, 31);
      assert.deepEqual([(await read()).lat, (await read()).lon, (await read()).t], [0, 0, T0]);
      assert.equal(await call(211, { op: 'ping', t: T0 + 4000, lat: 0.0001, lon: 0 }), 'window', '11 m from 0,0');
      assert.equal((await read()).suppressed, 1);
      assert.equal(await call(212, { op: 'ping', t: T0 + 8000, lat: 0.0003, lon: 0 }), 'moved', '33 m from 0,0');
      assert.equal((await client().hgetBuffer(bucket, 'veh-2'))?.length, 39);
    });

    it('keeps the expiry of the last admission when it only counts a suppression, and reads as absent from then on', async () => {
      await call(205, { op: 'ping', t: T0, lat: LAT, lon: LON });
      const admitted = await read();
      assert.equal(await call(206, { op: 'ping', t: T0 + 4000, lat: LAT, lon: LON }, NOW + 100_000), 'window');
      const kept = await read();
      assert.equal(kept.expires, admitted.expires, 'a suppression must not extend the record\'s life');
      assert.equal(kept.suppressed, 1);
      assert.equal(await call(207, { op: 'ping', t: T0 + 61_000, lat: LAT, lon: LON }, NOW + 200_000), 'elapsed');
      assert.equal((await read()).expires, NOW + 200_000 + 3_600_000, 'an admission starts the TTL again');
      // Past its expiry by the host clock, the record is no baseline, whatever Redis holds.
      assert.equal(await call(208, { op: 'ping', t: T0 + 62_000, lat: LAT, lon: LON }, NOW + 200_000 + 3_600_000), 'first');
    });

    it('reads a value of another shape as absent and replaces it', async () => {
      // A live expiry, then flags whose layout is not the value's length (issue 29's value flag too), or a bit no layout has.
      const shaped = (flags: number, length: number): Buffer => Buffer.concat([Buffer.alloc(6, 0xff), Buffer.from([flags]), Buffer.alloc(length - 7)]);
      for (const junk of [Buffer.from('x'), Buffer.alloc(38), Buffer.alloc(40), Buffer.from([0, 0, 0, 0, 0, 0, 0x80, ...Buffer.alloc(32)]), shaped(8, 39), shaped(8, 48), shaped(9, 47), shaped(32, 47)]) {
        await client().hset(bucket, 'veh-2', junk);
        assert.equal(await call(208, { op: 'ping', t: T0 + 4000, lat: LAT, lon: LON }), 'first');
        assert.equal((await client().hgetBuffer(bucket, 'veh-2'))?.length, 39);
      }
    });

    it('refuses operations that do not match the keys', async () => {
      await assert.rejects(client().dedupSlidingWindowBuffer(2, [epoch, bucket], RULE, windowCall(NOW, 209), Buffer.alloc(47), ['veh-2']), /47 bytes of operations, 2 keys and 1 ids/);
    });
  });

  describe('seen set', () => {
    const slotEpoch = epochKey(PREFIX, SEEN_SEGMENT, undefined);
    const group = seenGroupEpochKey(PREFIX, 'bin-A17');
    const f1 = 'bin-A17:41:76c73ee2946cc70e';
    const f2 = 'bin-A17:42:ed9b14ef6ee4c460';
    const b1 = seenBucketKey(PREFIX, 'bin-A17', f1);
    const b2 = seenBucketKey(PREFIX, 'bin-A17', f2);
    const LEASE_MS = 60_000;
    /** KEYS: 1 slot epoch, 2 group epoch, 3 f1's bucket, 4 f2's bucket; ARGV: the fields. */
    const call = async (token: number, ops: Omit<RawSeenOp, 'group'>[], more: { confirm?: boolean; nowMs?: number } = {}): Promise<number[]> => {
      const argv = seenCall({ nowMs: more.nowMs ?? NOW, ttlSeconds: 3600, leaseMs: LEASE_MS, confirm: more.confirm ?? false, token });
      const fields = ops.map((op) => (op.key === 3 ? f1 : op.key === 4 ? f2 : ''));
      const reply = await client().dedupSeenSet(4, [slotEpoch, group, b1, b2], argv, seenOps(ops.map((op) => ({ ...op, group: 2 }))), fields);
      return reply.slice(0, ops.length);
    };
    const claims = (token: number): Omit<RawSeenOp, 'group'>[] => [
      { op: 'claim', key: 3, token },
      { op: 'claim', key: 4, token },
    ];
    const entries = async (): Promise<(Buffer | null)[]> => [await client().hgetBuffer(b1, f1), await client().hgetBuffer(b2, f2)];

    it('answers a resent claim as replayed, and another message\'s claim as a duplicate', async () => {
      assert.deepEqual(claimNames(await call(301, claims(7001))), ['admitted', 'admitted']);
      assert.deepEqual(claimNames(await call(301, claims(7001))), ['replayed', 'replayed']);
      assert.deepEqual(claimNames(await call(302, claims(7002))), ['duplicate', 'duplicate']);
    });

    it('answers a resent claim in confirm mode as replayed, with a fresh lease', async () => {
      assert.deepEqual(claimNames(await call(303, claims(7003), { confirm: true })), ['admitted', 'admitted']);
      const later = NOW + LEASE_MS - 1;
      assert.deepEqual(claimNames(await call(303, claims(7003), { confirm: true, nowMs: later })), ['replayed', 'replayed']);
      const raw = (await client().hgetBuffer(b1, f1)) as Buffer;
      assert.equal(raw.length, 24, 'a pending entry carries its deadline');
      assert.equal(raw.readDoubleLE(16), later + LEASE_MS);
      assert.deepEqual(claimNames(await call(304, claims(7004), { confirm: true, nowMs: NOW + LEASE_MS + 1 })), ['inFlight', 'inFlight']);
    });

    it('answers a resent confirm and a resent release as settled, and leaves the entry as the first run did', async () => {
      await call(305, [{ op: 'claim', key: 3, token: 7005 }, { op: 'claim', key: 4, token: 7005 }], { confirm: true });
      const settle: Omit<RawSeenOp, 'group'>[] = [
        { op: 'confirm', key: 3, token: 7005 },
        { op: 'release', key: 4, token: 7005 },
      ];
      assert.deepEqual(settleNames(await call(306, settle, { confirm: true })), ['settled', 'settled']);
      const after = await entries();
      assert.deepEqual(settleNames(await call(306, settle, { confirm: true })), ['settled', 'settled']);
      assert.deepEqual(await entries(), after);
    });

    it('raises a reset\'s epoch once, however often the call is resent, and never loses what was written after it', async () => {
      await call(310, claims(7010));
      assert.deepEqual(await call(311, [{ op: 'resetAll', key: 1, token: 0 }]), [0]);
      assert.deepEqual(claimNames(await call(312, claims(7012))), ['admitted', 'admitted']);
      assert.deepEqual(await call(311, [{ op: 'resetAll', key: 1, token: 0 }]), [0]);
      assert.deepEqual(decodeEpoch(await client().getBuffer(slotEpoch)), { count: 1, call: 311 });
      assert.deepEqual(claimNames(await call(313, claims(7013))), ['duplicate', 'duplicate'], 'the claims after the reset survived its resend');

      assert.deepEqual(await call(314, [{ op: 'resetGroup', key: 2, token: 0 }]), [0]);
      assert.deepEqual(claimNames(await call(315, claims(7015))), ['admitted', 'admitted']);
      assert.deepEqual(await call(314, [{ op: 'resetGroup', key: 2, token: 0 }]), [0]);
      assert.deepEqual(decodeEpoch(await client().getBuffer(group)), { count: 1, call: 314 });
      assert.deepEqual(claimNames(await call(316, claims(7016))), ['duplicate', 'duplicate']);
    });

    it('writes an entry with HSET: its expiry, epochs, state and token; the bucket expires after it', async () => {
      await call(320, claims(7020));
      await call(321, claims(7021));
      const raw = (await client().hgetBuffer(b1, f1)) as Buffer;
      assert.equal(raw.length, 16);
      // Its expiry and its state (seen: 0) in one number: expiry + state * 2^46.
      assert.deepEqual([raw.readUIntLE(0, 6), raw.readUInt16LE(6), raw.readUInt16LE(8), raw.readUIntLE(10, 6)], [NOW + 3_600_000, 0, 0, 7020], 'first write wins');
      const pttl = await client().pttl(b1);
      assert.ok(pttl > 3_600_000 && pttl <= 3_600_000 * 1.5, String(pttl));
    });

    it('refuses an unknown operation and operations of a broken length', async () => {
      const argv = seenCall({ nowMs: NOW, ttlSeconds: 3600, leaseMs: LEASE_MS, confirm: false, token: 330 });
      await assert.rejects(client().dedupSeenSet(2, [slotEpoch, b1], argv, Buffer.alloc(13), ['']), /unknown operation 0/);
      await assert.rejects(client().dedupSeenSet(2, [slotEpoch, b1], argv, Buffer.alloc(14), ['']), /14 bytes of operations for 1 keys/);
    });
  });
});
