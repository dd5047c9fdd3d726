/**
 * A Sentinel-managed primary + replica + 3 sentinels, and the admin helpers
 * the scale and fault tests share (redis-cluster.ts builds on them too).
 * The processes themselves are redis-server.ts's ManagedRedis: bound to
 * 127.0.0.1, without persistence, each in its own temporary directory, and
 * killed (the directory removed) when the test process exits, however it
 * exits.
 */
import { spawnSync } from 'child_process';
import Redis from 'ioredis';
import { HOST, ManagedRedis } from './redis-server';

const delay = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** A client for set-up and checks, not one under test; errors are expected and ignored. */
export function adminClient(port: number, password?: string): Redis {
  const client = new Redis({
    host: HOST,
    port,
    ...(password !== undefined ? { password } : {}),
    connectionName: 'dedup-test-admin',
    maxRetriesPerRequest: 1,
    retryStrategy: () => 200,
  });
  client.on('error', () => undefined);
  return client;
}

/** Polls until check() returns true; throws with the description after timeoutMs. */
export async function waitFor(check: () => Promise<boolean>, description: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    let ok = false;
    try {
      ok = await check();
    } catch {
      ok = false;
    }
    if (ok) return;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${description}`);
    await delay(50);
  }
}

/** Is redis-cli there? The cluster is created with it. */
export function redisCliAvailable(): boolean {
  const probe = spawnSync(process.env.REDIS_CLI_BIN ?? 'redis-cli', ['--version'], { stdio: 'ignore' });
  return probe.error === undefined && probe.status === 0;
}

// ---------------------------------------------------------------------------
// Sentinel

export interface SentinelSet {
  readonly masterName: string;
  readonly sentinelPassword: string;
  /** The data servers: [0] starts as primary, [1] as its replica. */
  readonly servers: readonly ManagedRedis[];
  readonly sentinels: readonly ManagedRedis[];
  /** `host:port, host:port, ...` of the sentinels, as the editor takes it. */
  readonly sentinelList: string;
  /** What the sentinels currently name as primary (asks the first that answers). */
  primaryPort(): Promise<number>;
  stop(): Promise<void>;
}

export interface SentinelOptions {
  masterName?: string;
  sentinelPassword?: string;
  /** How long a silent primary is tolerated before the sentinels act. */
  downAfterMs?: number;
}

/**
 * A primary, one replica in sync with it, and three sentinels (quorum 2)
 * that have all found one another and the replica, so that a failover can
 * be elected as soon as the primary dies. The sentinels require a password,
 * which is what the config node's sentinelPassword credential is for.
 */
export async function startSentinelSet(options: SentinelOptions = {}): Promise<SentinelSet> {
  const masterName = options.masterName ?? 'dedup-primary';
  const sentinelPassword = options.sentinelPassword ?? `sentinel-${process.pid}`;
  const downAfterMs = options.downAfterMs ?? 1000;
  const started: ManagedRedis[] = [];
  const admins: Redis[] = [];
  const stopAll = async (): Promise<void> => {
    for (const admin of admins.splice(0)) admin.disconnect();
    await Promise.all(started.map((server) => server.stop()));
  };
  try {
    const primary = await ManagedRedis.start();
    started.push(primary);
    const replica = await ManagedRedis.start({ args: ['--replicaof', HOST, String(primary.port)] });
    started.push(replica);
    const primaryAdmin = adminClient(primary.port);
    admins.push(primaryAdmin);
    await waitFor(
      async () => /slave0:.*state=online/.test(await primaryAdmin.info('replication')),
      'the replica to be in sync with the primary',
      10_000,
    );

    const config = [
      'sentinel resolve-hostnames no',
      `requirepass ${sentinelPassword}`,
      `sentinel monitor ${masterName} ${HOST} ${primary.port} 2`,
      `sentinel down-after-milliseconds ${masterName} ${downAfterMs}`,
      // Also the pause before a failed failover is retried: keep it short.
      `sentinel failover-timeout ${masterName} 5000`,
      `sentinel parallel-syncs ${masterName} 1`,
      '',
    ].join('\n');
    const sentinels: ManagedRedis[] = [];
    for (let i = 0; i < 3; i++) {
      const sentinel = await ManagedRedis.start({ config, sentinel: true });
      started.push(sentinel);
      sentinels.push(sentinel);
    }
    // Sentinels find each other through hello messages every 2 s; a
    // failover needs a majority that knows the others.
    for (const sentinel of sentinels) {
      const admin = adminClient(sentinel.port, sentinelPassword);
      admins.push(admin);
      await waitFor(
        async () => {
          const fields = (await admin.call('SENTINEL', 'MASTER', masterName)) as string[];
          const info = new Map<string, string>();
          for (let i = 0; i + 1 < fields.length; i += 2) info.set(fields[i] as string, fields[i + 1] as string);
          return info.get('num-other-sentinels') === '2' && info.get('num-slaves') === '1' && info.get('flags') === 'master';
        },
        `sentinel ${sentinel.port} to know the other sentinels and the replica`,
        15_000,
      );
    }
    for (const admin of admins.splice(0)) admin.disconnect();

    return {
      masterName,
      sentinelPassword,
      servers: [primary, replica],
      sentinels,
      sentinelList: sentinels.map((s) => s.address).join(', '),
      async primaryPort() {
        for (const sentinel of sentinels) {
          if (!sentinel.running) continue;
          const admin = adminClient(sentinel.port, sentinelPassword);
          try {
            const address = (await admin.call('SENTINEL', 'GET-MASTER-ADDR-BY-NAME', masterName)) as [string, string];
            return Number(address[1]);
          } catch {
            // Ask the next one.
          } finally {
            admin.disconnect();
          }
        }
        throw new Error('no sentinel answered');
      },
      stop: stopAll,
    };
  } catch (error) {
    await stopAll();
    throw error;
  }
}
