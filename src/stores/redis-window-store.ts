import calculateSlot from 'cluster-key-slot';
import type { Ping } from '../core/sliding-window';
import type { AdmitReason, SuppressReason, WindowVerdict } from '../core/sliding-window';
import { nextCallToken } from '../redis/call-token';
import { deleteMatching } from '../redis/delete-matching';
import { windowPattern, windowRecordKey } from '../redis/key-names';
import type { RedisClient } from '../redis/scripts';
import { TickBatcher } from '../redis/tick-batcher';
import { withCounts, type WindowOutcome, type WindowSettings, type WindowStore } from './types';

export interface RedisStoreOptions {
  keyPrefix: string;
  /** On a Cluster, calls are grouped per hash slot; on one server, not at all. */
  cluster: boolean;
  timeoutMs: number;
  /** Pings per script call; bounds how long one call holds the server. */
  maxBatch?: number;
}

interface KeyedPing {
  key: string;
  ping: Ping;
}

const FIELDS_PER_PING = 5;
const DEFAULT_MAX_BATCH = 500;

/**
 * Window records in Redis, one hash per asset (record and counters under one
 * key), decided by lua/sliding-window.lua: shared by every worker, and
 * atomic across them.
 */
export class RedisWindowStore implements WindowStore {
  private readonly batcher: TickBatcher<KeyedPing, WindowOutcome>;
  private readonly fixedArgs: string[];

  constructor(
    private readonly client: RedisClient,
    settings: WindowSettings,
    private readonly options: RedisStoreOptions,
  ) {
    // EXPIRE takes whole seconds; round up so a record never expires early.
    const ttl = Math.max(1, Math.ceil(settings.ttlSeconds));
    this.fixedArgs = [String(settings.minSeconds), String(settings.minMetres), String(ttl)];
    this.batcher = new TickBatcher({
      send: (items) => this.send(items),
      groupOf: options.cluster ? (item) => calculateSlot(item.key) : () => 0,
      maxBatch: options.maxBatch ?? DEFAULT_MAX_BATCH,
      timeoutMs: options.timeoutMs,
    });
  }

  decide(ping: Ping): Promise<WindowOutcome> {
    return this.batcher.submit({ key: windowRecordKey(this.options.keyPrefix, ping.assetId), ping });
  }

  async reset(assetId?: string): Promise<void> {
    if (assetId === undefined) await deleteMatching(this.client, windowPattern(this.options.keyPrefix));
    else await this.client.unlink(windowRecordKey(this.options.keyPrefix, assetId));
  }

  private async send(items: KeyedPing[]): Promise<WindowOutcome[]> {
    const keysAndArgs: string[] = items.map((item) => item.key);
    keysAndArgs.push(...this.fixedArgs, nextCallToken());
    for (const { ping } of items) keysAndArgs.push(String(ping.t), String(ping.lat), String(ping.lon));
    const raw = await this.client.dedupSlidingWindow(items.length, ...keysAndArgs);
    const outcomes: WindowOutcome[] = [];
    for (let i = 0; i < raw.length; i += FIELDS_PER_PING) {
      outcomes.push(parseOutcome(raw, i));
    }
    return outcomes;
  }
}

const SUPPRESS_REASONS = new Set<string>(['late', 'window']);
const ADMIT_REASONS = new Set<string>(['first', 'elapsed', 'moved', 'replayed']);

function parseOutcome(raw: string[], at: number): WindowOutcome {
  const reason = raw[at] as string;
  const dt = optionalNumber(raw[at + 1]);
  const distance = optionalNumber(raw[at + 2]);
  let verdict: WindowVerdict;
  if (SUPPRESS_REASONS.has(reason)) {
    verdict = { admit: false, reason: reason as SuppressReason, dtSeconds: dt ?? 0, distanceMetres: distance };
  } else if (ADMIT_REASONS.has(reason)) {
    verdict = { admit: true, reason: reason as AdmitReason, dtSeconds: dt, distanceMetres: distance };
  } else {
    throw new Error(`unexpected reason "${reason}" from the sliding-window script`);
  }
  return withCounts(verdict, Number(raw[at + 3]), Number(raw[at + 4]));
}

function optionalNumber(text: string | undefined): number | null {
  return text === undefined || text === '' ? null : Number(text);
}
