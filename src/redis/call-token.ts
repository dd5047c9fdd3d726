import { randomBytes } from 'crypto';

/**
 * Tokens that make a script call recognisable if ioredis resends it after a
 * dropped connection (see the ARGV notes in lua/). Unique per call across
 * processes: a random per-process part plus a counter. Short, because the
 * window record stores one per asset.
 */
const processPart = randomBytes(6).toString('base64url');
let counter = 0;

export function nextCallToken(): string {
  counter = (counter + 1) % Number.MAX_SAFE_INTEGER;
  return `${processPart}${counter.toString(36)}`;
}
