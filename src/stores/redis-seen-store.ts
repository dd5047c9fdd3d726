import calculateSlot from 'cluster-key-slot';
import { nextToken } from '../core/structures/call-token';
import { bucketSlot, CLUSTER_BUCKETS, epochKey, SEEN_SEGMENT, seenGroupEpochKey, seenGroupHead, seenKeyOf } from '../redis/key-names';
import { SEEN_OP, type RedisClient } from '../redis/scripts';
import { TickBatcher } from '../redis/tick-batcher';
import { turnWritesFor, type TurnWrites } from '../redis/turn-writes';
import { CountDown } from './count-down';
import type { ClaimRequest, RedisStoreOptions, Replies, SeenClaim, SeenSettings, SeenStore, SettleRequest } from './types';

const { claim: CLAIM_OP, confirm: CONFIRM_OP, release: RELEASE_OP, resetGroup: RESET_GROUP, resetAll: RESET_ALL } = SEEN_OP;
const OP_BYTES = 11;
const TWO_32 = 2 ** 32;

/** Claims, confirms or releases of one request that share a slot, or a reset. */
interface SeenPart {
  op: number;
  slot: number;
  claims: readonly SeenClaim[];
  token: number;
  /** For a group reset: the group. */
  group?: string;
}

function isReset(part: SeenPart): boolean {
  return part.op === RESET_GROUP || part.op === RESET_ALL;
}

const DEFAULT_MAX_BATCH = 100;
/**
 * Keys per part: a long replay is split so that no script call holds the
 * server for long (at most DEFAULT_MAX_BATCH parts of this many keys, about
 * 10 ms). The parts of one slot are queued in burst order, so a key repeated
 * in a later part still finds the earlier part's claim: first write wins.
 */
const MAX_KEYS_PER_PART = 100;

/**
 * The seen-set in Redis: one string key per idempotency key, claimed,
 * confirmed and released inside lua/seen-set.lua. Redis bounds it by TTL;
 * the size bound is the server's maxmemory policy (see README, "Sizing
 * Redis").
 */
export class RedisSeenStore implements SeenStore {
  private readonly batcher: TickBatcher<SeenPart, number[]>;
  private readonly settingsArg: Buffer;
  private readonly turnWrites: TurnWrites | undefined;
  /** A burst is mostly one device's readings: its slot is worked out once, not once per reading. */
  private slotGroup: string | undefined;
  private groupSlot = 0;

  constructor(
    private readonly client: RedisClient,
    settings: SeenSettings,
    private readonly options: RedisStoreOptions,
    private readonly now: () => number = Date.now,
  ) {
    this.turnWrites = turnWritesFor(client);
    this.settingsArg = Buffer.alloc(27);
    this.settingsArg.writeUInt32LE(Math.max(1, Math.ceil(settings.ttlSeconds)), 8);
    this.settingsArg.writeDoubleLE(Math.max(1, Math.ceil(settings.leaseSeconds * 1000)), 12);
    this.settingsArg[20] = settings.confirm ? 1 : 0;
    this.batcher = new TickBatcher({
      send: (parts) => this.send(parts),
      groupOf: (part) => part.slot,
      maxBatch: options.maxBatch ?? DEFAULT_MAX_BATCH,
      timeoutMs: options.timeoutMs,
      // On a Cluster one call per bucket out at a time: what arrives meanwhile gathers into the bucket's next call.
      ...(options.cluster ? { maxInFlight: 1 } : {}),
      ...(options.cause ? { cause: options.cause } : {}),
      ...(options.refused ? { refused: options.refused } : {}),
      ...(options.classify ? { classify: options.classify } : {}),
      ...(options.onCallbackError ? { onCallbackError: options.onCallbackError } : {}),
      ...(options.onAnswer ? { onAnswer: options.onAnswer } : {}),
    });
  }

  claim<C>(request: ClaimRequest, replies: Replies<number[], C>, context: C): void {
    this.submit(CLAIM_OP, request, replies, context);
  }

  settle<C>(request: SettleRequest, replies: Replies<number[], C>, context: C): void {
    this.submit(request.action === 'confirm' ? CONFIRM_OP : RELEASE_OP, request, replies, context);
  }

  reset<C>(group: string | undefined, replies: Replies<void, C>, context: C): void {
    const one = (op: number, slot: number, onResult: () => void, onError: (error: unknown) => void, partGroup?: string): void => {
      this.batcher.submit({ op, slot, claims: [], token: 0, ...(partGroup === undefined ? {} : { group: partGroup }) }, onResult, onError, undefined);
    };
    if (group !== undefined) {
      const slot = this.options.cluster ? this.slotOf(group) : 0;
      one(RESET_GROUP, slot, () => replies.value(undefined, context), (error) => replies.error(error, context), group);
      return;
    }
    if (!this.options.cluster) {
      one(RESET_ALL, 0, () => replies.value(undefined, context), (error) => replies.error(error, context));
      return;
    }
    // One epoch per bucket (its slot names it), each raised in order with its own queue.
    const countDown = new CountDown(CLUSTER_BUCKETS, replies, context, undefined);
    for (let bucket = 0; bucket < CLUSTER_BUCKETS; bucket++) one(RESET_ALL, bucketSlot(bucket), countDown.one, countDown.failed);
  }

  /** Answers every request still waiting with the error (the node is closing). */
  abandon(error: Error): void {
    this.batcher.abandon(error);
  }

  private submit<C>(op: number, request: ClaimRequest, replies: Replies<number[], C>, context: C): void {
    const { claims, token } = request;
    // An empty request is one call part too (answered [] in its turn): split by slot it would have no part, and no answer.
    if (claims.length === 0 || (!this.options.cluster && claims.length <= MAX_KEYS_PER_PART)) {
      this.batcher.submit({ op, slot: 0, claims, token }, replies.value, replies.error, context);
      return;
    }
    // Split by slot (on a Cluster) and by size, and put the answers back in request order.
    const bySlot = new Map<number, number[]>();
    claims.forEach((claim, index) => {
      const slot = this.options.cluster ? this.slotOf(claim.group) : 0;
      const indexes = bySlot.get(slot);
      if (indexes) indexes.push(index);
      else bySlot.set(slot, [index]);
    });
    const parts: { slot: number; indexes: number[] }[] = [];
    for (const [slot, indexes] of bySlot) {
      for (let start = 0; start < indexes.length; start += MAX_KEYS_PER_PART) {
        parts.push({ slot, indexes: indexes.slice(start, start + MAX_KEYS_PER_PART) });
      }
    }
    const codes = new Array<number>(claims.length);
    const countDown = new CountDown(parts.length, replies, context, codes);
    for (const { slot, indexes } of parts) {
      this.batcher.submit(
        { op, slot, claims: indexes.map((i) => claims[i] as SeenClaim), token },
        (partCodes: number[]) => {
          indexes.forEach((at, j) => {
            codes[at] = partCodes[j] as number;
          });
          countDown.one();
        },
        countDown.failed,
        undefined,
      );
    }
  }

  /**
   * The Cluster slot of every key of a group, its bucket's: its seen keys and
   * its epoch key start with the same bucket tag (see redis/key-names), so
   * the epoch key, which needs no idempotency key, names the slot for all.
   */
  private slotOf(group: string): number {
    if (group !== this.slotGroup) {
      this.groupSlot = calculateSlot(seenGroupEpochKey(this.options.keyPrefix, group, true));
      this.slotGroup = group;
    }
    return this.groupSlot;
  }

  private send(parts: SeenPart[]): Promise<number[][]> {
    this.turnWrites?.hold();
    const prefix = this.options.keyPrefix;
    const cluster = this.options.cluster === true;
    const keys: string[] = [epochKey(prefix, SEEN_SEGMENT, this.options.cluster ? (parts[0] as SeenPart).slot : undefined)];
    const groupIndex = new Map<string, number>();
    const groupKey = (group: string): number => {
      let index = groupIndex.get(group);
      if (index === undefined) {
        keys.push(seenGroupEpochKey(prefix, group, cluster));
        index = keys.length;
        groupIndex.set(group, index);
      }
      return index;
    };
    let opCount = 0;
    for (const part of parts) opCount += isReset(part) ? 1 : part.claims.length;
    // A DataView rather than Buffer's write methods, as in redis-window-store.ts.
    const ops = new ArrayBuffer(opCount * OP_BYTES);
    const view = new DataView(ops);
    let at = 0;
    const writeOp = (op: number, keyIndex: number, groupIndexOf: number, token: number): void => {
      view.setUint8(at, op);
      view.setUint16(at + 1, keyIndex, true);
      view.setUint16(at + 3, groupIndexOf, true);
      // 48 bits: the low 32, then the high 16.
      const low = token % TWO_32;
      view.setUint32(at + 5, low, true);
      view.setUint16(at + 9, (token - low) / TWO_32, true);
      at += OP_BYTES;
    };
    // A burst is one device's readings: the head of its keys (an escaped hash tag) is worked out once.
    let lastGroup: string | undefined;
    let head = '';
    for (const part of parts) {
      if (part.op === RESET_ALL) writeOp(RESET_ALL, 1, 1, 0);
      else if (part.op === RESET_GROUP) writeOp(RESET_GROUP, groupKey(part.group as string), 1, 0);
      for (const claim of part.claims) {
        if (claim.group !== lastGroup) {
          lastGroup = claim.group;
          head = seenGroupHead(prefix, lastGroup, cluster);
        }
        keys.push(seenKeyOf(head, claim.group, claim.key));
        writeOp(part.op, keys.length, groupKey(claim.group), part.token);
      }
    }
    const settings = Buffer.from(this.settingsArg);
    settings.writeDoubleLE(this.now(), 0);
    settings.writeUIntLE(nextToken(), 21, 6);
    return this.client.dedupSeenSet(keys.length, keys, settings, Buffer.from(ops)).then((codes) => {
      let next = 0;
      return parts.map((part) => {
        if (isReset(part)) {
          next++;
          return [];
        }
        const own = codes.slice(next, next + part.claims.length);
        next += part.claims.length;
        return own;
      });
    });
  }
}
