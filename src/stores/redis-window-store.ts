import calculateSlot from 'cluster-key-slot';
import type { AdmitReason, Ping, SuppressReason } from '../core/sliding-window';
import { nextCallToken } from '../redis/call-token';
import { deleteMatching } from '../redis/delete-matching';
import { windowPattern, windowRecordKey } from '../redis/key-names';
import type { RedisClient } from '../redis/scripts';
import { TickBatcher } from '../redis/tick-batcher';
import type { WindowOutcome, WindowSettings, WindowStore } from './types';

export interface RedisStoreOptions {
  keyPrefix: string;
  /** On a Cluster, calls are grouped per hash slot; on one server, not at all. */
  cluster: boolean;
  timeoutMs: number;
  /** Pings per script call; bounds how long one call holds the server. */
  maxBatch?: number;
}

const DEFAULT_MAX_BATCH = 500;
/** The record keeps the index of a ping within its call in two bytes. */
const MAX_BATCH_LIMIT = 65_535;
const KEY_CACHE_SIZE = 50_000;

/**
 * Window records in Redis, one string per asset holding its baseline and
 * counts, decided by lua/sliding-window.lua: shared by every worker, and
 * atomic across them.
 *
 * The pings of a call travel as one binary argument and the decisions come
 * back as one binary reply (layouts in the Lua file's header), so that per
 * ping the client writes three doubles and reads one byte and four doubles
 * instead of formatting three numbers, encoding three more arguments and
 * parsing five reply strings: that was most of the client's CPU time per
 * ping, and all of its garbage, in npm run bench.
 */
export class RedisWindowStore implements WindowStore {
  private readonly batcher: TickBatcher<Ping, WindowOutcome>;
  private readonly fixedArgs: string[];
  private readonly keys = new Map<string, string>();

  constructor(
    private readonly client: RedisClient,
    settings: WindowSettings,
    private readonly options: RedisStoreOptions,
  ) {
    // EXPIRE takes whole seconds; round up so a record never expires early.
    const ttl = Math.max(1, Math.ceil(settings.ttlSeconds));
    this.fixedArgs = [String(settings.minSeconds), String(settings.minMetres), String(ttl)];
    this.batcher = new TickBatcher({
      send: (pings) => this.send(pings),
      groupOf: options.cluster ? (ping) => calculateSlot(this.keyOf(ping.assetId)) : () => 0,
      maxBatch: Math.min(options.maxBatch ?? DEFAULT_MAX_BATCH, MAX_BATCH_LIMIT),
      timeoutMs: options.timeoutMs,
    });
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
      key = windowRecordKey(this.options.keyPrefix, assetId);
      this.keys.set(assetId, key);
    }
    return key;
  }

  decide(ping: Ping): Promise<WindowOutcome> {
    return this.batcher.submit(ping);
  }

  decideThen<C>(ping: Ping, onOutcome: (outcome: WindowOutcome, context: C) => void, onError: (error: unknown, context: C) => void, context: C): void {
    this.batcher.submitWith(ping, onOutcome, onError, context);
  }

  async reset(assetId?: string): Promise<void> {
    if (assetId === undefined) await deleteMatching(this.client, windowPattern(this.options.keyPrefix));
    else await this.client.unlink(windowRecordKey(this.options.keyPrefix, assetId));
  }

  private send(pings: Ping[]): Promise<WindowOutcome[]> {
    const keys = new Array<string>(pings.length);
    for (let i = 0; i < pings.length; i++) keys[i] = this.keyOf((pings[i] as Ping).assetId);
    // ioredis flattens array arguments one level, so the keys need no spread.
    return this.client
      .dedupSlidingWindowBuffer(pings.length, keys, this.fixedArgs, nextCallToken(), encodePings(pings))
      .then(decodeOutcomes);
  }
}

/** ARGV[5] of lua/sliding-window.lua: t, lat, lon of each ping as little-endian doubles. */
export function encodePings(pings: readonly Pick<Ping, 't' | 'lat' | 'lon'>[]): Buffer {
  const buffer = Buffer.allocUnsafe(pings.length * 24);
  let at = 0;
  for (const ping of pings) {
    buffer.writeDoubleLE(ping.t, at);
    buffer.writeDoubleLE(ping.lat, at + 8);
    buffer.writeDoubleLE(ping.lon, at + 16);
    at += 24;
  }
  return buffer;
}

const REPLY_BYTES = 33;
/** Reason codes of the reply, by code (see lua/sliding-window.lua); up to 4 admit. */
const REASONS: readonly (AdmitReason | SuppressReason)[] = ['first', 'first', 'elapsed', 'moved', 'replayed', 'late', 'window'];
const LAST_ADMIT_CODE = 4;

/** The script's reply: one outcome per ping, in order. */
export function decodeOutcomes(reply: Buffer): WindowOutcome[] {
  if (reply.length % REPLY_BYTES !== 0) throw new Error(`a sliding-window reply of ${reply.length} bytes is not whole pings`);
  const outcomes = new Array<WindowOutcome>(reply.length / REPLY_BYTES);
  for (let i = 0, at = 0; at < reply.length; i++, at += REPLY_BYTES) {
    const code = reply[at] as number;
    if (code < 1 || code >= REASONS.length) throw new Error(`unexpected reason code ${code} from the sliding-window script`);
    // first and replayed come with neither dt nor distance, late with no distance.
    const measured = code === 2 || code === 3 || code === 6;
    const dt = reply.readDoubleLE(at + 1);
    outcomes[i] = {
      admit: code <= LAST_ADMIT_CODE,
      reason: REASONS[code],
      dtSeconds: measured || code === 5 ? dt : null,
      distanceMetres: measured ? reply.readDoubleLE(at + 9) : null,
      accepted: reply.readDoubleLE(at + 17),
      suppressed: reply.readDoubleLE(at + 25),
    } as WindowOutcome;
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
  /** Which layout the script chose: compact (28 bytes) or full (42). */
  layout: 'compact' | 'full';
  /** The index, within its call, of that call's first admitted ping of the asset. */
  first: number;
  /** The first 48 bits of the SHA-1 of the token of the last call that admitted a ping, as hex. */
  call: string;
  /** The baseline from before that call, when the call suppressed a ping before admitting one. */
  before: { t: number; lat: number; lon: number } | null;
}

export function decodeWindowRecord(raw: Buffer): WindowRecord {
  let record: WindowRecord;
  let at: number;
  if (raw.length === 28 || raw.length === 52) {
    record = {
      t: raw.readUIntLE(0, 6),
      lat: raw.readInt32LE(6) / 1e7,
      lon: raw.readInt32LE(10) / 1e7,
      accepted: raw.readUIntLE(14, 3),
      suppressed: raw.readUIntLE(17, 3),
      layout: 'compact',
      first: raw.readUInt16LE(20),
      call: raw.readUIntLE(22, 6).toString(16).padStart(12, '0'),
      before: null,
    };
    at = 28;
  } else if (raw.length === 42 || raw.length === 66) {
    record = {
      t: raw.readDoubleLE(0),
      lat: raw.readDoubleLE(8),
      lon: raw.readDoubleLE(16),
      accepted: raw.readUIntLE(24, 5),
      suppressed: raw.readUIntLE(29, 5),
      layout: 'full',
      first: raw.readUInt16LE(34),
      call: raw.readUIntLE(36, 6).toString(16).padStart(12, '0'),
      before: null,
    };
    at = 42;
  } else {
    throw new Error(`a window record of ${raw.length} bytes has no known layout`);
  }
  if (raw.length > at) record.before = { t: raw.readDoubleLE(at), lat: raw.readDoubleLE(at + 8), lon: raw.readDoubleLE(at + 16) };
  return record;
}
