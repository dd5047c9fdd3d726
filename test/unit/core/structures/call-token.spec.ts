import assert from 'node:assert/strict';
import { nextToken } from '../../../../src/core/structures/call-token';

describe('core/structures/call-token nextToken', () => {
  it('is unique per call, a whole number below 2^48 (exact in Lua and in the saved state)', () => {
    const tokens = new Set<number>();
    for (let i = 0; i < 10_000; i++) {
      const token = nextToken();
      assert.ok(Number.isSafeInteger(token) && token > 0 && token < 2 ** 48, String(token));
      tokens.add(token);
    }
    assert.equal(tokens.size, 10_000);
  });
});
