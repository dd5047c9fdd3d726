/**
 * The benchmark's own redis-server: loopback, no persistence, a free port.
 * It is started through the tests' helper and then asked for its process
 * id, because the benchmark flushes the server between trials: if another
 * process took the port between freePort() and the bind, the helper's PING
 * would be answered by that other server, and we would flush someone
 * else's data. On a mismatch the start is retried on a new port.
 */
import { spawnSync } from 'child_process';
import Redis from 'ioredis';
import { startRedisServer, type RedisServer } from '../test/support/redis-server';

export interface OwnRedis {
  server: RedisServer;
  port: number;
  version: string;
  stop(): Promise<void>;
}

const ATTEMPTS = 5;

/** Pids of the redis-server processes that are children of this process. */
function childRedisPids(): Set<number> {
  const ps = spawnSync('ps', ['-o', 'pid=,comm=', '--ppid', String(process.pid)], { encoding: 'utf8' });
  const pids = new Set<number>();
  for (const line of ps.stdout.split('\n')) {
    const [pid, comm] = line.trim().split(/\s+/);
    if (comm !== undefined && comm.startsWith('redis-server')) pids.add(Number(pid));
  }
  return pids;
}

export async function startOwnRedis(): Promise<OwnRedis> {
  for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
    const server = await startRedisServer(['--maxmemory-policy', 'noeviction']);
    const client = new Redis({ host: server.host, port: server.port, lazyConnect: true, maxRetriesPerRequest: 1 });
    try {
      await client.connect();
      const info = await client.info('server');
      const pid = Number(/process_id:(\d+)/.exec(info)?.[1]);
      const version = /redis_version:([^\r\n]+)/.exec(info)?.[1] ?? '?';
      if (childRedisPids().has(pid)) {
        return { server, port: server.port, version, stop: () => server.stop() };
      }
    } finally {
      client.disconnect();
    }
    // Someone else's server answered on this port: leave it alone, try again.
    await server.stop();
  }
  throw new Error(`could not start a redis-server of our own in ${ATTEMPTS} attempts`);
}
