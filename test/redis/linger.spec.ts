/**
 * The linger of a dedup-redis connection (issue 31, item 1), through a real
 * Node-RED runtime and a real server: the option reaches the store, quiet
 * turns close together share a script call, and a node that closes sends
 * what waits at once rather than when the linger ends. Script calls are
 * counted as ioredis sends them (the order the event loop runs things in,
 * not a clock, decides what is asserted); the timing of the linger itself
 * is tested with an injected clock in test/unit/redis/tick-batcher.spec.ts.
 */
import assert from 'node:assert/strict';
import Redis from 'ioredis';
import { helper, loadDedup, node, startServer, stopServer, until, type DedupHarness } from '../support/node-red-helper';
import { useRedis } from '../support/global-hooks';

const turn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/**
 * Counts the script calls every ioredis client of this process sends, from
 * now until stop(); not the connection's scripting probe (an EVALSHA and an
 * EVAL with too few arguments to run, see redis/scripting).
 */
function countScriptCalls(): { count(): number; stop(): void } {
  type Command = { name: string; args: unknown[] };
  const proto = Redis.prototype as unknown as { sendCommand: (command: Command, ...rest: unknown[]) => unknown };
  const original = proto.sendCommand;
  let calls = 0;
  proto.sendCommand = function (this: unknown, command: Command, ...rest: unknown[]) {
    if ((command.name === 'evalsha' || command.name === 'eval') && command.args.length > 2) calls++;
    return original.call(this, command, ...rest);
  };
  return { count: () => calls, stop: () => (proto.sendCommand = original) };
}

const ping = (assetId: string, t: number): Record<string, unknown> => ({ assetId, ts: t, lat: 52.52, lon: 13.405 });

/** One message per turn, each of another asset (so each is admitted), then every answer. */
async function sendInTurns(dedup: DedupHarness, prefix: string, n: number): Promise<void> {
  const before = dedup.admitted.length;
  for (let i = 0; i < n; i++) {
    dedup.send(ping(`${prefix}-${i}`, 1_780_000_000_000));
    await turn();
  }
  await until(() => dedup.admitted.length === before + n, `${n} admitted`);
}

describe('redis: the linger of a dedup-redis connection', function () {
  useRedis();
  before(startServer);
  after(stopServer);
  afterEach(async function () {
    await helper.unload();
  });

  const WINDOW = { assetIdProperty: 'payload.assetId', timeProperty: 'payload.ts', latProperty: 'payload.lat', lonProperty: 'payload.lon', minSeconds: 60, minMetres: 25 };

  it('gathers the messages of turns that come close together into one call', async function () {
    const dedup = await loadDedup('sliding-window-dedup', 'redis', WINDOW, { lingerMs: '100' });
    await sendInTurns(dedup, 'warm', 1);
    const calls = countScriptCalls();
    try {
      await sendInTurns(dedup, 'veh', 5);
      // The first of the five may go at once (the turn before came long
      // enough ago); the others wait together, unless this machine stalls
      // for 100 ms between two turns.
      assert.ok(calls.count() <= 2, `5 turns made ${calls.count()} script calls`);
    } finally {
      calls.stop();
    }
  });

  it('sends every turn at once with a linger of 0', async function () {
    const dedup = await loadDedup('sliding-window-dedup', 'redis', WINDOW, { lingerMs: '0' });
    await sendInTurns(dedup, 'warm', 1);
    const calls = countScriptCalls();
    try {
      await sendInTurns(dedup, 'veh', 5);
      assert.equal(calls.count(), 5);
    } finally {
      calls.stop();
    }
  });

  it('sends what waits as soon as the node starts closing, and decides it', async function () {
    const dedup = await loadDedup('sliding-window-dedup', 'redis', WINDOW, { lingerMs: '100', timeoutMs: '5000' });
    await sendInTurns(dedup, 'warm', 1);
    const calls = countScriptCalls();
    try {
      dedup.send(ping('veh-a', 1_780_000_000_000));
      await turn();
      dedup.send(ping('veh-b', 1_780_000_000_000));
      await turn();
      // veh-b's turn came right after veh-a's: its call waits in the linger.
      const sentBefore = calls.count();
      assert.ok(sentBefore <= 1, `${sentBefore} calls before the close`);
      const closing = (node('dedup') as unknown as { close(removed: boolean): Promise<void> }).close(false);
      assert.equal(calls.count(), sentBefore + 1, 'the close sent the waiting call before anything else ran');
      await closing;
      assert.deepEqual(dedup.admitted.slice(1).map((m) => (m.payload as { assetId: string }).assetId), ['veh-a', 'veh-b']);
      assert.deepEqual(dedup.caught, []);
    } finally {
      calls.stop();
    }
  });
});
