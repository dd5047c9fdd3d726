import { grown } from '../structures/recency-index';
import { FIX_OK, type FixQuality } from './fix-quality';
import { readRuleFields, RuleColumns, type RuleFieldColumns } from './rule-columns';
import type { Ping } from './sliding-window';

/**
 * Pings in columns, the one shape the what-if works on: a recorded file read
 * by ping-file, or a node's recent input copied out of its ring buffer
 * (ping-ring). Columns rather than an object per ping because a million
 * pings is an ordinary file: as objects they would cost about 100 MB of heap
 * and a long garbage collection; as typed arrays 61 bytes each (69 with values), and they
 * cross to a worker thread without a copy.
 *
 * Only what the sliding-window rule reads is held: the asset, the times, the
 * position (or value mode's reading: the value column is empty when no ping
 * had one), the rule fields and the fix's quality as decided when the ping
 * was read. Never a payload.
 */
export interface PingColumns extends RuleFieldColumns {
  size: number;
  /** Each asset id once; `asset[i]` is the index of ping i's id here. */
  names: string[];
  asset: Int32Array;
  /** The host's clock when the node decided the ping (epoch ms); NaN when unknown, as for a file. */
  arrival: Float64Array;
  /** Each ping's fix quality (core/window/fix-quality), as read. */
  fix: Uint8Array;
}

const FIRST_CAPACITY = 1024;

/** Collects pings into columns, growing by doubling. */
export class PingColumnsBuilder {
  private readonly nameIndex = new Map<string, number>();
  private readonly names: string[] = [];
  private size = 0;
  private asset = new Int32Array(FIRST_CAPACITY);
  private readonly fields = new RuleColumns(FIRST_CAPACITY);
  private arrival = new Float64Array(FIRST_CAPACITY);
  private fix = new Uint8Array(FIRST_CAPACITY);

  get length(): number {
    return this.size;
  }

  add(ping: Ping, arrival: number): void {
    if (this.size === this.asset.length) this.grow(this.size * 2);
    const i = this.size++;
    let index = this.nameIndex.get(ping.assetId);
    if (index === undefined) {
      index = this.names.length;
      this.nameIndex.set(ping.assetId, index);
      this.names.push(ping.assetId);
    }
    this.asset[i] = index;
    this.fields.write(i, ping);
    this.arrival[i] = arrival;
    this.fix[i] = ping.fix ?? FIX_OK;
  }

  /** The columns, cut to their length (copies: the builder may go on growing). */
  build(): PingColumns {
    const n = this.size;
    const fields = this.fields;
    return {
      size: n,
      names: this.names.slice(),
      asset: this.asset.slice(0, n),
      t: fields.t.slice(0, n),
      lat: fields.lat.slice(0, n),
      lon: fields.lon.slice(0, n),
      heading: fields.heading.slice(0, n),
      accuracy: fields.accuracy.slice(0, n),
      events: fields.events.slice(0, n),
      value: fields.value.slice(0, n),
      arrival: this.arrival.slice(0, n),
      fix: this.fix.slice(0, n),
    };
  }

  private grow(capacity: number): void {
    this.asset = grown(this.asset, capacity);
    this.fields.resize(capacity);
    this.arrival = grown(this.arrival, capacity);
    this.fix = grown(this.fix, capacity);
  }
}

/** A ping object to fill again and again with pingAt (the decision code keeps no reference to it). */
export function blankPing(): Ping {
  return { assetId: '', t: 0, lat: 0, lon: 0, heading: NaN, accuracy: 0, events: 0, value: NaN, fix: FIX_OK, retry: false };
}

/** Ping i of the columns, written into `into` (no allocation). */
export function pingAt(columns: PingColumns, i: number, into: Ping): Ping {
  into.assetId = columns.names[columns.asset[i] as number] as string;
  into.retry = false;
  into.fix = columns.fix[i] as FixQuality;
  return readRuleFields(columns, i, into);
}

/** The typed arrays of the columns, for a worker thread's transfer list. */
export function transferables(columns: PingColumns): ArrayBuffer[] {
  return [columns.asset, columns.t, columns.lat, columns.lon, columns.heading, columns.accuracy, columns.events, columns.value, columns.arrival, columns.fix].map(
    (column) => column.buffer as ArrayBuffer,
  );
}
