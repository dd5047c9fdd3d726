/**
 * Both dedup nodes on a real 3-primary Redis Cluster: the same decisions as
 * the memory store, message for message, with the keys spread over every
 * primary (so the per-slot batching and the hash tags are really exercised),
 * ids that contain braces, colons and emoji, bursts mixing devices that live
 * in different slots, and an empty script cache on every primary mid-stream.
 */
import assert from 'node:assert/strict';
import { createHash } from 'crypto';
import { scriptSource } from '../../src/redis/scripts';
import { runtimeWithRedis } from '../support/live-stream';
import { collect, loadPackFlow, node, until, watchCompletions, type FlowNode, type Msg } from '../support/node-red-helper';
import { startRedisCluster } from '../support/redis-cluster';
import { freePort } from '../support/redis-server';
import { redisKeySlot } from '../support/redis-slot';
import { burstStream, pingStream, type BurstCase, type PingCase, type RawReading } from './streams';

const PREFIX = 'cl-test:';
const STORES = ['redis', 'memory'] as const;

function flow(seedList: string): FlowNode[] {
  const nodes: FlowNode[] = [
    { id: 'cl-tab', type: 'tab' },
    { id: 'cl-conn', type: 'dedup-redis', mode: 'cluster', clusterNodes: seedList, keyPrefix: PREFIX, timeoutMs: '5000' },
  ];
  for (const store of STORES) {
    nodes.push(
      {
        id: `win-${store}`, type: 'sliding-window-dedup', z: 'cl-tab', store, redis: store === 'redis' ? 'cl-conn' : '',
        minSeconds: '60', minMetres: '25', ttlSeconds: '3600', onStoreError: 'error',
        wires: [[`win-${store}-out`], [`win-${store}-out`]],
      },
      { id: `win-${store}-out`, type: 'helper', z: 'cl-tab' },
      {
        id: `sensor-${store}`, type: 'sensor-reconnect-dedup', z: 'cl-tab', store, redis: store === 'redis' ? 'cl-conn' : '',
        ttlSeconds: '3600', onStoreError: 'error', wires: [[`sensor-${store}-out`], [`sensor-${store}-out`]],
      },
      { id: `sensor-${store}-out`, type: 'helper', z: 'cl-tab' },
    );
  }
  nodes.push(
    { id: 'cl-catch', type: 'catch', z: 'cl-tab', scope: null, uncaught: false, wires: [['cl-caught']] },
    { id: 'cl-caught', type: 'helper', z: 'cl-tab' },
  );
  return nodes;
}

function scriptSha(name: Parameters<typeof scriptSource>[0]): string {
  return createHash('sha1').update(scriptSource(name)).digest('hex');
}

/** Three devices' bursts as one message: one burst, several slots. */
function mixedBursts(bursts: BurstCase[]): { msgid: string; payload: RawReading[] }[] {
  const out: { msgid: string; payload: RawReading[] }[] = [];
  for (let i = 0; i < bursts.length; i += 3) {
    out.push({ msgid: `mixed-${i}`, payload: bursts.slice(i, i + 3).flatMap((b) => b.payload) });
  }
  return out;
}

interface Outcomes {
  /** _msgid -> what each store's node made of it. */
  byStore: Record<(typeof STORES)[number], Map<string, string[]>>;
}

describe('scale: Redis Cluster (3 primaries)', function () {
  this.timeout(120_000);
  const cluster = runtimeWithRedis('the Redis Cluster tests', () => startRedisCluster(3));

  /** Sends every message to both stores' node and waits for every done(). */
  async function run(pings: PingCase[], bursts: { msgid: string; payload: RawReading[] }[]): Promise<Outcomes> {
    const completions = STORES.flatMap((store) => [watchCompletions(`win-${store}`), watchCompletions(`sensor-${store}`)]);
    const received: Record<string, Msg[]> = {};
    for (const store of STORES) {
      received[`win-${store}`] = collect(`win-${store}-out`);
      received[`sensor-${store}`] = collect(`sensor-${store}-out`);
    }
    const caught = collect('cl-caught');
    try {
      for (const store of STORES) {
        for (const p of pings) node(`win-${store}`).receive({ _msgid: p.msgid, payload: { ...p.payload } });
        for (const b of bursts) node(`sensor-${store}`).receive({ _msgid: b.msgid, payload: structuredClone(b.payload) });
      }
      const expected = 2 * (pings.length + bursts.length);
      await until(() => completions.reduce((sum, c) => sum + c.total(), 0) >= expected, 'every message done', 60_000);
      assert.ok(completions.every((c) => [...c.perMessage.values()].every((n) => n === 1)), 'done() once per message');
    } finally {
      for (const c of completions) c.dispose();
    }
    await until(
      () => STORES.every((s) => (received[`win-${s}`]?.length ?? 0) >= pings.length),
      'every ping decision to arrive',
    );
    assert.deepEqual(
      caught.filter((m) => !/fill_pct = 150/.test(m.error?.message ?? '')).map((m) => m.error?.message),
      [],
      'no error other than the unreadable readings',
    );
    const outcomes: Outcomes = { byStore: { redis: new Map(), memory: new Map() } };
    for (const store of STORES) {
      const map = outcomes.byStore[store];
      for (const m of received[`win-${store}`] ?? []) map.set(String(m._msgid), [String(m.dedup?.decision), String(m.dedup?.reason)]);
      for (const m of received[`sensor-${store}`] ?? []) {
        const entry = map.get(String(m._msgid)) ?? [];
        const d = m.dedup ?? {};
        entry.push(
          d.decision === 'audit'
            ? `audit ${String(d.received)}/${String(d.unique)}/${String(d.duplicates_suppressed)}/${String(d.rejected)}`
            : `admitted ${(d.keys as string[]).join(',')}`,
        );
        map.set(String(m._msgid), entry.sort());
      }
    }
    return outcomes;
  }

  it('decides as the memory store does, message for message, with keys on every primary', async function () {
    const c = cluster();
    // A dead seed first: the client must find the cluster through the others.
    const seeds = `127.0.0.1:${await freePort()}, ${c.seedList}`;
    await loadPackFlow(flow(seeds), { 'cl-conn': {} });

    const pings = [
      ...pingStream({ assets: 200, steps: 8, stepsPerVisit: 4, seed: 11 }),
      ...pingStream({ assets: 30, steps: 8, stepsPerVisit: 4, seed: 12, idPrefix: 'b{u}s:🚌}-' }).map((p) => ({ ...p, msgid: `odd-${p.msgid}` })),
    ];
    const sensor = burstStream({ devices: 60, rounds: 4, seed: 13, idPrefix: 'bin:{A}-' });
    const bursts = mixedBursts(sensor.bursts);

    const firstHalf = await run(pings.slice(0, pings.length / 2), bursts.slice(0, bursts.length / 2));
    // Every primary forgets its scripts; the nodes must reload them unaided.
    const shas = [scriptSha('dedupSlidingWindow'), scriptSha('dedupSeenSet')];
    await Promise.all(c.admins.map((admin) => admin.script('FLUSH')));
    for (const admin of c.admins) assert.deepEqual(await admin.script('EXISTS', ...shas), [0, 0]);
    const secondHalf = await run(pings.slice(pings.length / 2), bursts.slice(bursts.length / 2));
    for (const admin of c.admins) assert.deepEqual(await admin.script('EXISTS', ...shas), [1, 1], 'scripts reloaded on every primary');

    for (const outcome of [firstHalf, secondHalf]) {
      assert.deepEqual([...outcome.byStore.redis].sort(), [...outcome.byStore.memory].sort(), 'Cluster and memory disagree');
    }
    // And both agree with how the stream was built.
    const decided = new Map([...firstHalf.byStore.redis, ...secondHalf.byStore.redis]);
    for (const p of pings) assert.equal(decided.get(p.msgid)?.[0], p.admit ? 'admitted' : 'suppressed', `${p.msgid} (${p.kind})`);

    // Keys landed on all three primaries, each in a slot that primary serves,
    // and nothing outside the prefix.
    const perPrimary: number[] = [];
    for (const admin of c.admins) {
      const keys: string[] = [];
      for await (const batch of admin.scanStream({ count: 1000 })) keys.push(...(batch as string[]));
      perPrimary.push(keys.length);
      const owned = ((await admin.call('CLUSTER', 'SLOTS')) as [number, number, [string, number]][]).filter(
        ([, , [, port]]) => port === Number(admin.options.port),
      );
      for (const key of keys) {
        assert.ok(key.startsWith(PREFIX), `key outside the prefix: ${key}`);
        const slot = redisKeySlot(key);
        assert.ok(owned.some(([from, to]) => slot >= from && slot <= to), `${key} is not in a slot of its node`);
      }
    }
    assert.ok(perPrimary.every((n) => n > 0), `keys per primary: ${perPrimary.join(', ')}`);
    console.log(`      keys per primary: ${perPrimary.join(' / ')}`);
  });
});
