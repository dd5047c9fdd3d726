/**
 * A Redis Cluster with a replica behind each primary, built as an operator
 * builds one (`redis-cli --cluster create ... --cluster-replicas 1`), and
 * the operations the system test does to it while traffic flows: a manual
 * failover of one primary to its replica (CLUSTER FAILOVER on the replica,
 * which waits until the replica has caught up, so no acknowledged write is
 * lost), moving slots with `redis-cli --cluster reshard`, and CLIENT PAUSE
 * on every primary.
 */
import type Redis from 'ioredis';
import { runRedisCli } from './redis-cluster';
import { adminClient, redisCliAvailable, waitFor } from './redis-sentinel';
import { HOST, ManagedRedis } from './redis-server';

interface ClusterNode {
  id: string;
  port: number;
  primary: boolean;
  /** For a replica: the id of its primary. */
  of: string;
  slots: number;
}

export interface ReplicatedCluster {
  readonly servers: readonly ManagedRedis[];
  /** `host:port, ...` of every server: the seed list the editor takes. */
  readonly seedList: string;
  /** The current topology, as CLUSTER NODES tells it. */
  nodes(): Promise<ClusterNode[]>;
  /** Fails the n-th primary (in port order at creation) over to its replica; says what happened. */
  failover(n: number): Promise<string>;
  /** Moves `slots` slots from the primary holding most to the one holding fewest; says what happened. */
  reshard(slots: number): Promise<string>;
  /** CPU seconds (INFO cpu) of every server, primaries and replicas. */
  cpuSeconds(): Promise<number>;
  /** CLIENT PAUSE <ms> ALL on every primary. */
  pauseAll(ms: number): Promise<void>;
  stop(): Promise<void>;
}

function parseNodes(text: string): ClusterNode[] {
  const nodes: ClusterNode[] = [];
  for (const line of text.trim().split('\n')) {
    const [id, address, flags, of, , , , , ...slots] = line.trim().split(' ');
    if (id === undefined || address === undefined || flags === undefined) continue;
    const port = Number(address.split('@')[0]?.split(':')[1]);
    let count = 0;
    for (const range of slots) {
      if (range.startsWith('[')) continue;
      const [a, b] = range.split('-').map(Number);
      count += b === undefined ? 1 : b - (a as number) + 1;
    }
    nodes.push({ id, port, primary: flags.includes('master'), of: of ?? '-', slots: count });
  }
  return nodes;
}

export async function startReplicatedCluster(primaryCount = 3): Promise<ReplicatedCluster> {
  if (!redisCliAvailable()) throw new Error('redis-cli is needed to build the test cluster: install redis-tools (Debian)');
  const servers: ManagedRedis[] = [];
  const admins = new Map<number, Redis>();
  const stop = async (): Promise<void> => {
    for (const admin of admins.values()) admin.disconnect();
    admins.clear();
    await Promise.all(servers.map((server) => server.stop()));
  };
  try {
    for (let i = 0; i < primaryCount * 2; i++) {
      servers.push(
        await ManagedRedis.start({
          extraPorts: 1,
          args: ['--cluster-enabled', 'yes', '--cluster-config-file', 'nodes.conf', '--cluster-port', '__PORT1__', '--cluster-node-timeout', '3000'],
        }),
      );
    }
    // The first `primaryCount` addresses become primaries, the rest their replicas.
    await runRedisCli(['--cluster', 'create', ...servers.map((s) => s.address), '--cluster-replicas', '1', '--cluster-yes'], 60_000);
    for (const server of servers) admins.set(server.port, adminClient(server.port));
    const admin = (port: number): Redis => {
      const client = admins.get(port);
      if (client === undefined) throw new Error(`no server on ${port}`);
      return client;
    };
    const nodes = async (port = servers[0]?.port as number): Promise<ClusterNode[]> => parseNodes((await admin(port).call('CLUSTER', 'NODES')) as string);
    for (const server of servers) {
      await waitFor(
        async () => {
          const info = (await admin(server.port).call('CLUSTER', 'INFO')) as string;
          const replication = (await admin(server.port).info('replication')) as string;
          return info.includes('cluster_state:ok') && info.includes(`cluster_known_nodes:${servers.length}`) && (replication.includes('role:master') || replication.includes('master_link_status:up'));
        },
        'every cluster node to report cluster_state:ok and every replica its link up',
        30_000,
      );
    }
    const firstPrimaries = (await nodes()).filter((n) => n.primary).sort((a, b) => a.port - b.port);
    return {
      servers,
      seedList: servers.map((s) => `${HOST}:${s.port}`).join(', '),
      nodes: () => nodes(),
      async failover(n) {
        const primary = firstPrimaries[n];
        if (primary === undefined) throw new Error(`no primary ${n}`);
        const replica = (await nodes()).find((node) => !node.primary && node.of === primary.id);
        if (replica === undefined) throw new Error(`primary :${primary.port} has no replica`);
        await admin(replica.port).call('CLUSTER', 'FAILOVER');
        await waitFor(
          async () => {
            const view = await nodes(replica.port);
            return view.find((node) => node.id === replica.id)?.primary === true && view.find((node) => node.id === primary.id)?.primary === false;
          },
          `replica :${replica.port} to take over from :${primary.port}`,
          20_000,
        );
        return `:${replica.port} took over from :${primary.port}`;
      },
      async reshard(slots) {
        const primaries = (await nodes()).filter((node) => node.primary).sort((a, b) => b.slots - a.slots);
        const from = primaries[0];
        const to = primaries[primaries.length - 1];
        if (from === undefined || to === undefined || from.id === to.id) throw new Error('no two primaries to move slots between');
        await runRedisCli(
          ['--cluster', 'reshard', `${HOST}:${from.port}`, '--cluster-from', from.id, '--cluster-to', to.id, '--cluster-slots', String(slots), '--cluster-yes', '--cluster-pipeline', '100'],
          300_000,
        );
        return `${slots} slots moved from :${from.port} to :${to.port} (redis-cli --cluster reshard)`;
      },
      async cpuSeconds() {
        let total = 0;
        for (const server of servers) {
          const info = (await admin(server.port).info('cpu')) as string;
          total += Number(/used_cpu_user:([\d.]+)/.exec(info)?.[1] ?? 0) + Number(/used_cpu_sys:([\d.]+)/.exec(info)?.[1] ?? 0);
        }
        return total;
      },
      async pauseAll(ms) {
        const primaries = (await nodes()).filter((node) => node.primary);
        await Promise.all(primaries.map((node) => admin(node.port).call('CLIENT', 'PAUSE', String(ms), 'ALL')));
      },
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}
