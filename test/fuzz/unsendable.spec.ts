/**
 * No message can stop Node-RED (issue 19): messages Node-RED cannot copy
 * (nested thousands of levels deep), cyclic ones, own `__proto__` and
 * `constructor` keys in payloads, ids and property paths, 1 MB ids,
 * numbers like 1e308 and `NaN` strings, through both dedup nodes (every
 * output mode, plain and confirm) and the confirm node, with each output
 * wired to two nodes, with the memory store and with a real Redis.
 *
 * The properties, per store, for every message and every node:
 * - the runtime stays up: no uncaught exception, no unhandled rejection;
 * - done() is called exactly once per message a node was given;
 * - the message leaves exactly once, in = out1 + out2 + Catch: a ping or a
 *   single reading on one output or at Catch; a burst through its audit
 *   (output 2, or Catch) with its admitted readings on output 1 or at
 *   Catch and each unreadable reading at Catch, all adding up to what the
 *   audit counts;
 * - both wires of an output get the same messages: a message never
 *   reaches one of them and not the other.
 */
import type { Counts } from '../../src/core/sensor/burst';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { CONFIG_VERSION } from '../../src/node-red/migrations';
import { flushRedis, sharedRedis, useRedis } from '../support/global-hooks';
import { countsOf } from '../support/sensor-delivery';
import { coreNodes, helper, node, packNodes, sleep, startServer, stopServer, until, watchCompletions, type FlowNode, type Msg, type StoreKind } from '../support/node-red-helper';
import { Deep } from '../support/deep-value';

const PACK = ['dedup-redis', 'sliding-window-dedup', 'sensor-reconnect-dedup', 'dedup-confirm'];

/** The nodes under test (per store, their ids carry the store's letter), and how each reads a message. */
const DEDUP = {
  win: { type: 'sliding-window-dedup', settings: {} },
  // Asset id and time read through own `constructor` and `__proto__` keys.
  winProto: { type: 'sliding-window-dedup', settings: { assetIdProperty: 'payload.constructor', timeProperty: 'payload["__proto__"].ts' } },
  burst: { type: 'sensor-reconnect-dedup', settings: { outputMode: 'burst' } },
  // Output mode each; device and measured value through own `constructor` and `__proto__` keys.
  each: {
    type: 'sensor-reconnect-dedup',
    settings: { outputMode: 'each', deviceField: 'constructor', measures: [{ path: '["__proto__"].level', name: '', min: '', max: '' }] },
  },
  // Confirm on, key from a property path through `__proto__`, each admitted reading on to the confirm node.
  conf: {
    type: 'sensor-reconnect-dedup',
    settings: { outputMode: 'each', confirm: 'on', leaseSeconds: '60', keyMode: 'property', keyProperty: 'payload["__proto__"].id', keyPropertyType: 'msg' },
  },
} as const;
type DedupName = keyof typeof DEDUP;
const NAMES = Object.keys(DEDUP) as DedupName[];

const id = (store: StoreKind, name: string): string => `${store[0]}-${name}`;

function flow(store: StoreKind): FlowNode[] {
  const z = `${store}-tab`;
  const nodes: FlowNode[] = [{ id: z, type: 'tab' }];
  const helperNode = (nodeId: string): void => {
    nodes.push({ id: nodeId, type: 'helper', z });
  };
  for (const name of NAMES) {
    const me = id(store, name);
    // Each output wired to two nodes; the confirm node is the first of the confirm sensor's output 1.
    const first = name === 'conf' ? id(store, 'confirm') : `${me}-1a`;
    nodes.push({
      id: me, type: DEDUP[name].type, z, store, redis: store === 'redis' ? id(store, 'conn') : '', onStoreError: 'error', version: CONFIG_VERSION,
      ...DEDUP[name].settings, wires: [[first, `${me}-1b`], [`${me}-2a`, `${me}-2b`]],
    });
    if (name !== 'conf') helperNode(`${me}-1a`);
    for (const wire of ['1b', '2a', '2b']) helperNode(`${me}-${wire}`);
  }
  const confirm = id(store, 'confirm');
  nodes.push({ id: confirm, type: 'dedup-confirm', z, action: 'confirm', version: CONFIG_VERSION, wires: [[`${confirm}-1a`, `${confirm}-1b`]] });
  helperNode(`${confirm}-1a`);
  helperNode(`${confirm}-1b`);
  // One Catch for the whole tab, and a Complete node for two of the nodes: each copies every message it hears of.
  nodes.push({ id: id(store, 'catch'), type: 'catch', z, scope: null, uncaught: false, wires: [[id(store, 'caught')]] });
  helperNode(id(store, 'caught'));
  nodes.push({ id: id(store, 'complete'), type: 'complete', z, scope: [id(store, 'win'), id(store, 'burst')], wires: [[id(store, 'completed')]] });
  helperNode(id(store, 'completed'));
  if (store === 'redis') {
    nodes.push({ id: id(store, 'conn'), type: 'dedup-redis', host: '127.0.0.1', port: String(sharedRedis().port), keyPrefix: `unsendable-${process.pid}:`, timeoutMs: '5000' });
  }
  return nodes;
}

// ---------------------------------------------------------------------------
// Values built only when a message is sent: fast-check prints a
// counterexample recursively, and would overflow its own stack on them.

class Huge {
  constructor(readonly unit: string) {}

  build(): string {
    return this.unit.repeat(1_048_576 / this.unit.length);
  }

  [fc.toStringMethod](): string {
    return `<1 MB of ${JSON.stringify(this.unit)}>`;
  }
}

class Cyclic {
  build(): unknown {
    const value: Record<string, unknown> = { name: 'loop', list: [] };
    value.self = value;
    (value.list as unknown[]).push(value, { back: value });
    return value;
  }

  [fc.toStringMethod](): string {
    return '<cyclic object>';
  }
}

/** One value of a message that is the same object wherever it is used again (a burst holding one reading twice). */
class Twice {
  constructor(readonly index: number) {}

  [fc.toStringMethod](): string {
    return `<the reading at ${this.index} again>`;
  }
}

/** The generated value with every lazy value built; own `__proto__` keys kept as own keys. */
function materialise(value: unknown, built: unknown[] = []): unknown {
  if (value instanceof Deep || value instanceof Huge || value instanceof Cyclic) return value.build();
  if (Array.isArray(value)) {
    const out: unknown[] = [];
    for (const item of value) out.push(item instanceof Twice ? (out[item.index % Math.max(1, out.length)] ?? null) : materialise(item, built));
    return out;
  }
  if (value === null || typeof value !== 'object') return value;
  if (Object.getPrototypeOf(value) !== Object.prototype && Object.getPrototypeOf(value) !== null) return value;
  const object: Record<string, unknown> = {};
  for (const key of Object.keys(value)) {
    Object.defineProperty(object, key, { value: materialise((value as Record<string, unknown>)[key], built), enumerable: true, writable: true, configurable: true });
  }
  return object;
}

/** An object from entries, every key an own property, `__proto__` included. */
function own(entries: Record<string, unknown>): Record<string, unknown> {
  const object: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(entries)) Object.defineProperty(object, key, { value, enumerable: true, writable: true, configurable: true });
  return object;
}

// Past the copy limit (about 2,500 levels while Node-RED's clone is
// interpreted, 5,000 once optimised) as often as below it.
const deep = fc.oneof(fc.integer({ min: 10, max: 1000 }), fc.integer({ min: 2000, max: 6000 })).map((depth) => new Deep(depth));
const huge = fc.constantFrom('x', '{', ':', '🚌').map((unit) => new Huge(unit));
const cyclic = fc.constant(new Cyclic());

/** Messages per run of the property: each is sent to every dedup node, then every way out checked. */
const BATCH = 100;

/** One message in this many carries a heavy value. */
const HEAVY_ONE_IN = Number(process.env.FUZZ_HEAVY ?? 80);

const oddNumber = fc.constantFrom(1e308, -1e308, Number.MAX_VALUE, 5e-324, -0, Number.NaN, Infinity, -Infinity, 2 ** 53 + 2);
const oddString = fc.constantFrom('NaN', 'Infinity', '-Infinity', '1e308', '-1e308', '1e309', '0x10', '', ' ', '__proto__', 'constructor', 'prototype', 'toString', 'hasOwnProperty', '{x}', '🚌');
/** A value no field should hold: cheap to copy (the heavy ones come one per message at most, below). */
const junk = fc.oneof(
  { weight: 4, arbitrary: oddNumber },
  { weight: 4, arbitrary: oddString },
  { weight: 2, arbitrary: fc.anything({ maxDepth: 2 }) },
  { weight: 1, arbitrary: cyclic },
);

/** An id: mostly ordinary, often a prototype name or an odd string. */
const anId = fc.oneof(
  { weight: 20, arbitrary: fc.constantFrom('bin-A17', 'bin-B04', 'veh-1', 'veh-2', 'veh-3') },
  { weight: 6, arbitrary: fc.string({ minLength: 1, maxLength: 12 }) },
  { weight: 4, arbitrary: oddString },
  { weight: 1, arbitrary: oddNumber },
);

const epochSeconds = fc.integer({ min: 1_700_000_000, max: 1_760_000_000 });
/** A field is junk once in this many: often enough that most bursts hold a bad reading, rarely enough that most readings are admitted or suppressed. */
const JUNK_ONE_IN = 30;
const orJunk = <T>(good: fc.Arbitrary<T>) => fc.oneof({ weight: JUNK_ONE_IN - 1, arbitrary: good }, { weight: 1, arbitrary: junk });
const time = orJunk(epochSeconds);
const coordinate = (limit: number) => orJunk(fc.double({ min: -limit, max: limit, noNaN: true }));
const level = orJunk(fc.double({ min: 0, max: 100, noNaN: true }));

/**
 * One reading every node can read: a ping (assetId, ts, lat, lon), a
 * sensor reading (device_id, seq, ts, fill_pct), the same through own
 * `constructor` and `__proto__` keys, and an extra field that is often
 * deep or cyclic while the keys are good, so that it is admitted.
 */
const reading = fc
  .record({
    name: anId,
    seq: orJunk(fc.nat({ max: 50 })),
    ts: time,
    lat: coordinate(90),
    lon: coordinate(180),
    level,
    extra: fc.option(junk, { freq: 2 }),
  })
  .map(({ name, seq, ts, lat, lon, level: fill, extra }) =>
    own({
      assetId: name, device_id: name, seq, ts, lat, lon, fill_pct: fill,
      constructor: name,
      ['__proto__']: own({ ts, level: fill, id: name }),
      ...(extra === null ? {} : { extra }),
    }),
  );

const payload = fc.oneof(
  { weight: 6, arbitrary: reading },
  // A burst, readings held twice (the same object) among them.
  { weight: 4, arbitrary: fc.array(fc.oneof({ weight: 5, arbitrary: reading }, { weight: 2, arbitrary: fc.nat().map((i) => new Twice(i)) }, { weight: 1, arbitrary: junk }), { minLength: 1, maxLength: 12 }) },
  { weight: 1, arbitrary: junk },
);

/**
 * Now and then, one heavy value in a message (copying a value thousands of
 * levels deep takes Node-RED tens of milliseconds, and each node copies it
 * several times): as the extra field of its first reading (then admitted,
 * and in a burst often held twice), as its ids, its topic, or its payload.
 */
const heavy = fc.record({
  where: fc.constantFrom('extra', 'extra', 'extra', 'id', 'topic', 'payload'),
  value: fc.oneof({ weight: 6, arbitrary: deep }, { weight: 1, arbitrary: huge }, { weight: 1, arbitrary: cyclic }),
});

const message = fc
  .record({
    payload,
    topic: fc.option(oddString, { freq: 4 }),
    heavy: fc.oneof({ weight: HEAVY_ONE_IN - 1, arbitrary: fc.constant(null) }, { weight: 1, arbitrary: heavy }),
  })
  .map(({ payload: p, topic, heavy: h }) => {
    const msg: Record<string, unknown> = { payload: p };
    if (topic !== null) msg.topic = topic;
    if (h === null) return msg;
    if (h.where === 'topic') msg.topic = h.value;
    else if (h.where === 'payload') msg.payload = h.value;
    else {
      const first = Array.isArray(p) ? p.find((r) => isReading(r)) : p;
      if (!isReading(first)) msg.topic = h.value;
      else if (h.where === 'extra') first.extra = h.value;
      else for (const key of ['assetId', 'device_id', 'constructor']) Object.defineProperty(first, key, { value: h.value, enumerable: true, writable: true, configurable: true });
    }
    return msg;
  });

function isReading(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value) && Object.prototype.hasOwnProperty.call(value, 'device_id');
}

/** A message for the confirm node from elsewhere than a sensor node: its msg.dedup made up. */
const claimMessage = (store: StoreKind) =>
  fc.record({
    payload: fc.option(junk, { freq: 2 }),
    dedup: fc.record({
      node: fc.oneof(fc.constant(id(store, 'conf')), oddString),
      token: fc.oneof(fc.nat(), oddNumber),
      keys: fc.oneof(fc.array(fc.oneof(oddString, fc.string()), { maxLength: 3 }), junk),
    }),
  });

// ---------------------------------------------------------------------------

/**
 * Resolves once `count` has not moved for QUIET_TURNS turns of the event
 * loop: Node-RED delivers each message in a turn of its own (setImmediate),
 * so a run's last outputs may come many turns, and any time, after done().
 */
async function quiet(count: () => number): Promise<void> {
  const QUIET_TURNS = 5;
  let last = count();
  for (let still = 0; still < QUIET_TURNS; ) {
    await new Promise((resolve) => setImmediate(resolve));
    await sleep(2);
    const now = count();
    still = now === last ? still + 1 : 0;
    last = now;
  }
}

interface Arrival {
  wire: string;
  msg: Msg;
}

for (const store of ['memory', 'redis'] as const) {
  describe(`fuzz: no message can stop Node-RED, ${store} store`, function () {
    useRedis();
    this.timeout(120_000);
    const crashes: string[] = [];
    const onCrash = (error: unknown): void => {
      crashes.push(error instanceof Error ? (error.stack ?? error.message) : String(error));
    };

    // Something in the test set-up makes every Error capture the whole stack;
    // the test helper makes one per call it spies on. Node's own default here.
    let stackTraceLimit = Error.stackTraceLimit;

    before(async function () {
      stackTraceLimit = Error.stackTraceLimit;
      Error.stackTraceLimit = 10;
      if (store === 'redis') await flushRedis();
      await startServer();
      await helper.load([...packNodes(PACK), ...coreNodes()], flow(store), store === 'redis' ? { [id(store, 'conn')]: {} } : {});
      process.on('uncaughtException', onCrash);
      process.on('unhandledRejection', onCrash);
    });

    after(async function () {
      Error.stackTraceLimit = stackTraceLimit;
      process.removeListener('uncaughtException', onCrash);
      process.removeListener('unhandledRejection', onCrash);
      await helper.unload();
      await stopServer();
    });

    it('the burst that stopped Node-RED: one reading twice, a field 2,500 (and 6,000) levels deep, each output wired to two nodes; and 1 MB ids', async function () {
      const seen: Arrival[] = [];
      for (const name of ['win', 'burst', 'each']) {
        for (const wire of ['1a', '1b', '2a', '2b']) node(`${id(store, name)}-${wire}`).on('input', (msg: Msg) => seen.push({ wire: `${name}-${wire}`, msg }));
      }
      node(id(store, 'caught')).on('input', (msg: Msg) => seen.push({ wire: 'catch', msg }));
      const megabyte = 'x'.repeat(1_048_576);
      for (const depth of [2500, 6000, 0]) {
        seen.length = 0;
        // Depth 0: nothing deep, ids of 1 MB instead.
        const device = depth === 0 ? megabyte : 'bin-A17';
        const reading = { device_id: device, seq: depth, ts: '2026-07-16T09:00:00Z', fill_pct: 62.5, reading: new Deep(depth).build() };
        const ping = { assetId: depth === 0 ? megabyte : `veh-${depth}`, ts: 1_750_000_000, lat: 52.1, lon: 4.3, track: new Deep(depth).build() };
        node(id(store, 'burst')).receive({ _msgid: `burst-${depth}`, payload: [reading, reading] });
        node(id(store, 'each')).receive({ _msgid: `each-${depth}`, payload: [own({ ...reading, constructor: device, ['__proto__']: own({ level: 62.5 }) })].flatMap((r) => [r, r]) });
        node(id(store, 'win')).receive({ _msgid: `win-${depth}`, payload: ping });
        await until(() => seen.filter((a) => a.wire === 'catch' || a.wire.endsWith('b')).length >= 5, `what the three nodes made of ${depth} levels`, 10_000);
        await quiet(() => seen.length);
        assert.deepEqual(crashes, [], 'the runtime crashed');
        const from = (name: string, wire: string): Msg[] => seen.filter((a) => a.wire === `${name}-${wire}`).map((a) => a.msg);
        const caught = (name: string): Msg[] => seen.filter((a) => a.wire === 'catch' && a.msg.error?.source?.id === id(store, name)).map((a) => a.msg);
        for (const name of ['win', 'burst', 'each']) {
          for (const port of ['1', '2']) assert.equal(from(name, `${port}a`).length, from(name, `${port}b`).length, `${name}, ${depth} levels: output ${port}'s two wires`);
        }
        const ways = (name: string): number[] => [from(name, '1a').length, from(name, '2a').length, caught(name).length];
        assert.equal(ways('win').reduce((a, b) => a + b), 1, `the ping of ${depth} levels left once: ${ways('win').join(' + ')}`);
        for (const name of ['burst', 'each']) {
          const audits = [...from(name, '2a'), ...caught(name)].filter((m) => (m.dedup)?.decision === 'audit');
          assert.equal(audits.length, 1, `${name}, ${depth} levels: the audit arrives, on output 2 or at Catch`);
          if (depth === 0) {
            // Ids are at most 512 characters: both readings rejected, each to Catch with the reason, and audited.
            assert.deepEqual(countsOf(audits[0]?.dedup), { received: 2, unique: 0, duplicates_suppressed: 0, rejected: 2 }, `${name}, 1 MB ids`);
            assert.deepEqual(ways(name), [0, 1, 2], `${name}, 1 MB ids: the audit, and each reading at Catch`);
            for (const m of caught(name)) assert.match(m.error?.message ?? '', /1048576 characters long; the limit is 512/);
            continue;
          }
          assert.deepEqual(countsOf(audits[0]?.dedup), { received: 2, unique: 1, duplicates_suppressed: 1, rejected: 0 }, `${name}, ${depth} levels`);
          assert.equal(ways(name).reduce((a, b) => a + b), 2, `${name}, ${depth} levels: the admitted reading and the audit, each once: ${ways(name).join(' + ')}`);
          for (const m of caught(name)) assert.match(m.error?.message ?? '', /not sent on output [12]: Node-RED could not copy the message \(Maximum call stack size exceeded\)/);
        }
        if (depth === 0) assert.match(caught('win')[0]?.error?.message ?? '', /1048576 characters long; the limit is 512/, 'the ping of a 1 MB id, at Catch with the reason');
      }
    });

    it('keeps the runtime up and lets every message out exactly once: in = out1 + out2 + Catch', async function () {
      const arrivals: Arrival[] = [];
      const wires: string[] = [];
      for (const name of [...NAMES, 'confirm']) {
        for (const wire of ['1a', '1b', '2a', '2b']) {
          const helperId = `${id(store, name)}-${wire}`;
          if (helperId === `${id(store, 'conf')}-1a` || (name === 'confirm' && wire.startsWith('2'))) continue;
          wires.push(helperId);
          node(helperId).on('input', (msg: Msg) => arrivals.push({ wire: helperId, msg }));
        }
      }
      node(id(store, 'caught')).on('input', (msg: Msg) => arrivals.push({ wire: 'catch', msg }));
      const dedupIds = NAMES.map((n) => id(store, n));
      const confirmId = id(store, 'confirm');
      const completions = new Map([...dedupIds, confirmId].map((nodeId) => [nodeId, watchCompletions(nodeId)]));
      const tally = { messages: 0, deliveries: 0, out1: 0, out2: 0, caught: 0, standIns: 0, confirmIn: 0 };
      let delivered = 0;
      let direct = 0;
      let run = 0;
      const started = Date.now();
      const faults: string[] = [];
      const sandbox = (helper as unknown as { _sandbox: { resetHistory(): void } })._sandbox;

      try {
        await fc.assert(
          fc.asyncProperty(fc.array(message, { minLength: BATCH, maxLength: BATCH }), fc.array(claimMessage(store), { maxLength: 3 }), async (messages, claims) => {
            run++;
            const t0 = Date.now();
            arrivals.length = 0;
            const sent: { msgid: string; nodeId: string; burst: number | undefined }[] = [];
            messages.forEach((generated, i) => {
              const built = materialise(generated) as Record<string, unknown>;
              for (const nodeId of dedupIds) {
                const msgid = `${run}/${i}/${nodeId}`;
                // Each node its own top-level message; the payload shared, as no node may change it.
                sent.push({ msgid, nodeId, burst: Array.isArray(built.payload) ? built.payload.length : undefined });
                node(nodeId).receive({ ...built, _msgid: msgid });
              }
            });
            claims.forEach((generated, i) => {
              const msgid = `${run}/claim-${i}`;
              sent.push({ msgid, nodeId: confirmId, burst: undefined });
              node(confirmId).receive({ ...(materialise(generated) as Record<string, unknown>), _msgid: msgid });
            });
            delivered += messages.length * dedupIds.length;
            direct += claims.length;
            const doneOf = (nodeId: string): number => completions.get(nodeId)?.total() ?? 0;
            const events = (): number => arrivals.length + [...completions.values()].reduce((n, c) => n + c.total(), 0);
            await until(() => dedupIds.reduce((n, d) => n + doneOf(d), 0) >= delivered, `done() for ${delivered} messages`, 30_000);
            // Outputs and Catch messages travel after done(), from one turn of the event loop to the next.
            await quiet(events);
            // The confirm node hears of what the confirm sensor node admitted, and of the made-up claims.
            const toConfirm = (): number => arrivals.filter((a) => a.wire === `${id(store, 'conf')}-1b`).length;
            await until(() => doneOf(confirmId) >= tally.confirmIn + toConfirm() + direct, 'done() for every message to the confirm node', 30_000);
            await quiet(events);
            assert.deepEqual(crashes, [], 'the runtime crashed');
            tally.confirmIn += toConfirm();

            const byId = new Map<string, Arrival[]>();
            for (const a of arrivals) {
              const key = String(a.msg._msgid);
              const list = byId.get(key);
              if (list) list.push(a);
              else byId.set(key, [a]);
            }
            const on = (list: Arrival[], wire: string): Msg[] => list.filter((a) => a.wire === wire).map((a) => a.msg);
            const caughtFrom = (list: Arrival[], source: string): Msg[] => list.filter((a) => a.wire === 'catch' && a.msg.error?.source?.id === source).map((a) => a.msg);
            const decision = (msg: Msg): unknown => (msg.dedup !== null && typeof msg.dedup === 'object' ? msg.dedup.decision : undefined);

            for (const { msgid, nodeId, burst } of sent) {
              const list = byId.get(msgid) ?? [];
              const what = `${msgid} (${burst === undefined ? 'one message' : `a burst of ${burst}`})`;
              if (nodeId !== confirmId) assert.equal(completions.get(nodeId)?.perMessage.get(msgid), 1, `${what}: done() once`);
              for (const port of ['1', '2']) {
                if (nodeId === id(store, 'conf') && port === '1') continue;
                if (nodeId === confirmId && port === '2') continue;
                const a = on(list, `${nodeId}-${port}a`).length;
                const b = on(list, `${nodeId}-${port}b`).length;
                assert.equal(a, b, `${what}: output ${port} reached ${a} and ${b} messages on its two wires`);
              }
              const out1 = on(list, `${nodeId}-1b`);
              const out2 = nodeId === confirmId ? [] : on(list, `${nodeId}-2a`);
              const caught = caughtFrom(list, nodeId);
              tally.out1 += out1.length;
              tally.out2 += out2.length;
              tally.caught += caught.length;
              tally.standIns += caught.filter((m) => /could not copy/.test(m.error?.message ?? '')).length;
              for (const m of caught) assert.ok((m.error?.message ?? '') !== '', `${what}: a Catch message without its reason`);
              if (nodeId === confirmId || nodeId.endsWith('win') || nodeId.endsWith('winProto') || burst === undefined) {
                assert.equal(out1.length + out2.length + caught.length, 1, `${what} left ${out1.length} + ${out2.length} + ${caught.length} times`);
                continue;
              }
              const audits = [...out2, ...caught].filter((m) => decision(m) === 'audit');
              if (audits.length === 0) {
                // Failed whole (it could not be read): one Catch message, nothing else.
                assert.deepEqual([out1.length, out2.length, caught.length], [0, 0, 1], `${what}: no audit, so one Catch message and nothing else`);
                continue;
              }
              assert.equal(audits.length, 1, `${what}: one audit`);
              const counts = (audits[0] as Msg).dedup as unknown as Counts;
              assert.equal(counts.received, burst, `${what}: received`);
              assert.equal(counts.received, counts.unique + counts.duplicates_suppressed + counts.rejected, `${what}: the audit does not add up`);
              assert.equal(caught.filter((m) => decision(m) === 'rejected').length, counts.rejected, `${what}: one Catch message per rejected reading`);
              const admittedCaught = caught.filter((m) => decision(m) === 'admitted').length;
              if (nodeId.endsWith('burst')) {
                assert.equal(out1.length + admittedCaught, counts.unique > 0 ? 1 : 0, `${what}: one message of the admitted readings`);
                if (out1.length === 1) assert.equal((out1[0]?.payload as unknown[]).length, counts.unique, `${what}: the admitted readings`);
              } else {
                assert.equal(out1.length + admittedCaught, counts.unique, `${what}: one message per admitted reading`);
              }
              assert.equal(out2.length + caught.length, 1 + counts.rejected + admittedCaught, `${what}: nothing else at output 2 or Catch`);
            }
            // What the confirm sensor node admitted, each settled once: on or to Catch.
            for (const [msgid, list] of byId) {
              const inConfirm = on(list, `${id(store, 'conf')}-1b`).length;
              if (inConfirm === 0) continue;
              assert.equal(completions.get(confirmId)?.perMessage.get(msgid), inConfirm, `${msgid}: done() once per message the confirm node got`);
              assert.equal(on(list, `${confirmId}-1a`).length, on(list, `${confirmId}-1b`).length, `${msgid}: the confirm node's two wires`);
              const out = on(list, `${confirmId}-1b`).length + caughtFrom(list, confirmId).length;
              assert.equal(out, inConfirm, `${msgid}: the confirm node got ${inConfirm} and let ${out} out`);
              tally.out1 += on(list, `${confirmId}-1b`).length;
              tally.caught += caughtFrom(list, confirmId).length;
            }
            if (process.env.FUZZ_TRACE) console.log('run', run, Date.now() - t0, 'ms');
            // The test helper's spies keep every call (and a stack trace of it): checked here, then dropped, or
            // 5,000 messages' worth of them slows every later run.
            const logged = helper.log().args.map(([record]) => String(record?.msg));
            faults.push(...logged.filter((text) => /failed while finishing|could not reach a Catch node|reached only the first wire/.test(text)));
            sandbox.resetHistory();
            tally.messages += messages.length;
            tally.deliveries += messages.length * dedupIds.length + claims.length;
          }),
          { numRuns: Number(process.env.FUZZ_RUNS ?? 5000 / BATCH), seed: Number(process.env.FUZZ_SEED ?? 20261201), endOnFailure: true },
        );
      } finally {
        for (const c of completions.values()) c.dispose();
      }
      const seconds = (Date.now() - started) / 1000;
      assert.deepEqual(crashes, [], 'the runtime crashed');
      // A fault of the pack, not of a message, would show here.
      assert.deepEqual(faults, [], 'errors of the pack itself');
      assert.ok(tally.standIns > 0, 'some messages could not be copied: the fuzzing reached the limit');
      assert.ok(tally.messages >= 5000, `${tally.messages} messages`);
      console.log(
        `      ${tally.messages} messages x ${dedupIds.length} dedup nodes, ${tally.confirmIn + direct} to the confirm node, in ${seconds.toFixed(1)} s: ` +
          `${tally.out1} on output 1, ${tally.out2} on output 2, ${tally.caught} at Catch (${tally.standIns} not copyable)`,
      );
    });
  });
}
