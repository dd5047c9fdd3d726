import { decideWindow, type Ping, type WindowBaseline } from '../core/sliding-window';
import type { WindowOutcome, WindowSettings, WindowStore } from './types';

/**
 * Window records in this Node-RED process: atomic because JavaScript runs one
 * handler at a time, lost on restart and not shared between instances.
 *
 * Bounded twice: a record expires ttlSeconds after its last admission, as the
 * Redis key does, and past maxAssets the record written longest ago goes.
 * Every admission re-inserts its record at the end of the Map, so the front is
 * always the oldest write and both bounds cost a pop from the front.
 */
class AssetRecord implements WindowBaseline {
  constructor(
    public t: number,
    public lat: number,
    public lon: number,
    public expiresAt: number,
    public accepted: number,
    public suppressed: number,
  ) {}
}

export interface MemoryWindowSettings extends WindowSettings {
  maxAssets: number;
}

export class MemoryWindowStore implements WindowStore {
  private readonly records = new Map<string, AssetRecord>();
  private readonly ttlMs: number;

  constructor(
    private readonly settings: MemoryWindowSettings,
    private readonly now: () => number = Date.now,
  ) {
    this.ttlMs = settings.ttlSeconds * 1000;
  }

  get size(): number {
    return this.records.size;
  }

  decide(ping: Ping): WindowOutcome {
    const now = this.now();
    this.expire(now);
    const record = this.records.get(ping.assetId);
    const verdict = decideWindow(record, ping, this.settings);
    if (!verdict.admit) {
      // Only a known asset can be suppressed, so record is set here.
      const r = record as AssetRecord;
      r.suppressed++;
      return { ...verdict, accepted: r.accepted, suppressed: r.suppressed };
    }
    const accepted = (record?.accepted ?? 0) + 1;
    const suppressed = record?.suppressed ?? 0;
    if (record !== undefined) this.records.delete(ping.assetId);
    this.records.set(
      ping.assetId,
      new AssetRecord(ping.t, ping.lat, ping.lon, now + this.ttlMs, accepted, suppressed),
    );
    if (this.records.size > this.settings.maxAssets) this.dropOldest();
    return { ...verdict, accepted, suppressed };
  }

  reset(assetId?: string): void {
    if (assetId === undefined) this.records.clear();
    else this.records.delete(assetId);
  }

  private expire(now: number): void {
    for (const [assetId, record] of this.records) {
      if (record.expiresAt > now) return;
      this.records.delete(assetId);
    }
  }

  private dropOldest(): void {
    const oldest = this.records.keys().next();
    if (!oldest.done) this.records.delete(oldest.value);
  }
}
