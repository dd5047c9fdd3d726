/**
 * At-least-once delivery (issue 10), node by node, on both stores: the
 * sensor reconnect dedup node with Confirm delivery on, and the dedup
 * confirm node settling what it admitted. Confirm makes a key seen, release
 * forgets it, a lease that runs out frees it by itself (counted as
 * lease_expired), and a copy that arrives while a key is pending is
 * suppressed as `in-flight`. A confirm or release acts only with the token
 * of the claim that holds the key; anything it cannot match goes to Catch
 * with the reason.
 */
import type { Counts } from '../../src/core/sensor/burst';
import assert from 'node:assert/strict';
import { useRedis } from '../support/global-hooks';
import { ManagedRedis, skipLoudlyWithoutRedisServer } from '../support/redis-server';
import { helper, sleep, startServer, stopServer, until, type Msg, type StoreKind } from '../support/node-red-helper';
import { copy, loadConfirm, reading, type ConfirmHarness } from './confirm-harness';

/** The audit of a burst, checked to add up. */
type Audit = Counts & { suppressed: { reason: string; key: string }[] } & Record<string, unknown>;

function auditOf(msg: Msg | undefined): Audit {
  assert.ok(msg !== undefined, 'an audit message');
  assert.equal(msg.dedup?.decision, 'audit');
  const a = msg.payload as Audit;
  assert.equal(a.received, a.unique + a.duplicates_suppressed + a.rejected, `the audit adds up: ${JSON.stringify(a)}`);
  assert.ok(a.in_flight <= a.duplicates_suppressed, 'in_flight is part of duplicates_suppressed');
  assert.ok(a.lease_expired <= a.unique, 'lease_expired is part of unique');
  return a;
}

function counts(a: Record<string, unknown>): Record<string, unknown> {
  const { received, unique, duplicates_suppressed, rejected, in_flight, lease_expired } = a;
  return { received, unique, duplicates_suppressed, rejected, in_flight, lease_expired };
}

/** The one admitted message of a burst. */
function admittedOne(out: { admitted: Msg[] }): Msg {
  assert.equal(out.admitted.length, 1, 'one message of admitted readings');
  return out.admitted[0] as Msg;
}

const BURST = [reading('bin-A17', 41, 62.5), reading('bin-A17', 42, 71), reading('bin-B04', 8, 15)];
const replay = (): typeof BURST => BURST.map((r) => ({ ...r }));

function storeSuite(store: StoreKind): void {
  describe(`confirm delivery, ${store} store`, function () {
    if (store === 'redis') useRedis();
    before(startServer);
    after(stopServer);
    afterEach(async function () {
      await helper.unload();
    });

    it('puts the claim on an admitted message, and confirm makes its keys seen: a replay is a duplicate', async function () {
      const h = await loadConfirm(store);
      const first = await h.deliver(BURST);
      const msg = admittedOne(first);
      const dedup = msg.dedup as Record<string, unknown>;
      assert.equal(dedup.node, 'dedup');
      assert.equal(dedup.store, store);
      assert.ok(Number.isSafeInteger(dedup.token) && (dedup.token as number) > 0, `a token: ${String(dedup.token)}`);
      assert.equal((dedup.keys as string[]).length, 3);
      assert.deepEqual(counts(auditOf(first.second)), { received: 3, unique: 3, duplicates_suppressed: 0, rejected: 0, in_flight: 0, lease_expired: 0 });

      const { passed } = await h.settle('confirm', msg);
      assert.ok(passed, 'the confirm node passes the message on');
      assert.equal(passed.dedup?.confirmed, 3);
      assert.equal(passed.dedup?.late, 0);
      assert.equal(passed.dedup?.notHeld, 0);
      assert.deepEqual(passed.payload, BURST, 'the message itself is unchanged');

      const again = await h.deliver(replay());
      assert.equal(again.admitted.length, 0);
      const a = auditOf(again.second);
      assert.deepEqual(counts(a), { received: 3, unique: 0, duplicates_suppressed: 3, rejected: 0, in_flight: 0, lease_expired: 0 });
      assert.deepEqual(a.suppressed.map((s) => s.reason), ['duplicate', 'duplicate', 'duplicate']);
    });

    it('suppresses a copy of a pending key as in-flight, not duplicate, until it is confirmed', async function () {
      const h = await loadConfirm(store);
      const msg = admittedOne(await h.deliver(BURST));
      const during = await h.deliver(replay());
      assert.equal(during.admitted.length, 0, 'nothing admitted while the keys are pending');
      const a = auditOf(during.second);
      assert.deepEqual(counts(a), { received: 3, unique: 0, duplicates_suppressed: 3, rejected: 0, in_flight: 3, lease_expired: 0 });
      assert.deepEqual(a.suppressed.map((s) => s.reason), ['in-flight', 'in-flight', 'in-flight']);
      assert.deepEqual(a.suppressed.map((s) => s.key), msg.dedup?.keys);

      await h.settle('confirm', msg);
      const after = auditOf((await h.deliver(replay())).second);
      assert.equal(after.in_flight, 0);
      assert.deepEqual(after.suppressed.map((s) => s.reason), ['duplicate', 'duplicate', 'duplicate']);
    });

    it('one reading: a pending copy goes to output 2 with reason in-flight; after the confirm, duplicate', async function () {
      const h = await loadConfirm(store);
      const one = reading('bin-C09', 311, 80);
      const first = await h.deliver(one);
      const msg = admittedOne(first);
      assert.equal(typeof msg.dedup?.key, 'string', 'a single reading carries msg.dedup.key');
      const copyOut = await h.deliver({ ...one });
      assert.equal(copyOut.admitted.length, 0);
      assert.equal(copyOut.second?.dedup?.decision, 'suppressed');
      assert.equal(copyOut.second?.dedup?.reason, 'in-flight');
      assert.equal(copyOut.second?.dedup?.in_flight, 1);
      const { passed } = await h.settle('confirm', msg);
      assert.equal(passed?.dedup?.confirmed, 1);
      assert.equal((await h.deliver({ ...one })).second?.dedup?.reason, 'duplicate');
    });

    it('release forgets the keys: the next replay is admitted, under a new claim', async function () {
      const h = await loadConfirm(store);
      const msg = admittedOne(await h.deliver(BURST));
      const { passed } = await h.settle('release', msg);
      assert.ok(passed, 'the release node passes the message on');
      assert.equal(passed.dedup?.released, 3);
      assert.equal(passed.dedup?.notHeld, 0);

      const again = await h.deliver(replay());
      const readmitted = admittedOne(again);
      assert.deepEqual(readmitted.payload, BURST);
      assert.equal(readmitted.dedup?.reason, 'new');
      assert.deepEqual(readmitted.dedup?.keys, msg.dedup?.keys, 'the same keys');
      assert.notEqual(readmitted.dedup?.token, msg.dedup?.token, 'a new claim');
      assert.deepEqual(counts(auditOf(again.second)), { received: 3, unique: 3, duplicates_suppressed: 0, rejected: 0, in_flight: 0, lease_expired: 0 });
    });

    it('a lease that runs out frees the key by itself: counted as lease_expired (audit and status), the next replay admitted', async function () {
      const h = await loadConfirm(store, { leaseSeconds: '0.3' });
      const msg = admittedOne(await h.deliver(BURST));
      // Still pending inside the lease.
      assert.equal(auditOf((await h.deliver(replay())).second).in_flight, 3);
      await sleep(400);
      const again = await h.deliver(replay());
      const readmitted = admittedOne(again);
      assert.notEqual(readmitted.dedup?.token, msg.dedup?.token);
      assert.equal(readmitted.dedup?.lease_expired, 3);
      assert.deepEqual(counts(auditOf(again.second)), { received: 3, unique: 3, duplicates_suppressed: 0, rejected: 0, in_flight: 0, lease_expired: 3 });
      await until(
        () => h.statuses.some((s) => /3 leases expired/.test(String((s.status as { text?: string } | undefined)?.text))),
        'the status to count the expired leases',
        3000,
      );
      const statusText = String((h.statuses.at(-1)?.status as { text?: string }).text);
      assert.match(statusText, /9 received \/ 6 unique \/ 3 suppressed \/ 0 rejected \/ 3 leases expired/);
    });

    it('a confirm with a wrong token goes to Catch and leaves the claim pending', async function () {
      const h = await loadConfirm(store);
      const msg = admittedOne(await h.deliver(BURST));
      const forged = copy(msg);
      (forged.dedup as Record<string, unknown>).token = (msg.dedup?.token as number) + 1;
      const { caught, passed } = await h.settle('confirm', forged);
      assert.equal(passed, undefined, 'not passed on');
      assert.ok(caught, 'the Catch node hears of it');
      assert.match(caught.error?.message ?? '', /3 of 3 keys not settled as asked: 3 no longer held by this message's claim/);
      assert.equal(caught.error?.source?.id, 'do-confirm');
      const { caught: releaseCaught } = await h.settle('release', forged);
      assert.match(releaseCaught?.error?.message ?? '', /no longer held/);
      assert.equal(auditOf((await h.deliver(replay())).second).in_flight, 3, 'still pending: the wrong token changed nothing');
      assert.equal((await h.settle('confirm', msg)).passed?.dedup?.confirmed, 3, 'the right token still confirms');
    });

    it("a stale token (released, then claimed again by a replay) cannot confirm the newer claim", async function () {
      const h = await loadConfirm(store);
      const older = admittedOne(await h.deliver(BURST));
      await h.settle('release', older);
      const newer = admittedOne(await h.deliver(replay()));
      const { caught } = await h.settle('confirm', older);
      assert.match(caught?.error?.message ?? '', /3 no longer held by this message's claim .*a duplicate may have passed/);
      // The newer claim is still pending, not confirmed by the stale token.
      assert.deepEqual(auditOf((await h.deliver(replay())).second).suppressed.map((s) => s.reason), ['in-flight', 'in-flight', 'in-flight']);
      const { caught: staleRelease } = await h.settle('release', older);
      assert.ok(staleRelease, 'a stale release goes to Catch too');
      assert.equal(auditOf((await h.deliver(replay())).second).in_flight, 3, 'and does not free the newer claim');
      assert.equal((await h.settle('confirm', newer)).passed?.dedup?.confirmed, 3);
      assert.equal(auditOf((await h.deliver(replay())).second).in_flight, 0);
    });

    it('a confirm after the lease ran out goes to Catch saying so; with no other copy admitted meanwhile, the keys are seen', async function () {
      const h = await loadConfirm(store, { leaseSeconds: '0.3' });
      const msg = admittedOne(await h.deliver(BURST));
      await sleep(400);
      const { caught } = await h.settle('confirm', msg);
      assert.ok(caught, 'a late confirm goes to Catch');
      assert.match(caught.error?.message ?? '', /3 of 3 keys not settled as asked: 3 confirmed after their lease had run out/);
      const again = await h.deliver(replay());
      assert.equal(again.admitted.length, 0);
      assert.deepEqual(auditOf(again.second).suppressed.map((s) => s.reason), ['duplicate', 'duplicate', 'duplicate']);
      const statusText = await lastConfirmStatus(h);
      assert.match(statusText, /3 confirmed \/ 1 unmatched/);
    });

    it('a confirm after the lease ran out and a replay was admitted says a duplicate may have passed', async function () {
      const h = await loadConfirm(store, { leaseSeconds: '0.3' });
      const older = admittedOne(await h.deliver(BURST));
      await sleep(400);
      const newer = admittedOne(await h.deliver(replay()));
      assert.equal(newer.dedup?.lease_expired, 3);
      const { caught } = await h.settle('confirm', older);
      assert.match(caught?.error?.message ?? '', /3 no longer held by this message's claim \(the lease ran out and another copy was admitted/);
      assert.equal((await h.settle('confirm', newer)).passed?.dedup?.confirmed, 3);
    });

    it('a resent confirm is harmless: it passes again and the keys stay seen', async function () {
      const h = await loadConfirm(store);
      const msg = admittedOne(await h.deliver(BURST));
      const first = await h.settle('confirm', msg);
      const second = await h.settle('confirm', msg);
      assert.equal(first.passed?.dedup?.confirmed, 3);
      assert.equal(second.passed?.dedup?.confirmed, 3, 'the same answer again');
      assert.equal(second.passed?.dedup?.notHeld, 0);
      assert.deepEqual(auditOf((await h.deliver(replay())).second).suppressed.map((s) => s.reason), ['duplicate', 'duplicate', 'duplicate']);
    });

    it('a resent release is harmless: it passes again, and the next replay is admitted once', async function () {
      const h = await loadConfirm(store);
      const msg = admittedOne(await h.deliver(BURST));
      assert.equal((await h.settle('release', msg)).passed?.dedup?.released, 3);
      assert.equal((await h.settle('release', msg)).passed?.dedup?.released, 3);
      const again = admittedOne(await h.deliver(replay()));
      // The old token's resent release must not free the new claim.
      assert.ok((await h.settle('release', msg)).caught, 'a release resent after a new claim goes to Catch');
      assert.equal(auditOf((await h.deliver(replay())).second).in_flight, 3);
      assert.equal((await h.settle('confirm', again)).passed?.dedup?.confirmed, 3);
    });

    it('never undoes a confirmed delivery: a release after the confirm keeps the keys, and goes to Catch saying why', async function () {
      const h = await loadConfirm(store);
      const msg = admittedOne(await h.deliver(BURST));
      assert.equal((await h.settle('confirm', msg)).passed?.dedup?.confirmed, 3);
      const released = await h.settle('release', msg);
      assert.equal(released.passed, undefined, 'not passed on');
      assert.match(released.caught?.error?.message ?? '', /3 already confirmed, so not released/);
      assert.equal(released.caught?.dedup?.kept, 3);
      const again = await h.deliver(replay());
      assert.equal(again.admitted.length, 0, 'the replay is still a duplicate');
      assert.deepEqual(auditOf(again.second).suppressed.map((s) => s.reason), ['duplicate', 'duplicate', 'duplicate']);
    });

    it('calls a repeat inside one burst of a pending key in-flight, like a later copy', async function () {
      const h = await loadConfirm(store);
      const out = await h.deliver([BURST[0], { ...BURST[0] }]);
      const a = auditOf(out.second);
      assert.deepEqual(counts(a), { received: 2, unique: 1, duplicates_suppressed: 1, rejected: 0, in_flight: 1, lease_expired: 0 });
      assert.deepEqual(a.suppressed.map((s) => s.reason), ['in-flight']);
    });

    it('settles each message of output mode "each" on its own: one confirmed, one released', async function () {
      const h = await loadConfirm(store, { outputMode: 'each' });
      const first = await h.deliver(BURST.slice(0, 2));
      assert.equal(first.admitted.length, 2);
      const [a, b] = first.admitted as [Msg, Msg];
      assert.equal(typeof a.dedup?.key, 'string');
      assert.equal(a.dedup?.token, b.dedup?.token, 'one claim per input message');
      assert.equal((await h.settle('confirm', a)).passed?.dedup?.confirmed, 1);
      assert.equal((await h.settle('release', b)).passed?.dedup?.released, 1);
      const again = await h.deliver(BURST.slice(0, 2).map((r) => ({ ...r })));
      assert.deepEqual(again.admitted.map((m) => m.payload), [BURST[1]], 'the released reading is admitted again');
      assert.deepEqual(auditOf(again.second).suppressed.map((s) => s.reason), ['duplicate']);
    });

    it('settles a long burst (more keys than one Redis script call takes) in one message', async function () {
      const h = await loadConfirm(store);
      const long = Array.from({ length: 250 }, (_, i) => reading(`bin-${i % 7}`, 1000 + i, i % 100));
      const msg = admittedOne(await h.deliver(long));
      assert.equal((msg.dedup?.keys as string[]).length, 250);
      const released = await h.settle('release', msg);
      assert.equal(released.passed?.dedup?.released, 250);
      const again = admittedOne(await h.deliver(long.map((r) => ({ ...r }))));
      assert.equal((await h.settle('confirm', again)).passed?.dedup?.confirmed, 250);
      const last = auditOf((await h.deliver(long.map((r) => ({ ...r })))).second);
      assert.equal(last.duplicates_suppressed, 250);
      assert.equal(last.in_flight, 0);
    });

    it('works in key mode "property" as in key mode "reading"', async function () {
      const h = await loadConfirm(store, { keyMode: 'property', keyProperty: 'payload.id', keyPropertyType: 'msg', outputMode: 'each' });
      const events = [{ id: 'evt-1', v: 1 }, { id: 'evt-2', v: 2 }];
      const first = await h.deliver(events);
      assert.deepEqual(first.admitted.map((m) => m.dedup?.key), ['evt-1', 'evt-2']);
      assert.equal((await h.settle('confirm', first.admitted[0] as Msg)).passed?.dedup?.confirmed, 1);
      assert.equal((await h.settle('release', first.admitted[1] as Msg)).passed?.dedup?.released, 1);
      const again = await h.deliver(events.map((e) => ({ ...e })));
      assert.deepEqual(again.admitted.map((m) => m.dedup?.key), ['evt-2']);
      assert.deepEqual(auditOf(again.second).suppressed.map((s) => [s.key, s.reason]), [['evt-1', 'duplicate']]);
      assert.deepEqual(auditOf((await h.deliver(events.map((e) => ({ ...e })))).second).suppressed.map((s) => [s.key, s.reason]), [
        ['evt-1', 'duplicate'],
        ['evt-2', 'in-flight'],
      ]);
    });

    it('a message it cannot match goes to Catch with the reason', async function () {
      const h = await loadConfirm(store);
      const none = await h.settle('confirm', { payload: 1 });
      assert.match(none.caught?.error?.message ?? '', /msg\.dedup is missing/);
      const noClaim = await h.settle('release', { payload: 1, dedup: { decision: 'suppressed', reason: 'duplicate' } });
      assert.match(noClaim.caught?.error?.message ?? '', /msg\.dedup names no claim/);
      const msg = admittedOne(await h.deliver(BURST));
      const elsewhere = copy(msg);
      (elsewhere.dedup as Record<string, unknown>).node = 'no-such-node';
      const gone = await h.settle('confirm', elsewhere);
      assert.match(gone.caught?.error?.message ?? '', /no-such-node .*is not running/);
    });
  });
}

async function lastConfirmStatus(h: ConfirmHarness): Promise<string> {
  // The status line is redrawn at most every 500 ms.
  await sleep(600);
  const mine = h.statuses.filter((s) => (s.status as { source?: { id?: string } }).source?.id === 'do-confirm');
  return String((mine.at(-1)?.status as { text?: string } | undefined)?.text);
}

storeSuite('memory');
storeSuite('redis');

describe('confirm delivery, Redis unavailable', function () {
  this.timeout(30_000);
  before(startServer);
  after(stopServer);
  let server: ManagedRedis | undefined;
  afterEach(async function () {
    await helper.unload();
    await server?.stop();
    server = undefined;
  });

  it('a confirm the store cannot answer goes to Catch saying so; after Redis restarts empty, one that finds its keys gone says a duplicate may pass', async function () {
    skipLoudlyWithoutRedisServer(this, 'confirm delivery with Redis unavailable');
    server = await ManagedRedis.start();
    const running = server;
    const h = await loadConfirm('redis', {}, { port: String(running.port), timeoutMs: '500' });
    const msg = admittedOne(await h.deliver(BURST));
    await running.kill();
    const { caught } = await h.settle('confirm', msg);
    assert.match(caught?.error?.message ?? '', /The store could not settle the keys: Redis is unreachable/);
    // The confirm node's status says so, as the dedup node's does.
    assert.match(await lastConfirmStatus(h), /^store failed: Redis is unreachable.* · 0 confirmed \/ 1 unmatched$/);

    await running.start();
    // Until the connection is back, the same error; then the keys are found gone.
    let last = '';
    for (let attempt = 0; attempt < 50; attempt++) {
      last = (await h.settle('confirm', msg)).caught?.error?.message ?? 'passed';
      if (!last.includes('The store could not settle')) break;
      await sleep(100);
    }
    assert.match(last, /3 of 3 keys not settled as asked: 3 no longer held by this message's claim .*a duplicate may have passed/);
    assert.match(await lastConfirmStatus(h), /^0 confirmed \/ \d+ unmatched$/, 'the store answers again: the failure is gone from the status');
    assert.equal(admittedOne(await h.deliver(replay())).dedup?.reason, 'new', 'Redis lost the claims: the replay is admitted');
  });
});
