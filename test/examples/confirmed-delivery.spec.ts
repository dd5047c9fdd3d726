/**
 * examples/confirmed-delivery.json does what its comment says: the sensors
 * make 24 readings and replay them, the receiver behind the flow's own
 * http-in endpoint fails every third request, confirm and release are
 * wired, and once the sensors are quiet the receiver holds every reading
 * exactly once, as its status and debug messages say. Without the wires
 * into release (the comment's last suggestion), the readings whose request
 * failed never arrive.
 */
import type { Counts } from '../../src/core/sensor/burst';
import assert from 'node:assert/strict';
import { until, type FlowNode, type Msg } from '../support/node-red-helper';
import { freePort } from '../support/redis-server';
import { exampleFlow, examplesInThisBlock, type RunningExample } from './example-runtime';

const TICKS = 12;
const READINGS = 24;

interface ReceiverReport {
  readings: number;
  duplicates: number;
  failedRequests: number;
}

/** Presses the tick inject and waits until every admitted reading's request is answered and settled. */
async function tick(ex: RunningExample, confirm: boolean): Promise<void> {
  const audits = ex.arrivals(ex.idOf('audit', 'debug'));
  const before = audits.length;
  ex.press('every 2 s');
  await until(() => audits.length > before || ex.statuses(ex.idOf('simulated bin sensors')).at(-1)?.text?.includes('done') === true, 'the burst');
  const admitted = (): number => ex.arrivals(ex.idOf('to the receiver')).length;
  const answered = (): number => ex.arrivals(ex.idOf('2xx?')).length + ex.arrivals(ex.idOf('request failed')).length;
  const settled = (): number => ex.arrivals(ex.idOf('confirm', 'dedup-confirm')).length + ex.arrivals(ex.idOf('release', 'dedup-confirm')).length;
  await until(() => answered() === admitted() && (!confirm || settled() === admitted()), 'the requests of the burst to be answered and settled');
  // The settles are answered after the message left; one more turn for the last confirm.
  await new Promise((resolve) => setTimeout(resolve, 20));
}

function lastReport(ex: RunningExample): ReceiverReport {
  const reports = ex.arrivals(ex.idOf('receiver', 'debug'));
  assert.ok(reports.length > 0, 'the receiver reported');
  return (reports.at(-1) as Msg).payload as ReceiverReport;
}

describe('example: confirmed delivery', function () {
  this.timeout(30_000);
  const run = examplesInThisBlock();

  it('ends with every reading exactly once at the receiver, although every third request failed', async function () {
    const ex = await run('confirmed-delivery', { manualInjects: true });
    for (let i = 0; i < TICKS; i++) await tick(ex, true);
    // The sensors are done: one more press changes nothing.
    await tick(ex, true);
    assert.match(String(ex.statuses(ex.idOf('simulated bin sensors')).at(-1)?.text), /done, quiet now · 24 readings made/);

    const report = lastReport(ex);
    assert.equal(report.readings, READINGS, 'every reading reached the receiver');
    assert.equal(report.duplicates, 0, 'none of them twice');
    const requests = ex.arrivals(ex.idOf('receiver', 'function')).length;
    assert.equal(report.failedRequests, Math.floor(requests / 3), 'every third request failed');
    assert.ok(report.failedRequests >= 5, `failures happened: ${report.failedRequests}`);
    assert.match(String(ex.statuses(ex.idOf('receiver', 'function')).at(-1)?.text), /^24 readings, 0 duplicates · failed requests: \d+$/);

    // Each failed request was released, and nothing went unmatched.
    const released = ex.arrivals(ex.idOf('released for a retry'));
    assert.equal(released.length, report.failedRequests);
    for (const msg of released) assert.equal(msg.dedup?.released, 1);
    assert.deepEqual(ex.arrivals(ex.idOf('confirm / release errors')).map((m) => m.error?.message), []);
    const confirmed = ex.arrivals(ex.idOf('confirm', 'dedup-confirm'));
    assert.equal(confirmed.length, READINGS, 'one confirm per stored reading');

    // The audits tell in-flight copies from duplicates, and nothing expired.
    const audits = ex.arrivals(ex.idOf('audit', 'debug')).map((m) => m.payload as Counts);
    const sum = (field: keyof Counts): number => audits.reduce((s, a) => s + (a[field] ?? 0), 0);
    assert.equal(sum('unique'), requests, 'one request per admitted reading');
    assert.equal(sum('unique'), READINGS + report.failedRequests, 'each failure admitted once more on a replay');
    assert.equal(sum('lease_expired'), 0);
    assert.equal(sum('received'), sum('unique') + sum('duplicates_suppressed'));
    assert.deepEqual(ex.logged(), [], 'nothing logged as an error or warning');
  });

  it('control: without the wires into release (as the comment suggests), the readings whose request failed never arrive', async function () {
    const ex = await run('confirmed-delivery', {
      manualInjects: true,
      edit: (flow: FlowNode[]) => {
        (flow.find((n) => n.name === '2xx?') as FlowNode).wires = [[(flow.find((n) => n.name === 'confirm') as FlowNode).id], []];
        (flow.find((n) => n.name === 'request failed') as FlowNode).wires = [[]];
      },
    });
    for (let i = 0; i < TICKS; i++) await tick(ex, false);
    const report = lastReport(ex);
    assert.equal(report.duplicates, 0);
    assert.ok(report.failedRequests >= 5, `failures: ${report.failedRequests}`);
    assert.equal(report.readings, READINGS - report.failedRequests, 'each failed request lost its reading');
    const audits = ex.arrivals(ex.idOf('audit', 'debug')).map((m) => m.payload as Counts);
    assert.ok(audits.reduce((s, a) => s + a.in_flight, 0) > 0, 'the replays of the unreleased readings were in-flight');
  });

  it('delivers on whatever port its Node-RED listens: no URL, no PORT, no port number in the flow', async function () {
    const flow = exampleFlow('confirmed-delivery');
    const text = JSON.stringify(flow);
    assert.doesNotMatch(text, /1880|\$env|PORT|127\.0\.0\.1|localhost/, 'nothing in the flow names a host or port');
    assert.deepEqual(flow.filter((n) => n.type === 'http request'), [], 'no HTTP request to aim at a port');
    // A runtime whose environment names a port nobody listens on, as when the
    // flow is imported into a Node-RED on another port than PORT or 1880.
    const dead = await freePort();
    const before = process.env.PORT;
    process.env.PORT = String(dead);
    try {
      const ex = await run('confirmed-delivery', {
        manualInjects: true,
        edit: (nodes: FlowNode[]) => Object.assign(nodes.find((n) => n.type === 'tab') ?? {}, { env: [{ name: 'PORT', value: String(dead), type: 'str' }] }),
      });
      for (let i = 0; i < TICKS; i++) await tick(ex, true);
      const report = lastReport(ex);
      assert.equal(report.readings, READINGS);
      assert.equal(report.duplicates, 0);
      assert.deepEqual(ex.arrivals(ex.idOf('request failed')).map((m) => m.error?.message), [], 'no delivery failed for want of a port');
    } finally {
      if (before === undefined) delete process.env.PORT;
      else process.env.PORT = before;
    }
  });

  it('deploys as it is: the timers drive it and the first requests reach the receiver', async function () {
    const ex = await run('confirmed-delivery');
    await until(() => ex.arrivals(ex.idOf('receiver', 'debug')).length >= 3, 'the first tick at the receiver', 5000);
    assert.deepEqual(ex.logged(), []);
  });
});
