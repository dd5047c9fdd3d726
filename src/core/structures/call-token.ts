/**
 * 48-bit tokens, unique per use across processes: a random starting point
 * per process, then counting. They name a script call (so that a call
 * ioredis resends is recognised by the records it wrote) and a message's
 * claims on the seen-set (so that only that message may confirm them).
 * 48 bits: two processes' tokens meet with odds of about one in 2^48 per
 * token, and the Lua side reads them as exact integers.
 */
import { randomBytes } from 'crypto';

const SPACE = 2 ** 48;
let next = randomBytes(6).readUIntBE(0, 6);

export function nextToken(): number {
  next = next + 1 === SPACE ? 1 : next + 1;
  return next;
}
