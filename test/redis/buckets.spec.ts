/**
 * The buckets (redis/wire PERIODS_PER_TTL): a record or reading past its
 * expiry is never a baseline nor seen, whether or not it is still in its
 * hash; a bucket's first write of a period sweeps out what has expired (and
 * what a reset of everything left behind) and renews the bucket's expiry,
 * never shortening it; a bucket nobody writes expires by itself. Time is
 * the stores' host clock, moved by the test (the buckets' own TTLs are
 * Redis's, read with PTTL).
 */
import assert from 'node:assert/strict';
import { hashBucketOf, seenBucketKey, windowBucketKey } from '../../src/redis/key-names';
import { BUCKET_FIELD, RECORD_FLAG, WINDOW_RECORD } from '../../src/redis/wire';
import { RedisSeenStore } from '../../src/stores/redis-seen-store';
import { RedisWindowStore } from '../../src/stores/redis-window-store';
import type { SeenClaim } from '../../src/stores/types';
import { claimNames, newToken } from '../contract/seen-store.contract';
import { LAT, ping, START_MS } from '../contract/window-store.contract';
import { claim, decide, resetWindow } from '../support/ask';
import { useRedis } from '../support/global-hooks';
import { ownField, scriptedClientPerTest, SEEN_SETTINGS, SETTINGS, storeOptions } from '../support/scripted-redis';

const PREFIX = 'bk:';
const TTL_MS = SETTINGS.ttlSeconds * 1000;
const PERIOD_MS = TTL_MS / 4;

/** `count` asset ids that share one bucket. */
function idsOfOneBucket(count: number): string[] {
  const first = hashBucketOf('veh-0', false);
  const ids: string[] = [];
  for (let i = 0; ids.length < count; i++) if (hashBucketOf(`veh-${i}`, false) === first) ids.push(`veh-${i}`);
  return ids;
}

/** `count` readings of one device whose keys share one bucket. */
function readingsOfOneBucket(count: number): SeenClaim[] {
  const key = (seq: number): string => `bin-A17:${seq}:76c73ee2946cc70e`;
  const first = hashBucketOf(key(0), false);
  const claims: SeenClaim[] = [];
  for (let seq = 0; claims.length < count; seq++) if (hashBucketOf(key(seq), false) === first) claims.push({ key: key(seq), group: 'bin-A17' });
  return claims;
}

describe('redis buckets: expiry by the time each entry holds, sweeps, and the buckets\' own TTLs', () => {
  useRedis();
  const client = scriptedClientPerTest();
  let now = START_MS;
  const clock = (): number => now;
  beforeEach(() => {
    now = START_MS;
  });

  /** The names of a bucket's fields that are records or readings (not its own). */
  async function entryFields(bucket: string): Promise<string[]> {
    return (await client().hkeysBuffer(bucket)).filter((field) => field[0] !== 0xff).map((field) => field.toString('utf8')).sort();
  }

  it('reads a record past its expiry as absent, and sweeps it out at the bucket\'s first write of a later period', async () => {
    const [a, b, c] = idsOfOneBucket(3) as [string, string, string];
    const bucket = windowBucketKey(PREFIX, a);
    const windows = new RedisWindowStore(client(), SETTINGS, storeOptions(PREFIX), clock);
    await decide(windows, ping(a, 0));
    await decide(windows, ping(b, 0));
    now += TTL_MS - PERIOD_MS;
    await decide(windows, ping(b, 3000)); // b admitted again: live a TTL from now
    now += PERIOD_MS; // a's TTL has run out; b's has not
    assert.deepEqual(await entryFields(bucket), [a, b].sort(), 'both still held');
    assert.equal((await decide(windows, ping(a, 3700))).reason, 'first', 'a is no baseline, though Redis still holds it');
    now += 1;
    await decide(windows, ping(c, 0));
    assert.deepEqual(await entryFields(bucket), [a, b, c].sort(), 'a was written again; nothing to sweep yet');
    // A period on: c's first write of the period sweeps out what expired (nothing here) and the period fields before.
    now += TTL_MS + PERIOD_MS;
    await decide(windows, ping(c, 3000 + TTL_MS / 1000));
    assert.deepEqual(await entryFields(bucket), [c], 'a and b expired and were swept; c was rewritten');
    const periods = (await client().hkeysBuffer(bucket)).filter((field) => field.subarray(0, 2).equals(ownField(BUCKET_FIELD.period)));
    assert.equal(periods.length, 1, 'the fields of earlier periods were swept too');
  });

  it('sweeps out records of an epoch before a reset of every asset', async () => {
    const [a, b] = idsOfOneBucket(2) as [string, string];
    const bucket = windowBucketKey(PREFIX, a);
    const windows = new RedisWindowStore(client(), SETTINGS, storeOptions(PREFIX), clock);
    await decide(windows, ping(a, 0));
    await resetWindow(windows);
    assert.equal((await decide(windows, ping(a, 4))).reason, 'first');
    now += PERIOD_MS;
    await decide(windows, ping(b, 0)); // new to the bucket, in a new period: a sweep
    assert.deepEqual(await entryFields(bucket), [a, b].sort(), 'a is of this epoch again, b new');
    // A record written before the reset and never again is swept at the next period.
    await resetWindow(windows);
    now += PERIOD_MS;
    await decide(windows, ping(b, 1000));
    assert.deepEqual(await entryFields(bucket), [b], 'a, of the epoch before, was swept');
  });

  it('sweeps out a jump candidate (issue 29, a field of its own) with its record, and one its record no longer keeps', async () => {
    const [a, b] = idsOfOneBucket(2) as [string, string];
    const bucket = windowBucketKey(PREFIX, a);
    const windows = new RedisWindowStore(client(), { ...SETTINGS, maxSpeedKmh: 150 }, storeOptions(PREFIX), clock);
    const candidates = async (): Promise<string[]> =>
      (await client().hkeysBuffer(bucket)).filter((field) => field.subarray(0, 2).equals(ownField(BUCKET_FIELD.candidate))).map((field) => field.subarray(2).toString('utf8')).sort();
    await decide(windows, ping(a, 0));
    await decide(windows, ping(b, 0));
    assert.equal((await decide(windows, ping(a, 10, LAT + 0.05))).reason, 'jump');
    assert.equal((await decide(windows, ping(b, 10, LAT + 0.05))).reason, 'jump');
    assert.deepEqual(await candidates(), [a, b].sort());
    // b's record is written again without its candidate flag by hand: its candidate is an orphan now.
    const raw = (await client().hgetBuffer(bucket, b)) as Buffer;
    raw[WINDOW_RECORD.at.flags] = (raw[WINDOW_RECORD.at.flags] as number) & ~RECORD_FLAG.candidate;
    await client().hset(bucket, b, raw);
    // A TTL and a period on, a's record has expired: the next period's first write sweeps it, its candidate and b's orphan.
    now += TTL_MS + PERIOD_MS;
    await decide(windows, ping(b, 20 + TTL_MS / 1000));
    assert.deepEqual(await entryFields(bucket), [b]);
    assert.deepEqual(await candidates(), []);
  });

  it('keeps a bucket a period past the period its latest entry expires in, and never shortens it', async () => {
    const [first, second] = readingsOfOneBucket(2) as [SeenClaim, SeenClaim];
    const bucket = seenBucketKey(PREFIX, 'bin-A17', first.key);
    const long = new RedisSeenStore(client(), { ...SEEN_SETTINGS, ttlSeconds: 4 * SEEN_SETTINGS.ttlSeconds }, storeOptions(PREFIX), clock);
    const short = new RedisSeenStore(client(), SEEN_SETTINGS, storeOptions(PREFIX), clock);
    await claim(long, { claims: [first], token: newToken() });
    const longKept = await client().pttl(bucket);
    assert.ok(longKept >= 4 * TTL_MS && longKept <= 4 * TTL_MS * 1.5, `PTTL ${longKept}`);
    await claim(short, { claims: [second], token: newToken() });
    assert.ok((await client().pttl(bucket)) >= longKept - 1000, 'a shorter TTL never cuts the bucket short');
    // The longer-lived reading is still seen after the shorter TTL has passed.
    now += 2 * TTL_MS;
    assert.deepEqual(claimNames(await claim(short, { claims: [first, second], token: newToken() })), ['duplicate', 'admitted']);
  });

  it('lets a bucket nobody writes expire with what it holds', async () => {
    const windows = new RedisWindowStore(client(), { ...SETTINGS, ttlSeconds: 1 }, storeOptions(PREFIX), clock);
    await decide(windows, ping('veh-gone', 0));
    const bucket = windowBucketKey(PREFIX, 'veh-gone');
    const pttl = await client().pttl(bucket);
    assert.ok(pttl > 0 && pttl <= 1500, `PTTL ${pttl}`);
    await client().pexpire(bucket, 1);
    for (let tries = 0; (await client().exists(bucket)) === 1; tries++) assert.ok(tries < 500, 'the bucket did not expire');
  });
});
