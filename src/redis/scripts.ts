/**
 * The Lua scripts, registered on a client with ioredis' defineCommand. On
 * each connection ioredis sends a script's text with EVAL the first time
 * and EVALSHA after that; a NOSCRIPT reply (after SCRIPT FLUSH, a restart or
 * a failover) sends the text again. Both orders are the order of the calls,
 * so scripts keep their order on a connection (which is why resets travel
 * as script calls too: a plain command sent between two script calls could
 * overtake a call resent after NOSCRIPT).
 */
import { readFileSync } from 'fs';
import { join } from 'path';
import type { Cluster, Redis, Result } from 'ioredis';
import { CLAIM, KEY_STATE, LEASE_EXPIRED, SETTLE } from '../core/sensor/seen-codes';
import { WINDOW_REASONS, type WindowReason } from '../core/window/window-reasons';
import { luaLocals, SEEN_OP_CODE, seenPrelude, WINDOW_OP_CODE, windowPrelude } from './wire';

declare module 'ioredis' {
  interface RedisCommander<Context> {
    /** See lua/sliding-window.lua; the reply is binary, hence the Buffer form. */
    dedupSlidingWindowBuffer(numKeys: number, ...keysAndArgs: (string | Buffer | string[])[]): Result<Buffer, Context>;
    /** See lua/seen-set.lua. */
    dedupSeenSet(numKeys: number, ...keysAndArgs: (string | Buffer | string[])[]): Result<number[], Context>;
  }
}

export type RedisClient = Redis | Cluster;

// From nodes/redis/ (compiled) or src/redis/ (tests) up to the package root.
const LUA_DIR = join(__dirname, '..', '..', 'lua');

const SCRIPTS = {
  dedupSlidingWindow: 'sliding-window.lua',
  dedupSeenSet: 'seen-set.lua',
} as const;

export type ScriptName = keyof typeof SCRIPTS;

export const SCRIPT_NAMES = Object.keys(SCRIPTS) as ScriptName[];

/** The Lua local a code of a seen-set table is in: (`CLAIM`, `inFlight`) -> CLAIM_IN_FLIGHT. */
export function codeLocal(table: 'CLAIM' | 'SETTLE', name: string): string {
  return `${table}_${name.replace(/([a-z])([A-Z])/g, '$1_$2').toUpperCase()}`;
}

/** Each code of a seen-set table under its local's name. */
function codeLocals(table: 'CLAIM' | 'SETTLE', codes: Record<string, number>): Record<string, number> {
  return Object.fromEntries(Object.entries(codes).map(([name, code]) => [codeLocal(table, name), code]));
}

/** The Lua local a reason's code is in, in the sliding-window script: `first` -> FIRST, `no-fix` -> NO_FIX. */
export function reasonLocal(reason: WindowReason): string {
  return reason.toUpperCase().replace(/-/g, '_');
}

/**
 * The lines put before a script's text: the codes it replies with, from the
 * TypeScript tables, first (the sliding-window script also learns there
 * which reasons admit, so that core/window/window-reasons stays the one
 * place that says so), then its operation codes, then its binary formats,
 * flags and steps (redis/wire).
 *
 * Codes are plain locals (and ADMITS a list by code), not tables keyed by
 * name: the prelude runs at every call, and a table built there is built at
 * every call (the reasons' cost a one-ping call about 1 µs of its 25 in
 * bench/script-cost.ts).
 */
export function scriptPrelude(name: ScriptName): string {
  if (name === 'dedupSlidingWindow') {
    const admits: boolean[] = [];
    const codes: Record<string, number> = {};
    for (const [reason, { code, admit }] of Object.entries(WINDOW_REASONS)) {
      admits[code - 1] = admit;
      codes[reasonLocal(reason as WindowReason)] = code;
    }
    return (
      luaLocals({ ADMITS: Array.from(admits, (a) => a === true), ...codes }) +
      `local RESET_ASSET, RESET_ALL = ${WINDOW_OP_CODE.resetAsset}, ${WINDOW_OP_CODE.resetAll}\n` +
      windowPrelude()
    );
  }
  return (
    luaLocals({ LEASE_EXPIRED, ...codeLocals('CLAIM', CLAIM), ...codeLocals('SETTLE', SETTLE) }) +
    `local SEEN, PENDING, RELEASED = ${KEY_STATE.seen}, ${KEY_STATE.pending}, ${KEY_STATE.released}\n` +
    `local CLAIM_OP, CONFIRM_OP, RELEASE_OP, RESET_GROUP, RESET_ALL = ${Object.values(SEEN_OP_CODE).join(', ')}\n` +
    seenPrelude()
  );
}

const sources = new Map<ScriptName, string>();

/** The Lua both scripts share, put between the prelude and each script's own text: the layout mark's check (lua/layout-mark.lua). */
const SHARED_LUA = 'layout-mark.lua';

/** A script's full text, as Redis runs it: the prelude, the shared Lua and the file. */
export function scriptSource(name: ScriptName): string {
  let source = sources.get(name);
  if (source === undefined) {
    source = scriptPrelude(name) + readFileSync(join(LUA_DIR, SHARED_LUA), 'utf8') + readFileSync(join(LUA_DIR, SCRIPTS[name]), 'utf8');
    sources.set(name, source);
  }
  return source;
}

export function defineDedupScripts(client: RedisClient): void {
  for (const name of SCRIPT_NAMES) {
    // numberOfKeys is left out: each call passes it first, as batches vary.
    client.defineCommand(name, { lua: scriptSource(name) });
  }
}
