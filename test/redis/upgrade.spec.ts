/**
 * A flow upgraded from an earlier build keeps its state: earlier builds
 * kept a string key per asset (`<prefix>sw:{<id>}`, a 44-byte record) and per
 * reading (`<prefix>rc:{<device>}:<seq>:<hash>`, an 11-byte entry), and
 * this one reads them for one TTL after its first call in a slot (the
 * layout mark), moving each into its bucket when a decision writes it and
 * deleting the old key. The old keys are packed here by hand from their
 * layouts (redis/wire LEGACY_RECORD and LEGACY_ENTRY), as those builds
 * wrote them.
 */
import assert from 'node:assert/strict';
import type Redis from 'ioredis';
import { layoutMarkKey, seenBucketKey, seenGroupEpochKey, seenKey, windowBucketKey, windowRecordKey } from '../../src/redis/key-names';
import { RedisSeenStore } from '../../src/stores/redis-seen-store';
import { decodeWindowRecord, RedisWindowStore } from '../../src/stores/redis-window-store';
import { claimNames, newToken, reading } from '../contract/seen-store.contract';
import { LAT, LON, ping, START_MS } from '../contract/window-store.contract';
import { claim, decide, resetSeen, resetWindow, settle } from '../support/ask';
import { useRedis } from '../support/global-hooks';
import { fillKeys, scriptedClientPerTest, SEEN_SETTINGS, SETTINGS, storeOptions } from '../support/scripted-redis';

const PREFIX = 'up:';
const TTL_MS = SETTINGS.ttlSeconds * 1000;

/** A record as earlier builds wrote it: '<di4i4I4I4I6I2I6I2I2I2'. */
function legacyRecord(r: { t: number; lat: number; lon: number; accepted: number; suppressed: number; epoch?: number }): Buffer {
  const out = Buffer.alloc(44);
  out.writeDoubleLE(r.t, 0);
  out.writeInt32LE(Math.round(r.lat * 1e7), 8);
  out.writeInt32LE(Math.round(r.lon * 1e7), 12);
  out.writeUInt32LE(r.accepted, 16);
  out.writeUInt32LE(r.suppressed, 20);
  out.writeUIntLE(7, 24, 6); // the call that wrote it
  out.writeUInt16LE(1, 30); // its first admitted ping
  out.writeUIntLE(0, 32, 6); // no event values
  out.writeUInt16LE(65_535, 38); // no heading
  out.writeUInt16LE(0, 40); // no accuracy
  out.writeUInt16LE(r.epoch ?? 0, 42);
  return out;
}

/** An entry as earlier builds wrote it: '<I2I2BI6', and the deadline while pending. */
function legacyEntry(e: { state: 'seen' | 'pending'; token: number; deadline?: number; slotEpoch?: number }): Buffer {
  const out = Buffer.alloc(e.state === 'pending' ? 19 : 11);
  out.writeUInt16LE(e.slotEpoch ?? 0, 0);
  out.writeUInt16LE(0, 2);
  out[4] = e.state === 'pending' ? 1 : 0;
  out.writeUIntLE(e.token, 5, 6);
  if (e.state === 'pending') out.writeDoubleLE(e.deadline ?? 0, 11);
  return out;
}

/** The commands Redis runs while `work` does, by name (scripts' own included). */
async function commandsDuring(client: Redis, work: () => Promise<unknown>): Promise<Map<string, number>> {
  const count = async (): Promise<Map<string, number>> => new Map([...(await client.info('commandstats')).matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)].map((m) => [m[1] as string, Number(m[2])]));
  const before = await count();
  await work();
  const ran = new Map<string, number>();
  for (const [name, calls] of await count()) if (calls > (before.get(name) ?? 0)) ran.set(name, calls - (before.get(name) ?? 0));
  return ran;
}

describe('redis upgrade: the keys of earlier builds are read, and moved into buckets', () => {
  useRedis();
  const client = scriptedClientPerTest();
  let now = START_MS;
  const clock = (): number => now;
  beforeEach(() => {
    now = START_MS;
  });

  /** What an earlier build left: the keys given, and a crowd of other keys (the database is not empty). */
  async function previousRelease(keys: [string, Buffer, number][]): Promise<void> {
    await fillKeys(client(), 100, (i) => `someone-else:${i}`, () => 'x');
    for (const [key, value, ttlMs] of keys) await client().set(key, value, 'PX', ttlMs);
  }

  it('decides against an asset\'s old record, then keeps it in its bucket with the old key\'s expiry, and deletes the old key', async () => {
    const old = windowRecordKey(PREFIX, 'veh-1');
    await previousRelease([[old, legacyRecord({ t: ping('veh-1', 0).t, lat: LAT, lon: LON, accepted: 3, suppressed: 1 }), 1_000_000]]);
    const windows = new RedisWindowStore(client(), SETTINGS, storeOptions(PREFIX), clock);
    const suppressed = await decide(windows, ping('veh-1', 4));
    assert.deepEqual([suppressed.reason, suppressed.accepted, suppressed.suppressed], ['window', 3, 2], 'the old baseline and counts');
    assert.equal(await client().exists(old), 0, 'the old key is gone');
    const moved = decodeWindowRecord((await client().hgetBuffer(windowBucketKey(PREFIX, 'veh-1'), 'veh-1')) as Buffer);
    assert.deepEqual([moved.t, moved.accepted, moved.suppressed], [ping('veh-1', 0).t, 3, 2]);
    assert.ok(moved.expires > now + 990_000 && moved.expires <= now + 1_000_000, `a suppression keeps the old expiry: ${moved.expires - now} ms`);
    const elapsed = await decide(windows, ping('veh-1', 61));
    assert.deepEqual([elapsed.reason, elapsed.accepted], ['elapsed', 4]);
  });

  it('reads an old record written before a reset of every asset as absent, and a reset of an asset deletes its old key too', async () => {
    const stale = windowRecordKey(PREFIX, 'veh-stale');
    const kept = windowRecordKey(PREFIX, 'veh-kept');
    await previousRelease([
      [stale, legacyRecord({ t: ping('veh-stale', 0).t, lat: LAT, lon: LON, accepted: 1, suppressed: 0, epoch: 5 }), 1_000_000],
      [kept, legacyRecord({ t: ping('veh-kept', 0).t, lat: LAT, lon: LON, accepted: 1, suppressed: 0 }), 1_000_000],
    ]);
    const windows = new RedisWindowStore(client(), SETTINGS, storeOptions(PREFIX), clock);
    assert.equal((await decide(windows, ping('veh-stale', 4))).reason, 'first', 'epoch 5 is not the slot\'s (0)');
    await resetWindow(windows, 'veh-kept');
    assert.equal(await client().exists(kept), 0);
    assert.equal((await decide(windows, ping('veh-kept', 4))).reason, 'first');
  });

  it('takes an old seen or pending reading as it stood: a duplicate, in flight, settled by its own token into its bucket', async () => {
    const seenOne = reading(1, 10);
    const pendingOne = reading(2, 20);
    const token = newToken();
    await previousRelease([
      [seenKey(PREFIX, seenOne.group, seenOne.key), legacyEntry({ state: 'seen', token: 1 }), TTL_MS],
      [seenKey(PREFIX, pendingOne.group, pendingOne.key), legacyEntry({ state: 'pending', token, deadline: START_MS + 60_000 }), TTL_MS],
    ]);
    const seen = new RedisSeenStore(client(), { ...SEEN_SETTINGS, confirm: true }, storeOptions(PREFIX), clock);
    assert.deepEqual(claimNames(await claim(seen, { claims: [seenOne, pendingOne, reading(3, 30)], token: newToken() })), ['duplicate', 'inFlight', 'admitted']);
    await settle(seen, { claims: [pendingOne], token, action: 'confirm' });
    assert.equal(await client().exists(seenKey(PREFIX, pendingOne.group, pendingOne.key)), 0, 'the confirmed reading left its old key');
    assert.ok(await client().hexists(seenBucketKey(PREFIX, pendingOne.group, pendingOne.key), pendingOne.key), 'for its bucket');
    assert.deepEqual(claimNames(await claim(seen, { claims: [pendingOne], token: newToken() })), ['duplicate']);
  });

  it('forgets old readings at a reset of their device, as earlier builds would have', async () => {
    const old = reading(1, 10);
    await previousRelease([[seenKey(PREFIX, old.group, old.key), legacyEntry({ state: 'seen', token: 1 }), TTL_MS]]);
    const seen = new RedisSeenStore(client(), SEEN_SETTINGS, storeOptions(PREFIX), clock);
    await resetSeen(seen, old.group);
    assert.ok((await client().exists(seenGroupEpochKey(PREFIX, old.group))) === 1);
    assert.deepEqual(claimNames(await claim(seen, { claims: [old], token: newToken() })), ['admitted']);
  });

  it('stops reading old keys a TTL after its first call, and the client stops sending them', async () => {
    const old = windowRecordKey(PREFIX, 'veh-late');
    // An old key that (against its own TTL rule) outlives the TTL.
    await previousRelease([[old, legacyRecord({ t: ping('veh-late', 0).t, lat: LAT, lon: LON, accepted: 1, suppressed: 0 }), 10 * TTL_MS]]);
    const windows = new RedisWindowStore(client(), SETTINGS, storeOptions(PREFIX), clock);
    await decide(windows, ping('veh-other', 0));
    assert.ok((await client().exists(layoutMarkKey(PREFIX, undefined))) === 1, 'the first call marked the slot');
    now += TTL_MS;
    const ran = await commandsDuring(client(), async () => {
      assert.equal((await decide(windows, ping('veh-late', 4))).reason, 'first', 'a TTL on, the old key is not read');
    });
    assert.equal(ran.get('get'), 2, 'the epoch and the mark: no old record');
    const later = await commandsDuring(client(), () => decide(windows, ping('veh-late', 70)));
    assert.equal(later.get('get'), 1, 'the epoch only: the client no longer names old keys, nor the mark is read');
  });

  it('reads no old keys on a database that was empty at its first call', async () => {
    const windows = new RedisWindowStore(client(), SETTINGS, storeOptions(PREFIX), clock);
    const seen = new RedisSeenStore(client(), SEEN_SETTINGS, storeOptions(PREFIX), clock);
    const first = await commandsDuring(client(), () => decide(windows, ping('veh-1', 0)));
    assert.equal(first.get('dbsize'), 1, 'the first call asked whether the database was empty');
    await claim(seen, { claims: [reading(1, 10)], token: newToken() });
    const ran = await commandsDuring(client(), async () => {
      await decide(windows, ping('veh-2', 0));
      await claim(seen, { claims: [reading(2, 20)], token: newToken() });
    });
    assert.equal(ran.get('get'), 3, 'the window\'s slot epoch; the seen-set\'s slot epoch and the device\'s: no mark, no old key');
    assert.equal(ran.get('dbsize'), undefined);
  });
});
