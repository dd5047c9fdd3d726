/**
 * The batcher in front of every Redis call, against fake servers: what goes
 * out in which call, how many calls are out at once, and when a request is
 * given up on. The timing tests are ordered by the event loop (timers fire
 * in deadline order; a socket's reply is read after the timers of its turn),
 * not by how fast the machine is.
 */
import assert from 'node:assert/strict';
import { createServer, connect, type Server, type Socket } from 'net';
import { ReplyError } from 'ioredis';
import { ScriptFailedError, StoreUnreachableError } from '../../../src/redis/store-errors';
import { TickBatcher, TimeoutError, type BatcherOptions } from '../../../src/redis/tick-batcher';
import { ManualClock } from '../../support/manual-clock';

/** An error Redis answered with, as ioredis' parser makes it (redis-errors' ReplyError, which ioredis exports untyped). */
const RedisAnswer = ReplyError as new (message: string) => Error;

interface Item {
  group: number;
  value: string;
}

interface Heard {
  results: { result: string; context: unknown }[];
  errors: { error: unknown; context: unknown }[];
}

/** Callbacks that record what each request was told, with its context. */
function listener(): Heard & { onResult: (result: string, context: unknown) => void; onError: (error: unknown, context: unknown) => void } {
  const heard: Heard = { results: [], errors: [] };
  return {
    ...heard,
    onResult: (result, context) => heard.results.push({ result, context }),
    onError: (error, context) => heard.errors.push({ error, context }),
  };
}

/** A held call: its items, and how to answer it. */
interface Held {
  items: Item[];
  resolve(results: string[]): void;
  reject(error: unknown): void;
}

/**
 * A batcher over a fake server. By default the server answers every call at
 * once (`ok:<value>` per item); with `hold`, calls wait in `held` until the
 * test answers them.
 */
function fakeBatcher(options: Partial<BatcherOptions<Item, string>> & { hold?: boolean } = {}) {
  const calls: Item[][] = [];
  const held: Held[] = [];
  const batcher = new TickBatcher<Item, string>({
    send: (items) => {
      calls.push([...items]);
      if (!options.hold) return Promise.resolve(items.map((item) => `ok:${item.value}`));
      return new Promise<string[]>((resolve, reject) => held.push({ items: [...items], resolve, reject }));
    },
    groupOf: (item) => item.group,
    maxBatch: 100,
    timeoutMs: 1000,
    ...options,
  });
  return { batcher, calls, held };
}

const turn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Waits until the predicate holds (checked every turn), failing after `ms`. */
async function until(predicate: () => boolean, ms = 2000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!predicate()) {
    if (Date.now() > deadline) throw new Error('timed out waiting');
    await sleep(2);
  }
}

const values = (calls: Item[][]): string[][] => calls.map((call) => call.map((item) => item.value));

describe('redis/tick-batcher TickBatcher', () => {
  describe('batching', () => {
    it('sends what arrives in one turn as one call, in arrival order, and answers each with its context, never synchronously', async () => {
      const { batcher, calls } = fakeBatcher();
      const heard = listener();
      for (const value of ['a', 'b', 'c']) batcher.submit({ group: 0, value }, heard.onResult, heard.onError, `ctx-${value}`);
      assert.equal(calls.length, 0, 'nothing is sent before the turn ends');
      assert.equal(heard.results.length, 0, 'no answer before submit() returned');
      assert.equal(batcher.pending, 1);
      await turn();
      await turn();
      assert.deepEqual(values(calls), [['a', 'b', 'c']]);
      assert.deepEqual(heard.results, [
        { result: 'ok:a', context: 'ctx-a' },
        { result: 'ok:b', context: 'ctx-b' },
        { result: 'ok:c', context: 'ctx-c' },
      ]);
      assert.deepEqual(heard.errors, []);
      assert.equal(batcher.pending, 0);
    });

    it('sends later turns as later calls', async () => {
      const { batcher, calls } = fakeBatcher();
      const heard = listener();
      batcher.submit({ group: 0, value: 'a' }, heard.onResult, heard.onError, 1);
      await turn();
      batcher.submit({ group: 0, value: 'b' }, heard.onResult, heard.onError, 2);
      await until(() => heard.results.length === 2);
      assert.deepEqual(values(calls), [['a'], ['b']]);
      assert.deepEqual(heard.results.map((r) => r.result), ['ok:a', 'ok:b']);
    });

    it('never mixes groups in one call and keeps the order within each group', async () => {
      const { batcher, calls } = fakeBatcher();
      const heard = listener();
      const items: Item[] = [
        { group: 1, value: '1a' },
        { group: 2, value: '2a' },
        { group: 1, value: '1b' },
        { group: 2, value: '2b' },
        { group: 1, value: '1c' },
      ];
      for (const item of items) batcher.submit(item, heard.onResult, heard.onError, item.value);
      await until(() => heard.results.length === items.length);
      assert.deepEqual(values(calls), [['1a', '1b', '1c'], ['2a', '2b']]);
      for (const { result, context } of heard.results) assert.equal(result, `ok:${String(context)}`);
    });

    it('splits a group into calls of at most maxBatch, sending a full call at once, in order', async () => {
      const { batcher, calls } = fakeBatcher({ maxBatch: 2 });
      const heard = listener();
      const sent: string[] = ['a', 'b', 'c', 'd', 'e'];
      batcher.submit({ group: 0, value: 'a' }, heard.onResult, heard.onError, 'a');
      assert.equal(calls.length, 0);
      batcher.submit({ group: 0, value: 'b' }, heard.onResult, heard.onError, 'b');
      assert.deepEqual(values(calls), [['a', 'b']], 'a full call goes out before the turn ends');
      for (const value of sent.slice(2)) batcher.submit({ group: 0, value }, heard.onResult, heard.onError, value);
      await until(() => heard.results.length === sent.length);
      assert.deepEqual(values(calls), [['a', 'b'], ['c', 'd'], ['e']]);
      assert.deepEqual(heard.results.map((r) => r.result), sent.map((v) => `ok:${v}`));
    });
  });

  describe('calls out at once', () => {
    it('keeps at most maxInFlight calls out, the rest unsent, and sends the next as one is answered, in order', async () => {
      const { batcher, calls, held } = fakeBatcher({ hold: true, maxBatch: 1, maxInFlight: 2 });
      const heard = listener();
      for (const value of ['a', 'b', 'c', 'd', 'e']) batcher.submit({ group: 0, value }, heard.onResult, heard.onError, value);
      await turn();
      assert.deepEqual(values(calls), [['a'], ['b']], 'two out, three waiting unsent');
      assert.equal(batcher.pending, 5);
      held[0]?.resolve(['ok:a']);
      await until(() => calls.length === 3);
      assert.deepEqual(values(calls), [['a'], ['b'], ['c']]);
      held[1]?.resolve(['ok:b']);
      held[2]?.resolve(['ok:c']);
      await until(() => calls.length === 5);
      held[3]?.resolve(['ok:d']);
      held[4]?.resolve(['ok:e']);
      await until(() => heard.results.length === 5);
      assert.deepEqual(heard.results.map((r) => r.result), ['ok:a', 'ok:b', 'ok:c', 'ok:d', 'ok:e']);
      assert.equal(batcher.pending, 0);
    });

    it('counts maxInFlight per group: a group whose call is out gathers its next requests into one call, and holds up no other group', async () => {
      const { batcher, calls, held } = fakeBatcher({ hold: true, maxInFlight: 1 });
      const heard = listener();
      batcher.submit({ group: 1, value: 'a1' }, heard.onResult, heard.onError, 'a1');
      await turn();
      for (const value of ['b1', 'c1']) {
        batcher.submit({ group: 1, value }, heard.onResult, heard.onError, value);
        await turn();
      }
      batcher.submit({ group: 2, value: 'a2' }, heard.onResult, heard.onError, 'a2');
      await turn();
      assert.deepEqual(values(calls), [['a1'], ['a2']], 'group 2 went out while group 1 had a call out');
      held[1]?.resolve(['ok:a2']);
      await until(() => heard.results.length === 1);
      held[0]?.resolve(['ok:a1']);
      await until(() => calls.length === 3);
      assert.deepEqual(values(calls)[2], ['b1', 'c1'], 'two turns of group 1, one call');
      held[2]?.resolve(['ok:b1', 'ok:c1']);
      await until(() => heard.results.length === 4);
      assert.deepEqual(heard.results.map((r) => r.result), ['ok:a2', 'ok:a1', 'ok:b1', 'ok:c1']);
      assert.equal(batcher.pending, 0);
    });
  });

  describe('the give-up clock', () => {
    it('runs per group: a group Redis does not answer fails alone, another group\'s calls are answered', async () => {
      const clock = new ManualClock();
      const { batcher, calls, held } = fakeBatcher({ hold: true, maxInFlight: 1, timeoutMs: 60_000, clock });
      const heard = listener();
      batcher.submit({ group: 1, value: 'dead' }, heard.onResult, heard.onError, 'dead');
      await turn();
      batcher.submit({ group: 1, value: 'dead-next' }, heard.onResult, heard.onError, 'dead-next');
      clock.advance(30_000);
      // Sent 30 s after the dead group's call: its own deadline is 30 s after that one's.
      batcher.submit({ group: 2, value: 'slow' }, heard.onResult, heard.onError, 'slow');
      await turn();
      clock.advance(30_000);
      await until(() => heard.errors.length === 2);
      assert.equal(heard.results.length, 0, 'the other group is not failed with it');
      assert.deepEqual(heard.errors.map((e) => e.context), ['dead', 'dead-next']);
      for (const { error } of heard.errors) assert.ok(error instanceof TimeoutError);
      assert.equal(calls.length, 2, 'the waiting call of the dead group was never sent');
      held[1]?.resolve(['ok:slow']);
      await until(() => heard.results.length === 1);
      assert.deepEqual(heard.results.map((r) => r.context), ['slow']);
    });

    it('starts at send: calls queued here behind slow but answering calls are not timed out', async () => {
      // One call out at a time, each answered after 20 s, with a 30 s
      // give-up: the fifth call is answered 100 s (of the test's clock) after it was submitted.
      const clock = new ManualClock();
      const { batcher, calls, held } = fakeBatcher({ hold: true, maxBatch: 1, maxInFlight: 1, timeoutMs: 30_000, clock });
      const heard = listener();
      for (let i = 0; i < 5; i++) batcher.submit({ group: 0, value: `v${i}` }, heard.onResult, heard.onError, i);
      let answered = 0;
      const started = clock.now();
      while (answered < 5) {
        await until(() => held.length > answered);
        const call = held[answered] as Held;
        clock.advance(20_000);
        await turn();
        call.resolve(call.items.map((item) => `ok:${item.value}`));
        answered++;
      }
      await until(() => heard.results.length + heard.errors.length === 5);
      assert.deepEqual(heard.errors, []);
      assert.equal(heard.results.length, 5);
      assert.equal(calls.length, 5);
      assert.ok(clock.now() - started >= 100_000, 'the burst outlasted the give-up time several times over');
    });

    it('does not time out calls that wait in the server’s own queue behind slow but answering calls', async () => {
      // A server that runs one call at a time, 20 ms each, in the order
      // they arrive: three calls out at once, a 30 ms give-up.
      const queue: (() => void)[] = [];
      let busy = false;
      const runNext = (): void => {
        const next = queue.shift();
        if (next === undefined) {
          busy = false;
          return;
        }
        busy = true;
        setTimeout(() => {
          next();
          runNext();
        }, 20);
      };
      const batcher = new TickBatcher<Item, string>({
        send: (items) =>
          new Promise<string[]>((resolve) => {
            queue.push(() => resolve(items.map((item) => `ok:${item.value}`)));
            if (!busy) runNext();
          }),
        groupOf: () => 0,
        maxBatch: 1,
        maxInFlight: 3,
        timeoutMs: 30,
      });
      const heard = listener();
      for (let i = 0; i < 6; i++) batcher.submit({ group: 0, value: `v${i}` }, heard.onResult, heard.onError, i);
      await until(() => heard.results.length + heard.errors.length === 6);
      assert.deepEqual(heard.errors, []);
      assert.deepEqual(heard.results.map((r) => r.result), ['ok:v0', 'ok:v1', 'ok:v2', 'ok:v3', 'ok:v4', 'ok:v5']);
    });

    it('fails a call the server does not answer with a TimeoutError naming the cause, and every call waiting unsent with it', async () => {
      const clock = new ManualClock();
      const { batcher, calls } = fakeBatcher({ hold: true, maxBatch: 1, maxInFlight: 1, timeoutMs: 30_000, clock, cause: () => 'connect ECONNREFUSED 127.0.0.1:6390' });
      const heard = listener();
      for (const value of ['a', 'b', 'c']) batcher.submit({ group: 0, value }, heard.onResult, heard.onError, value);
      await turn();
      clock.advance(29_999);
      await turn();
      assert.equal(heard.errors.length, 0, 'nothing fails before the give-up time');
      clock.advance(1);
      await until(() => heard.errors.length === 3);
      assert.equal(calls.length, 1, 'the waiting calls were never sent');
      assert.deepEqual(heard.errors.map((e) => e.context).sort(), ['a', 'b', 'c']);
      for (const { error } of heard.errors) {
        assert.ok(error instanceof TimeoutError);
        assert.match(error.message, /did not answer within 30000 ms \(connect ECONNREFUSED 127\.0\.0\.1:6390\)/);
      }
      assert.deepEqual(heard.results, []);
      assert.equal(batcher.pending, 0);
    });

    it('ignores an answer that comes after the timeout: each request is told once, and the batcher goes on', async () => {
      const clock = new ManualClock();
      const { batcher, calls, held } = fakeBatcher({ hold: true, maxBatch: 10, maxInFlight: 1, timeoutMs: 30_000, clock });
      const heard = listener();
      batcher.submit({ group: 0, value: 'slow' }, heard.onResult, heard.onError, 'slow');
      batcher.submit({ group: 0, value: 'slower' }, heard.onResult, heard.onError, 'slower');
      await turn();
      clock.advance(30_000);
      await until(() => heard.errors.length === 2);
      const uncaught: unknown[] = [];
      const onUncaught = (error: unknown): void => {
        uncaught.push(error);
      };
      process.on('uncaughtException', onUncaught);
      try {
        held[0]?.resolve(['too late', 'too late']);
        await turn();
        await turn();
      } finally {
        process.removeListener('uncaughtException', onUncaught);
      }
      assert.deepEqual(heard.results, [], 'the late answer reached nobody');
      assert.equal(heard.errors.length, 2, 'each request was told once, of the timeout');
      assert.ok(heard.errors.every((e) => e.error instanceof TimeoutError));
      assert.deepEqual(uncaught, []);
      assert.equal(batcher.pending, 0);
      // The call's place in flight was given back at the timeout: the next
      // request is sent and answered, and only it.
      batcher.submit({ group: 0, value: 'next' }, heard.onResult, heard.onError, 'next');
      await until(() => calls.length === 2);
      held[1]?.resolve(['ok:next']);
      await until(() => heard.results.length === 1);
      assert.deepEqual(heard.results, [{ result: 'ok:next', context: 'next' }]);
      assert.equal(heard.errors.length, 2);
    });

    it('ignores a failure that comes after the timeout', async () => {
      const clock = new ManualClock();
      const { batcher, held } = fakeBatcher({ hold: true, timeoutMs: 30_000, clock });
      const heard = listener();
      batcher.submit({ group: 0, value: 'x' }, heard.onResult, heard.onError, 'x');
      await turn();
      clock.advance(30_000);
      await until(() => heard.errors.length === 1);
      held[0]?.reject(new Error('connection lost, later'));
      await turn();
      await turn();
      assert.equal(heard.errors.length, 1);
      assert.ok(heard.errors[0]?.error instanceof TimeoutError);
      assert.deepEqual(heard.results, []);
    });

    describe('a timer that fires late after a long synchronous turn, while the reply waits unread', () => {
      let server: Server;
      let client: Socket;
      // What the server does after writing its reply: hold the event loop.
      let holdFor = 0;

      before(async () => {
        server = createServer((socket) => {
          socket.on('data', (request: Buffer) => {
            socket.write(request);
            // The reply is on its way to the client's socket; this process
            // now does a long synchronous job, as a busy flow does.
            const until = Date.now() + holdFor;
            while (Date.now() < until) {
              // busy
            }
          });
        });
        await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
        const address = server.address();
        if (address === null || typeof address === 'string') throw new Error('no port');
        client = connect({ host: '127.0.0.1', port: address.port });
        client.setNoDelay(true);
        await new Promise<void>((resolve) => client.once('connect', () => resolve()));
      });

      after(async () => {
        client.destroy();
        await new Promise<void>((resolve) => server.close(() => resolve()));
      });

      /** A batcher whose calls go over the loopback socket; each reply answers the call. */
      function socketBatcher(timeoutMs: number): TickBatcher<Item, string> {
        return new TickBatcher<Item, string>({
          send: (items) =>
            new Promise<string[]>((resolve) => {
              client.once('data', () => resolve(items.map((item) => `ok:${item.value}`)));
              client.write('x');
            }),
          groupOf: () => 0,
          maxBatch: 100,
          timeoutMs,
        });
      }

      for (const [name, late] of [
        ['a little late', 0.2],
        ['far past its deadline', 3],
      ] as const) {
        it(`is not a timeout when it fires ${name}`, async () => {
          const timeoutMs = 50;
          holdFor = timeoutMs * (1 + late);
          const batcher = socketBatcher(timeoutMs);
          const heard = listener();
          batcher.submit({ group: 0, value: 'answered' }, heard.onResult, heard.onError, 'answered');
          await until(() => heard.results.length + heard.errors.length === 1, 5000);
          assert.deepEqual(heard.errors.map((e) => String(e.error)), []);
          assert.deepEqual(heard.results, [{ result: 'ok:answered', context: 'answered' }]);
        });
      }
    });
  });

  describe('failures', () => {
    it('fails every request of a call that fails, and only those', async () => {
      const batcher = new TickBatcher<Item, string>({
        send: (items) => (items[0]?.value === 'bad' ? Promise.reject(new Error('NOSCRIPT and worse')) : Promise.resolve(items.map(() => 'fine'))),
        groupOf: (item) => item.group,
        maxBatch: 100,
        timeoutMs: 1000,
      });
      const heard = listener();
      batcher.submit({ group: 1, value: 'bad' }, heard.onResult, heard.onError, 'bad-1');
      batcher.submit({ group: 1, value: 'also in the bad call' }, heard.onResult, heard.onError, 'bad-2');
      batcher.submit({ group: 2, value: 'good' }, heard.onResult, heard.onError, 'good');
      await until(() => heard.results.length + heard.errors.length === 3);
      assert.deepEqual(heard.results, [{ result: 'fine', context: 'good' }]);
      assert.deepEqual(heard.errors.map((e) => [e.context, (e.error as Error).message]), [
        ['bad-1', 'NOSCRIPT and worse'],
        ['bad-2', 'NOSCRIPT and worse'],
      ]);
    });

    it('fails every request when the server answers with the wrong number of results', async () => {
      const batcher = new TickBatcher<Item, string>({ send: () => Promise.resolve(['only one']), groupOf: () => 0, maxBatch: 100, timeoutMs: 1000 });
      const heard = listener();
      batcher.submit({ group: 0, value: 'a' }, heard.onResult, heard.onError, 'a');
      batcher.submit({ group: 0, value: 'b' }, heard.onResult, heard.onError, 'b');
      await until(() => heard.errors.length === 2);
      for (const { error } of heard.errors) assert.match(String(error), /expected 2 results from Redis, got 1/);
      assert.deepEqual(heard.results, []);
    });

    it('fails the call when send throws synchronously', async () => {
      const batcher = new TickBatcher<Item, string>({
        send: () => {
          throw new Error('not connected');
        },
        groupOf: () => 0,
        maxBatch: 100,
        timeoutMs: 1000,
      });
      const heard = listener();
      batcher.submit({ group: 0, value: 'a' }, heard.onResult, heard.onError, 'a');
      await until(() => heard.errors.length === 1);
      assert.equal((heard.errors[0]?.error as Error).message, 'not connected');
      assert.equal(batcher.pending, 0);
    });

    it('names the connection’s last error instead of ioredis’ own words for a command it could not send', async () => {
      const batcher = new TickBatcher<Item, string>({
        // ioredis' own error for a command it could not send, and an error Redis answered with (redis-errors' ReplyError, as ioredis' parser makes it).
        send: (items) => Promise.reject(items[0]?.value === 'ioredis' ? new Error('Reached the max retries per request limit (which is 1).') : new RedisAnswer('ERR wrong number of arguments')),
        groupOf: (item) => item.group,
        maxBatch: 100,
        timeoutMs: 1000,
        cause: () => 'connect ECONNREFUSED 127.0.0.1:6390',
      });
      const heard = listener();
      batcher.submit({ group: 1, value: 'ioredis' }, heard.onResult, heard.onError, 'ioredis');
      batcher.submit({ group: 2, value: 'server' }, heard.onResult, heard.onError, 'server');
      await until(() => heard.errors.length === 2);
      const byContext = new Map(heard.errors.map((e) => [e.context, e.error as Error]));
      assert.equal(byContext.get('ioredis')?.message, 'Redis is unreachable: connect ECONNREFUSED 127.0.0.1:6390');
      assert.match(String((byContext.get('ioredis')?.cause as Error).message), /max retries per request/);
      assert.ok(byContext.get('ioredis') instanceof StoreUnreachableError);
      assert.equal(byContext.get('server')?.message, 'ERR wrong number of arguments', 'a server error is shown as it is');
      assert.ok(byContext.get('server') instanceof ScriptFailedError, 'an answer of Redis is a script failure, by its type');
    });

    it('keeps an error it cannot place as it is: a send that throws, or a failure while the connection is ready', async () => {
      const batcher = new TickBatcher<Item, string>({
        send: (items) => {
          if (items[0]?.value === 'throws') throw new TypeError('a fault of the store');
          return Promise.reject(new Error('Connection is closed.'));
        },
        groupOf: (item) => item.group,
        maxBatch: 100,
        timeoutMs: 1000,
        // The connection is ready: nothing names a cause.
        cause: () => undefined,
      });
      const heard = listener();
      batcher.submit({ group: 1, value: 'throws' }, heard.onResult, heard.onError, 'throws');
      batcher.submit({ group: 2, value: 'closed' }, heard.onResult, heard.onError, 'closed');
      await until(() => heard.errors.length === 2);
      const byContext = new Map(heard.errors.map((e) => [e.context, e.error as Error]));
      assert.ok(byContext.get('throws') instanceof TypeError);
      assert.equal(byContext.get('closed')?.message, 'Connection is closed.');
      assert.ok(!(byContext.get('closed') instanceof StoreUnreachableError));
    });

    it('tells onAnswer of each call Redis answered, with its requests and time; not of a failed one', async () => {
      const told: { items: number; ms: number }[] = [];
      const batcher = new TickBatcher<Item, string>({
        send: (items) => (items[0]?.value === 'fails' ? Promise.reject(new Error('down')) : Promise.resolve(items.map((item) => item.value))),
        groupOf: (item) => item.group,
        maxBatch: 100,
        timeoutMs: 1000,
        onAnswer: (items, ms) => told.push({ items, ms }),
      });
      const heard = listener();
      for (const value of ['a', 'b', 'c']) batcher.submit({ group: 1, value }, heard.onResult, heard.onError, value);
      batcher.submit({ group: 2, value: 'fails' }, heard.onResult, heard.onError, 'fails');
      await until(() => heard.results.length === 3 && heard.errors.length === 1);
      assert.deepEqual(told.map((t) => t.items), [3]);
      assert.ok((told[0]?.ms ?? -1) >= 0);
    });

    /** Runs `body` with every uncaught exception and process warning recorded instead of handled by mocha or printed. */
    async function watchingTheProcess(body: (seen: { uncaught: unknown[]; warnings: Error[] }) => Promise<void>): Promise<{ uncaught: unknown[]; warnings: Error[] }> {
      const seen = { uncaught: [] as unknown[], warnings: [] as Error[] };
      // Mocha's own handler would fail the test at once; this test reports what it saw instead.
      const mochaHandlers = process.listeners('uncaughtException');
      const warningHandlers = process.listeners('warning');
      process.removeAllListeners('uncaughtException');
      process.removeAllListeners('warning');
      process.on('uncaughtException', (error) => seen.uncaught.push(error));
      process.on('warning', (warning) => seen.warnings.push(warning));
      try {
        await body(seen);
        // An exception raised again later (a microtask, a timer) would land here.
        await turn();
        await sleep(5);
      } finally {
        process.removeAllListeners('uncaughtException');
        process.removeAllListeners('warning');
        for (const handler of mochaHandlers) process.on('uncaughtException', handler);
        for (const handler of warningHandlers) process.on('warning', handler);
      }
      return seen;
    }

    const throwing = (): never => {
      throw new Error('a flow bug');
    };

    it('answers the other requests of a call when one callback throws, and tells onCallbackError, never the process', async () => {
      const told: { error: unknown; context: unknown }[] = [];
      const { batcher } = fakeBatcher({ onCallbackError: (error, context) => told.push({ error, context }) });
      const heard = listener();
      const seen = await watchingTheProcess(async () => {
        batcher.submit({ group: 0, value: 'a' }, heard.onResult, heard.onError, 'a');
        batcher.submit({ group: 0, value: 'b' }, throwing, heard.onError, 'b');
        batcher.submit({ group: 0, value: 'c' }, heard.onResult, heard.onError, 'c');
        await until(() => heard.results.length === 2 && told.length === 1);
      });
      assert.deepEqual(heard.results.map((r) => r.context), ['a', 'c']);
      assert.deepEqual(heard.errors, []);
      assert.deepEqual(told.map((t) => [(t.error as Error).message, t.context]), [['a flow bug', 'b']]);
      assert.deepEqual(seen.uncaught, [], 'nothing raised as an uncaught exception');
      assert.deepEqual(seen.warnings, []);

      // A failed call's error callbacks likewise.
      const failed = listener();
      const failing = fakeBatcher({ send: () => Promise.reject(new Error('down')), onCallbackError: (error, context) => told.push({ error, context }) });
      const again = await watchingTheProcess(async () => {
        failing.batcher.submit({ group: 0, value: 'e' }, failed.onResult, throwing, 'e');
        failing.batcher.submit({ group: 0, value: 'f' }, failed.onResult, failed.onError, 'f');
        await until(() => failed.errors.length === 1 && told.length === 2);
      });
      assert.deepEqual(told.map((t) => t.context), ['b', 'e']);
      assert.deepEqual(failed.errors.map((e) => [(e.error as Error).message, e.context]), [['down', 'f']]);
      assert.deepEqual(again.uncaught, []);
    });

    it('makes a throwing callback a process warning when nobody is told, or when telling throws too: never an uncaught exception', async () => {
      const { batcher } = fakeBatcher();
      const reporting = fakeBatcher({
        onCallbackError: () => {
          throw new Error('the report failed');
        },
      });
      const heard = listener();
      const seen = await watchingTheProcess(async (s) => {
        batcher.submit({ group: 0, value: 'a' }, throwing, heard.onError, 'a');
        batcher.submit({ group: 0, value: 'b' }, heard.onResult, heard.onError, 'b');
        reporting.batcher.submit({ group: 0, value: 'c' }, throwing, heard.onError, 'c');
        await until(() => heard.results.length === 1 && s.warnings.length === 3);
      });
      assert.deepEqual(seen.uncaught, []);
      assert.deepEqual(seen.warnings.map((w) => w.message), ['a flow bug', 'a flow bug', 'the report failed']);
      assert.deepEqual(heard.results.map((r) => r.context), ['b']);
    });
  });

  describe('abandon()', () => {
    it('goes on taking requests after abandon(), each group sent as before', async () => {
      const { batcher, calls } = fakeBatcher({ hold: true, maxInFlight: 1 });
      const heard = listener();
      batcher.submit({ group: 1, value: 'a' }, heard.onResult, heard.onError, 'a');
      batcher.abandon(new Error('closing'));
      batcher.submit({ group: 1, value: 'b' }, heard.onResult, heard.onError, 'b');
      await until(() => calls.length === 1);
      assert.deepEqual(values(calls), [['b']]);
      assert.deepEqual(heard.errors.map((e) => e.context), ['a']);
    });

    it('answers every request out, waiting or still open with the error, and ignores the answers that come later', async () => {
      const { batcher, calls, held } = fakeBatcher({ hold: true, maxBatch: 2, maxInFlight: 1 });
      const heard = listener();
      // a+b: a full call, out at once; c+d: a full call, waiting; e: open.
      for (const value of ['a', 'b', 'c', 'd', 'e']) batcher.submit({ group: 0, value }, heard.onResult, heard.onError, value);
      assert.deepEqual(values(calls), [['a', 'b']]);
      const closing = new Error('the node is closing');
      batcher.abandon(closing);
      assert.deepEqual(heard.errors.map((e) => e.context), ['a', 'b', 'c', 'd', 'e']);
      assert.ok(heard.errors.every((e) => e.error === closing));
      assert.equal(batcher.pending, 0);
      held[0]?.resolve(['late', 'late']);
      await turn();
      await turn();
      assert.deepEqual(heard.results, []);
      assert.equal(heard.errors.length, 5);
      assert.deepEqual(values(calls), [['a', 'b']], 'nothing abandoned is sent afterwards');
    });
  });
});
