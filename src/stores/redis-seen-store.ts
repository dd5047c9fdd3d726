import calculateSlot from 'cluster-key-slot';
import { nextToken } from '../core/structures/call-token';
import { BucketNames, bucketOf, layoutMarkKey, SEEN_SEGMENT, seenGroupEpochKey, seenGroupHead, seenKeyOf } from '../redis/key-names';
import type { RedisClient } from '../redis/scripts';
import { REPLY_STATUS, SEEN_CALL, SEEN_OP, SEEN_OP_CODE, setUint48, writeUint48 } from '../redis/wire';
import { CountDown } from './count-down';
import { ScriptQueue } from './script-queue';
import type { ClaimRequest, RedisStoreOptions, Replies, SeenClaim, SeenSettings, SeenStore, SettleRequest } from './types';

const { claim: CLAIM_OP, confirm: CONFIRM_OP, release: RELEASE_OP, resetGroup: RESET_GROUP, resetAll: RESET_ALL } = SEEN_OP_CODE;
const OP_BYTES = SEEN_OP.bytes;
const { op: OP_AT, bucket: BUCKET_AT, group: GROUP_AT, legacy: LEGACY_AT, token: TOKEN_AT } = SEEN_OP.at;

/** Claims, confirms or releases of one request that share a slot. */
interface KeysPart {
  op: typeof CLAIM_OP | typeof CONFIRM_OP | typeof RELEASE_OP;
  slot: number;
  claims: readonly SeenClaim[];
  token: number;
}

/** A reset of one group's keys (a device's). */
interface GroupReset {
  op: typeof RESET_GROUP;
  slot: number;
  group: string;
}

/** A reset of every key: on a Cluster, of the bucket whose slot it names. */
interface ResetAll {
  op: typeof RESET_ALL;
  slot: number;
}

type SeenPart = KeysPart | GroupReset | ResetAll;

const DEFAULT_MAX_BATCH = 100;
/**
 * Keys per part: a long replay is split so that no script call holds the
 * server for long (at most DEFAULT_MAX_BATCH parts of this many keys, about
 * 10 ms). The parts of one slot are queued in burst order, so a key repeated
 * in a later part still finds the earlier part's claim: first write wins.
 */
const MAX_KEYS_PER_PART = 100;

/**
 * The seen-set in Redis: one field per idempotency key in a hash of its
 * bucket, claimed, confirmed and released inside lua/seen-set.lua. Entries
 * expire by the time they hold, and buckets are swept as they are written;
 * the size bound is the server's maxmemory policy (see README, "Sizing
 * Redis").
 *
 * Until a call's reply says otherwise (redis/wire LAYOUT_MARK), each call
 * also names the keys earlier builds kept its entries in, so that an
 * upgraded flow keeps its state; once per slot.
 */
export class RedisSeenStore implements SeenStore {
  private readonly queue: ScriptQueue<SeenPart, number[]>;
  private readonly settingsArg: Buffer;
  private readonly buckets: BucketNames;
  /** A burst is mostly one device's readings: its slot and Cluster bucket are worked out once, not once per reading. */
  private slotGroup: string | undefined;
  private groupSlot = 0;
  private groupTag = 0;
  /** The slots (0 on one server) whose calls no longer name the keys of earlier builds. */
  private readonly legacyDone = new Set<number>();

  constructor(
    private readonly client: RedisClient,
    settings: SeenSettings,
    private readonly options: RedisStoreOptions,
    private readonly now: () => number = Date.now,
  ) {
    this.settingsArg = Buffer.alloc(SEEN_CALL.bytes);
    this.settingsArg.writeUInt32LE(Math.max(1, Math.ceil(settings.ttlSeconds)), SEEN_CALL.at.ttlSeconds);
    this.settingsArg.writeDoubleLE(Math.max(1, Math.ceil(settings.leaseSeconds * 1000)), SEEN_CALL.at.leaseMs);
    this.settingsArg[SEEN_CALL.at.confirm] = settings.confirm ? 1 : 0;
    this.buckets = new BucketNames(options.keyPrefix, SEEN_SEGMENT, options.cluster);
    this.queue = new ScriptQueue(client, options, {
      segment: SEEN_SEGMENT,
      send: (parts) => this.send(parts),
      slotOf: (part) => part.slot,
      maxBatch: { default: DEFAULT_MAX_BATCH },
      // A sensor message's part carries a key per reading: the linger counts keys.
      sizeOf: (part) => ('claims' in part ? Math.max(1, part.claims.length) : 1),
    });
  }

  claim<C>(request: ClaimRequest, replies: Replies<number[], C>, context: C): void {
    this.submit(CLAIM_OP, request, replies, context);
  }

  settle<C>(request: SettleRequest, replies: Replies<number[], C>, context: C): void {
    this.submit(request.action === 'confirm' ? CONFIRM_OP : RELEASE_OP, request, replies, context);
  }

  reset<C>(group: string | undefined, replies: Replies<void, C>, context: C): void {
    if (group === undefined) {
      this.queue.resetAll((slot): ResetAll => ({ op: RESET_ALL, slot }), replies, context);
      return;
    }
    const reset: GroupReset = { op: RESET_GROUP, slot: this.options.cluster ? this.slotOf(group) : 0, group };
    this.queue.submit(reset, () => replies.value(undefined, context), (error) => replies.error(error, context), undefined);
  }

  /** Answers every request still waiting with the error (the node is closing). */
  abandon(error: Error): void {
    this.queue.abandon(error);
  }

  /** Sends what waits in the batcher's linger now (the node is closing). */
  drain(): void {
    this.queue.drain();
  }

  private submit<C>(op: KeysPart['op'], request: ClaimRequest, replies: Replies<number[], C>, context: C): void {
    const { claims, token } = request;
    // An empty request is one call part too (answered [] in its turn): split by slot it would have no part, and no answer.
    if (claims.length === 0 || (!this.options.cluster && claims.length <= MAX_KEYS_PER_PART)) {
      this.queue.submit({ op, slot: 0, claims, token }, replies.value, replies.error, context);
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
      this.queue.submit(
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
    this.learn(group);
    return this.groupSlot;
  }

  /** The Cluster bucket of a group (0 on one server). */
  private tagOf(group: string): number {
    if (!this.options.cluster) return 0;
    this.learn(group);
    return this.groupTag;
  }

  private learn(group: string): void {
    if (group === this.slotGroup) return;
    this.groupSlot = calculateSlot(seenGroupEpochKey(this.options.keyPrefix, group, true));
    this.groupTag = bucketOf(group);
    this.slotGroup = group;
  }

  private send(parts: SeenPart[]): Promise<number[][]> {
    const prefix = this.options.keyPrefix;
    const cluster = this.options.cluster;
    const first = parts[0] as SeenPart;
    const slot = cluster ? first.slot : 0;
    const legacy = !this.legacyDone.has(slot);
    // KEYS: the epoch key, then what the operations name; while the old keys are named, the layout mark last.
    const keys: string[] = [this.queue.epochKeyOf(first)];
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
    for (const part of parts) opCount += part.op === RESET_ALL || part.op === RESET_GROUP ? 1 : part.claims.length;
    // A DataView rather than Buffer's write methods, as in redis-window-store.ts.
    const ops = new ArrayBuffer(opCount * OP_BYTES);
    const view = new DataView(ops);
    const fields = new Array<string>(opCount);
    let at = 0;
    let n = 0;
    const writeOp = (op: number, bucketIndex: number, groupIndexOf: number, legacyIndex: number, token: number, field: string): void => {
      view.setUint8(at + OP_AT, op);
      view.setUint16(at + BUCKET_AT, bucketIndex, true);
      view.setUint16(at + GROUP_AT, groupIndexOf, true);
      view.setUint16(at + LEGACY_AT, legacyIndex, true);
      setUint48(view, at + TOKEN_AT, token);
      fields[n++] = field;
      at += OP_BYTES;
    };
    // A burst is one device's readings: the head of its old keys (an escaped hash tag) is worked out once.
    let lastGroup: string | undefined;
    let head = '';
    for (const part of parts) {
      if (part.op === RESET_ALL) {
        writeOp(RESET_ALL, 1, 1, 0, 0, '');
        continue;
      }
      if (part.op === RESET_GROUP) {
        writeOp(RESET_GROUP, groupKey(part.group), 1, 0, 0, '');
        continue;
      }
      for (const claim of part.claims) {
        if (legacy && claim.group !== lastGroup) {
          lastGroup = claim.group;
          head = seenGroupHead(prefix, lastGroup, cluster);
        }
        const group = groupKey(claim.group);
        keys.push(this.buckets.of(claim.key, this.tagOf(claim.group)));
        const bucket = keys.length;
        let old = 0;
        if (legacy) {
          keys.push(seenKeyOf(head, claim.group, claim.key));
          old = keys.length;
        }
        writeOp(part.op, bucket, group, old, part.token, claim.key);
      }
    }
    if (legacy) keys.push(layoutMarkKey(prefix, cluster ? slot : undefined));
    const settings = Buffer.from(this.settingsArg);
    settings.writeDoubleLE(this.now(), SEEN_CALL.at.now);
    writeUint48(settings, SEEN_CALL.at.call, nextToken());
    settings[SEEN_CALL.at.legacy] = legacy ? 1 : 0;
    return this.client.dedupSeenSet(keys.length, keys, settings, Buffer.from(ops), fields).then((codes) => {
      if (legacy && ((codes[opCount] ?? 0) & REPLY_STATUS.legacyReads) === 0) this.legacyDone.add(slot);
      let next = 0;
      return parts.map((part) => {
        if (part.op === RESET_ALL || part.op === RESET_GROUP) {
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
