import { grown } from '../core/structures/recency-index';
import { FIX_OK, type FixQuality } from '../core/window/fix-quality';
import { RuleColumns } from '../core/window/rule-columns';
import type { Ping } from '../core/window/sliding-window';
import { blankPing, PingColumnsBuilder, type PingColumns } from '../core/window/ping-columns';

/**
 * A sliding-window node's recent input for the what-if: the last
 * `capacity` pings, oldest overwritten first. It holds what the rule reads
 * (asset id, device time, position or value, heading, accuracy, event
 * fingerprint, the fix's quality) and the host time of the decision, never a payload; it lives in the
 * runtime's memory only, so it is never part of a flow export.
 *
 * Columns are typed arrays written in place: recording a ping allocates
 * nothing (the id is a reference to the string the node already has). They
 * start small and double up to the capacity, so an idle node costs little.
 */
const FIRST_CAPACITY = 256;

export class PingRing {
  private ids: string[] = [];
  private readonly fields = new RuleColumns();
  private arrival: Float64Array = new Float64Array(0);
  private fix: Uint8Array = new Uint8Array(0);
  /** Where the next ping goes. */
  private head = 0;
  private count = 0;

  constructor(readonly capacity: number) {}

  get size(): number {
    return this.count;
  }

  push(ping: Ping, arrival: number): void {
    if (this.capacity === 0) return;
    const held = this.fields.capacity;
    if (this.head === held) {
      if (held < this.capacity) this.grow(Math.min(this.capacity, Math.max(FIRST_CAPACITY, held * 2)));
      else this.head = 0;
    }
    const i = this.head++;
    this.ids[i] = ping.assetId;
    this.fields.write(i, ping);
    this.arrival[i] = arrival;
    this.fix[i] = ping.fix ?? FIX_OK;
    if (this.count < this.capacity) this.count++;
  }

  /** The pings held, oldest first, as columns of their own. */
  columns(): PingColumns {
    const builder = new PingColumnsBuilder();
    const start = this.oldestIndex();
    const ping = blankPing();
    for (let k = 0; k < this.count; k++) {
      const i = (start + k) % this.count;
      ping.assetId = this.ids[i] as string;
      this.fields.read(i, ping);
      ping.fix = this.fix[i] as FixQuality;
      builder.add(ping, this.arrival[i] as number);
    }
    return builder.build();
  }

  /** Host time of the oldest ping held; undefined when empty. */
  get oldestArrival(): number | undefined {
    if (this.count === 0) return undefined;
    return this.arrival[this.oldestIndex()];
  }

  /** Until the ring is full the oldest is at 0; after, it is the next to be overwritten. */
  private oldestIndex(): number {
    return this.count < this.capacity ? 0 : this.head % this.count;
  }

  private grow(capacity: number): void {
    this.fields.resize(capacity);
    this.arrival = grown(this.arrival, capacity);
    this.fix = grown(this.fix, capacity);
  }
}
