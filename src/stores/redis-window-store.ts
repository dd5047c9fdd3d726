import calculateSlot from 'cluster-key-slot';
import { NO_FIX, POOR_FIX } from '../core/window/fix-quality';
import { ACCURACY_STEPS, DEFAULT_RELOCATE_PINGS, DEGREE_STEPS, HEADING_STEPS, NO_HEADING, RELOCATE_HEARTBEATS, type JumpCandidate, type Ping } from '../core/window/sliding-window';
import { WINDOW_REASON_BY_CODE, WINDOW_REASONS } from '../core/window/window-reasons';
import { nextToken } from '../core/structures/call-token';
import { BucketNames, bucketOf, epochKey, layoutMarkKey, WINDOW_SEGMENT, windowRecordKey } from '../redis/key-names';
import type { RedisClient } from '../redis/scripts';
import {
  MAX_WINDOW_OPS,
  readUint48,
  RECORD_FLAG,
  REPLY_STATUS,
  setUint48,
  WINDOW_CALL,
  WINDOW_CANDIDATE,
  WINDOW_MODE,
  WINDOW_OP,
  WINDOW_OP_CODE,
  WINDOW_OP_FLAG,
  WINDOW_PRESENT,
  WINDOW_RECORD,
  WINDOW_REPLY,
  WINDOW_RULE,
  WINDOW_STATUS,
  WINDOW_TAIL,
  WINDOW_VALUE,
  windowRecordLayout,
  windowTailBytes,
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

/** Where an asset's record is: its bucket, and (made when first needed) the key earlier builds kept it in. */
interface AssetKeys {
  bucket: string;
  old: string | undefined;
}

/**
 * Window records in Redis, one field per asset in a hash of its bucket,
 * holding its baseline and counts, decided by lua/sliding-window.lua:
 * shared by every worker, and atomic across them.
 *
 * The operations of a call travel as one binary argument and the decisions
 * come back as one binary reply (layouts in redis/wire), so that per ping
 * the client writes a few doubles and reads a few back instead of
 * formatting numbers into arguments and parsing reply strings: that was
 * most of the client's CPU time per ping, and all of its garbage, in npm run
 * bench.
 *
 * Until a call's reply says otherwise (redis/wire LAYOUT_MARK), each call
 * also names the keys earlier builds kept its assets' records in, so
 * that an upgraded flow keeps its state; once per slot.
 */
export class RedisWindowStore implements WindowStore {
  private readonly queue: ScriptQueue<WindowOp, WindowOutcome | undefined>;
  private readonly rule: Buffer;
  private readonly keys = new Map<string, AssetKeys>();
  private readonly buckets: BucketNames;
  /** The slots (0 on one server) whose calls no longer name the keys of earlier builds. */
  private readonly legacyDone = new Set<number>();

  constructor(
    private readonly client: RedisClient,
    settings: WindowSettings,
    private readonly options: RedisStoreOptions,
    private readonly now: () => number = Date.now,
  ) {
    this.rule = encodeRule(settings);
    this.buckets = new BucketNames(options.keyPrefix, WINDOW_SEGMENT, options.cluster);
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
   * Where an asset's record is, worked out once per asset rather than once
   * per ping: a fleet sends the same few thousand ids over and over, and a
   * key string per ping would stay alive (in the client's pending command)
   * for as long as the ping is in flight. Bounded: dropped wholesale when full.
   */
  private keysOf(assetId: string): AssetKeys {
    let keys = this.keys.get(assetId);
    if (keys === undefined) {
      if (this.keys.size >= KEY_CACHE_SIZE) this.keys.clear();
      keys = { bucket: this.buckets.of(assetId, this.options.cluster ? bucketOf(assetId) : 0), old: undefined };
      this.keys.set(assetId, keys);
    }
    return keys;
  }

  /** On a Cluster: the slot of the op's Cluster bucket (every key of a Cluster bucket starts with its tag), which names its group and its epoch key. */
  private slotOf(op: WindowOp): number {
    return op instanceof ResetAll ? op.slot : calculateSlot(this.keysOf(op.assetId).bucket);
  }

  private send(ops: WindowOp[]): Promise<(WindowOutcome | undefined)[]> {
    const n = ops.length;
    const first = ops[0] as WindowOp;
    const slot = this.options.cluster ? this.slotOf(first) : 0;
    const legacy = !this.legacyDone.has(slot);
    // KEYS: the epoch key, the buckets; while the old keys are named, they and the layout mark.
    const keys = new Array<string>(legacy ? 2 + 2 * n : 1 + n);
    keys[0] = this.queue.epochKeyOf(first);
    if (legacy) keys[1 + 2 * n] = layoutMarkKey(this.options.keyPrefix, this.options.cluster ? slot : undefined);
    const ids = new Array<string>(n);
    const packed = new ArrayBuffer(n * OP_BYTES);
    const view = new DataView(packed);
    for (let i = 0; i < n; i++) {
      const op = ops[i] as WindowOp;
      if (op instanceof ResetAll) {
        // A reset of every asset names no record: the epoch key stands in its place.
        keys[1 + i] = keys[0];
        if (legacy) keys[1 + n + i] = keys[0];
        ids[i] = '';
      } else {
        const assetKeys = this.keysOf(op.assetId);
        keys[1 + i] = assetKeys.bucket;
        if (legacy) keys[1 + n + i] = assetKeys.old ??= windowRecordKey(this.options.keyPrefix, op.assetId, this.options.cluster);
        ids[i] = op.assetId;
      }
      encodeOp(op, view, i * OP_BYTES);
    }
    const call = Buffer.allocUnsafe(WINDOW_CALL.bytes);
    call.writeDoubleLE(this.now(), WINDOW_CALL.at.now);
    writeUint48(call, WINDOW_CALL.at.call, nextToken());
    // ioredis flattens array arguments one level, so the keys and ids need no spread.
    return this.client.dedupSlidingWindowBuffer(keys.length, keys, this.rule, call, Buffer.from(packed), ids).then((reply) => {
      if (legacy && (replyStatus(reply) & REPLY_STATUS.legacyReads) === 0) this.legacyDone.add(slot);
      return decodeOutcomes(reply);
    });
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

/**
 * The keys and ids of one call of `pings` on one server, the previous
 * release's keys left out (for the benchmark's lines that call the script
 * themselves, and tests): KEYS, then ARGV[4..] after the rule, the call and
 * encodePings.
 */
export function windowCallKeys(prefix: string, pings: readonly Ping[]): { keys: string[]; ids: string[] } {
  let buckets = callKeyNames.get(prefix);
  if (buckets === undefined) {
    buckets = new BucketNames(prefix, WINDOW_SEGMENT, false);
    callKeyNames.set(prefix, buckets);
  }
  return { keys: [epochKey(prefix, WINDOW_SEGMENT, undefined), ...pings.map((p) => buckets.of(p.assetId, 0))], ids: pings.map((p) => p.assetId) };
}

const callKeyNames = new Map<string, BucketNames>();

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

/** The status at the end of the script's reply (redis/wire REPLY_STATUS). */
export function replyStatus(reply: Buffer): number {
  return reply[reply.length - WINDOW_STATUS.bytes] ?? 0;
}

/** The script's reply: one outcome per operation, in order; undefined for a reset. */
export function decodeOutcomes(reply: Buffer): (WindowOutcome | undefined)[] {
  const end = reply.length - WINDOW_STATUS.bytes;
  if (end < 0 || end % REPLY_BYTES !== 0) throw new Error(`a sliding-window reply of ${reply.length} bytes is not whole operations`);
  const outcomes = new Array<WindowOutcome | undefined>(end / REPLY_BYTES);
  for (let i = 0, at = 0; at < end; i++, at += REPLY_BYTES) {
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
  /** When it expires, host clock, epoch ms. */
  expires: number;
  /** The slot epoch (mod redis/wire EPOCH_MODULUS) it was written in. */
  epoch: number;
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
  /** Value mode: the baseline's value; absent when the record has none. */
  value?: number;
  /** Whether its bucket keeps the baseline from before that call (decodeWindowTail). */
  before: boolean;
  /** Whether its bucket keeps a jump candidate for it (decodeWindowCandidate). */
  candidate: boolean;
}

export interface RecordCandidate extends JumpCandidate {
  /** The 48 bits naming the call that set it. */
  call: number;
}

/** A record, the value of its asset's field in its bucket. */
export function decodeWindowRecord(raw: Buffer): WindowRecord {
  const flags = raw[WINDOW_RECORD.at.flags] ?? 0;
  const layout = windowRecordLayout(flags);
  if (layout === undefined || raw.length !== layout.bytes) throw new Error(`a window record of ${raw.length} bytes with flags ${flags} has no known layout`);
  const at = (field: string): number => layout.at[field] as number;
  const fleet = (flags & RECORD_FLAG.fleet) !== 0;
  const heading = fleet ? raw.readUInt16LE(at('heading')) : NO_HEADING;
  const record: WindowRecord = {
    expires: readUint48(raw, at('expires')),
    epoch: raw.readUInt16LE(at('epoch')),
    t: flags & RECORD_FLAG.fraction ? raw.readDoubleLE(at('t')) : readUint48(raw, at('t')),
    lat: flags & RECORD_FLAG.origin ? 0 : raw.readInt32LE(at('lat')) / DEGREE_STEPS,
    lon: flags & RECORD_FLAG.origin ? 0 : raw.readInt32LE(at('lon')) / DEGREE_STEPS,
    accepted: raw.readUInt32LE(at('accepted')),
    suppressed: raw.readUInt32LE(at('suppressed')),
    call: readUint48(raw, at('call')),
    first: raw.readUInt16LE(at('first')),
    events: fleet ? readUint48(raw, at('events')) : 0,
    heading: heading === NO_HEADING ? NaN : heading / HEADING_STEPS,
    accuracy: fleet ? raw.readUInt16LE(at('accuracy')) / ACCURACY_STEPS : 0,
    before: (flags & RECORD_FLAG.before) !== 0,
    candidate: (flags & RECORD_FLAG.candidate) !== 0,
  };
  if (flags & RECORD_FLAG.value) record.value = raw.readDoubleLE(at('value'));
  return record;
}

/** The state kept from before the call a record names (the field BUCKET_FIELD.before and the asset id): its baseline, with its value and candidate when it had them. */
export interface WindowTail {
  t: number;
  lat: number;
  lon: number;
  value?: number;
  candidate?: RecordCandidate;
}

/** A tail field (its length says whether a value and a candidate follow the baseline). */
export function decodeWindowTail(raw: Buffer): WindowTail {
  const value = raw.length === windowTailBytes(true, false) || raw.length === windowTailBytes(true, true);
  const candidate = raw.length === windowTailBytes(false, true) || raw.length === windowTailBytes(true, true);
  if (!value && !candidate && raw.length !== WINDOW_TAIL.bytes) throw new Error(`a window tail of ${raw.length} bytes has no known layout`);
  const tail: WindowTail = { t: raw.readDoubleLE(WINDOW_TAIL.at.t), lat: raw.readInt32LE(WINDOW_TAIL.at.lat) / DEGREE_STEPS, lon: raw.readInt32LE(WINDOW_TAIL.at.lon) / DEGREE_STEPS };
  if (value) tail.value = raw.readDoubleLE(WINDOW_TAIL.bytes);
  if (candidate) tail.candidate = decodeWindowCandidate(raw.subarray(WINDOW_TAIL.bytes + (value ? WINDOW_VALUE.bytes : 0)));
  return tail;
}

/** A jump candidate (the field BUCKET_FIELD.candidate and the asset id, or the end of a tail). */
export function decodeWindowCandidate(raw: Buffer): RecordCandidate {
  if (raw.length !== WINDOW_CANDIDATE.bytes) throw new Error(`a jump candidate of ${raw.length} bytes has no known layout`);
  const at = WINDOW_CANDIDATE.at;
  return {
    t: raw.readDoubleLE(at.t),
    lat: raw.readInt32LE(at.lat) / DEGREE_STEPS,
    lon: raw.readInt32LE(at.lon) / DEGREE_STEPS,
    count: raw.readUInt16LE(at.count),
    call: readUint48(raw, at.call),
  };
}
