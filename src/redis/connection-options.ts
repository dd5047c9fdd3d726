/**
 * What a dedup-redis config node says about its server, and how that maps to
 * ioredis. Pure, so the mapping is tested without a server; adding a mode is
 * one more branch here and one more field group in the editor.
 */
import type { ClusterOptions, RedisOptions } from 'ioredis';

export type RedisMode = 'standalone' | 'sentinel' | 'cluster';

export interface RedisConnectionSettings {
  mode: RedisMode;
  /** `redis://` or `rediss://`; when set (standalone), it wins over host/port/db/tls. */
  url: string;
  host: string;
  port: number;
  db: number;
  tls: boolean;
  username: string;
  password: string;
  /** Sentinel: `host:port` list, comma or space separated. */
  sentinels: string;
  masterName: string;
  sentinelPassword: string;
  /** Cluster: seed nodes, `host:port` list. */
  clusterNodes: string;
  /** Prepended to every key this pack writes, e.g. `dedup:`. */
  keyPrefix: string;
  /** Longest a decision may wait on Redis before the node's failure policy applies. */
  timeoutMs: number;
  /** How long, at most, a quiet turn's script calls wait to gather the next turns' (redis/linger); 0 or absent: not at all. */
  lingerMs?: number;
}

export interface HostPort {
  host: string;
  port: number;
}

export function parseHostList(text: string, defaultPort: number): HostPort[] {
  return text
    .split(/[\s,]+/)
    .filter((part) => part.length > 0)
    .map((part) => {
      // [::1]:6379, ::1 (no port), host:port, host
      const bracketed = /^\[([^\]]+)\](?::(\d+))?$/.exec(part);
      if (bracketed) return { host: bracketed[1] as string, port: portOf(bracketed[2], defaultPort, part) };
      const colon = part.lastIndexOf(':');
      if (colon > 0 && part.indexOf(':') === colon) {
        return { host: part.slice(0, colon), port: portOf(part.slice(colon + 1), defaultPort, part) };
      }
      return { host: part, port: defaultPort };
    });
}

function portOf(text: string | undefined, fallback: number, whole: string): number {
  if (text === undefined || text === '') return fallback;
  const port = Number(text);
  if (!Number.isInteger(port) || port < 1 || port > 65535) throw new Error(`invalid port in "${whole}"`);
  return port;
}

/** Retry forever with a capped back-off: a dedup node should outlive an outage. */
const reconnectDelay = (attempt: number): number => Math.min(100 * 2 ** Math.min(attempt, 5), 2000);

/**
 * Every option the pack's behaviour rests on is set here, not left to the
 * installed ioredis major's defaults (5 and 6 differ: 6 speaks RESP3,
 * reconnects on another back-off, keeps TCP alive): test/redis/client-options
 * checks what a client made from these options really has, on both majors.
 */
function commonOptions(s: RedisConnectionSettings): RedisOptions {
  return {
    connectionName: 'node-red-dedup',
    // RESP2 on both majors. The scripts' replies (a binary string, an array
    // of integers) read the same in RESP3, but RESP3 buys the pack nothing
    // (no push messages, no client-side caching) and costs a HELLO on every
    // connect, which some proxies reject: one wire protocol, the one tested.
    protocol: 2,
    // Fail a command after one reconnect attempt instead of twenty, so that
    // the node's failure policy (admit or error) applies soon. No
    // commandTimeout: its clock would start while a command still waits
    // behind others on the socket; the stores' batcher keeps the give-up
    // clock itself, from the moment a call is sent (src/redis/tick-batcher).
    maxRetriesPerRequest: 1,
    // A call made while (re)connecting waits for the connection, under the
    // batcher's clock; one in flight when a connection drops is sent again
    // (each call carries a token, so a second run changes nothing).
    enableOfflineQueue: true,
    autoResendUnfulfilledCommands: true,
    enableReadyCheck: true,
    // A peer gone without a word (a NAT or firewall dropping the flow) is
    // noticed by TCP rather than by the first call that waits on it.
    keepAlive: 30_000,
    connectTimeout: Math.max(s.timeoutMs, 1000),
    retryStrategy: reconnectDelay,
    ...(s.username ? { username: s.username } : {}),
    ...(s.password ? { password: s.password } : {}),
    ...(s.tls ? { tls: {} } : {}),
  };
}

export type ClientPlan =
  | { kind: 'standalone'; url?: string; options: RedisOptions }
  | { kind: 'cluster'; nodes: HostPort[]; options: ClusterOptions };

export function planClient(s: RedisConnectionSettings): ClientPlan {
  const common = commonOptions(s);
  switch (s.mode) {
    case 'standalone':
      if (s.url.trim() !== '') {
        if (!/^rediss?:\/\//.test(s.url.trim())) throw new Error('the URL must start with redis:// or rediss://');
        return { kind: 'standalone', url: s.url.trim(), options: common };
      }
      return { kind: 'standalone', options: { ...common, host: s.host || '127.0.0.1', port: s.port || 6379, db: s.db } };
    case 'sentinel': {
      const sentinels = parseHostList(s.sentinels, 26379);
      if (sentinels.length === 0) throw new Error('sentinel mode needs at least one sentinel address');
      if (!s.masterName) throw new Error('sentinel mode needs the master name');
      return {
        kind: 'standalone',
        options: {
          ...common,
          sentinels,
          name: s.masterName,
          db: s.db,
          ...(s.sentinelPassword ? { sentinelPassword: s.sentinelPassword } : {}),
          sentinelRetryStrategy: reconnectDelay,
        },
      };
    }
    case 'cluster': {
      const nodes = parseHostList(s.clusterNodes, 6379);
      if (nodes.length === 0) throw new Error('cluster mode needs at least one seed node');
      const { retryStrategy: _unusedInCluster, ...redisOptions } = common;
      return {
        kind: 'cluster',
        nodes,
        options: {
          redisOptions,
          clusterRetryStrategy: reconnectDelay,
          enableOfflineQueue: true,
          enableReadyCheck: true,
          // One bad seed must not stop the client from finding the others.
          slotsRefreshTimeout: Math.max(s.timeoutMs, 1000),
        },
      };
    }
    default:
      throw new Error(`unknown Redis mode "${String(s.mode)}"`);
  }
}
