import calculateSlot from 'cluster-key-slot';
import { NO_FIX, POOR_FIX } from '../core/window/fix-quality';
import { ACCURACY_STEPS, DEFAULT_RELOCATE_PINGS, DEGREE_STEPS, HEADING_STEPS, NO_HEADING, RELOCATE_HEARTBEATS, type JumpCandidate, type Ping } from '../core/window/sliding-window';
import { WINDOW_REASON_BY_CODE, WINDOW_REASONS } from '../core/window/window-reasons';
import { nextToken } from '../core/structures/call-token';
import { WINDOW_SEGMENT, windowRecordKey } from '../redis/key-names';
import type { RedisClient } from '../redis/scripts';
import {
  extendedRecordBytes,
  MAX_WINDOW_OPS,
  readUint48,
  setUint48,
  WINDOW_CALL,
  WINDOW_CANDIDATE,
  WINDOW_MODE,
  WINDOW_OP,
  WINDOW_OP_CODE,
  WINDOW_OP_FLAG,
  WINDOW_PART,
  WINDOW_PARTS,
  WINDOW_PRESENT,
  WINDOW_RECORD,
  WINDOW_REPLY,
  WINDOW_RULE,
  WINDOW_TAIL,
  WINDOW_VALUE,
  writeUint48,
} from '../redis/wire';
import { ScriptQueue } from './script-queue';
import type { RedisStoreOptions, Replies, WindowOutcome, WindowSettings, WindowStore } from './types';

const DEFAULT_MAX_BATCH = 500;
const KEY_CACHE_SIZE = 50_000;

/** A reset of one asset, travelling in the queue with the pings (see lua/sliding-window.lua, "Resets"). */
class ResetAsset {
  constructor(readonly assetId: string) {}
}

/** A reset of every asset: on a Cluster, of the bucket whose slot it names; 0 on one server. */
class ResetAll {
  constructor(readonly slot: number) {}
}

type WindowOp = Ping | ResetAsset | ResetAll;

/**
 * Window records in Redis, one string per asset holding its baseline and
 * counts, decided by lua/sliding-window.lua: shared by every worker, and
 * atomic across them.
 *
 * The operations of a call travel as one binary argument and the decisions
 * come back as one binary reply (layouts in redis/wire), so that per ping
 * the client writes a few doubles and reads a few back instead of
 * formatting numbers into arguments and parsing reply strings: that was
 * most of the client's CPU time per ping, and all of its garbage, in npm run
 * bench.
 */
export class RedisWindowStore implements WindowStore {
  private readonly queue: ScriptQueue<WindowOp, WindowOutcome | undefined>;
  private readonly rule: Buffer;
  private readonly keys = new Map<string, string>();

  constructor(
    private readonly client: RedisClient,
    settings: WindowSettings,
    private readonly options: RedisStoreOptions,
    private readonly now: () => number = Date.now,
  ) {
    this.rule = encodeRule(settings);
    this.queue = new ScriptQueue(client, options, {
      segment: WINDOW_SEGMENT,
      send: (ops) => this.send(ops),
      slotOf: (op) => this.slotOf(op),
      maxBatch: { default: DEFAULT_MAX_BATCH, limit: MAX_WINDOW_OPS },
    });
  }

  decide<C>(ping: Ping, replies: Replies<WindowOutcome, C>, context: C): void {
    this.queue.submit(ping, replies.value as (outcome: WindowOutcome | undefined, context: C) => void, replies.error, context);
  }

  reset<C>(assetId: string | undefined, replies: Replies<void, C>, context: C): void {
    if (assetId === undefined) this.queue.resetAll((slot) => new ResetAll(slot), replies, context);
    else this.queue.submit(new ResetAsset(assetId), () => replies.value(undefined, context), (error) => replies.error(error, context), undefined);
  }

  /** Answers every request still waiting with the error (the node is closing). */
  abandon(error: Error): void {
    this.queue.abandon(error);
  }

  /** Sends what waits in the batcher's linger now (the node is closing). */
  drain(): void {
    this.queue.drain();
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
    return op instanceof ResetAll ? op.slot : calculateSlot(this.keyOf(op.assetId));
  }

  private send(ops: WindowOp[]): Promise<(WindowOutcome | undefined)[]> {
    const keys = new Array<string>(ops.length + 1);
    keys[0] = this.queue.epochKeyOf(ops[0] as WindowOp);
    const packed = new ArrayBuffer(ops.length * OP_BYTES);
    const view = new DataView(packed);
    for (let i = 0; i < ops.length; i++) {
      const op = ops[i] as WindowOp;
      // A reset of every asset names no record: the epoch key stands in its place.
      keys[i + 1] = op instanceof ResetAll ? keys[0] : this.keyOf(op.assetId);
      encodeOp(op, view, i * OP_BYTES);
    }
    const call = Buffer.allocUnsafe(WINDOW_CALL.bytes);
    call.writeDoubleLE(this.now(), WINDOW_CALL.at.now);
    writeUint48(call, WINDOW_CALL.at.call, nextToken());
    // ioredis flattens array arguments one level, so the keys need no spread.
    return this.client.dedupSlidingWindowBuffer(keys.length, keys, this.rule, call, Buffer.from(packed)).then(decodeOutcomes);
  }
}

/**
 * ARGV[1] of lua/sliding-window.lua: the rule (for the benchmark and tests
 * too). The jump guard's defaults are resolved here, as decideWindow
 * resolves them, so that the script compares the very same doubles.
 */
export function encodeRule(settings: WindowSettings): Buffer {
  const rule = Buffer.alloc(WINDOW_RULE.bytes);
  const at = WINDOW_RULE.at;
  rule.writeDoubleLE(settings.minSeconds, at.minSeconds);
  rule.writeDoubleLE(settings.minMetres, at.minMetres);
  rule.writeDoubleLE(settings.minHeadingDegrees ?? 0, at.minHeadingDegrees);
  rule.writeDoubleLE(settings.maxAheadSeconds ?? -1, at.maxAheadSeconds);
  // EXPIRE takes whole seconds; round up so a record never expires early.
  rule.writeUInt32LE(Math.max(1, Math.ceil(settings.ttlSeconds)), at.ttlSeconds);
  rule.writeUInt8(settings.mode === 'value' ? WINDOW_MODE.value : WINDOW_MODE.position, at.mode);
  rule.writeDoubleLE(settings.deadband ?? 0, at.deadband);
  rule.writeUInt8(settings.deadbandPercent === true ? 1 : 0, at.deadbandPercent);
  rule.writeDoubleLE(settings.maxSpeedKmh ?? 0, at.maxSpeedKmh);
  rule.writeDoubleLE(settings.relocateAfterSeconds ?? settings.minSeconds * RELOCATE_HEARTBEATS, at.relocateAfterSeconds);
  rule.writeDoubleLE(settings.relocateAfterPings ?? DEFAULT_RELOCATE_PINGS, at.relocateAfterPings);
  return rule;
}

const OP_BYTES = WINDOW_OP.bytes;
const { op: OP_AT, flags: FLAGS_AT, events: EVENTS_AT, t: T_AT, lat: LAT_AT, lon: LON_AT, heading: HEADING_AT, accuracy: ACCURACY_AT, value: VALUE_AT } = WINDOW_OP.at;
const { ping: PING, resetAsset: RESET_ASSET, resetAll: RESET_ALL } = WINDOW_OP_CODE;
const { heading: HAS_HEADING, retry: RETRY, noFix: NO_FIX_FLAG, poorFix: POOR_FIX_FLAG } = WINDOW_OP_FLAG;

/**
 * Through a DataView on a fresh (zeroed) ArrayBuffer rather than Buffer's
 * write methods: about half the time per ping in a microbenchmark (the
 * Buffer methods check their arguments on every call, and writeUIntLE of 6
 * bytes takes a generic path), and little-endian whatever the host.
 */
function encodeOp(op: WindowOp, out: DataView, at: number): void {
  if (op instanceof ResetAll) {
    out.setUint8(at + OP_AT, RESET_ALL);
    return;
  }
  if (op instanceof ResetAsset) {
    out.setUint8(at + OP_AT, RESET_ASSET);
    return;
  }
  const heading = op.heading ?? NaN;
  const hasHeading = !Number.isNaN(heading);
  out.setUint8(at + OP_AT, PING);
  const fix = op.fix === NO_FIX ? NO_FIX_FLAG : op.fix === POOR_FIX ? POOR_FIX_FLAG : 0;
  out.setUint8(at + FLAGS_AT, (hasHeading ? HAS_HEADING : 0) | (op.retry === true ? RETRY : 0) | fix);
  setUint48(out, at + EVENTS_AT, op.events ?? 0);
  out.setFloat64(at + T_AT, op.t, true);
  out.setFloat64(at + LAT_AT, op.lat, true);
  out.setFloat64(at + LON_AT, op.lon, true);
  out.setFloat64(at + HEADING_AT, hasHeading ? heading : 0, true);
  out.setFloat64(at + ACCURACY_AT, op.accuracy ?? 0, true);
  out.setFloat64(at + VALUE_AT, op.value ?? NaN, true);
}

/** The pings of one call, packed as ARGV[3] (for the benchmark's redis-benchmark lines and tests). */
export function encodePings(pings: readonly Ping[]): Buffer {
  const packed = new ArrayBuffer(pings.length * OP_BYTES);
  const view = new DataView(packed);
  pings.forEach((ping, i) => encodeOp(ping, view, i * OP_BYTES));
  return Buffer.from(packed);
}

const REPLY_BYTES = WINDOW_REPLY.bytes;
const REPLY_AT = WINDOW_REPLY.at;
const { dt: HAS_DT, distance: HAS_DISTANCE, turn: HAS_TURN, change: HAS_CHANGE } = WINDOW_PRESENT;

/** The script's reply: one outcome per operation, in order; undefined for a reset. */
export function decodeOutcomes(reply: Buffer): (WindowOutcome | undefined)[] {
  if (reply.length % REPLY_BYTES !== 0) throw new Error(`a sliding-window reply of ${reply.length} bytes is not whole operations`);
  const outcomes = new Array<WindowOutcome | undefined>(reply.length / REPLY_BYTES);
  for (let i = 0, at = 0; at < reply.length; i++, at += REPLY_BYTES) {
    const code = reply[at + REPLY_AT.reason] as number;
    if (code === 0) {
      outcomes[i] = undefined;
      continue;
    }
    const reason = WINDOW_REASON_BY_CODE[code];
    if (reason === undefined) throw new Error(`unexpected reason code ${code} from the sliding-window script`);
    const present = reply[at + REPLY_AT.present] as number;
    outcomes[i] = {
      admit: WINDOW_REASONS[reason].admit,
      reason,
      dtSeconds: present & HAS_DT ? reply.readDoubleLE(at + REPLY_AT.dt) : null,
      distanceMetres: present & HAS_DISTANCE ? reply.readDoubleLE(at + REPLY_AT.distance) : null,
      headingChange: present & HAS_TURN ? reply.readDoubleLE(at + REPLY_AT.turn) : null,
      valueChange: present & HAS_CHANGE ? reply.readDoubleLE(at + REPLY_AT.change) : null,
      accepted: reply.readUInt32LE(at + REPLY_AT.accepted),
      suppressed: reply.readUInt32LE(at + REPLY_AT.suppressed),
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
  /** Value mode: the baseline's value; absent when the record has none. */
  value?: number;
  /** The jump candidate, and the call that set it; absent when the record has none. */
  candidate?: RecordCandidate;
  /** The baseline from before that call, when the call suppressed a ping before admitting one (with its value and candidate when it had them). */
  before: { t: number; lat: number; lon: number; value?: number; candidate?: RecordCandidate } | null;
}

export interface RecordCandidate extends JumpCandidate {
  /** The 48 bits naming the call that set it. */
  call: number;
}

const TAIL_BYTES = WINDOW_RECORD.bytes + WINDOW_TAIL.bytes;

export function decodeWindowRecord(raw: Buffer): WindowRecord {
  let parts = 0;
  if (raw.length === TAIL_BYTES) parts = WINDOW_PART.tail;
  else if (raw.length !== WINDOW_RECORD.bytes) {
    parts = raw.length > WINDOW_RECORD.bytes ? (raw[WINDOW_RECORD.bytes] as number) : 0;
    const valid = parts !== 0 && parts !== WINDOW_PART.tail && parts < 2 * WINDOW_PART.tailCandidate && ((parts & WINDOW_PART.tail) !== 0 || parts < WINDOW_PART.tail);
    if (!valid || extendedRecordBytes(parts) !== raw.length) throw new Error(`a window record of ${raw.length} bytes has no known layout`);
  }
  const at = WINDOW_RECORD.at;
  const heading = raw.readUInt16LE(at.heading);
  // The optional parts, in their order (see redis/wire).
  let next = raw.length === TAIL_BYTES ? WINDOW_RECORD.bytes : WINDOW_RECORD.bytes + WINDOW_PARTS.bytes;
  const record: WindowRecord = {
    t: raw.readDoubleLE(at.t),
    lat: raw.readInt32LE(at.lat) / DEGREE_STEPS,
    lon: raw.readInt32LE(at.lon) / DEGREE_STEPS,
    accepted: raw.readUInt32LE(at.accepted),
    suppressed: raw.readUInt32LE(at.suppressed),
    call: readUint48(raw, at.call),
    first: raw.readUInt16LE(at.first),
    events: readUint48(raw, at.events),
    heading: heading === NO_HEADING ? NaN : heading / HEADING_STEPS,
    accuracy: raw.readUInt16LE(at.accuracy) / ACCURACY_STEPS,
    epoch: raw.readUInt16LE(at.epoch),
    before: null,
  };
  if (parts & WINDOW_PART.value) {
    record.value = raw.readDoubleLE(next);
    next += WINDOW_VALUE.bytes;
  }
  if (parts & WINDOW_PART.candidate) {
    record.candidate = candidateAt(raw, next);
    next += WINDOW_CANDIDATE.bytes;
  }
  if (parts & WINDOW_PART.tail) {
    const tail = next;
    next += WINDOW_TAIL.bytes;
    const before: NonNullable<WindowRecord['before']> = {
      t: raw.readDoubleLE(tail + WINDOW_TAIL.at.t),
      lat: raw.readInt32LE(tail + WINDOW_TAIL.at.lat) / DEGREE_STEPS,
      lon: raw.readInt32LE(tail + WINDOW_TAIL.at.lon) / DEGREE_STEPS,
    };
    if (parts & WINDOW_PART.tailValue) {
      before.value = raw.readDoubleLE(next);
      next += WINDOW_VALUE.bytes;
    }
    if (parts & WINDOW_PART.tailCandidate) before.candidate = candidateAt(raw, next);
    record.before = before;
  }
  return record;
}

function candidateAt(raw: Buffer, from: number): RecordCandidate {
  const at = WINDOW_CANDIDATE.at;
  return {
    t: raw.readDoubleLE(from + at.t),
    lat: raw.readInt32LE(from + at.lat) / DEGREE_STEPS,
    lon: raw.readInt32LE(from + at.lon) / DEGREE_STEPS,
    count: raw.readUInt16LE(from + at.count),
    call: readUint48(raw, from + at.call),
  };
}
