import { deviceOfKey } from '../core/sensor/idempotency-key';
import { BoundedSeenSet, type SeenEntry } from '../core/sensor/seen-set';
import type { ClaimRequest, Replies, SeenSettings, SeenStore, SettleRequest } from './types';

export interface MemorySeenSettings extends SeenSettings {
  maxKeys: number;
  /** How keys are made (see the sensor node's Key option): what a reset of one device or key removes. */
  keyMode: 'reading' | 'property';
}

/**
 * The seen-set in this Node-RED process, bounded by TTL and by maxKeys; held
 * by node id across redeploys and saved to the user directory across
 * restarts (see node-red/memory-state and persist/).
 */
export class MemorySeenStore implements SeenStore {
  private readonly seen: BoundedSeenSet;
  private settings: MemorySeenSettings;

  constructor(
    settings: MemorySeenSettings,
    private readonly now: () => number = Date.now,
  ) {
    this.settings = { ...settings };
    this.seen = new BoundedSeenSet(limits(settings));
  }

  get size(): number {
    return this.seen.size;
  }

  get maxEntries(): number {
    return this.settings.maxKeys;
  }

  /** Keys pending a confirm now; none without confirm mode (no walk of the keys then). */
  pendingKeys(): number {
    return this.settings.confirm ? this.seen.pendingCount(this.now()) : 0;
  }

  reconfigure(settings: MemorySeenSettings): void {
    this.settings = { ...settings };
    this.seen.reconfigure(limits(settings));
  }

  claim<C>(request: ClaimRequest, replies: Replies<number[], C>, context: C): void {
    const now = this.now();
    const { claims, token } = request;
    const codes = new Array<number>(claims.length);
    let i = 0;
    for (const claim of claims) codes[i++] = this.seen.claim(claim.key, token, this.settings.confirm, now);
    replies.value(codes, context);
  }

  settle<C>(request: SettleRequest, replies: Replies<number[], C>, context: C): void {
    const now = this.now();
    replies.value(
      request.claims.map((claim) => this.seen.settle(claim.key, request.token, request.action, now)),
      context,
    );
  }

  // The journal's view of the store (node-red/memory-state): the seen-set's own.
  get onChange(): ((key: string) => void) | undefined {
    return this.seen.onChange;
  }

  set onChange(listener: ((key: string) => void) | undefined) {
    this.seen.onChange = listener;
  }

  get onClear(): (() => void) | undefined {
    return this.seen.onClear;
  }

  set onClear(listener: (() => void) | undefined) {
    this.seen.onClear = listener;
  }

  entry(key: string): SeenEntry | undefined {
    return this.seen.entry(key);
  }

  entryView(key: string): SeenEntry | undefined {
    return this.seen.entryView(key);
  }

  keys(): string[] {
    return this.seen.keys();
  }

  restore(entry: SeenEntry, nowMs: number): void {
    this.seen.restore(entry, nowMs);
  }

  forget(key: string): void {
    this.seen.forget(key);
  }

  clearAll(): void {
    this.seen.clearAll();
  }

  reset<C>(group: string | undefined, replies: Replies<void, C>, context: C): void {
    if (group === undefined) this.seen.clear();
    // In property mode a key is its own group.
    else if (this.settings.keyMode === 'property') this.seen.delete(group);
    else this.seen.deleteWhere((key) => deviceOfKey(key) === group);
    replies.value(undefined, context);
  }
}

function limits(settings: MemorySeenSettings): { ttlMs: number; maxKeys: number; leaseMs: number } {
  return { ttlMs: settings.ttlSeconds * 1000, maxKeys: settings.maxKeys, leaseMs: settings.leaseSeconds * 1000 };
}
