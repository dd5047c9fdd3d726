import { ScriptFailedError, StoreUnreachableError, TimeoutError } from '../redis/store-errors';
import { add } from './decision-slots';

/** Classes of store failure: few and fixed, whatever the error's own words. */
export const FAILURE_CAUSES = ['timeout', 'unreachable', 'script', 'other'] as const;
export type FailureCause = (typeof FAILURE_CAUSES)[number];

/**
 * The class of a store failure, by its type (redis/store-errors):
 * `timeout` (Redis did not answer in time), `unreachable` (no working
 * connection: refused, closed, authentication), `script` (Redis answered
 * with an error, or runs no scripts), `other`.
 */
export function failureCause(error: unknown): FailureCause {
  if (error instanceof TimeoutError) return 'timeout';
  if (error instanceof StoreUnreachableError) return 'unreachable';
  if (error instanceof ScriptFailedError) return 'script';
  return 'other';
}

/** Counts a failure in its cause's slot of `failures` (by FAILURE_CAUSES index). */
export function countFailure(failures: Float64Array, error: unknown): void {
  add(failures, FAILURE_CAUSES.indexOf(failureCause(error)));
}
