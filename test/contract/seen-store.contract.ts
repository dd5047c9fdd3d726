/**
 * The behaviour every SeenStore must have, as one suite parameterised by a
 * store factory; stores.spec.ts runs it against the memory and Redis stores.
 */
import assert from 'node:assert/strict';
import { contentHash, idempotencyKey, type KeyedContent } from '../../src/core/idempotency-key';
import { parseInstant } from '../../src/core/instant';
import type { SeenClaim, SeenStore } from '../../src/stores/types';

export interface SeenStoreHarness {
  store: SeenStore;
  /** Lets `ms` milliseconds pass on the clock the store expires keys by. */
  elapse(ms: number): Promise<void>;
}

export interface SeenStoreSubject {
  name: string;
  /** A fresh store with no keys. */
  create(settings: { ttlSeconds: number }): Promise<SeenStoreHarness>;
  /** Runs after each test: close what create() opened. */
  cleanup(): Promise<void>;
}

/** One decoded reading, as the seed's `_reading(seq, fill, second)` builds them. */
export function reading(seq: number, fill: number, second = 0, deviceId = 'bin-A17'): SeenClaim {
  const ts = parseInstant(`2026-07-16T09:00:${String(second).padStart(2, '0')}Z`);
  assert.ok(ts.ok);
  const content: KeyedContent = { deviceId, seq, timeField: 'ts', epochMicros: ts.epochMicros, measures: { fill_pct: fill } };
  return { deviceId, seq, hash: contentHash(content), key: idempotencyKey(content) };
}

export function seenStoreContract(subject: SeenStoreSubject): void {
  describe(`SeenStore contract: ${subject.name}`, function () {
    afterEach(() => subject.cleanup());

    const storeWith = (ttlSeconds = 6 * 3600): Promise<SeenStoreHarness> => subject.create({ ttlSeconds });
    const claim = async (store: SeenStore, claims: SeenClaim[]): Promise<boolean[]> => store.claim(claims);

    it('seed: a replayed burst is idempotent', async () => {
      const { store } = await storeWith();
      const original = [reading(41, 62.5), reading(42, 71.0), reading(43, 80.0)];
      assert.deepEqual(await claim(store, original), [true, true, true]);
      // The sensor reconnects and replays its whole buffer.
      assert.deepEqual(await claim(store, original), [false, false, false]);
    });

    it('seed: two distinct readings with the same timestamp are both kept', async () => {
      const { store } = await storeWith();
      assert.deepEqual(await claim(store, [reading(41, 62.5), reading(42, 71.0)]), [true, true]);
    });

    it('seed: an exact replay within one burst collapses (first write wins)', async () => {
      const { store } = await storeWith();
      assert.deepEqual(await claim(store, [reading(41, 62.5), reading(41, 62.5)]), [true, false]);
    });

    it('decides a long replay in order, a repeat far into the burst included', async () => {
      const { store } = await storeWith();
      // Longer than the Redis store's 100 keys per script call.
      const burst = Array.from({ length: 250 }, (_, i) => reading(i, (i % 100) + 0.5));
      burst.push(reading(3, 3.5), reading(180, 80.5));
      const expected = [...Array<boolean>(250).fill(true), false, false];
      assert.deepEqual(await claim(store, burst), expected);
      assert.deepEqual(await claim(store, burst), Array<boolean>(252).fill(false));
    });

    it('keeps the seed example burst to 3 of 4, across two devices', async () => {
      const { store } = await storeWith();
      const burst = [reading(41, 62.5), reading(41, 62.5), reading(42, 71.0), reading(8, 15.0, 5, 'bin-B04')];
      assert.deepEqual(await claim(store, burst), [true, false, true, true]);
    });

    it('treats a reused seq with other content as a new reading (battery swap)', async () => {
      const { store } = await storeWith();
      assert.deepEqual(await claim(store, [reading(1, 10)]), [true]);
      assert.deepEqual(await claim(store, [reading(1, 10, 7)]), [true]);
      assert.deepEqual(await claim(store, [reading(1, 11)]), [true]);
    });

    it('answers an empty burst with an empty list', async () => {
      const { store } = await storeWith();
      assert.deepEqual(await claim(store, []), []);
    });

    it('lets the first of two bursts submitted in the same tick win a shared key', async () => {
      const { store } = await storeWith();
      const first = store.claim([reading(50, 1), reading(51, 2)]);
      const second = store.claim([reading(51, 2), reading(52, 3), reading(50, 1)]);
      const third = store.claim([reading(9, 9, 0, 'bin-B04'), reading(52, 3)]);
      assert.deepEqual(await Promise.all([first, second, third]), [
        [true, true],
        [false, true, false],
        [true, false],
      ]);
    });

    it('forgets one device on reset(deviceId) and keeps the others', async () => {
      const { store } = await storeWith();
      const a = [reading(1, 10), reading(2, 20)];
      const b = [reading(1, 10, 0, 'bin-B04')];
      await claim(store, [...a, ...b]);
      await store.reset('bin-A17');
      assert.deepEqual(await claim(store, [...a, ...b]), [true, true, false]);
      await store.reset('never-seen');
      assert.deepEqual(await claim(store, [...a, ...b]), [false, false, false]);
    });

    it('forgets every device on reset()', async () => {
      const { store } = await storeWith();
      const burst = [reading(1, 10), reading(1, 10, 0, 'bin-B04'), reading(1, 10, 0, 'bin-C9')];
      await claim(store, burst);
      await store.reset();
      assert.deepEqual(await claim(store, burst), [true, true, true]);
    });

    it('keeps devices with {, }, :, % and glob characters in their ids apart, and resets exactly one', async () => {
      const { store } = await storeWith();
      const ids = ['bin{A}', 'bin%7BA%7D', '}bin', 'bin{', 'site:7', 'site:7:bin', 'site', 'bin%', 'bin*', 'bin?', 'bin[A]', 'binA'];
      const burst = ids.map((id) => reading(3, 33, 0, id));
      assert.equal(new Set(burst.map((c) => c.key)).size, ids.length);
      assert.deepEqual(await claim(store, burst), ids.map(() => true));
      assert.deepEqual(await claim(store, burst), ids.map(() => false));
      for (const reset of ['site:7', 'bin*', 'bin{A}', 'bin%']) await store.reset(reset);
      assert.deepEqual(
        await claim(store, burst),
        ids.map((id) => ['site:7', 'bin*', 'bin{A}', 'bin%'].includes(id)),
      );
    });

    it('forgets a key ttlSeconds after it was first claimed; a replay does not extend it', async function () {
      this.slow(3000);
      const { store, elapse } = await storeWith(1);
      assert.deepEqual(await claim(store, [reading(60, 6)]), [true]);
      await elapse(300);
      assert.deepEqual(await claim(store, [reading(60, 6), reading(61, 6)]), [false, true]);
      await elapse(900);
      // 1.2 s after the first claim of seq 60, 0.9 s after seq 61.
      assert.deepEqual(await claim(store, [reading(60, 6), reading(61, 6)]), [true, false]);
    });
  });
}
