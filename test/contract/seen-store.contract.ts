/**
 * The behaviour every SeenStore must have, as one suite parameterised by a
 * store factory; stores.spec.ts runs it against the memory store, the Redis
 * store, and the Redis store grouping its calls by Cluster slot: first write
 * wins, the order of resets among the claims around them (issue 9), and
 * confirm mode (issue 10).
 */
import assert from 'node:assert/strict';
import { prepareReadings, settleReadings, type SeenClaim } from '../../src/core/sensor/burst';
import { idempotencyKey, type KeyedContent } from '../../src/core/sensor/idempotency-key';
import { parseInstant } from '../../src/core/parse/instant';
import { CLAIM, claimOutcome, LEASE_EXPIRED, SETTLE } from '../../src/core/sensor/seen-codes';
import type { SeenSettings, SeenStore } from '../../src/stores/types';
import { claim, resetSeen, settle } from '../support/ask';

export interface SeenStoreHarness {
  store: SeenStore;
  /** Lets `ms` pass on the host clock the store reads (leases) and on the clock that expires its keys. */
  elapse: (ms: number) => Promise<void>;
  /** Fills the store's backing state with `count` keys of devices no test claims for (`other-<n>`). */
  unrelated: (count: number) => Promise<void>;
}

export interface SeenStoreSubject {
  name: string;
  /** A fresh store with no keys. */
  create(settings: SeenSettings): Promise<SeenStoreHarness>;
  /** Runs after each test: close what create() opened. */
  cleanup(): Promise<void>;
}

/** One decoded reading, as the seed's `_reading(seq, fill, second)` builds them. */
export function reading(seq: number, fill: number, second = 0, deviceId = 'bin-A17'): SeenClaim {
  const ts = parseInstant(`2026-07-16T09:00:${String(second).padStart(2, '0')}Z`);
  assert.ok(ts.ok);
  const content: KeyedContent = { deviceId, seq, timeField: 'ts', epochMicros: ts.epochMicros, measures: { fill_pct: fill } };
  return { key: idempotencyKey(content), group: deviceId };
}

const CLAIM_NAMES = new Map<number, string>(Object.entries(CLAIM).map(([name, code]) => [code, name]));
const SETTLE_NAMES = new Map<number, string>(Object.entries(SETTLE).map(([name, code]) => [code, name]));

/** Claim codes by name: `admitted`, `duplicate`, `inFlight`, `replayed`, with `+leaseExpired` when flagged. */
export function claimNames(codes: readonly number[]): string[] {
  return codes.map((code) => `${CLAIM_NAMES.get(claimOutcome(code)) ?? `?${code}`}${code & LEASE_EXPIRED ? '+leaseExpired' : ''}`);
}

/** Settle codes by name: `settled`, `notHeld`, `lateSettled`. */
export function settleNames(codes: readonly number[]): string[] {
  return codes.map((code) => SETTLE_NAMES.get(code) ?? `?${code}`);
}

const times = (n: number, name: string): string[] => Array<string>(n).fill(name);

/** Message tokens: 48-bit, one per message, as the node makes them. */
let lastToken = 0x1234_0000_0000;
export function newToken(): number {
  return ++lastToken;
}

const DEFAULTS: SeenSettings = { ttlSeconds: 6 * 3600, confirm: false, leaseSeconds: 60 };
/** Confirm mode with a lease short enough for tests to outlive. */
const CONFIRM: Partial<SeenSettings> = { confirm: true, leaseSeconds: 0.2 };
const PAST_LEASE_MS = 250;

export function seenStoreContract(subject: SeenStoreSubject): void {
  describe(`SeenStore contract: ${subject.name}`, function () {
    afterEach(() => subject.cleanup());

    const storeWith = (settings: Partial<SeenSettings> = {}): Promise<SeenStoreHarness> => subject.create({ ...DEFAULTS, ...settings });

    /** Claims as one message with a token of its own (or the one given): the codes by name. */
    const claimAs = async (store: SeenStore, claims: SeenClaim[], token = newToken()): Promise<string[]> => claimNames(await claim(store, { claims, token }));
    const confirm = async (store: SeenStore, claims: SeenClaim[], token: number): Promise<string[]> => settleNames(await settle(store, { claims, token, action: 'confirm' }));
    const release = async (store: SeenStore, claims: SeenClaim[], token: number): Promise<string[]> => settleNames(await settle(store, { claims, token, action: 'release' }));

    describe('first write wins', () => {
      it('seed: a replayed burst is idempotent', async () => {
        const { store } = await storeWith();
        const original = [reading(41, 62.5), reading(42, 71.0), reading(43, 80.0)];
        assert.deepEqual(await claimAs(store, original), times(3, 'admitted'));
        // The sensor reconnects and replays its whole buffer.
        assert.deepEqual(await claimAs(store, original), times(3, 'duplicate'));
      });

      it('seed: two distinct readings with the same timestamp are both kept', async () => {
        const { store } = await storeWith();
        assert.deepEqual(await claimAs(store, [reading(41, 62.5), reading(42, 71.0)]), ['admitted', 'admitted']);
      });

      it('seed: keeps the example burst to 3 of 4, across two devices, the in-burst replay collapsed by the caller', async () => {
        const { store } = await storeWith();
        const burst = [reading(41, 62.5), reading(41, 62.5), reading(42, 71.0), reading(8, 15.0, 5, 'bin-B04')];
        const prepared = prepareReadings(burst, true, (raw) => ({ ok: true, ...(raw as SeenClaim) }));
        assert.equal(prepared.claims.length, 3, 'the repeat is claimed once');
        const settled = settleReadings(prepared, await claim(store, { claims: prepared.claims, token: newToken() }));
        assert.deepEqual(settled.admitted.map((k) => k.index), [0, 2, 3]);
        assert.deepEqual(settled.suppressed.map((s) => [s.keyed.index, s.reason]), [[1, 'duplicate']]);
      });

      it('answers a key repeated in one request as the same message again (replayed)', async () => {
        const { store } = await storeWith();
        assert.deepEqual(await claimAs(store, [reading(41, 62.5), reading(41, 62.5)]), ['admitted', 'replayed']);
      });

      it('decides a long request in order, and a later request sharing its keys after it', async () => {
        const { store } = await storeWith();
        // Longer than the Redis store's 100 keys per script call.
        const burst = Array.from({ length: 250 }, (_, i) => reading(i, (i % 100) + 0.5));
        const overlapping = [reading(3, 3.5), reading(180, 80.5), reading(999, 1)];
        const [first, second] = await Promise.all([claimAs(store, burst), claimAs(store, overlapping)]);
        assert.deepEqual(first, times(250, 'admitted'));
        assert.deepEqual(second, ['duplicate', 'duplicate', 'admitted']);
        assert.deepEqual(await claimAs(store, burst), times(250, 'duplicate'));
      });

      it('treats a reused seq with other content as a new reading (battery swap)', async () => {
        const { store } = await storeWith();
        assert.deepEqual(await claimAs(store, [reading(1, 10)]), ['admitted']);
        assert.deepEqual(await claimAs(store, [reading(1, 10, 7)]), ['admitted']);
        assert.deepEqual(await claimAs(store, [reading(1, 11)]), ['admitted']);
      });

      it('answers an empty request with an empty list', async () => {
        const { store } = await storeWith();
        assert.deepEqual(await claimAs(store, []), []);
        assert.deepEqual(await confirm(store, [], newToken()), []);
      });

      it('lets the first of two bursts submitted in the same turn win a shared key', async () => {
        const { store } = await storeWith();
        const first = claimAs(store, [reading(50, 1), reading(51, 2)]);
        const second = claimAs(store, [reading(51, 2), reading(52, 3), reading(50, 1)]);
        const third = claimAs(store, [reading(9, 9, 0, 'bin-B04'), reading(52, 3)]);
        assert.deepEqual(await Promise.all([first, second, third]), [
          ['admitted', 'admitted'],
          ['duplicate', 'admitted', 'duplicate'],
          ['admitted', 'duplicate'],
        ]);
      });

      it('keeps devices with {, }, :, % and glob characters in their ids apart', async () => {
        const { store } = await storeWith();
        const ids = ['bin{A}', 'bin%7BA%7D', '}bin', 'bin{', 'site:7', 'site:7:bin', 'site', 'bin%', 'bin*', 'bin?', 'bin[A]', 'binA'];
        const burst = ids.map((id) => reading(3, 33, 0, id));
        assert.equal(new Set(burst.map((c) => c.key)).size, ids.length);
        assert.deepEqual(await claimAs(store, burst), times(ids.length, 'admitted'));
        assert.deepEqual(await claimAs(store, burst), times(ids.length, 'duplicate'));
      });

      it('forgets a key ttlSeconds after it was claimed; a duplicate does not extend it', async function () {
        this.slow(3000);
        const { store, elapse } = await storeWith({ ttlSeconds: 1 });
        assert.deepEqual(await claimAs(store, [reading(60, 6)]), ['admitted']);
        await elapse(300);
        assert.deepEqual(await claimAs(store, [reading(60, 6), reading(61, 6)]), ['duplicate', 'admitted']);
        await elapse(900);
        // 1.2 s after the claim of seq 60, 0.9 s after seq 61.
        assert.deepEqual(await claimAs(store, [reading(60, 6), reading(61, 6)]), ['admitted', 'duplicate']);
      });

      it('admits a retried message (its own token) again as replayed, and only that message', async () => {
        const { store } = await storeWith();
        const token = newToken();
        const keys = [reading(70, 1), reading(71, 2)];
        assert.deepEqual(await claimAs(store, keys, token), ['admitted', 'admitted']);
        assert.deepEqual(await claimAs(store, keys, token), ['replayed', 'replayed']);
        assert.deepEqual(await claimAs(store, [...keys, reading(72, 3)], token), ['replayed', 'replayed', 'admitted']);
        assert.deepEqual(await claimAs(store, keys), ['duplicate', 'duplicate'], 'another message');
      });
    });

    describe('resets', () => {
      it('forgets one device on reset(deviceId) and keeps the others', async () => {
        const { store } = await storeWith();
        const a = [reading(1, 10), reading(2, 20)];
        const b = [reading(1, 10, 0, 'bin-B04')];
        await claimAs(store, [...a, ...b]);
        await resetSeen(store, 'bin-A17');
        assert.deepEqual(await claimAs(store, [...a, ...b]), ['admitted', 'admitted', 'duplicate']);
        await resetSeen(store, 'never-seen');
        assert.deepEqual(await claimAs(store, [...a, ...b]), times(3, 'duplicate'));
      });

      it('forgets every device on reset(), and keeps what is claimed after it', async () => {
        const { store } = await storeWith();
        const burst = [reading(1, 10), reading(1, 10, 0, 'bin-B04'), reading(1, 10, 0, 'bin-C9')];
        await claimAs(store, burst);
        await resetSeen(store);
        assert.deepEqual(await claimAs(store, burst), times(3, 'admitted'));
        assert.deepEqual(await claimAs(store, burst), times(3, 'duplicate'));
        await resetSeen(store, 'bin-B04');
        await resetSeen(store);
        assert.deepEqual(await claimAs(store, burst), times(3, 'admitted'), 'a second reset of everything');
      });

      it('resets exactly the device named, however awkward its id', async () => {
        const { store } = await storeWith();
        const ids = ['bin{A}', 'bin%7BA%7D', '}bin', 'site:7', 'site:7:bin', 'site', 'bin%', 'bin*', 'bin?', 'binA'];
        const burst = ids.map((id) => reading(3, 33, 0, id));
        await claimAs(store, burst);
        const reset = ['site:7', 'bin*', 'bin{A}', 'bin%'];
        for (const id of reset) await resetSeen(store, id);
        assert.deepEqual(await claimAs(store, burst), ids.map((id) => (reset.includes(id) ? 'admitted' : 'duplicate')));
      });

      it('puts a device reset exactly between the bursts before and after it in one turn (issue 9)', async () => {
        const { store } = await storeWith();
        const burst = [reading(1, 10), reading(2, 20)];
        const other = [reading(1, 10, 0, 'bin-B04')];
        await claimAs(store, [...burst, ...other]);
        const before = claimAs(store, [...burst, ...other]);
        const reset = resetSeen(store, 'bin-A17');
        const after = claimAs(store, [...burst, ...other]);
        const afterThat = claimAs(store, burst);
        await reset;
        assert.deepEqual(await before, times(3, 'duplicate'));
        assert.deepEqual(await after, ['admitted', 'admitted', 'duplicate']);
        assert.deepEqual(await afterThat, ['duplicate', 'duplicate']);
      });

      it('puts a reset of everything exactly between the claims of one turn, across devices', async () => {
        const { store } = await storeWith();
        const devices = ['bin-1', 'bin-2', 'bin-3', 'bin-4', 'bin-5', 'bin-6'];
        const one = (seq: number) => devices.map((id) => reading(seq, 1, 0, id));
        await claimAs(store, one(1));
        const answers = await Promise.all([
          claimAs(store, one(1)),
          claimAs(store, one(2)),
          resetSeen(store).then(() => ['reset']),
          claimAs(store, one(1)),
          claimAs(store, one(2)),
          claimAs(store, one(3)),
          resetSeen(store, 'bin-2').then(() => ['reset']),
          claimAs(store, one(3)),
        ]);
        assert.deepEqual(answers, [
          times(6, 'duplicate'),
          times(6, 'admitted'),
          ['reset'],
          times(6, 'admitted'),
          times(6, 'admitted'),
          times(6, 'admitted'),
          ['reset'],
          ['duplicate', 'admitted', 'duplicate', 'duplicate', 'duplicate', 'duplicate'],
        ]);
      });

      it('keeps a reset in its place among requests longer than one script call', async () => {
        const { store } = await storeWith();
        const long = Array.from({ length: 230 }, (_, i) => reading(i, 1));
        const answers = await Promise.all([
          claimAs(store, long),
          resetSeen(store, 'bin-A17').then(() => ['reset']),
          claimAs(store, long),
          claimAs(store, long),
        ]);
        assert.deepEqual(answers, [times(230, 'admitted'), ['reset'], times(230, 'admitted'), times(230, 'duplicate')]);
      });

      for (const scope of ['one device', 'every device'] as const) {
        it(`never lets a key through twice after a reset of ${scope}, with 200,000 unrelated keys present (issue 9)`, async function () {
          this.slow(5000);
          this.timeout(60_000);
          const { store, unrelated } = await storeWith();
          await unrelated(200_000);
          const old = Array.from({ length: 400 }, (_, i) => reading(i, 1, 0, 'bin-R'));
          const fresh = Array.from({ length: 400 }, (_, i) => reading(1000 + i, 1, 0, 'bin-R'));
          assert.deepEqual(new Set(await claimAs(store, old)), new Set(['admitted']));
          // The reset, then a stream of readings over 40 turns, none waiting for the reset's answer.
          const reset = resetSeen(store, scope === 'one device' ? 'bin-R' : undefined);
          const stream: Promise<string[]>[] = [];
          for (let turn = 0; turn < 40; turn++) {
            stream.push(claimAs(store, fresh.slice(turn * 10, turn * 10 + 10)));
            stream.push(claimAs(store, old.slice(turn * 10, turn * 10 + 10)));
            await new Promise((resolve) => setImmediate(resolve));
          }
          await reset;
          assert.deepEqual(new Set((await Promise.all(stream)).flat()), new Set(['admitted']), 'every key once after the reset');
          // The sensor replays everything: nothing gets through a second time.
          const replay = await Promise.all([claimAs(store, fresh), claimAs(store, old)]);
          assert.deepEqual(new Set(replay.flat()), new Set(['duplicate']));
        });
      }
    });

    describe('confirm mode (issue 10)', () => {
      it('confirm: a claimed key is in flight for other messages until confirmed, then a duplicate for good', async () => {
        const { store, elapse } = await storeWith(CONFIRM);
        const keys = [reading(1, 10), reading(2, 20)];
        const token = newToken();
        assert.deepEqual(await claimAs(store, keys, token), ['admitted', 'admitted']);
        assert.deepEqual(await claimAs(store, keys), ['inFlight', 'inFlight']);
        assert.deepEqual(await confirm(store, keys, token), ['settled', 'settled']);
        assert.deepEqual(await claimAs(store, keys), ['duplicate', 'duplicate']);
        await elapse(PAST_LEASE_MS);
        assert.deepEqual(await claimAs(store, keys), ['duplicate', 'duplicate'], 'a confirmed key outlives the lease');
      });

      it('release: a released key is forgotten, and the next copy is admitted and held in turn', async () => {
        const { store } = await storeWith(CONFIRM);
        const keys = [reading(1, 10)];
        const token = newToken();
        await claimAs(store, keys, token);
        assert.deepEqual(await release(store, keys, token), ['settled']);
        const next = newToken();
        assert.deepEqual(await claimAs(store, keys, next), ['admitted'], 'admitted, not lease-expired');
        assert.deepEqual(await claimAs(store, keys), ['inFlight']);
        assert.deepEqual(await confirm(store, keys, next), ['settled']);
        assert.deepEqual(await claimAs(store, keys), ['duplicate']);
      });

      it('lease expiry: the next copy is admitted and flagged leaseExpired, and holds the key for a lease of its own', async () => {
        const { store, elapse } = await storeWith(CONFIRM);
        const keys = [reading(1, 10), reading(2, 20)];
        await claimAs(store, keys.slice(0, 1));
        await elapse(PAST_LEASE_MS);
        assert.deepEqual(await claimAs(store, keys), ['admitted+leaseExpired', 'admitted']);
        assert.deepEqual(await claimAs(store, keys), ['inFlight', 'inFlight']);
      });

      it('a wrong token neither confirms nor releases', async () => {
        const { store } = await storeWith(CONFIRM);
        const keys = [reading(1, 10)];
        const token = newToken();
        await claimAs(store, keys, token);
        assert.deepEqual(await confirm(store, keys, newToken()), ['notHeld']);
        assert.deepEqual(await release(store, keys, newToken()), ['notHeld']);
        assert.deepEqual(await claimAs(store, keys), ['inFlight'], 'still held by the claim');
        assert.deepEqual(await confirm(store, [reading(9, 9)], token), ['notHeld'], 'a key never claimed');
        assert.deepEqual(await confirm(store, [...keys, reading(9, 9)], token), ['settled', 'notHeld'], 'one answer per key');
      });

      it('a stale token (its lease expired and another message claimed the key) cannot confirm or release the newer claim', async () => {
        const { store, elapse } = await storeWith(CONFIRM);
        const keys = [reading(1, 10)];
        const stale = newToken();
        await claimAs(store, keys, stale);
        await elapse(PAST_LEASE_MS);
        const fresh = newToken();
        assert.deepEqual(await claimAs(store, keys, fresh), ['admitted+leaseExpired']);
        assert.deepEqual(await confirm(store, keys, stale), ['notHeld']);
        assert.deepEqual(await release(store, keys, stale), ['notHeld']);
        assert.deepEqual(await claimAs(store, keys), ['inFlight'], 'the newer claim still holds it');
        assert.deepEqual(await confirm(store, keys, fresh), ['settled']);
        assert.deepEqual(await claimAs(store, keys), ['duplicate']);
      });

      it('a confirm after the lease expired, the key still held, is lateSettled and makes the key seen', async () => {
        const { store, elapse } = await storeWith(CONFIRM);
        const keys = [reading(1, 10)];
        const token = newToken();
        await claimAs(store, keys, token);
        await elapse(PAST_LEASE_MS);
        assert.deepEqual(await confirm(store, keys, token), ['lateSettled']);
        assert.deepEqual(await claimAs(store, keys), ['duplicate']);
        assert.deepEqual(await confirm(store, keys, token), ['settled'], 'confirmed now: a resent confirm is in time');
      });

      it('a release after the lease expired, the key still held, is lateSettled and forgets the key', async () => {
        const { store, elapse } = await storeWith(CONFIRM);
        const keys = [reading(1, 10)];
        const token = newToken();
        await claimAs(store, keys, token);
        await elapse(PAST_LEASE_MS);
        assert.deepEqual(await release(store, keys, token), ['lateSettled']);
        assert.deepEqual(await claimAs(store, keys), ['admitted'], 'released: no lease-expired flag');
      });

      it('a resent confirm and a resent release are harmless', async () => {
        const { store } = await storeWith(CONFIRM);
        const a = [reading(1, 10)];
        const b = [reading(2, 20)];
        const ta = newToken();
        const tb = newToken();
        await claimAs(store, a, ta);
        await claimAs(store, b, tb);
        assert.deepEqual(await confirm(store, a, ta), ['settled']);
        assert.deepEqual(await confirm(store, a, ta), ['settled']);
        assert.deepEqual(await claimAs(store, a), ['duplicate']);
        assert.deepEqual(await release(store, b, tb), ['settled']);
        assert.deepEqual(await release(store, b, tb), ['settled']);
        assert.deepEqual(await confirm(store, b, tb), ['notHeld'], 'a confirm after a release');
        const next = newToken();
        assert.deepEqual(await claimAs(store, b, next), ['admitted']);
        assert.deepEqual(await release(store, b, tb), ['notHeld'], 'a resent release after another claim');
        assert.deepEqual(await claimAs(store, b), ['inFlight']);
      });

      it('a retried message (its own token) is replayed, with a fresh lease; a released one is admitted anew', async () => {
        const { store, elapse } = await storeWith(CONFIRM);
        const keys = [reading(1, 10)];
        const token = newToken();
        assert.deepEqual(await claimAs(store, keys, token), ['admitted']);
        await elapse(150);
        assert.deepEqual(await claimAs(store, keys, token), ['replayed']);
        await elapse(150);
        assert.deepEqual(await claimAs(store, keys), ['inFlight'], '300 ms after the claim, 150 ms into the renewed lease');
        await elapse(100);
        assert.deepEqual(await claimAs(store, keys, token), ['replayed'], 'still its own, past its lease');
        assert.deepEqual(await confirm(store, keys, token), ['settled']);
        assert.deepEqual(await claimAs(store, keys, token), ['replayed'], 'a retry after its confirm');

        const other = [reading(2, 20)];
        const t2 = newToken();
        await claimAs(store, other, t2);
        await release(store, other, t2);
        assert.deepEqual(await claimAs(store, other, t2), ['admitted'], 'a retry after its release is a new claim');
      });

      it('keeps a confirm, a release and the claims around them in order within one turn', async () => {
        const { store } = await storeWith(CONFIRM);
        const a = [reading(1, 10)];
        const b = [reading(2, 20)];
        const ta = newToken();
        const tb = newToken();
        const answers = await Promise.all([
          claimAs(store, a, ta),
          claimAs(store, b, tb),
          claimAs(store, a),
          confirm(store, a, ta),
          release(store, b, tb),
          claimAs(store, a),
          claimAs(store, b),
        ]);
        assert.deepEqual(answers, [['admitted'], ['admitted'], ['inFlight'], ['settled'], ['settled'], ['duplicate'], ['admitted']]);
      });

      it('a reset forgets pending keys: the next copy is admitted and the old claim no longer holds it', async () => {
        const { store } = await storeWith(CONFIRM);
        const keys = [reading(1, 10)];
        const token = newToken();
        await claimAs(store, keys, token);
        await resetSeen(store, 'bin-A17');
        const next = newToken();
        assert.deepEqual(await claimAs(store, keys, next), ['admitted']);
        assert.deepEqual(await confirm(store, keys, token), ['notHeld']);
        assert.deepEqual(await confirm(store, keys, next), ['settled']);
      });

      it('confirm mode off: a claim is seen at once; a confirm of it changes nothing', async () => {
        const { store, elapse } = await storeWith({ leaseSeconds: 0.2 });
        const keys = [reading(1, 10)];
        const token = newToken();
        assert.deepEqual(await claimAs(store, keys, token), ['admitted']);
        assert.deepEqual(await claimAs(store, keys), ['duplicate']);
        await elapse(PAST_LEASE_MS);
        assert.deepEqual(await confirm(store, keys, token), ['settled']);
        assert.deepEqual(await claimAs(store, keys), ['duplicate']);
      });
    });
  });
}
