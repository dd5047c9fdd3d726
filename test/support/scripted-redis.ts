/**
 * The fixture of the tests that drive the Redis stores directly on the
 * shared server: every test starts from an empty database, with clients on
 * which the dedup scripts are defined, and its clients are closed after it.
 * The suites using it call useRedis() (test/support/global-hooks) first.
 */
import type Redis from 'ioredis';
import { defineDedupScripts } from '../../src/redis/scripts';
import type { RedisStoreOptions, SeenSettings, WindowSettings } from '../../src/stores/types';
import { closeRedisClient, flushRedis, newRedisClient } from './global-hooks';

/** The rule most store tests decide by: 60 s, 25 m, records kept an hour. */
export const SETTINGS: WindowSettings = { minSeconds: 60, minMetres: 25, ttlSeconds: 3600 };

/** The seen-set most store tests claim in: an hour, confirm mode off. */
export const SEEN_SETTINGS: SeenSettings = { ttlSeconds: 3600, confirm: false, leaseSeconds: 60 };

/** Options of a store on one server (no Cluster grouping), with a timeout no healthy call reaches. */
export function storeOptions(keyPrefix: string, more: Partial<RedisStoreOptions> = {}): RedisStoreOptions {
  return { keyPrefix, cluster: false, timeoutMs: 5000, ...more };
}

export interface ScriptedClients {
  /** A new scripted client; the first one of a test empties the database. */
  open(): Promise<Redis>;
  /** Closes every client opened since the last call. */
  closeAll(): Promise<void>;
}

/** Scripted clients for one test at a time, for suites whose hooks are someone else's (the contracts). */
export function scriptedClients(): ScriptedClients {
  const open: Redis[] = [];
  return {
    async open() {
      if (open.length === 0) await flushRedis();
      const client = newRedisClient();
      defineDedupScripts(client);
      open.push(client);
      return client;
    },
    async closeAll() {
      await Promise.all(open.splice(0).map(closeRedisClient));
    },
  };
}

/**
 * Mocha hooks for the enclosing suite: before each test an empty database
 * and a new scripted client, closed after the test. Returns the current
 * test's client; call it once per client a test needs (two workers, two
 * calls).
 */
export function scriptedClientPerTest(): () => Redis {
  const clients = scriptedClients();
  let current: Redis | undefined;
  beforeEach(async () => {
    current = await clients.open();
  });
  afterEach(async () => {
    current = undefined;
    await clients.closeAll();
  });
  return () => {
    if (current === undefined) throw new Error('the scripted client exists only while a test runs');
    return current;
  };
}

/**
 * Writes `count` keys fast (MSET, a thousand at a time, pipelined): the
 * crowd of unrelated keys some tests need around the ones they watch.
 */
export async function fillKeys(client: Redis, count: number, keyOf: (i: number) => string, valueOf: (i: number) => string | Buffer): Promise<void> {
  const pipeline = client.pipeline();
  for (let start = 0; start < count; start += 1000) {
    const args: (string | Buffer)[] = [];
    for (let i = start; i < Math.min(count, start + 1000); i++) args.push(keyOf(i), valueOf(i));
    pipeline.mset(...args);
  }
  const results = (await pipeline.exec()) ?? [];
  const failed = results.find(([error]) => error !== null)?.[0];
  if (failed) throw failed;
}

/*
 * Raw script calls, packed here by hand from the layouts of src/redis/wire.ts
 * (the fields the Lua files' headers describe) rather than with the stores'
 * own encoders, so that a test of the scripts does not share a packing
 * mistake with the code it checks.
 */

/** One operation of lua/sliding-window.lua: a ping, or a reset of its asset or of every asset. */
export type RawWindowOp =
  | { op: 'ping'; t: number; lat: number; lon: number; heading?: number; accuracy?: number; events?: number; retry?: boolean; fix?: 'no-fix' | 'poor-fix'; value?: number }
  | { op: 'resetAsset' }
  | { op: 'resetAll' };

/** The rule's fields, as ARGV[1] carries them; absent: off (or the rule's default, where the script must be told one). */
export interface RawWindowRule {
  minSeconds: number;
  minMetres: number;
  minHeadingDegrees?: number;
  maxAheadSeconds?: number;
  ttlSeconds: number;
  mode?: 'position' | 'value';
  deadband?: number;
  deadbandPercent?: boolean;
  maxSpeedKmh?: number;
  relocateAfterSeconds?: number;
  relocateAfterPings?: number;
}

/**
 * ARGV[1]: '<ddddI4BdBddd' minSeconds, minMetres, minHeadingDegrees (0 off),
 * maxAheadSeconds (negative off), ttlSeconds, mode (0 position, 1 value),
 * deadband, deadbandPercent (0/1), maxSpeedKmh (0 off), relocateAfterSeconds,
 * relocateAfterPings.
 */
export function windowRule(rule: RawWindowRule): Buffer {
  const out = Buffer.alloc(70);
  out.writeDoubleLE(rule.minSeconds, 0);
  out.writeDoubleLE(rule.minMetres, 8);
  out.writeDoubleLE(rule.minHeadingDegrees ?? 0, 16);
  out.writeDoubleLE(rule.maxAheadSeconds ?? -1, 24);
  out.writeUInt32LE(rule.ttlSeconds, 32);
  out[36] = rule.mode === 'value' ? 1 : 0;
  out.writeDoubleLE(rule.deadband ?? 0, 37);
  out[45] = rule.deadbandPercent === true ? 1 : 0;
  out.writeDoubleLE(rule.maxSpeedKmh ?? 0, 46);
  out.writeDoubleLE(rule.relocateAfterSeconds ?? rule.minSeconds * 10, 54);
  out.writeDoubleLE(rule.relocateAfterPings ?? 3, 62);
  return out;
}

/** ARGV[2] of the window script: '<dI6' the host clock and the call's 48-bit token. */
export function windowCall(nowMs: number, token: number): Buffer {
  const out = Buffer.alloc(14);
  out.writeDoubleLE(nowMs, 0);
  out.writeUIntLE(token, 8, 6);
  return out;
}

/** ARGV[3]: 56 bytes per operation, '<BBI6dddddd'; flags 1 heading, 2 retry, 4 no fix, 8 poor fix; value NaN when none. */
export function windowOps(ops: readonly RawWindowOp[]): Buffer {
  const out = Buffer.alloc(ops.length * 56);
  ops.forEach((op, i) => {
    const at = i * 56;
    if (op.op !== 'ping') {
      out[at] = op.op === 'resetAsset' ? 2 : 3;
      return;
    }
    out[at] = 1;
    out[at + 1] = (op.heading === undefined ? 0 : 1) | (op.retry ? 2 : 0) | (op.fix === 'no-fix' ? 4 : op.fix === 'poor-fix' ? 8 : 0);
    out.writeUIntLE(op.events ?? 0, at + 2, 6);
    out.writeDoubleLE(op.t, at + 8);
    out.writeDoubleLE(op.lat, at + 16);
    out.writeDoubleLE(op.lon, at + 24);
    out.writeDoubleLE(op.heading ?? 0, at + 32);
    out.writeDoubleLE(op.accuracy ?? 0, at + 40);
    out.writeDoubleLE(op.value ?? NaN, at + 48);
  });
  return out;
}

/** One operation of lua/seen-set.lua, naming its KEYS by index (1-based, as Lua does): its bucket (for a group reset, the group's epoch key), its group's epoch key, its old key (0: none). */
export interface RawSeenOp {
  op: 'claim' | 'confirm' | 'release' | 'resetGroup' | 'resetAll';
  key: number;
  group: number;
  legacy?: number;
  token: number;
}

const SEEN_OP_CODES = { claim: 1, confirm: 2, release: 3, resetGroup: 4, resetAll: 5 } as const;

/** ARGV[1] of the seen-set script: '<dI4dBI6B' the host clock, ttlSeconds, leaseMs, confirm mode, the call's token, whether old keys are named. */
export function seenCall(call: { nowMs: number; ttlSeconds: number; leaseMs: number; confirm: boolean; token: number; legacy?: boolean }): Buffer {
  const out = Buffer.alloc(28);
  out.writeDoubleLE(call.nowMs, 0);
  out.writeUInt32LE(call.ttlSeconds, 8);
  out.writeDoubleLE(call.leaseMs, 12);
  out[20] = call.confirm ? 1 : 0;
  out.writeUIntLE(call.token, 21, 6);
  out[27] = call.legacy === true ? 1 : 0;
  return out;
}

/** ARGV[2]: 13 bytes per operation, '<BI2I2I2I6'. */
export function seenOps(ops: readonly RawSeenOp[]): Buffer {
  const out = Buffer.alloc(ops.length * 13);
  ops.forEach((op, i) => {
    out[i * 13] = SEEN_OP_CODES[op.op];
    out.writeUInt16LE(op.key, i * 13 + 1);
    out.writeUInt16LE(op.group, i * 13 + 3);
    out.writeUInt16LE(op.legacy ?? 0, i * 13 + 5);
    out.writeUIntLE(op.token, i * 13 + 7, 6);
  });
  return out;
}

/**
 * A field name of a bucket's own (redis/wire BUCKET_FIELD: a 0xff byte,
 * which no id's UTF-8 has, and a letter), followed by an id's UTF-8: as the
 * bytes Redis holds, not the UTF-8 of the JavaScript string.
 */
export function ownField(name: string, id = ''): Buffer {
  return Buffer.concat([Buffer.from(name, 'latin1'), Buffer.from(id, 'utf8')]);
}

/** An epoch key's value, '<I4I6': the counter and the call that raised it last. */
export function decodeEpoch(raw: Buffer | null): { count: number; call: number } | null {
  return raw === null ? null : { count: raw.readUInt32LE(0), call: raw.readUIntLE(4, 6) };
}
