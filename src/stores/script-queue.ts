/**
 * What the two Redis stores share around their script: the batcher that
 * gathers a turn's requests into calls (and the store options it takes),
 * the Cluster's writes held per turn, the epoch key of a call's slot, a
 * reset of everything (on a Cluster, one per bucket), and abandoning what
 * waits when a node closes. Each store keeps only what is its own: how it
 * packs a call and reads the reply.
 */
import { bucketSlot, CLUSTER_BUCKETS, epochKey } from '../redis/key-names';
import type { RedisClient } from '../redis/scripts';
import { TickBatcher, type BatcherOptions, type OnError, type OnResult } from '../redis/tick-batcher';
import { turnWritesFor } from '../redis/turn-writes';
import { CountDown } from './count-down';
import type { RedisStoreOptions, Replies } from './types';

export interface ScriptQueueSpec<Item, Result> {
  /** The key segment of the store (`sw:`, `rc:`), which names its epoch keys. */
  segment: string;
  /** Sends one call for items of one group; resolves with one result per item, in order. */
  send: (items: Item[]) => Promise<Result[]>;
  /** On a Cluster, the slot of an item, which names its group and its epoch key; on one server every item is in group 0. */
  slotOf: (item: Item) => number;
  /** Items per call unless the options say otherwise, and the most a call may hold, if the script has a limit. */
  maxBatch: { default: number; limit?: number };
}

/**
 * The batcher's options from the store's: every option a store passes on to
 * its batcher is passed here, once for both stores.
 */
function batcherOptions<Item, Result>(options: RedisStoreOptions, send: (items: Item[]) => Promise<Result[]>, groupOf: (item: Item) => number, maxBatch: number): BatcherOptions<Item, Result> {
  return {
    send,
    groupOf,
    maxBatch,
    timeoutMs: options.timeoutMs,
    // On a Cluster one call per bucket out at a time: what arrives meanwhile gathers into the bucket's next call.
    ...(options.cluster ? { maxInFlight: 1 } : {}),
    ...(options.cause ? { cause: options.cause } : {}),
    ...(options.refused ? { refused: options.refused } : {}),
    ...(options.classify ? { classify: options.classify } : {}),
    ...(options.onCallbackError ? { onCallbackError: options.onCallbackError } : {}),
    ...(options.onAnswer ? { onAnswer: options.onAnswer } : {}),
  };
}

const ONE_GROUP = (): number => 0;

export class ScriptQueue<Item, Result> {
  private readonly batcher: TickBatcher<Item, Result>;
  private readonly cluster: boolean;

  constructor(
    client: RedisClient,
    private readonly options: RedisStoreOptions,
    private readonly spec: ScriptQueueSpec<Item, Result>,
  ) {
    this.cluster = options.cluster;
    const turnWrites = turnWritesFor(client);
    const send = turnWrites === undefined ? spec.send : (items: Item[]): Promise<Result[]> => {
      turnWrites.hold();
      return spec.send(items);
    };
    const maxBatch = Math.min(options.maxBatch ?? spec.maxBatch.default, spec.maxBatch.limit ?? Number.POSITIVE_INFINITY);
    this.batcher = new TickBatcher(batcherOptions(options, send, this.cluster ? spec.slotOf : ONE_GROUP, maxBatch));
  }

  /** Queues one request (see TickBatcher.submit). */
  submit<C>(item: Item, onResult: OnResult<Result, C>, onError: OnError<C>, context: C): void {
    this.batcher.submit(item, onResult, onError, context);
  }

  /**
   * Forgets everything, in order with the requests before and after: on one
   * server one item, on a Cluster one per bucket (each bucket has its own
   * epoch, raised in order with its own queue), `resetIn` making the item
   * for a slot (0 on one server).
   */
  resetAll<C>(resetIn: (slot: number) => Item, replies: Replies<void, C>, context: C): void {
    if (!this.cluster) {
      this.batcher.submit(resetIn(0), () => replies.value(undefined, context), (error) => replies.error(error, context), undefined);
      return;
    }
    const countDown = new CountDown(CLUSTER_BUCKETS, replies, context, undefined);
    for (let bucket = 0; bucket < CLUSTER_BUCKETS; bucket++) this.batcher.submit(resetIn(bucketSlot(bucket)), countDown.one, countDown.failed, undefined);
  }

  /** The epoch key of a call whose first item is `first` (one per slot on a Cluster, one per store on one server). */
  epochKeyOf(first: Item): string {
    return epochKey(this.options.keyPrefix, this.spec.segment, this.cluster ? this.spec.slotOf(first) : undefined);
  }

  /** Answers every request still waiting with the error (the node is closing). */
  abandon(error: Error): void {
    this.batcher.abandon(error);
  }
}
