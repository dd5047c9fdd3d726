/**
 * Slots moving while traffic flows (issue 21): a bucket's slot migrated key
 * by key from one primary to another, as `redis-cli --cluster reshard` does
 * it, while the window and seen stores decide on a real 3-primary Cluster.
 * Mid-migration a call meets ASK (its keys already moved) or TRYAGAIN (some
 * moved, some not), after it MOVED. Every decision must come back exactly
 * once, without an error, and equal the memory store's, message for
 * message; and the primaries must have answered with redirections (so the
 * test did meet them).
 */
import assert from 'node:assert/strict';
import { Cluster } from 'ioredis';
import { planClient } from '../../src/redis/connection-options';
import { bucketOf, bucketSlot } from '../../src/redis/key-names';
import { defineDedupScripts } from '../../src/redis/scripts';
import { MemorySeenStore } from '../../src/stores/memory-seen-store';
import { MemoryWindowStore } from '../../src/stores/memory-window-store';
import { RedisSeenStore } from '../../src/stores/redis-seen-store';
import { RedisWindowStore } from '../../src/stores/redis-window-store';
import type { Ping } from '../../src/core/window/sliding-window';
import { claimNames, newToken, reading } from '../contract/seen-store.contract';
import { north, ping } from '../contract/window-store.contract';
import { claim, decide } from '../support/ask';
import { startRedisCluster, type RedisClusterHandle } from '../support/redis-cluster';
import { redisServerAvailable } from '../support/redis-server';

const WINDOW = { minSeconds: 60, minMetres: 25, ttlSeconds: 3600 };
const SEEN = { ttlSeconds: 3600, confirm: false, leaseSeconds: 60 };
const ASSETS = 240;
const ROUNDS = 40;

/** Round r of asset a: every 20 s, moving 30 m every third round: window, elapsed and moved decisions mixed. */
function pingOf(asset: number, round: number): Ping {
  return ping(`veh-${asset}`, round * 20, north(30 * Math.floor(round / 3)));
}

interface NodeInfo {
  id: string;
  host: string;
  port: number;
  slots: [number, number][];
}

async function clusterNodes(admin: RedisClusterHandle['admins'][number]): Promise<NodeInfo[]> {
  const text = (await admin.call('CLUSTER', 'NODES')) as string;
  return text.trim().split('\n').map((line) => {
    const [id, address, , , , , , , ...ranges] = line.split(' ');
    const [host, ports] = (address as string).split('@')[0]?.split(':') as [string, string];
    return {
      id: id as string,
      host,
      port: Number(ports),
      slots: ranges.filter((r) => /^\d/.test(r)).map((r) => {
        const [from, to] = r.split('-').map(Number);
        return [from as number, to ?? (from as number)];
      }),
    };
  });
}

async function redirections(cluster: RedisClusterHandle): Promise<number> {
  let total = 0;
  for (const admin of cluster.admins) {
    const info = (await admin.info('errorstats'));
    for (const m of info.matchAll(/errorstat_(MOVED|ASK|TRYAGAIN):count=(\d+)/g)) total += Number(m[2]);
  }
  return total;
}

describe('scale: Redis Cluster resharding during traffic', function () {
  this.timeout(120_000);
  let cluster: RedisClusterHandle | undefined;
  let client: Cluster | undefined;

  before(async function () {
    if (!redisServerAvailable()) this.skip();
    cluster = await startRedisCluster(3);
  });

  after(async () => {
    client?.disconnect();
    await cluster?.stop();
  });

  it('decides every ping and reading once, as the memory store does, while two buckets\' slots move', async () => {
    const c = cluster as RedisClusterHandle;
    const plan = planClient({
      mode: 'cluster', url: '', host: '', port: 0, db: 0, tls: false, username: '', password: '',
      sentinels: '', masterName: '', sentinelPassword: '', clusterNodes: c.seedList, keyPrefix: 'rs:', timeoutMs: 5000,
    });
    assert.equal(plan.kind, 'cluster');
    if (plan.kind !== 'cluster') return;
    client = new Cluster(plan.nodes, plan.options);
    defineDedupScripts(client);
    const options = { keyPrefix: 'rs:', cluster: true, timeoutMs: 5000 };
    const windows = new RedisWindowStore(client, WINDOW, options);
    const seen = new RedisSeenStore(client, SEEN, options);
    const memoryWindows = new MemoryWindowStore({ ...WINDOW, maxAssets: 10_000 });
    const memorySeen = new MemorySeenStore({ ...SEEN, maxKeys: 100_000, keyMode: 'reading' });
    const redirectedBefore = await redirections(c);

    // The buckets of veh-0 and of bin-0: both have traffic throughout.
    const moving = [...new Set([bucketSlot(bucketOf('veh-0')), bucketSlot(bucketOf('bin-0'))])];
    let rounds = 0;
    const got: string[] = [];
    const want: string[] = [];
    const traffic = (async () => {
      for (let round = 0; round < ROUNDS; round++) {
        const pings = Array.from({ length: ASSETS }, (_, a) => pingOf(a, round));
        // A turn's pings and claims in one go, so calls carry many of them.
        const decided = Promise.all(pings.map((p) => decide(windows, p)));
        const claims = Array.from({ length: ASSETS / 4 }, (_, d) => {
          const readings = [reading(round, 10 + d, 0, `bin-${d}`), reading(round - 1, 10 + d, 0, `bin-${d}`)];
          return claim(seen, { claims: readings, token: newToken() });
        });
        const outcomes = await decided;
        const claimed = await Promise.all(claims);
        for (let a = 0; a < ASSETS; a++) {
          got.push(`${round} veh-${a} ${outcomes[a]?.reason}`);
          want.push(`${round} veh-${a} ${(await decide(memoryWindows, pings[a] as Ping)).reason}`);
        }
        for (let d = 0; d < ASSETS / 4; d++) {
          got.push(`${round} bin-${d} ${claimNames(claimed[d] ?? []).join(',')}`);
          const readings = [reading(round, 10 + d, 0, `bin-${d}`), reading(round - 1, 10 + d, 0, `bin-${d}`)];
          want.push(`${round} bin-${d} ${claimNames(await claim(memorySeen, { claims: readings, token: newToken() })).join(',')}`);
        }
        rounds++;
      }
    })();

    // Move each slot key by key, a few keys at a time with traffic between,
    // from its primary to the next one.
    const roundsAtStart = await new Promise<number>((resolve) => setTimeout(() => resolve(rounds), 50));
    const admins = c.admins;
    const nodes = await clusterNodes(admins[0] as NonNullable<(typeof admins)[number]>);
    const primaries = nodes.filter((n) => n.slots.length > 0);
    const adminOf = (node: NodeInfo) => admins.find((a) => Number(a.options.port) === node.port) as NonNullable<(typeof admins)[number]>;
    let movedKeys = 0;
    for (const slot of moving) {
      const from = primaries.find((n) => n.slots.some(([lo, hi]) => slot >= lo && slot <= hi)) as NodeInfo;
      const to = primaries[(primaries.indexOf(from) + 1) % primaries.length] as NodeInfo;
      await adminOf(to).call('CLUSTER', 'SETSLOT', slot, 'IMPORTING', from.id);
      await adminOf(from).call('CLUSTER', 'SETSLOT', slot, 'MIGRATING', to.id);
      for (;;) {
        const keys = (await adminOf(from).call('CLUSTER', 'GETKEYSINSLOT', slot, 5)) as string[];
        if (keys.length === 0) break;
        await adminOf(from).call('MIGRATE', to.host, to.port, '', 0, 5000, 'KEYS', ...keys);
        movedKeys += keys.length;
        await new Promise((resolve) => setTimeout(resolve, 2));
      }
      for (const node of primaries) await adminOf(node).call('CLUSTER', 'SETSLOT', slot, 'NODE', to.id);
    }
    const roundsAtEnd = rounds;
    await traffic;

    assert.ok(movedKeys > 0, 'the slots held keys');
    assert.ok(roundsAtEnd > roundsAtStart, `traffic flowed while the slots moved (rounds ${roundsAtStart} to ${roundsAtEnd})`);
    assert.ok(roundsAtEnd < ROUNDS, 'and went on after');
    assert.ok((await redirections(c)) > redirectedBefore, 'the primaries answered calls with MOVED, ASK or TRYAGAIN');
    assert.equal(got.length, want.length);
    assert.deepEqual(got, want, 'the Cluster and the memory store decided alike');
    console.log(`      ${movedKeys} keys moved in ${moving.length} slots; ${(await redirections(c)) - redirectedBefore} redirections answered`);
  });
});
