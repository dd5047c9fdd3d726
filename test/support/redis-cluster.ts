/**
 * A real Redis Cluster on loopback: three primaries started with
 * `--cluster-enabled yes`, joined and given the 16384 slots by
 * `redis-cli --cluster create`, as an operator would build one.
 *
 * Each node gets its cluster bus port explicitly (`--cluster-port`), because
 * the default, port + 10000, does not exist for ports above 55535, and the
 * free ports handed out by the kernel are often up there.
 */
import { spawn } from 'child_process';
import type Redis from 'ioredis';
import { HOST, ManagedRedis } from './redis-server';
import { adminClient, redisCliAvailable, waitFor } from './redis-sentinel';

export interface RedisClusterHandle {
  readonly primaries: readonly ManagedRedis[];
  /** `host:port, host:port, ...`: the seed list the editor takes. */
  readonly seedList: string;
  /** One admin client per primary (closed by stop()). */
  readonly admins: readonly Redis[];
  stop(): Promise<void>;
}

export function runRedisCli(args: readonly string[], timeoutMs: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.env.REDIS_CLI_BIN ?? 'redis-cli', [...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.once('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      if (code === 0) resolve(output);
      else reject(new Error(`redis-cli ${args.join(' ')} failed (${code ?? signal}):\n${output}`));
    });
  });
}

/** `extraArgs` go on every primary's command line (e.g. a `--rename-command`). */
export async function startRedisCluster(primaryCount = 3, extraArgs: readonly string[] = []): Promise<RedisClusterHandle> {
  if (!redisCliAvailable()) {
    throw new Error('redis-server is installed but redis-cli is not: install redis-tools (Debian) to build the test cluster');
  }
  const primaries: ManagedRedis[] = [];
  const admins: Redis[] = [];
  const stop = async (): Promise<void> => {
    for (const admin of admins.splice(0)) admin.disconnect();
    await Promise.all(primaries.map((server) => server.stop()));
  };
  try {
    for (let i = 0; i < primaryCount; i++) {
      primaries.push(
        await ManagedRedis.start({
          extraPorts: 1,
          args: [
            '--cluster-enabled', 'yes',
            '--cluster-config-file', 'nodes.conf',
            '--cluster-port', '__PORT1__',
            '--cluster-node-timeout', '3000',
            // The tests check every key; a partial cluster must not answer some of them.
            '--cluster-require-full-coverage', 'yes',
            ...extraArgs,
          ],
        }),
      );
    }
    await runRedisCli(['--cluster', 'create', ...primaries.map((p) => p.address), '--cluster-replicas', '0', '--cluster-yes'], 30_000);
    for (const primary of primaries) admins.push(adminClient(primary.port));
    // `create` returns once the slots are assigned; each node must also have
    // heard of the others before a client's first CLUSTER SLOTS is reliable.
    for (const admin of admins) {
      await waitFor(
        async () => {
          const info = (await admin.call('CLUSTER', 'INFO')) as string;
          return info.includes('cluster_state:ok') && info.includes(`cluster_known_nodes:${primaryCount}`);
        },
        'every cluster node to report cluster_state:ok',
        15_000,
      );
    }
    return {
      primaries,
      seedList: primaries.map((p) => `${HOST}:${p.port}`).join(', '),
      admins,
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}
