import assert from 'node:assert/strict';
import { nextCallToken } from '../../src/redis/call-token';
import { TickBatcher, TimeoutError } from '../../src/redis/tick-batcher';

interface Item {
  group: number;
  value: string;
}

/** A batcher over a fake server that records each call it receives. */
function recordingBatcher(options: { maxBatch?: number; timeoutMs?: number; answer?: (items: Item[]) => Promise<string[]> } = {}) {
  const calls: Item[][] = [];
  const batcher = new TickBatcher<Item, string>({
    send: (items) => {
      calls.push(items);
      return options.answer ? options.answer(items) : Promise.resolve(items.map((item) => `ok:${item.value}`));
    },
    groupOf: (item) => item.group,
    maxBatch: options.maxBatch ?? 100,
    timeoutMs: options.timeoutMs ?? 1000,
  });
  return { batcher, calls };
}

describe('redis/tick-batcher TickBatcher', () => {
  it('sends what arrives in one tick as one call, in arrival order, and answers each caller', async () => {
    const { batcher, calls } = recordingBatcher();
    const answers = await Promise.all(['a', 'b', 'c'].map((value) => batcher.submit({ group: 0, value })));
    assert.deepEqual(answers, ['ok:a', 'ok:b', 'ok:c']);
    assert.equal(calls.length, 1);
    assert.deepEqual(calls[0]?.map((item) => item.value), ['a', 'b', 'c']);
  });

  it('sends later ticks as later calls', async () => {
    const { batcher, calls } = recordingBatcher();
    const first = batcher.submit({ group: 0, value: 'a' });
    await new Promise((resolve) => setImmediate(resolve));
    const second = batcher.submit({ group: 0, value: 'b' });
    assert.deepEqual(await Promise.all([first, second]), ['ok:a', 'ok:b']);
    assert.equal(calls.length, 2);
  });

  it('never mixes groups in one call and keeps order within each group', async () => {
    const { batcher, calls } = recordingBatcher();
    const items: Item[] = [
      { group: 1, value: '1a' },
      { group: 2, value: '2a' },
      { group: 1, value: '1b' },
      { group: 2, value: '2b' },
      { group: 1, value: '1c' },
    ];
    const answers = await Promise.all(items.map((item) => batcher.submit(item)));
    assert.deepEqual(answers, items.map((item) => `ok:${item.value}`));
    assert.deepEqual(calls.map((call) => call.map((item) => item.value)), [['1a', '1b', '1c'], ['2a', '2b']]);
  });

  it('splits a group into calls of at most maxBatch, in order', async () => {
    const { batcher, calls } = recordingBatcher({ maxBatch: 2 });
    const values = ['a', 'b', 'c', 'd', 'e'];
    const answers = await Promise.all(values.map((value) => batcher.submit({ group: 0, value })));
    assert.deepEqual(answers, values.map((v) => `ok:${v}`));
    assert.deepEqual(calls.map((call) => call.map((item) => item.value)), [['a', 'b'], ['c', 'd'], ['e']]);
  });

  it('rejects every item of a call that fails, and only those', async () => {
    const { batcher } = recordingBatcher({
      maxBatch: 1,
      answer: (items) => (items[0]?.value === 'bad' ? Promise.reject(new Error('NOSCRIPT and worse')) : Promise.resolve(['fine'])),
    });
    const results = await Promise.allSettled([batcher.submit({ group: 0, value: 'bad' }), batcher.submit({ group: 0, value: 'good' })]);
    assert.equal(results[0]?.status, 'rejected');
    assert.deepEqual(results[1], { status: 'fulfilled', value: 'fine' });
  });

  it('rejects with TimeoutError when the server does not answer in time, and ignores a late answer', async () => {
    let release: (answer: string[]) => void = () => undefined;
    const { batcher } = recordingBatcher({
      timeoutMs: 30,
      answer: () => new Promise<string[]>((resolve) => {
        release = resolve;
      }),
    });
    const started = Date.now();
    await assert.rejects(batcher.submit({ group: 0, value: 'slow' }), (error: unknown) => {
      assert.ok(error instanceof TimeoutError);
      assert.match(error.message, /within 30 ms/);
      return true;
    });
    assert.ok(Date.now() - started < 1000);
    release(['too late']); // must not throw or resolve anything twice
  });

  it('rejects all items when the server answers with the wrong number of results', async () => {
    const { batcher } = recordingBatcher({ answer: () => Promise.resolve(['only one']) });
    const results = await Promise.allSettled([batcher.submit({ group: 0, value: 'a' }), batcher.submit({ group: 0, value: 'b' })]);
    for (const result of results) {
      assert.equal(result.status, 'rejected');
      assert.match(String((result as PromiseRejectedResult).reason), /expected 2 results/);
    }
  });

  it('answers submitWith through its callbacks, with its context, in order with submit, never synchronously', async () => {
    const { batcher, calls } = recordingBatcher({ maxBatch: 2 });
    const heard: string[] = [];
    const onResult = (result: string, context: string) => heard.push(`${context}=${result}`);
    const onError = (error: unknown, context: string) => heard.push(`${context}!${String(error)}`);
    batcher.submitWith({ group: 0, value: 'a' }, onResult, onError, 'first');
    const b = batcher.submit({ group: 0, value: 'b' }); // fills a call, sent at once
    batcher.submitWith({ group: 0, value: 'c' }, onResult, onError, 'third');
    assert.deepEqual(heard, []);
    assert.equal(await b, 'ok:b');
    await new Promise((resolve) => setImmediate(resolve));
    await new Promise((resolve) => setImmediate(resolve));
    assert.deepEqual(heard, ['first=ok:a', 'third=ok:c']);
    assert.deepEqual(calls.map((call) => call.map((item) => item.value)), [['a', 'b'], ['c']]);
  });

  it('calls the onError of submitWith, once, on a timeout, and ignores a late answer', async () => {
    let release: (answer: string[]) => void = () => undefined;
    const { batcher } = recordingBatcher({
      timeoutMs: 30,
      answer: () => new Promise<string[]>((resolve) => {
        release = resolve;
      }),
    });
    const heard: unknown[] = [];
    await new Promise<void>((resolve) => {
      batcher.submitWith(
        { group: 0, value: 'slow' },
        (result) => heard.push(result),
        (error, context) => {
          heard.push(error, context);
          resolve();
        },
        'ctx',
      );
    });
    release(['too late']);
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(heard.length, 2);
    assert.ok(heard[0] instanceof TimeoutError);
    assert.equal(heard[1], 'ctx');
  });
});

describe('redis/call-token nextCallToken', () => {
  it('is unique per call and has no dot (the scripts append .<index>)', () => {
    const tokens = new Set<string>();
    for (let i = 0; i < 10_000; i++) {
      const token = nextCallToken();
      assert.doesNotMatch(token, /\./);
      tokens.add(token);
    }
    assert.equal(tokens.size, 10_000);
  });
});
