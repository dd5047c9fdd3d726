import { grown } from '../structures/recency-index';
import type { Ping, WindowBaseline } from './sliding-window';

/**
 * The fields the sliding-window rule reads (time, position, heading,
 * accuracy, event fingerprint, and value mode's reading), as typed-array
 * columns indexed by slot.
 * The memory store keeps its baselines in them, the sidebar's ring buffer
 * its sample, and the what-if its recorded pings: one layout, written once.
 *
 * Columns rather than an object per entry because these hold up to millions
 * of entries: as objects they would cost about 100 bytes of heap each and a
 * long garbage collection; as columns 48 bytes, written in place.
 *
 * The value column (value mode's reading) is held only once a value is
 * written, so that a node in position mode, and a what-if over positions,
 * pays nothing for it; an empty column reads as NaN in every slot.
 */
export class RuleColumns {
  t: Float64Array;
  lat: Float64Array;
  lon: Float64Array;
  /** NaN when the ping had none. */
  heading: Float64Array;
  /** 0 when the ping had none. */
  accuracy: Float64Array;
  /** 0 when no event property is watched. */
  events: Float64Array;
  /** Value mode's reading, exactly; empty (every slot NaN) until a value is written. */
  value: Float64Array;

  constructor(capacity = 0) {
    this.t = new Float64Array(capacity);
    this.lat = new Float64Array(capacity);
    this.lon = new Float64Array(capacity);
    this.heading = new Float64Array(capacity);
    this.accuracy = new Float64Array(capacity);
    this.events = new Float64Array(capacity);
    this.value = new Float64Array(0);
  }

  get capacity(): number {
    return this.t.length;
  }

  /** Grows (or cuts) every column to `capacity`, keeping what fits. */
  resize(capacity: number): void {
    this.t = grown(this.t, capacity);
    this.lat = grown(this.lat, capacity);
    this.lon = grown(this.lon, capacity);
    this.heading = grown(this.heading, capacity);
    this.accuracy = grown(this.accuracy, capacity);
    this.events = grown(this.events, capacity);
    if (this.value.length > 0) this.value = withNaN(this.value, capacity);
  }

  /** Writes a ping's rule fields (or a baseline) at slot i; a missing heading or value is NaN, a missing accuracy or fingerprint 0. */
  write(i: number, fields: Ping | WindowBaseline): void {
    this.t[i] = fields.t;
    this.lat[i] = fields.lat;
    this.lon[i] = fields.lon;
    this.heading[i] = fields.heading ?? NaN;
    this.accuracy[i] = fields.accuracy ?? 0;
    this.events[i] = fields.events ?? 0;
    const value = fields.value ?? NaN;
    if (this.value.length === 0) {
      if (Number.isNaN(value)) return;
      this.value = withNaN(this.value, this.t.length);
    }
    this.value[i] = value;
  }

  /** Slot i's fields, written into `into` (no allocation); returns it. */
  read<T extends Ping | WindowBaseline>(i: number, into: T): T {
    return readRuleFields(this, i, into);
  }
}

/** The rule's columns alone: what a RuleColumns holds, or a what-if's PingColumns. */
export type RuleFieldColumns = Pick<RuleColumns, 't' | 'lat' | 'lon' | 'heading' | 'accuracy' | 'events' | 'value'>;

/** Slot i of any such columns, written into `into`. */
export function readRuleFields<T extends Ping | WindowBaseline>(columns: RuleFieldColumns, i: number, into: T): T {
  into.t = columns.t[i] as number;
  into.lat = columns.lat[i] as number;
  into.lon = columns.lon[i] as number;
  into.heading = columns.heading[i];
  into.accuracy = columns.accuracy[i];
  into.events = columns.events[i];
  into.value = i < columns.value.length ? columns.value[i] : NaN;
  return into;
}

/** A value column grown (or cut) to `capacity`, its new slots NaN. */
function withNaN(column: Float64Array, capacity: number): Float64Array {
  const next = grown(column, capacity);
  if (capacity > column.length) next.fill(NaN, column.length);
  return next;
}
