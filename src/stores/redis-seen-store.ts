import calculateSlot from 'cluster-key-slot';
import { nextToken } from '../core/structures/call-token';
import { SEEN_SEGMENT, seenGroupEpochKey, seenGroupHead, seenKeyOf } from '../redis/key-names';
import type { RedisClient } from '../redis/scripts';
import { SEEN_CALL, SEEN_OP, SEEN_OP_CODE, setUint48, writeUint48 } from '../redis/wire';
import { CountDown } from './count-down';
import { ScriptQueue } from './script-queue';
import type { ClaimRequest, RedisStoreOptions, Replies, SeenClaim, SeenSettings, SeenStore, SettleRequest } from './types';

const { claim: CLAIM_OP, confirm: CONFIRM_OP, release: RELEASE_OP, resetGroup: RESET_GROUP, resetAll: RESET_ALL } = SEEN_OP_CODE;
const OP_BYTES = SEEN_OP.bytes;
const { op: OP_AT, key: KEY_AT, group: GROUP_AT, token: TOKEN_AT } = SEEN_OP.at;

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
 * The seen-set in Redis: one string key per idempotency key, claimed,
 * confirmed and released inside lua/seen-set.lua. Redis bounds it by TTL;
 * the size bound is the server's maxmemory policy (see README, "Sizing
 * Redis").
 */
export class RedisSeenStore implements SeenStore {
  private readonly queue: ScriptQueue<SeenPart, number[]>;
  private readonly settingsArg: Buffer;
  /** A burst is mostly one device's readings: its slot is worked out once, not once per reading. */
  private slotGroup: string | undefined;
  private groupSlot = 0;

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
    this.queue = new ScriptQueue(client, options, {
      segment: SEEN_SEGMENT,
      send: (parts) => this.send(parts),
      slotOf: (part) => part.slot,
      maxBatch: { default: DEFAULT_MAX_BATCH },
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
    if (group !== this.slotGroup) {
      this.groupSlot = calculateSlot(seenGroupEpochKey(this.options.keyPrefix, group, true));
      this.slotGroup = group;
    }
    return this.groupSlot;
  }

  private send(parts: SeenPart[]): Promise<number[][]> {
    const prefix = this.options.keyPrefix;
    const cluster = this.options.cluster;
    const keys: string[] = [this.queue.epochKeyOf(parts[0] as SeenPart)];
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
    let at = 0;
    const writeOp = (op: number, keyIndex: number, groupIndexOf: number, token: number): void => {
      view.setUint8(at + OP_AT, op);
      view.setUint16(at + KEY_AT, keyIndex, true);
      view.setUint16(at + GROUP_AT, groupIndexOf, true);
      setUint48(view, at + TOKEN_AT, token);
      at += OP_BYTES;
    };
    // A burst is one device's readings: the head of its keys (an escaped hash tag) is worked out once.
    let lastGroup: string | undefined;
    let head = '';
    for (const part of parts) {
      if (part.op === RESET_ALL) {
        writeOp(RESET_ALL, 1, 1, 0);
        continue;
      }
      if (part.op === RESET_GROUP) {
        writeOp(RESET_GROUP, groupKey(part.group), 1, 0);
        continue;
      }
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
    settings.writeDoubleLE(this.now(), SEEN_CALL.at.now);
    writeUint48(settings, SEEN_CALL.at.call, nextToken());
    return this.client.dedupSeenSet(keys.length, keys, settings, Buffer.from(ops)).then((codes) => {
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
