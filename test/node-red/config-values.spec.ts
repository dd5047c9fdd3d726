import { strict as assert } from 'assert';
import { oneOf } from '../../src/node-red/config-values';

describe('node-red/config-values oneOf', () => {
  const STORES = ['memory', 'redis'] as const;

  it('takes an allowed word as it is', () => {
    assert.equal(oneOf('redis', 'store', STORES, 'memory'), 'redis');
  });

  it('reads blank as the default', () => {
    for (const blank of [undefined, null, '', '  ']) assert.equal(oneOf(blank, 'store', STORES, 'memory'), 'memory');
  });

  it('refuses any other value, naming the option, the words allowed and the value', () => {
    assert.throws(() => oneOf('Redis', 'store', STORES, 'memory'), /^Error: store must be "memory" or "redis", not "Redis"$/);
    assert.throws(() => oneOf(true, 'store', STORES, 'memory'), /store must be "memory" or "redis", not true/);
    assert.throws(() => oneOf({ toString: () => 'redis' }, 'store', STORES, 'memory'), /not \{\}/);
  });
});
