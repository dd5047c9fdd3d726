import { readFileSync } from 'fs';
import { join } from 'path';
import type { Cluster, Redis, Result } from 'ioredis';

/**
 * The Lua scripts, registered on a client with ioredis' defineCommand: it
 * sends EVALSHA and falls back to EVAL on NOSCRIPT, so the scripts survive
 * SCRIPT FLUSH, a Redis restart and a Sentinel failover without our help.
 */
declare module 'ioredis' {
  interface RedisCommander<Context> {
    /**
     * See lua/sliding-window.lua for the argument layout. The reply is
     * binary: use this Buffer form (ioredis flattens array arguments).
     */
    dedupSlidingWindowBuffer(numKeys: number, ...keysAndArgs: (string | Buffer | string[])[]): Result<Buffer, Context>;
    /** See lua/seen-set.lua for the argument layout. */
    dedupSeenSet(numKeys: number, ...keysAndArgs: string[]): Result<number[], Context>;
  }
}

export type RedisClient = Redis | Cluster;

// From nodes/redis/ (compiled) or src/redis/ (tests) up to the package root.
const LUA_DIR = join(__dirname, '..', '..', 'lua');

const SCRIPTS = {
  dedupSlidingWindow: 'sliding-window.lua',
  dedupSeenSet: 'seen-set.lua',
} as const;

let sources: Record<keyof typeof SCRIPTS, string> | undefined;

export function scriptSource(name: keyof typeof SCRIPTS): string {
  sources ??= {
    dedupSlidingWindow: readFileSync(join(LUA_DIR, SCRIPTS.dedupSlidingWindow), 'utf8'),
    dedupSeenSet: readFileSync(join(LUA_DIR, SCRIPTS.dedupSeenSet), 'utf8'),
  };
  return sources[name];
}

export function defineDedupScripts(client: RedisClient): void {
  for (const name of Object.keys(SCRIPTS) as (keyof typeof SCRIPTS)[]) {
    // numberOfKeys is left out: each call passes it first, as batches vary.
    client.defineCommand(name, { lua: scriptSource(name) });
  }
}
