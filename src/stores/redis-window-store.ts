import calculateSlot from 'cluster-key-slot';
import { ACCURACY_STEPS, DEGREE_STEPS, HEADING_STEPS, NO_HEADING, type Ping } from '../core/window/sliding-window';
import { WINDOW_REASON_BY_CODE, WINDOW_REASONS } from '../core/window/window-reasons';
import { nextToken } from '../core/structures/call-token';
import { bucketSlot, CLUSTER_BUCKETS, epochKey, WINDOW_SEGMENT, windowRecordKey } from '../redis/key-names';
import { TickBatcher } from '../redis/tick-batcher';
import { turnWritesFor, type TurnWrites } from '../redis/turn-writes';
import { WINDOW_OP, type RedisClient } from '../redis/scripts';
import { CountDown } from './count-down';
import type { RedisStoreOptions, Replies, WindowOutcome, WindowSettings, WindowStore } from './types';

const DEFAULT_MAX_BATCH = 500;
/** The record keeps the index of an operation within its call in two bytes. */
const MAX_BATCH_LIMIT = 65_535;
const KEY_CACHE_SIZE = 50_000;

/** A reset travelling in the queue with the pings (see lua/sliding-window.lua, "Resets"). */
class ResetOp {
  constructor(
    /** undefined: every asset. */
    readonly assetId: string | undefined,
    /** For a reset of every asset on a Cluster: the slot of the bucket it is for; 0 otherwise. */
    readonly slot: number,
  ) {}
}

type WindowOp = Ping | ResetOp;

/**
 * Window records in Redis, one string per asset holding its baseline and
 * counts, decided by lua/sliding-window.lua: shared by every worker, and
 * atomic across them.
 *
 * The operations of a call travel as one binary argument and the decisions
 * come back as one binary reply (layouts in the Lua file's header), so that
 * per ping the client writes a few doubles and reads a few back instead of
 * formatting numbers into arguments and parsing reply strings: that was
 * most of the client's CPU time per ping, and all of its garbage, in npm run
 * bench.
 */
export class RedisWindowStore implements WindowStore {
  private readonly batcher: TickBatcher<WindowOp, WindowOutcome | undefined>;
  private readonly rule: Buffer;
  private readonly keys = new Map<string, string>();
  private readonly turnWrites: TurnWrites | undefined;

  constructor(
    private readonly client: RedisClient,
    settings: WindowSettings,
    private readonly options: RedisStoreOptions,
    private readonly now: () => number = Date.now,
  ) {
    this.turnWrites = turnWritesFor(client);
    this.rule = Buffer.alloc(36);
    this.rule.writeDoubleLE(settings.minSeconds, 0);
    this.rule.writeDoubleLE(settings.minMetres, 8);
    this.rule.writeDoubleLE(settings.minHeadingDegrees ?? 0, 16);
    this.rule.writeDoubleLE(settings.maxAheadSeconds ?? -1, 24);
    // EXPIRE takes whole seconds; round up so a record never expires early.
    this.rule.writeUInt32LE(Math.max(1, Math.ceil(settings.ttlSeconds)), 32);
    this.batcher = new TickBatcher({
      send: (ops) => this.send(ops),
      groupOf: options.cluster ? (op) => this.slotOf(op) : () => 0,
      maxBatch: Math.min(options.maxBatch ?? DEFAULT_MAX_BATCH, MAX_BATCH_LIMIT),
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

  decide<C>(ping: Ping, replies: Replies<WindowOutcome, C>, context: C): void {
    this.batcher.submit(ping, replies.value as (outcome: WindowOutcome | undefined, context: C) => void, replies.error, context);
  }

  reset<C>(assetId: string | undefined, replies: Replies<void, C>, context: C): void {
    if (assetId !== undefined || !this.options.cluster) {
      this.batcher.submit(new ResetOp(assetId, 0), () => replies.value(undefined, context), (error) => replies.error(error, context), undefined);
      return;
    }
    // Every bucket has its own epoch; each is raised in order with its own queue.
    const countDown = new CountDown(CLUSTER_BUCKETS, replies, context, undefined);
    for (let bucket = 0; bucket < CLUSTER_BUCKETS; bucket++) {
      this.batcher.submit(new ResetOp(undefined, bucketSlot(bucket)), countDown.one, countDown.failed, undefined);
    }
  }

  /** Answers every request still waiting with the error (the node is closing). */
  abandon(error: Error): void {
    this.batcher.abandon(error);
  }

  /**
   * The record key of an asset, built once per asset rather than once per
   * ping: a fleet sends the same few thousand ids over and over, and a key
   * string per ping would stay alive (in the client's pending command) for
   * as long as the ping is in flight. Bounded: dropped wholesale when full.
   */
  private keyOf(assetId: string): string {
    let key = this.keys.get(assetId);
    if (key === undefined) {
      if (this.keys.size >= KEY_CACHE_SIZE) this.keys.clear();
      key = windowRecordKey(this.options.keyPrefix, assetId, this.options.cluster === true);
      this.keys.set(assetId, key);
    }
    return key;
  }

  /** On a Cluster: the slot of the op's bucket (every key of a bucket starts with the bucket's tag), which names its group and its epoch key. */
  private slotOf(op: WindowOp): number {
    if (op instanceof ResetOp && op.assetId === undefined) return op.slot;
    return calculateSlot(this.keyOf((op as { assetId: string }).assetId));
  }

  private send(ops: WindowOp[]): Promise<(WindowOutcome | undefined)[]> {
    this.turnWrites?.hold();
    const first = ops[0] as WindowOp;
    const keys = new Array<string>(ops.length + 1);
    keys[0] = epochKey(this.options.keyPrefix, WINDOW_SEGMENT, this.options.cluster ? this.slotOf(first) : undefined);
    const packed = new ArrayBuffer(ops.length * OP_BYTES);
    const view = new DataView(packed);
    for (let i = 0; i < ops.length; i++) {
      const op = ops[i] as WindowOp;
      keys[i + 1] = op instanceof ResetOp && op.assetId === undefined ? (keys[0]) : this.keyOf((op as { assetId: string }).assetId);
      encodeOp(op, view, i * OP_BYTES);
    }
    const call = Buffer.allocUnsafe(14);
    call.writeDoubleLE(this.now(), 0);
    call.writeUIntLE(nextToken(), 8, 6);
    // ioredis flattens array arguments one level, so the keys need no spread.
    return this.client.dedupSlidingWindowBuffer(keys.length, keys, this.rule, call, Buffer.from(packed)).then(decodeOutcomes);
  }
}

/** ARGV[3] of lua/sliding-window.lua: one operation. */
const OP_BYTES = 48;
const { ping: PING, resetAsset: RESET_ASSET, resetAll: RESET_ALL } = WINDOW_OP;
const HAS_HEADING = 1;
const RETRY = 2;

const TWO_32 = 2 ** 32;

/**
 * Through a DataView on a fresh (zeroed) ArrayBuffer rather than Buffer's
 * write methods: about half the time per ping in a microbenchmark (the
 * Buffer methods check their arguments on every call, and writeUIntLE of 6
 * bytes takes a generic path), and little-endian whatever the host.
 */
function encodeOp(op: WindowOp, out: DataView, at: number): void {
  if (op instanceof ResetOp) {
    out.setUint8(at, op.assetId === undefined ? RESET_ALL : RESET_ASSET);
    return;
  }
  const heading = op.heading ?? NaN;
  const hasHeading = !Number.isNaN(heading);
  out.setUint8(at, PING);
  out.setUint8(at + 1, (hasHeading ? HAS_HEADING : 0) | (op.retry === true ? RETRY : 0));
  // 48 bits: the low 32, then the high 16.
  const events = op.events ?? 0;
  const low = events % TWO_32;
  out.setUint32(at + 2, low, true);
  out.setUint16(at + 6, (events - low) / TWO_32, true);
  out.setFloat64(at + 8, op.t, true);
  out.setFloat64(at + 16, op.lat, true);
  out.setFloat64(at + 24, op.lon, true);
  out.setFloat64(at + 32, hasHeading ? heading : 0, true);
  out.setFloat64(at + 40, op.accuracy ?? 0, true);
}

/** The pings of one call, packed as ARGV[3] (for the benchmark's redis-benchmark lines and tests). */
export function encodePings(pings: readonly Ping[]): Buffer {
  const packed = new ArrayBuffer(pings.length * OP_BYTES);
  const view = new DataView(packed);
  pings.forEach((ping, i) => encodeOp(ping, view, i * OP_BYTES));
  return Buffer.from(packed);
}

const REPLY_BYTES = 34;
const HAS_DT = 1;
const HAS_DISTANCE = 2;
const HAS_TURN = 4;

/** The script's reply: one outcome per operation, in order; undefined for a reset. */
export function decodeOutcomes(reply: Buffer): (WindowOutcome | undefined)[] {
  if (reply.length % REPLY_BYTES !== 0) throw new Error(`a sliding-window reply of ${reply.length} bytes is not whole operations`);
  const outcomes = new Array<WindowOutcome | undefined>(reply.length / REPLY_BYTES);
  for (let i = 0, at = 0; at < reply.length; i++, at += REPLY_BYTES) {
    const code = reply[at] as number;
    if (code === 0) {
      outcomes[i] = undefined;
      continue;
    }
    const reason = WINDOW_REASON_BY_CODE[code];
    if (reason === undefined) throw new Error(`unexpected reason code ${code} from the sliding-window script`);
    const present = reply[at + 33] as number;
    outcomes[i] = {
      admit: WINDOW_REASONS[reason].admit,
      reason,
      dtSeconds: present & HAS_DT ? reply.readDoubleLE(at + 1) : null,
      distanceMetres: present & HAS_DISTANCE ? reply.readDoubleLE(at + 9) : null,
      headingChange: present & HAS_TURN ? reply.readDoubleLE(at + 17) : null,
      accepted: reply.readUInt32LE(at + 25),
      suppressed: reply.readUInt32LE(at + 29),
    };
  }
  return outcomes;
}

/** A window record as lua/sliding-window.lua stores it (for tests and tools). */
export interface WindowRecord {
  t: number;
  lat: number;
  lon: number;
  accepted: number;
  suppressed: number;
  /** The 48 bits naming the last call that admitted a ping of this asset. */
  call: number;
  /** The index, within that call, of its first admitted ping of the asset. */
  first: number;
  events: number;
  /** NaN when the admitted ping had none. */
  heading: number;
  accuracy: number;
  epoch: number;
  /** The baseline from before that call, when the call suppressed a ping before admitting one. */
  before: { t: number; lat: number; lon: number } | null;
}

export const RECORD_BYTES = 44;

export function decodeWindowRecord(raw: Buffer): WindowRecord {
  if (raw.length !== RECORD_BYTES && raw.length !== RECORD_BYTES + 26) {
    throw new Error(`a window record of ${raw.length} bytes has no known layout`);
  }
  const heading = raw.readUInt16LE(38);
  return {
    t: raw.readDoubleLE(0),
    lat: raw.readInt32LE(8) / DEGREE_STEPS,
    lon: raw.readInt32LE(12) / DEGREE_STEPS,
    accepted: raw.readUInt32LE(16),
    suppressed: raw.readUInt32LE(20),
    call: raw.readUIntLE(24, 6),
    first: raw.readUInt16LE(30),
    events: raw.readUIntLE(32, 6),
    heading: heading === NO_HEADING ? NaN : heading / HEADING_STEPS,
    accuracy: raw.readUInt16LE(40) / ACCURACY_STEPS,
    epoch: raw.readUInt16LE(42),
    before:
      raw.length > RECORD_BYTES
        ? { t: raw.readDoubleLE(44), lat: raw.readInt32LE(52) / DEGREE_STEPS, lon: raw.readInt32LE(56) / DEGREE_STEPS }
        : null,
  };
}
