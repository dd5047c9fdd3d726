/**
 * Whether a server runs the pack's Lua scripts (the error that says it does
 * not is redis/store-errors' ScriptingUnavailableError). Every decision is a script call (EVAL the first time on a
 * connection, EVALSHA after, EVAL again after NOSCRIPT), so a server
 * without scripting (a Valkey 9.1 without its Lua module, a managed Redis
 * with the commands renamed away, an ACL user without @scripting) can decide
 * nothing. Its answers are an unknown-command or a NOPERM error naming the
 * command, worded a little differently by each server and release, so they
 * are recognised here and nowhere else.
 */
import { createHash } from 'crypto';
import type { Redis } from 'ioredis';
import { errorMessage } from '../core/parse/errors';
import { scriptSource, SCRIPT_NAMES } from './scripts';

/** Renders the catalog text of a ScriptingUnavailableError (redis/store-errors) from the server's answer. */
export type NoScriptingText = (serverAnswer: string) => string;

/**
 * Redis 6 quotes the command with backticks, 7 and Valkey with single
 * quotes, a Valkey without its engine may use capitals; ACL users get
 * NOPERM naming the command (Redis 6: "... to run the 'evalsha' command or
 * its subcommand"; 7: "User u has no permissions to run the 'evalsha'
 * command"). A NOPERM about a key, from inside a script, is not this.
 */
const REFUSED = /^(?:ERR unknown command [`']?(?:evalsha|eval|script)\b|NOPERM .*['`](?:evalsha|eval|script(?:\|load)?)['`])/i;

/**
 * The server's answer when it says it cannot run scripts at all; undefined
 * for any other error. Redis appends the call's first arguments ("with args
 * beginning with: ..."): a sha, keys, or the start of a script's text, which
 * say nothing more and would fill a status line; they are left out.
 */
export function scriptingRefusal(error: unknown): string | undefined {
  if (!(error instanceof Error) || !REFUSED.test(error.message)) return undefined;
  return error.message.replace(/,? with args beginning with:[\s\S]*$/, '').trim();
}

/** A SHA1 no script has, for the probe's EVALSHA (which never gets far enough to look it up). */
const NO_SUCH_SCRIPT = createHash('sha1').update('node-red-dedup: EVALSHA probe, not a script').digest('hex');

/** What a server that has the command answers a call of it with too few arguments. */
const WRONG_ARITY = /wrong number of arguments/i;

/**
 * Asks one server whether it runs the pack's scripts, with commands that
 * change no data and run no script: SCRIPT LOAD of each of the pack's
 * scripts (which also keeps them out of the eviction of EVAL'd scripts,
 * Redis 7.4+ and Valkey 8), then EVALSHA and EVAL with too few arguments: a
 * server that has them rejects the call before running anything ("wrong
 * number of arguments", not counted among the command's calls in INFO
 * commandstats), one that has not answers "unknown command". Resolves with
 * the server's refusal, or undefined when it runs scripts; rejects on any
 * other failure (a dropped connection), which proves nothing either way.
 * (An ACL user without @scripting passes the arity checks; its first call
 * is named instead, in the call path.)
 */
export async function probeScripting(server: Redis): Promise<string | undefined> {
  const tooFew = (command: 'evalsha' | 'eval') => () =>
    server.call(command, command === 'eval' ? 'return 1' : NO_SUCH_SCRIPT).then(
      () => undefined,
      (error: unknown) => {
        if (!(error instanceof Error && WRONG_ARITY.test(error.message))) throw error;
      },
    );
  const steps: (() => Promise<unknown>)[] = [...SCRIPT_NAMES.map((name) => () => server.script('LOAD', scriptSource(name))), tooFew('evalsha'), tooFew('eval')];
  for (const step of steps) {
    try {
      await step();
    } catch (error) {
      const refusal = scriptingRefusal(error);
      if (refusal !== undefined) return refusal;
      throw new Error(`the scripting probe failed: ${errorMessage(error)}`, { cause: error });
    }
  }
  return undefined;
}
