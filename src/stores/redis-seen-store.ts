import calculateSlot from 'cluster-key-slot';
import { nextCallToken } from '../redis/call-token';
import { deleteMatching } from '../redis/delete-matching';
import { seenKey, seenPattern } from '../redis/key-names';
import type { RedisClient } from '../redis/scripts';
import { TickBatcher } from '../redis/tick-batcher';
import type { RedisStoreOptions } from './redis-window-store';
import type { SeenClaim, SeenStore } from './types';

/** The keys of one burst that share a slot (on one server: all of them). */
interface ClaimGroup {
  slot: number;
  redisKeys: string[];
}

const DEFAULT_MAX_BATCH = 100;
/**
 * Keys per group: a long replay is split so that no script call holds the
 * server for long (at most DEFAULT_MAX_BATCH groups of this many keys, about
 * 10 ms). The parts of one slot are queued in burst order, so a key repeated
 * in a later part still finds the earlier part's claim: first write wins.
 */
const MAX_KEYS_PER_GROUP = 100;

/**
 * The seen-set in Redis: one string key per idempotency key, claimed with
 * SET NX EX inside lua/seen-set.lua. Redis bounds it by TTL; the size bound
 * is the server's maxmemory policy (see README, "Sizing Redis").
 */
export class RedisSeenStore implements SeenStore {
  private readonly batcher: TickBatcher<ClaimGroup, boolean[]>;
  private readonly ttlArg: string;

  constructor(
    private readonly client: RedisClient,
    settings: { ttlSeconds: number },
    private readonly options: RedisStoreOptions,
  ) {
    this.ttlArg = String(Math.max(1, Math.ceil(settings.ttlSeconds)));
    this.batcher = new TickBatcher({
      send: (groups) => this.send(groups),
      groupOf: (group) => group.slot,
      maxBatch: options.maxBatch ?? DEFAULT_MAX_BATCH,
      timeoutMs: options.timeoutMs,
    });
  }

  async claim(claims: readonly SeenClaim[]): Promise<boolean[]> {
    const redisKeys = claims.map((c) => seenKey(this.options.keyPrefix, c.deviceId, c.seq, c.hash));
    if (!this.options.cluster && redisKeys.length <= MAX_KEYS_PER_GROUP) {
      return this.batcher.submit({ slot: 0, redisKeys });
    }
    // Split by slot (on a Cluster) and by size, claim each part, and put the
    // answers back in burst order.
    const bySlot = new Map<number, number[]>();
    redisKeys.forEach((key, index) => {
      const slot = this.options.cluster ? calculateSlot(key) : 0;
      const indexes = bySlot.get(slot);
      if (indexes) indexes.push(index);
      else bySlot.set(slot, [index]);
    });
    const parts: { slot: number; indexes: number[] }[] = [];
    for (const [slot, indexes] of bySlot) {
      for (let start = 0; start < indexes.length; start += MAX_KEYS_PER_GROUP) {
        parts.push({ slot, indexes: indexes.slice(start, start + MAX_KEYS_PER_GROUP) });
      }
    }
    const answers = new Array<boolean>(claims.length);
    await Promise.all(
      parts.map(async ({ slot, indexes }) => {
        const results = await this.batcher.submit({ slot, redisKeys: indexes.map((i) => redisKeys[i] as string) });
        indexes.forEach((at, j) => {
          answers[at] = results[j] as boolean;
        });
      }),
    );
    return answers;
  }

  async reset(deviceId?: string): Promise<void> {
    await deleteMatching(this.client, seenPattern(this.options.keyPrefix, deviceId));
  }

  private async send(groups: ClaimGroup[]): Promise<boolean[][]> {
    const keys = groups.flatMap((g) => g.redisKeys);
    const flags = await this.client.dedupSeenSet(keys.length, ...keys, this.ttlArg, nextCallToken());
    let at = 0;
    return groups.map((g) => g.redisKeys.map(() => flags[at++] === 1));
  }
}
