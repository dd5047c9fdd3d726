import type { RedisConnectionSettings, RedisMode } from '../redis/connection-options';
import type { SharedConnection } from '../redis/shared-connection';
import type { NodeDef } from './api';
import { oneOf, positiveInteger } from './config-values';

/** What a dedup-redis config node offers the nodes that use it. */
export interface RedisConfigNode {
  connection: SharedConnection;
}

export function asRedisConfigNode(node: unknown): RedisConfigNode | undefined {
  const candidate = node as Partial<RedisConfigNode> | null | undefined;
  return candidate?.connection !== undefined ? (candidate as RedisConfigNode) : undefined;
}

export interface DedupRedisDef extends NodeDef {
  mode?: string;
  url?: string;
  host?: string;
  port?: string | number;
  db?: string | number;
  tls?: boolean;
  keyPrefix?: string;
  sentinels?: string;
  masterName?: string;
  clusterNodes?: string;
  timeoutMs?: string | number;
}

export interface DedupRedisCredentials {
  username?: string;
  password?: string;
  sentinelPassword?: string;
}

const MODES: readonly RedisMode[] = ['standalone', 'sentinel', 'cluster'];

export function settingsFromDef(def: DedupRedisDef, credentials: DedupRedisCredentials): RedisConnectionSettings {
  const db = def.db === undefined || def.db === '' ? 0 : Number(def.db);
  if (!Number.isInteger(db) || db < 0) throw new Error(`db must be a whole number, 0 or more, not ${JSON.stringify(def.db)}`);
  return {
    mode: oneOf(def.mode, MODES, 'standalone'),
    url: (def.url ?? '').trim(),
    host: (def.host ?? '').trim() || '127.0.0.1',
    port: positiveInteger(def.port, 'port', 6379),
    db,
    tls: def.tls === true,
    username: credentials.username ?? '',
    password: credentials.password ?? '',
    sentinels: def.sentinels ?? '',
    masterName: (def.masterName ?? '').trim(),
    sentinelPassword: credentials.sentinelPassword ?? '',
    clusterNodes: def.clusterNodes ?? '',
    keyPrefix: def.keyPrefix ?? 'dedup:',
    timeoutMs: positiveInteger(def.timeoutMs, 'timeoutMs', 2000),
  };
}

