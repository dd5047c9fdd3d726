import { deviceOfKey } from '../core/idempotency-key';
import { BoundedSeenSet } from '../core/seen-set';
import type { SeenClaim, SeenStore } from './types';

/** The seen-set in this Node-RED process, bounded by TTL and by maxKeys. */
export class MemorySeenStore implements SeenStore {
  private readonly seen: BoundedSeenSet;

  constructor(
    settings: { ttlSeconds: number; maxKeys: number },
    private readonly now: () => number = Date.now,
  ) {
    this.seen = new BoundedSeenSet(settings.ttlSeconds * 1000, settings.maxKeys);
  }

  get size(): number {
    return this.seen.size;
  }

  claim(claims: readonly SeenClaim[]): boolean[] {
    const now = this.now();
    return claims.map((c) => this.seen.claim(c.key, now));
  }

  reset(deviceId?: string): void {
    if (deviceId === undefined) this.seen.clear();
    else this.seen.deleteWhere((key) => deviceOfKey(key) === deviceId);
  }
}
