import { grown, RecencyIndex } from '../core/structures/recency-index';

/**
 * For the sensor node's TTL what-if: how long after a key's first admission
 * its replays arrive. The node remembers every key for *Remember*; this
 * sample remembers the admission time of a bounded share of them, chosen by
 * a hash of the key, so that a replay of a chosen key is always recognised
 * and its gap measured, however long after its first copy it comes.
 *
 * The share halves whenever the sample is full (keys are kept when the low
 * `level` bits of their hash are zero; raising the level drops half of the
 * kept keys and keeps the rest consistent), so the sample covers the whole
 * TTL at any traffic, at a fixed size. Keys older than the TTL are dropped:
 * a copy arriving after them is admitted as new, not replayed.
 *
 * A replay of a chosen key whose admission the sample never saw (it came
 * before the node started, or before the key was chosen) has no known gap
 * and is only counted.
 */
/** Past one key in 2^30, the oldest key makes room instead (a hash that never varies). */
const MAX_LEVEL = 30;

export interface KeyArrivalStats {
  /** Replays of sampled keys whose gap is known ... */
  measured: number;
  /** ... and those whose admission the sample had not seen. */
  unmeasured: number;
  /** One key in 2^level is sampled. */
  level: number;
  keys: number;
  /** Epoch ms since which the sample has been collecting. */
  since: number;
}

export class KeyArrivals {
  private readonly index: RecencyIndex;
  private admittedAt = new Float64Array(0);
  private level = 0;
  private mask = 0;
  private readonly gaps: Float64Array;
  private gapHead = 0;
  private gapCount = 0;
  private unmeasured = 0;

  constructor(
    private readonly ttlMs: number,
    private readonly maxKeys: number,
    maxGaps: number,
    private readonly since: number,
  ) {
    this.gaps = new Float64Array(maxGaps);
    this.index = new RecencyIndex(maxKeys, (capacity) => {
      this.admittedAt = grown(this.admittedAt, capacity);
    });
  }

  admitted(key: string, now: number): void {
    const hash = keyHash(key);
    if ((hash & this.mask) !== 0) return;
    let slot = this.index.slot(key);
    if (slot !== undefined) {
      // Admitted again: its earlier admission had expired.
      this.index.touch(slot);
    } else {
      this.forgetExpired(now);
      while (this.index.size >= this.maxKeys) {
        if (this.level < MAX_LEVEL) this.raiseLevel();
        else this.index.remove(this.index.oldest);
      }
      if ((hash & this.mask) !== 0) return;
      slot = this.index.insert(key);
    }
    this.admittedAt[slot] = now;
  }

  replayed(key: string, now: number): void {
    if ((keyHash(key) & this.mask) !== 0) return;
    const slot = this.index.slot(key);
    if (slot === undefined) {
      this.unmeasured++;
      return;
    }
    this.gaps[this.gapHead] = now - (this.admittedAt[slot] as number);
    this.gapHead = (this.gapHead + 1) % this.gaps.length;
    if (this.gapCount < this.gaps.length) this.gapCount++;
  }

  /** The measured gaps (ms), most recent `maxGaps` of them, in no order. */
  measuredGaps(): Float64Array {
    return this.gaps.slice(0, this.gapCount);
  }

  stats(): KeyArrivalStats {
    return { measured: this.gapCount, unmeasured: this.unmeasured, level: this.level, keys: this.index.size, since: this.since };
  }

  private forgetExpired(now: number): void {
    let oldest = this.index.oldest;
    while (oldest !== -1 && (this.admittedAt[oldest] as number) + this.ttlMs <= now) {
      this.index.remove(oldest);
      oldest = this.index.oldest;
    }
  }

  private raiseLevel(): void {
    this.level++;
    this.mask = (1 << this.level) - 1;
    let slot = this.index.oldest;
    while (slot !== -1) {
      const next = this.index.next(slot);
      if ((keyHash(this.index.keyAt(slot)) & this.mask) !== 0) this.index.remove(slot);
      slot = next;
    }
  }
}

/** FNV-1a of the key: the keys' own last characters are a SHA-256 in hex, but a key property may be anything. */
export function keyHash(key: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < key.length; i++) {
    hash ^= key.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return hash >>> 0;
}
