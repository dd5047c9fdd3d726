/**
 * The errors a Redis-backed store fails a request with, made here and told
 * apart by instanceof (the Prometheus `cause` of a failure, the status
 * line), never by their words. Each keeps the words users have always
 * seen: they reach msg.dedup.error, the Catch node and the status line.
 *
 * - TimeoutError: Redis did not answer a call in time (redis/tick-batcher's
 *   give-up clock).
 * - StoreUnreachableError: the call never reached a working connection;
 *   says the connection's own cause (ECONNREFUSED with the address,
 *   WRONGPASS, ENOTFOUND) rather than ioredis' words for the command.
 * - ScriptFailedError: Redis answered the call with an error; `cause` is
 *   its answer.
 * - ScriptingUnavailableError: the server runs no scripts at all (see
 *   redis/scripting), a script failure the connection names at deploy.
 */
import { ReplyError } from 'ioredis';

export class TimeoutError extends Error {
  constructor(ms: number, cause?: string) {
    super(`Redis did not answer within ${ms} ms${cause === undefined ? '' : ` (${cause})`}`);
    this.name = 'TimeoutError';
  }
}

export class StoreUnreachableError extends Error {
  constructor(connectionCause: string, options: { cause: unknown }) {
    super(`Redis is unreachable: ${connectionCause}`, options);
    this.name = 'StoreUnreachableError';
  }
}

export class ScriptFailedError extends Error {
  constructor(message: string, options?: { cause: unknown }) {
    super(message, options);
    this.name = 'ScriptFailedError';
  }
}

/**
 * The server cannot run the pack's scripts: `serverAnswer` is what it said.
 * The message is the catalog's text (the connection's config node renders
 * it).
 */
export class ScriptingUnavailableError extends ScriptFailedError {
  constructor(
    readonly serverAnswer: string,
    text: string,
  ) {
    super(text);
    this.name = 'ScriptingUnavailableError';
  }
}

/** ioredis' class for an error Redis answered with (from redis-errors, which its parser uses). */
const RedisAnswer = ReplyError as new (...args: never[]) => Error;

/**
 * A script call's failure as a typed store error: an error Redis answered
 * with is a ScriptFailedError (same words); any other, while the connection
 * is not ready (`connectionCause`, the connection's latest error), is ioredis
 * failing a command it could not send ("Reached the max retries per request
 * limit", "Connection is closed."): a StoreUnreachableError naming that
 * cause. Anything else, and an error already typed, stays as it is.
 */
export function storeCallError(error: unknown, connectionCause: string | undefined): unknown {
  if (error instanceof TimeoutError || error instanceof StoreUnreachableError || error instanceof ScriptFailedError) return error;
  if (error instanceof RedisAnswer) return new ScriptFailedError(error.message, { cause: error });
  if (connectionCause !== undefined && error instanceof Error) return new StoreUnreachableError(connectionCause, { cause: error });
  return error;
}
