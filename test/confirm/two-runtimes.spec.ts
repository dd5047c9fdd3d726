/**
 * Confirm delivery across two Node-RED runtimes in two OS processes that
 * share one Redis (issue 10): the claims, confirms and leases live in Redis,
 * so what one runtime confirms the other suppresses, what one holds pending
 * the other suppresses as in-flight, and the leases of a runtime that dies
 * (SIGKILL: no close handler, no release) run out by themselves, after which
 * the other runtime admits the sensors' replay.
 */
import assert from 'node:assert/strict';
import { flushRedis, sharedRedis, useRedis } from '../support/global-hooks';
import type { FlowNode } from '../support/node-red-helper';
import { RuntimeProcess, type Injection, type Recorded, type RuntimeResults } from '../support/runtime-process';
import { reading, type Reading } from './confirm-harness';

const SINKS = ['admitted', 'audit', 'confirmed', 'caught'] as const;
type Sink = (typeof SINKS)[number];

/**
 * One runtime's flow: the sensor node (Redis, Confirm delivery on) and,
 * when `confirms`, a dedup confirm node on its first output, as if every
 * delivery succeeded.
 */
function runtimeFlow(keyPrefix: string, confirms: boolean, leaseSeconds: number): FlowNode[] {
  let y = 40;
  const at = (): { x: number; y: number } => ({ x: 200, y: (y += 60) });
  return [
    { id: 'rt-tab', type: 'tab', label: 'confirm across runtimes' },
    { id: 'rt-conn', type: 'dedup-redis', mode: 'standalone', url: sharedRedis().url, keyPrefix, timeoutMs: '10000' },
    {
      id: 'sensor', type: 'sensor-reconnect-dedup', z: 'rt-tab', ...at(), store: 'redis', redis: 'rt-conn', version: 2,
      confirm: 'on', leaseSeconds: String(leaseSeconds), outputMode: 'burst', onStoreError: 'error',
      wires: [confirms ? ['admitted', 'do-confirm'] : ['admitted'], ['audit']],
    },
    { id: 'do-confirm', type: 'dedup-confirm', z: 'rt-tab', ...at(), action: 'confirm', version: 2, wires: [['confirmed']] },
    { id: 'rt-catch', type: 'catch', z: 'rt-tab', ...at(), scope: ['sensor', 'do-confirm'], uncaught: false, wires: [['caught']] },
    ...SINKS.map((id): FlowNode => ({ id, type: 'junction', z: 'rt-tab', ...at(), wires: [] })),
  ];
}

/** 40 sensors, 5 readings each, one burst per sensor. */
function bursts(): Reading[][] {
  return Array.from({ length: 40 }, (_, d) => Array.from({ length: 5 }, (_, i) => reading(`bin-${String(d).padStart(2, '0')}`, 100 + i, (d + i * 11) % 100)));
}

let injectionCounter = 0;

function injections(all: Reading[][]): Injection[] {
  return all.map((payload) => ['sensor', { _msgid: `m${++injectionCounter}`, payload: payload.map((r) => ({ ...r })) }]);
}

function sink(r: RuntimeResults, id: Sink): Recorded[] {
  return r.sinks[id] ?? [];
}

function total(records: readonly Recorded[], field: string): number {
  return records.reduce((sum, rec) => sum + Number(rec.dedup?.[field] ?? 0), 0);
}

/** Polls a runtime's results until the condition holds. */
async function resultsWhen(runtime: RuntimeProcess, condition: (r: RuntimeResults) => boolean, what: string, timeoutMs = 10_000): Promise<RuntimeResults> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const r = await runtime.results();
    if (condition(r)) return r;
    if (Date.now() > deadline) throw new Error(`runtime ${runtime.name}: timed out waiting for ${what}: ${JSON.stringify(r.sinks).slice(0, 2000)}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

function healthy(name: string, r: RuntimeResults): void {
  assert.deepEqual(r.crashes, [], `runtime ${name} crashed`);
  assert.deepEqual(sink(r, 'caught').map((c) => c.error), [], `runtime ${name}: nothing at the Catch node`);
}

describe('confirm delivery across two Node-RED runtimes sharing Redis', function () {
  useRedis();
  this.timeout(120_000);
  const running: RuntimeProcess[] = [];

  afterEach(async function () {
    this.timeout(60_000);
    await Promise.all(running.splice(0).map((runtime) => runtime.stop()));
  });

  async function start(name: string, flow: FlowNode[]): Promise<RuntimeProcess> {
    const runtime = await RuntimeProcess.start({ name, flow, credentials: { 'rt-conn': {} }, sinks: SINKS, watch: ['sensor'] });
    running.push(runtime);
    return runtime;
  }

  it("one runtime confirms: the other's replay is suppressed as duplicate; before the confirm, as in-flight", async function () {
    await flushRedis();
    const prefix = `confirm-rt-${process.pid}-1:`;
    const [a, b] = await Promise.all([start('A', runtimeFlow(prefix, true, 60)), start('B', runtimeFlow(prefix, false, 60))]);
    const data = bursts();
    const readings = data.length * 5;

    await a.inject(injections(data));
    const ra = await resultsWhen(a, (r) => sink(r, 'confirmed').length === data.length, 'every burst confirmed');
    healthy('A', ra);
    assert.equal(total(sink(ra, 'admitted'), 'unique'), readings, 'A admits every reading');
    assert.equal(total(sink(ra, 'confirmed'), 'confirmed'), readings, 'A confirms every reading');

    await b.inject(injections(data));
    const rb = await resultsWhen(b, (r) => sink(r, 'audit').length === data.length, 'the audits of the replay');
    healthy('B', rb);
    assert.deepEqual(sink(rb, 'admitted'), [], 'B admits none of the replay');
    assert.equal(total(sink(rb, 'audit'), 'duplicates_suppressed'), readings);
    assert.equal(total(sink(rb, 'audit'), 'in_flight'), 0, 'confirmed keys are duplicates, not in-flight');

    // New readings that B admits and does not confirm: A's replay meets them pending.
    const more = data.map((own) => own.map((r) => ({ ...r, seq: r.seq + 50 })));
    await b.inject(injections(more));
    await a.inject(injections(more));
    const ra2 = await resultsWhen(a, (r) => sink(r, 'audit').length === 2 * data.length, 'the audits of A');
    const replayAudits = sink(ra2, 'audit').slice(data.length);
    assert.equal(total(replayAudits, 'unique'), 0);
    assert.equal(total(replayAudits, 'in_flight'), readings, "A suppresses B's pending claims as in-flight");
  });

  it('a runtime that dies holding leases: they run out, and the other runtime admits the replay (counted as lease_expired)', async function () {
    await flushRedis();
    const prefix = `confirm-rt-${process.pid}-2:`;
    const LEASE = 4;
    const [a, b] = await Promise.all([start('A', runtimeFlow(prefix, false, LEASE)), start('B', runtimeFlow(prefix, true, LEASE))]);
    const data = bursts();
    const readings = data.length * 5;

    // A admits everything and, never confirming, holds every key pending.
    await a.inject(injections(data));
    const ra = await resultsWhen(a, (r) => sink(r, 'audit').length === data.length, "A's audits");
    healthy('A', ra);
    assert.equal(total(sink(ra, 'admitted'), 'unique'), readings);
    const claimedAt = Date.now();

    // B, inside the lease: every copy is in-flight.
    await b.inject(injections(data));
    let rb = await resultsWhen(b, (r) => sink(r, 'audit').length === data.length, "B's first audits");
    assert.equal(total(sink(rb, 'audit'), 'in_flight'), readings);
    assert.ok(Date.now() - claimedAt < LEASE * 1000, 'B replayed inside the lease (the machine was too slow for this test otherwise)');

    // A dies mid-delivery: no close handler, no release.
    const pid = a.pid;
    assert.ok(pid !== undefined);
    process.kill(pid, 'SIGKILL');
    await a.stop();

    await new Promise((resolve) => setTimeout(resolve, Math.max(0, claimedAt + LEASE * 1000 + 200 - Date.now())));
    await b.inject(injections(data));
    rb = await resultsWhen(b, (r) => sink(r, 'audit').length === 2 * data.length && sink(r, 'confirmed').length === data.length, "B's replay admitted and confirmed");
    healthy('B', rb);
    const replay = sink(rb, 'audit').slice(data.length);
    assert.equal(total(replay, 'unique'), readings, 'B admits the whole replay once the leases ran out');
    assert.equal(total(replay, 'lease_expired'), readings, 'each counted as lease_expired');
    assert.equal(total(sink(rb, 'confirmed'), 'confirmed'), readings);

    // Confirmed by B: the next replay is a duplicate.
    await b.inject(injections(data));
    rb = await resultsWhen(b, (r) => sink(r, 'audit').length === 3 * data.length, "B's last audits");
    const last = sink(rb, 'audit').slice(2 * data.length);
    assert.equal(total(last, 'unique'), 0);
    assert.equal(total(last, 'duplicates_suppressed'), readings);
    assert.equal(total(last, 'in_flight'), 0);
  });
});
