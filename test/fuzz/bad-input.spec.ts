/**
 * Property-based fuzzing of both nodes, each with the Redis store and the
 * memory store, in a real runtime: thousands of random and malformed
 * messages (wrong types, NaN, Infinity, huge strings, unicode and `{}` / `:`
 * / glob characters in ids, deeply nested payloads, own `__proto__` keys,
 * bursts mixing all of these with good readings, stray msg.reset values).
 *
 * The properties, for every message and every node:
 * - the runtime never crashes (no uncaught exception, no unhandled rejection,
 *   no error that no Catch node took);
 * - done() is called exactly once;
 * - the message leaves: a ping through one output or the Catch node; a
 *   burst as one audit (plus at most one message of admitted readings, plus
 *   one Catch message per unreadable reading); only a reset may end quietly;
 * - and, after all runs, Redis holds no key outside the configured prefix
 *   (SCAN), and keys planted outside it survived every reset.
 */
import type { Counts } from '../../src/core/sensor/burst';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import type Redis from 'ioredis';
import { closeRedisClient, flushRedis, newRedisClient, sharedRedis, useRedis } from '../support/global-hooks';
import {
  helper,
  loadPackFlow,
  node,
  startServer,
  stopServer,
  until,
  watchCompletions,
  type FlowNode,
  type Msg,
} from '../support/node-red-helper';
import { Deep } from '../support/deep-value';

const PREFIX = 'fuzz{x}*:';
const NODES = ['fz-win-redis', 'fz-win-memory', 'fz-sensor-redis', 'fz-sensor-memory'] as const;
const PLANTED = ['outside:keep', 'fuzz{x}:sw:{a}', 'fuzz-other:rc:{b}:1:00', 'sw:{veh-1}'];

function flow(): FlowNode[] {
  const nodes: FlowNode[] = [
    { id: 'fz-tab', type: 'tab' },
    { id: 'fz-conn', type: 'dedup-redis', url: sharedRedis().url, keyPrefix: PREFIX, timeoutMs: '5000' },
    { id: 'fz-catch', type: 'catch', z: 'fz-tab', scope: null, uncaught: false, wires: [['fz-caught']] },
    { id: 'fz-caught', type: 'helper', z: 'fz-tab' },
  ];
  for (const id of NODES) {
    const store = id.endsWith('redis') ? 'redis' : 'memory';
    nodes.push(
      {
        id, type: id.startsWith('fz-win') ? 'sliding-window-dedup' : 'sensor-reconnect-dedup', z: 'fz-tab', store,
        redis: store === 'redis' ? 'fz-conn' : '', onStoreError: 'error', wires: [['fz-out1'], ['fz-out2']],
      },
    );
  }
  nodes.push({ id: 'fz-out1', type: 'helper', z: 'fz-tab' }, { id: 'fz-out2', type: 'helper', z: 'fz-tab' });
  return nodes;
}

// ---------------------------------------------------------------------------
// Arbitraries

/** An object whose keys are all own properties, `__proto__` included. */
function ownObject(entries: [string, unknown][]): Record<string, unknown> {
  const object: Record<string, unknown> = {};
  for (const [key, value] of entries) Object.defineProperty(object, key, { value, enumerable: true, writable: true, configurable: true });
  return object;
}

/** A huge string, likewise built late, so that a counterexample stays readable. */
class Huge {
  constructor(
    readonly unit: string,
    readonly count: number,
  ) {}

  [fc.toStringMethod](): string {
    return `<${JSON.stringify(this.unit)} x ${this.count}>`;
  }
}

/** The generated value with every Deep and Huge built; own `__proto__` keys kept as own keys. */
function materialise(value: unknown): unknown {
  if (value instanceof Deep) return value.build();
  if (value instanceof Huge) return value.unit.repeat(value.count);
  if (Array.isArray(value)) return value.map(materialise);
  if (value === null || typeof value !== 'object' || value instanceof Date) return value;
  if (Object.getPrototypeOf(value) !== Object.prototype && Object.getPrototypeOf(value) !== null) return value;
  return ownObject(Object.keys(value).map((key) => [key, materialise((value as Record<string, unknown>)[key])]));
}

const nastyString = fc.oneof(
  { weight: 4, arbitrary: fc.string() },
  { weight: 2, arbitrary: fc.string({ unit: 'binary' }) },
  { weight: 2, arbitrary: fc.string({ unit: 'grapheme' }) },
  {
    weight: 4,
    arbitrary: fc.constantFrom(
      '', ' ', ':', '::', '{', '}', '{}', '}{', '{x}', 'a{b}c', '%', '%7B', '*', '?', '[a-z]', '\\', '__proto__', 'constructor',
      'prototype', 'toString', '\u0000', '\ud800', '🚌', 'e\u0301', 'NaN', 'Infinity', '-0', '1e400', '2026-02-30T00:00:00Z',
      '2026-07-16T09:00:00Z', '2026-07-16T09:00:00.123456+02:00', '1780000000', PREFIX, `${PREFIX}sw:{x}`,
    ),
  },
  { weight: 1, arbitrary: fc.tuple(fc.constantFrom('x', '{', '🚌', ':'), fc.integer({ min: 1000, max: 100_000 })).map(([unit, n]) => new Huge(unit, n)) },
);

const nastyNumber = fc.oneof(
  fc.double(),
  fc.integer(),
  fc.constantFrom(
    Number.NaN, Infinity, -Infinity, -0, 0, 1e308, -1e308, 5e-324, 2 ** 53, 2 ** 53 + 2, 1_780_000_000, 1_780_000_000_000,
    90, -90, 180, -180, 90.0000001, 100, 100.0001, -0.0001,
  ),
);

const scalar = fc.oneof(nastyString, nastyNumber, fc.boolean(), fc.constant(null), fc.constant(undefined), fc.bigInt(), fc.date({ noInvalidDate: false }));

// Up to 1,500 levels, which Node-RED can still copy: messages it cannot
// (from about 2,500 levels) have a spec of their own, unsendable.spec.ts.
const deep = fc.integer({ min: 10, max: 1500 }).map((depth) => new Deep(depth));

const field = fc.oneof(
  { weight: 6, arbitrary: scalar },
  { weight: 1, arbitrary: fc.anything({ maxDepth: 2 }) },
  { weight: 1, arbitrary: fc.array(scalar, { maxLength: 3 }) },
  { weight: 1, arbitrary: deep },
);

const protoKeys = fc
  .array(
    fc.tuple(
      fc.constantFrom('__proto__', 'constructor', 'prototype', 'assetId', 'ts', 'lat', 'lon', 'device_id', 'seq', 'fill_pct', 'toString', 'valueOf'),
      fc.oneof(field, fc.constant(JSON.parse('{"polluted": true}') as unknown)),
    ),
    { maxLength: 6 },
  )
  .map(ownObject);

const pingLike = fc.record(
  { assetId: fc.oneof(nastyString, field), ts: fc.oneof(nastyNumber, nastyString, field), lat: fc.oneof(nastyNumber, field), lon: fc.oneof(nastyNumber, field) },
  { requiredKeys: [] },
);

/** Good pings with awkward ids, so that the store is really written to. */
const goodPing = fc.record({
  assetId: nastyString.filter((s) => typeof s !== 'string' || s.length > 0),
  ts: fc.integer({ min: 1_700_000_000, max: 1_800_000_000 }),
  lat: fc.double({ min: -90, max: 90, noNaN: true }),
  lon: fc.double({ min: -180, max: 180, noNaN: true }),
});

const readingLike = fc.record(
  { device_id: fc.oneof(nastyString, field), seq: fc.oneof(nastyNumber, field), ts: fc.oneof(nastyString, nastyNumber, field), fill_pct: fc.oneof(nastyNumber, field) },
  { requiredKeys: [] },
);

const goodReading = fc.record({
  device_id: nastyString.filter((s) => typeof s !== 'string' || s.length > 0),
  seq: fc.nat(),
  ts: fc.date({ min: new Date('2000-01-01T00:00:00Z'), max: new Date('2100-01-01T00:00:00Z'), noInvalidDate: true }).map((d) => d.toISOString()),
  fill_pct: fc.double({ min: 0, max: 100, noNaN: true }),
});

const payload = fc.oneof(
  { weight: 2, arbitrary: scalar },
  { weight: 3, arbitrary: pingLike },
  { weight: 3, arbitrary: goodPing },
  { weight: 3, arbitrary: readingLike },
  { weight: 3, arbitrary: goodReading },
  { weight: 4, arbitrary: fc.array(fc.oneof(readingLike, goodReading, goodReading, scalar, protoKeys), { maxLength: 30 }) },
  { weight: 2, arbitrary: protoKeys },
  { weight: 1, arbitrary: deep },
  { weight: 1, arbitrary: fc.anything() },
);

const NO_RESET = Symbol('no reset');

const message = fc
  .record({
    payload,
    topic: fc.option(nastyString, { freq: 2 }),
    // Rare, and "forget everything" rarer still, or little would be remembered.
    reset: fc.oneof(
      { weight: 300, arbitrary: fc.constant<unknown>(NO_RESET) },
      { weight: 10, arbitrary: nastyString },
      { weight: 1, arbitrary: fc.oneof(scalar, fc.constant(true), fc.constant({})) },
    ),
    dedup: fc.option(fc.anything({ maxDepth: 1 }), { freq: 5 }),
  })
  .map(({ payload: p, topic, reset, dedup }) => {
    const msg: Record<string, unknown> = { payload: p };
    if (topic !== null) msg.topic = topic;
    if (reset !== NO_RESET) msg.reset = reset;
    if (dedup !== null) msg.dedup = dedup;
    return msg;
  });

async function allKeys(client: Redis): Promise<string[]> {
  const keys: string[] = [];
  for await (const batch of client.scanStream({ count: 1000 })) keys.push(...(batch as string[]));
  return keys;
}

/** How the nodes read msg.reset: present and not undefined. */
function isReset(msg: Record<string, unknown>): boolean {
  return Object.prototype.hasOwnProperty.call(msg, 'reset') && msg.reset !== undefined;
}

// ---------------------------------------------------------------------------

describe('fuzz: random and malformed messages at both nodes', function () {
  useRedis();
  this.timeout(180_000);
  let admin: Redis;
  const crashes: string[] = [];
  const onCrash = (error: unknown): void => {
    crashes.push(error instanceof Error ? (error.stack ?? error.message) : String(error));
  };

  before(async function () {
    await flushRedis();
    admin = newRedisClient();
    for (const key of PLANTED) await admin.set(key, 'planted');
    await startServer();
    await loadPackFlow(flow(), { 'fz-conn': {} });
    process.on('unhandledRejection', onCrash);
    process.on('uncaughtException', onCrash);
  });

  after(async function () {
    process.removeListener('unhandledRejection', onCrash);
    process.removeListener('uncaughtException', onCrash);
    await helper.unload();
    await stopServer();
    await closeRedisClient(admin);
  });

  it('never crashes, calls done() once, lets every message out, and writes only under the prefix', async function () {
    const exits = new Map<string, { door: string; msg: Msg }[]>();
    const note = (door: string) => (msg: Msg) => {
      const id = String(msg._msgid);
      const list = exits.get(id);
      if (list) list.push({ door, msg });
      else exits.set(id, [{ door, msg }]);
    };
    node('fz-out1').on('input', note('output 1'));
    node('fz-out2').on('input', note('output 2'));
    node('fz-caught').on('input', note('catch'));
    const completions = NODES.map((id) => watchCompletions(id));
    let delivered = 0;
    let run = 0;
    const keysSeen = new Set<string>();
    const tally = { messages: 0, decided: 0, caught: 0, resets: 0 };

    try {
      await fc.assert(
        fc.asyncProperty(fc.array(message, { minLength: 20, maxLength: 60 }), async (messages) => {
          run++;
          // What was sent, noted before the nodes see it: a node may replace msg.payload.
          const sent: { id: string; nodeId: (typeof NODES)[number]; reset: boolean; burst: number | undefined }[] = [];
          messages.map((m) => materialise(m) as Record<string, unknown>).forEach((generated, i) => {
            for (const nodeId of NODES) {
              const id = `${run}/${i}/${nodeId}`;
              // Each node gets its own top-level message; the payload is shared, as nothing may mutate it.
              const msg: Record<string, unknown> = { ...generated, _msgid: id };
              sent.push({ id, nodeId, reset: isReset(msg), burst: Array.isArray(msg.payload) ? (msg.payload as unknown[]).length : undefined });
              node(nodeId).receive(msg);
            }
          });
          delivered += sent.length;
          await until(() => completions.reduce((n, c) => n + c.total(), 0) >= delivered, `done() for all ${delivered} deliveries`, 20_000);
          // Outputs travel after done().
          await new Promise((resolve) => setTimeout(resolve, 20));
          assert.deepEqual(crashes, [], 'the runtime crashed');
          for (const { id, nodeId, reset, burst } of sent) {
            const count = completions[NODES.indexOf(nodeId)]?.perMessage.get(id);
            assert.equal(count, 1, `${id}: done() called ${count ?? 0} times`);
            const out = exits.get(id) ?? [];
            const doors = out.map((e) => e.door);
            if (reset) {
              // A reset ends quietly, or with an error if it could not be done.
              assert.ok(doors.every((d) => d === 'catch') && doors.length <= 1, `${id} (reset): ${doors.join(', ')}`);
              continue;
            }
            if (nodeId.startsWith('fz-sensor') && burst !== undefined) {
              const audits = out.filter((e) => e.door === 'output 2');
              assert.equal(audits.length, 1, `${id}: one audit per burst, got ${doors.join(', ')}`);
              const audit = audits[0]?.msg.dedup as unknown as Counts;
              assert.equal(audit.received, burst, `${id}: received`);
              assert.equal(audit.received, audit.unique + audit.duplicates_suppressed + audit.rejected, `${id}: the audit does not add up`);
              assert.equal(doors.filter((d) => d === 'catch').length, audit.rejected, `${id}: one Catch message per rejected reading`);
              assert.equal(doors.filter((d) => d === 'output 1').length, audit.unique > 0 ? 1 : 0, `${id}: admitted readings`);
            } else {
              assert.equal(doors.length, 1, `${id}: left through ${doors.join(', ') || 'nothing'}`);
            }
          }
          tally.messages += messages.length;
          for (const { id, reset } of sent) {
            if (reset) tally.resets++;
            else if ((exits.get(id) ?? []).some((e) => e.door !== 'catch')) tally.decided++;
            else tally.caught++;
          }
          for (const { id } of sent) exits.delete(id);
          // After every run, not only at the end: a later reset could hide a stray key.
          for (const key of await allKeys(admin)) {
            assert.ok(key.startsWith(PREFIX) || PLANTED.includes(key), `key written outside the prefix: ${key.slice(0, 80)}`);
            if (key.startsWith(PREFIX)) keysSeen.add(key);
          }
        }),
        { numRuns: 100, seed: Number(process.env.FUZZ_SEED ?? 20260716), endOnFailure: true },
      );
    } finally {
      for (const c of completions) c.dispose();
    }

    // No error went unhandled: the Catch node took every one.
    const logSpy = (helper as unknown as { log(): { args: { level: number; msg: unknown }[][] } }).log();
    const loggedErrors = logSpy.args.flatMap(([entry]) => (entry !== undefined && entry.level <= 20 ? [entry] : []));
    assert.deepEqual(loggedErrors.map((e) => String(e.msg)), [], 'errors that reached the log instead of a Catch node');

    // Every key under the prefix, planted keys untouched.
    const keys = await allKeys(admin);
    const outside = keys.filter((key) => !key.startsWith(PREFIX) && !PLANTED.includes(key));
    assert.deepEqual(outside, [], 'keys written outside the prefix');
    for (const key of PLANTED) assert.equal(await admin.get(key), 'planted', `${key} was touched`);
    // Buckets of records and seen keys, the layout mark, and the epoch keys that resets raise (a slot's, a device's).
    const shapes = /^(sw:#\d+|rc:#\d+|layout|sw:epoch|rc:epoch|rc:\{[^{}]*\}:reset)$/s;
    for (const key of keysSeen) assert.match(key.slice(PREFIX.length), shapes, `unexpected key shape: ${key.slice(0, 80)}`);
    assert.ok(keysSeen.size > 200, `the fuzzing should have written keys (${keysSeen.size})`);
    console.log(
      `      ${tally.messages} messages x ${NODES.length} nodes: ${tally.decided} decided, ${tally.caught} caught, ` +
        `${tally.resets} resets; ${keysSeen.size} keys written, all under "${PREFIX}"`,
    );
  });
});
