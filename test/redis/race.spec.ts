/**
 * Two workers, each with its own connection and its own store, handed the
 * same pings (or readings) at the same time (the redelivery case of the seed
 * design). With the read-decide-write inside one Lua script, each ping is
 * admitted by exactly one worker, and each reading claimed by one. The
 * control runs a naive GET-then-SET store under the same load and shows
 * that it admits duplicates, so the test can fail. And two runtimes share
 * confirm mode's state (issue 10): a confirm, and a lease left behind.
 */
import assert from 'node:assert/strict';
import type Redis from 'ioredis';
import { isAdmitted } from '../../src/core/sensor/seen-codes';
import { decideWindow, type Ping, type WindowBaseline } from '../../src/core/window/sliding-window';
import { windowRecordKey } from '../../src/redis/key-names';
import { RedisSeenStore } from '../../src/stores/redis-seen-store';
import { RedisWindowStore } from '../../src/stores/redis-window-store';
import type { SeenClaim, WindowStore } from '../../src/stores/types';
import { claimNames, newToken, reading, settleNames } from '../contract/seen-store.contract';
import { BASE_SECONDS, LAT, LON } from '../contract/window-store.contract';
import { claim, decide, settle } from '../support/ask';
import { closeRedisClient, useRedis } from '../support/global-hooks';
import { scriptedClientPerTest, SEEN_SETTINGS, SETTINGS, storeOptions } from '../support/scripted-redis';

const ASSETS = 50;
const ROUNDS = 20; // 50 assets x 20 pings = 1,000 pings

interface Decider {
  decide(ping: Ping): Promise<{ admit: boolean }>;
}

/** A store as a Decider. */
function asDecider(store: WindowStore): Decider {
  return { decide: (ping) => decide(store, ping) };
}

/**
 * The pings: per round, one for every asset, 61 s after its previous one, so
 * a single worker would admit every one of them ('elapsed').
 */
function pingsByRound(): Ping[][] {
  const rounds: Ping[][] = [];
  for (let r = 0; r < ROUNDS; r++) {
    const round: Ping[] = [];
    for (let a = 0; a < ASSETS; a++) round.push({ assetId: `veh-${a}`, t: (BASE_SECONDS + 61 * r) * 1000, lat: LAT, lon: LON });
    rounds.push(round);
  }
  return rounds;
}

/** Small deterministic PRNG, so the interleaving is the same on every run. */
function lcg(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
}

/** Cuts a round into chunks of 1..12 pings. */
function chunks<T>(items: T[], random: () => number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; ) {
    const size = 1 + Math.floor(random() * 12);
    out.push(items.slice(i, i + size));
    i += size;
  }
  return out;
}

/**
 * Feeds every ping to both workers: round by round, each worker's share of
 * a round cut into chunks, one chunk of each worker per event-loop turn, the
 * second worker walking the assets in reverse. Returns how many times each
 * (asset, t) was admitted.
 */
async function feedBoth(a: Decider, b: Decider): Promise<Map<string, number>> {
  const admitted = new Map<string, number>();
  const random = lcg(20260716);
  const record = (p: Ping) => (verdict: { admit: boolean }) => {
    if (verdict.admit) admitted.set(`${p.assetId}@${p.t}`, (admitted.get(`${p.assetId}@${p.t}`) ?? 0) + 1);
  };
  for (const round of pingsByRound()) {
    const forA = chunks(round, random);
    const forB = chunks([...round].reverse(), random);
    const pending: Promise<void>[] = [];
    for (let turn = 0; turn < Math.max(forA.length, forB.length); turn++) {
      for (const p of forA[turn] ?? []) pending.push(a.decide(p).then(record(p)));
      for (const p of forB[turn] ?? []) pending.push(b.decide(p).then(record(p)));
      await new Promise((resolve) => setImmediate(resolve));
    }
    await Promise.all(pending);
  }
  return admitted;
}

/**
 * The race the seed warns about: read the record, decide in the client,
 * write it back, as two commands. Pings of one asset are chained so that
 * ONE worker alone would be right; only a second worker breaks it.
 */
class GetThenSetStore implements Decider {
  private readonly chains = new Map<string, Promise<unknown>>();

  constructor(private readonly client: Redis) {}

  decide(ping: Ping): Promise<{ admit: boolean }> {
    const previous = this.chains.get(ping.assetId) ?? Promise.resolve();
    const next = previous.then(async () => {
      const key = windowRecordKey('naive:', ping.assetId);
      const raw = await this.client.get(key);
      const baseline = raw === null ? undefined : (JSON.parse(raw) as WindowBaseline);
      const verdict = decideWindow(baseline, ping, SETTINGS, Date.now());
      if (verdict.admit) {
        const written: WindowBaseline = { t: ping.t, lat: ping.lat, lon: ping.lon, heading: NaN, accuracy: 0, events: 0 };
        await this.client.set(key, JSON.stringify(written), 'EX', SETTINGS.ttlSeconds);
      }
      return verdict;
    });
    this.chains.set(ping.assetId, next);
    return next;
  }
}

describe('redis race: two workers, two connections, the same pings and readings', function () {
  useRedis();
  const first = scriptedClientPerTest();
  const second = scriptedClientPerTest();

  it('admits each (asset, t) exactly once across both workers with the Lua store', async () => {
    const workerA = new RedisWindowStore(first(), SETTINGS, storeOptions('race:'));
    const workerB = new RedisWindowStore(second(), SETTINGS, storeOptions('race:', { maxBatch: 7 }));
    const admitted = await feedBoth(asDecider(workerA), asDecider(workerB));
    const duplicates = [...admitted].filter(([, count]) => count > 1);
    assert.deepEqual(duplicates, [], 'no ping may be admitted by both workers');
    // And none is lost: each was new to whichever worker saw it first.
    assert.equal(admitted.size, ASSETS * ROUNDS);
  });

  it('control: a GET-then-SET store under the same load admits duplicates', async () => {
    const admitted = await feedBoth(new GetThenSetStore(first()), new GetThenSetStore(second()));
    const duplicates = [...admitted].filter(([, count]) => count > 1);
    assert.ok(duplicates.length > 0, 'the naive store should have lost the race at least once');
  });

  it('claims each reading for exactly one worker in confirm mode; the other sees it in flight', async () => {
    const settings = { ...SEEN_SETTINGS, confirm: true };
    const workerA = new RedisSeenStore(first(), settings, storeOptions('race:'));
    const workerB = new RedisSeenStore(second(), settings, storeOptions('race:', { maxBatch: 3 }));
    const readings = Array.from({ length: 1000 }, (_, i) => reading(i, i % 97, 0, `bin-${i % 20}`));
    const random = lcg(7);
    const outcomes = new Map<string, string[]>();
    const pending: Promise<void>[] = [];
    const send = (worker: RedisSeenStore, claims: SeenClaim[]): void => {
      pending.push(
        claim(worker, { claims, token: newToken() }).then((codes) => {
          claims.forEach((c, i) => outcomes.set(c.key, [...(outcomes.get(c.key) ?? []), ...claimNames([codes[i] as number])]));
          assert.ok(codes.every((code) => isAdmitted(code) || claimNames([code])[0] === 'inFlight'));
        }),
      );
    };
    const forA = chunks(readings, random);
    const forB = chunks([...readings].reverse(), random);
    for (let turn = 0; turn < Math.max(forA.length, forB.length); turn++) {
      if (forA[turn]) send(workerA, forA[turn] as SeenClaim[]);
      if (forB[turn]) send(workerB, forB[turn] as SeenClaim[]);
      await new Promise((resolve) => setImmediate(resolve));
    }
    await Promise.all(pending);
    assert.equal(outcomes.size, readings.length);
    for (const [key, names] of outcomes) assert.deepEqual([...names].sort(), ['admitted', 'inFlight'], key);
  });

  it('shares confirm mode between two runtimes: a confirm on one suppresses the replay on the other; leases of a runtime that died expire', async () => {
    let now = 1_780_000_000_000;
    const clock = (): number => now;
    const settings = { ...SEEN_SETTINGS, confirm: true, leaseSeconds: 60 };
    const one = new RedisSeenStore(first(), settings, storeOptions('runtimes:'), clock);
    const other = new RedisSeenStore(second(), settings, storeOptions('runtimes:'), clock);
    const confirmed = [reading(1, 10)];
    const orphaned = [reading(2, 20), reading(3, 30)];
    const token = newToken();
    assert.deepEqual(claimNames(await claim(one, { claims: [...confirmed, ...orphaned], token })), ['admitted', 'admitted', 'admitted']);
    assert.deepEqual(claimNames(await claim(other, { claims: [...confirmed, ...orphaned], token: newToken() })), ['inFlight', 'inFlight', 'inFlight']);
    assert.deepEqual(settleNames(await settle(one, { claims: confirmed, token, action: 'confirm' })), ['settled']);
    // The first runtime dies holding the other two leases.
    await closeRedisClient(first());
    assert.deepEqual(claimNames(await claim(other, { claims: [...confirmed, ...orphaned], token: newToken() })), ['duplicate', 'inFlight', 'inFlight']);
    now += 60_001;
    assert.deepEqual(claimNames(await claim(other, { claims: [...confirmed, ...orphaned], token: newToken() })), ['duplicate', 'admitted+leaseExpired', 'admitted+leaseExpired']);
  });
});
