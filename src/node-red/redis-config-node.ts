/**
 * What a dedup-redis config node offers the nodes that use it: its shared
 * connection, or, when its settings could not make one, the reason, which
 * each user then names in its own status and errors.
 */
import type { RedisConnectionSettings, RedisMode } from '../redis/connection-options';
import type { SharedConnection } from '../redis/shared-connection';
import type { NodeDef } from './api';
import { nonNegativeNumber, oneOf, positiveInteger } from './config-values';
import { REDIS_DEFAULTS } from '../core/defaults';

export interface RedisConfigNode {
  /** For messages: the node's name, or what it connects to. */
  label: string;
  connection?: SharedConnection;
  problem?: string;
}

export function asRedisConfigNode(node: unknown): RedisConfigNode | undefined {
  const candidate = node as Partial<RedisConfigNode> | null | undefined;
  return candidate !== null && candidate !== undefined && typeof candidate.label === 'string' ? (candidate as RedisConfigNode) : undefined;
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
  lingerMs?: string | number;
}

export interface DedupRedisCredentials {
  username?: string;
  password?: string;
  sentinelPassword?: string;
}

const MODES: readonly RedisMode[] = ['standalone', 'sentinel', 'cluster'];

/** How a config node is named in its users' messages: its name, else what it connects to. */
export function labelOf(def: DedupRedisDef): string {
  if (def.name) return def.name;
  if (def.mode === 'cluster') return `cluster ${(def.clusterNodes ?? '').trim().split(/[\s,]+/)[0] ?? ''}`.trim();
  if (def.mode === 'sentinel') return `sentinel ${def.masterName ?? ''}`.trim();
  if (def.url) return String(def.url).replace(/\/\/[^@/]*@/, '//');
  return `${def.host || REDIS_DEFAULTS.host}:${String(def.port ?? REDIS_DEFAULTS.port)}`;
}

export function settingsFromDef(def: DedupRedisDef, credentials: DedupRedisCredentials): RedisConnectionSettings {
  const db = def.db === undefined || def.db === '' ? 0 : Number(def.db);
  if (!Number.isInteger(db) || db < 0) throw new Error(`db must be a whole number, 0 or more, not ${JSON.stringify(def.db)}`);
  const port = def.port === undefined || def.port === '' ? REDIS_DEFAULTS.port : Number(String(def.port).trim());
  if (!Number.isInteger(port) || port < 1 || port > 65_535) throw new Error(`port must be 1 to 65535, not ${JSON.stringify(def.port)}`);
  return {
    mode: oneOf(def.mode, 'mode', MODES, REDIS_DEFAULTS.mode),
    url: (def.url ?? '').trim(),
    host: (def.host ?? '').trim() || REDIS_DEFAULTS.host,
    port,
    db,
    tls: def.tls === true,
    username: credentials.username ?? '',
    password: credentials.password ?? '',
    sentinels: def.sentinels ?? '',
    masterName: (def.masterName ?? '').trim(),
    sentinelPassword: credentials.sentinelPassword ?? '',
    clusterNodes: def.clusterNodes ?? '',
    keyPrefix: def.keyPrefix ?? REDIS_DEFAULTS.keyPrefix,
    timeoutMs: positiveInteger(def.timeoutMs, 'timeoutMs', REDIS_DEFAULTS.timeoutMs),
    lingerMs: lingerOf(def.lingerMs),
  };
}

/** The linger is a few milliseconds; more would be a delay no dedup needs (the batcher also keeps it under half the timeout). */
const MAX_LINGER_MS = 100;

function lingerOf(value: unknown): number {
  const ms = nonNegativeNumber(value, 'lingerMs', REDIS_DEFAULTS.lingerMs);
  if (!Number.isInteger(ms) || ms > MAX_LINGER_MS) throw new Error(`lingerMs must be a whole number of milliseconds from 0 to ${MAX_LINGER_MS}, not ${JSON.stringify(value)}`);
  return ms;
}
