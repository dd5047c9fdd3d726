/**
 * Sending one message to a sensor reconnect dedup node under test and
 * taking what it produced, with the checks every such message must pass:
 * done() exactly once, the expected errors at the Catch node, and counts
 * that add up on every message out.
 */
import assert from 'node:assert/strict';
import { sleep, until, type DedupHarness, type Msg } from './node-red-helper';

export interface Counts {
  received: number;
  unique: number;
  duplicates_suppressed: number;
  rejected: number;
}

/** What one input message produced. */
export interface Outcome {
  admitted: Msg[];
  second: Msg[];
  caught: Msg[];
  ms: number;
}

/**
 * Sends one message and waits for its end: done() (seen by the Complete
 * node), or done(err) (one more error at the Catch node than the bad
 * readings account for). Then waits a little longer and checks nothing else
 * arrived: done() is called exactly once. Every message out is checked for
 * reconciled counts.
 */
export async function deliver(
  h: DedupHarness,
  payload: unknown,
  expect: { completes?: number; errors?: number; extra?: Partial<Msg>; timeoutMs?: number } = {},
): Promise<Outcome> {
  const completes = expect.completes ?? 1;
  const errors = expect.errors ?? 0;
  const before = { admitted: h.admitted.length, second: h.second.length, caught: h.caught.length, completed: h.completed.length };
  const started = Date.now();
  h.send(payload, expect.extra);
  await until(
    () => h.completed.length >= before.completed + completes && h.caught.length >= before.caught + errors,
    `${completes} done() and ${errors} errors`,
    expect.timeoutMs ?? 5000,
  );
  const ms = Date.now() - started;
  await sleep(30);
  assert.equal(h.completed.length - before.completed, completes, 'done() calls without an error');
  assert.equal(h.caught.length - before.caught, errors, 'errors at the Catch node');
  const outcome: Outcome = {
    admitted: h.admitted.slice(before.admitted),
    second: h.second.slice(before.second),
    caught: h.caught.slice(before.caught),
    ms,
  };
  for (const msg of [...outcome.admitted, ...outcome.second]) assertReconciled(msg);
  return outcome;
}

export function countsOf(source: Record<string, unknown> | undefined): Counts {
  assert.ok(source !== undefined, 'counts expected');
  return {
    received: source.received as number,
    unique: source.unique as number,
    duplicates_suppressed: source.duplicates_suppressed as number,
    rejected: source.rejected as number,
  };
}

/** received = unique + duplicates_suppressed + rejected, wherever counts appear. */
export function assertReconciled(msg: Msg): void {
  const counts = countsOf(msg.dedup);
  assert.equal(counts.received, counts.unique + counts.duplicates_suppressed + counts.rejected, `counts do not add up: ${JSON.stringify(counts)}`);
  if (msg.dedup?.decision === 'audit') {
    const audit = msg.payload as Record<string, unknown>;
    assert.deepEqual(countsOf(audit), counts, 'the audit payload and msg.dedup agree');
    assert.equal((audit.suppressed as unknown[]).length, counts.duplicates_suppressed);
    assert.equal((audit.rejections as unknown[]).length, counts.rejected);
  }
}
