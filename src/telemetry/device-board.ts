import { grown, RecencyIndex } from '../core/structures/recency-index';

/**
 * The devices of a sensor reconnect node that replay the most: replays
 * (suppressed copies) counted per device (the key's group), with the time
 * of the last one. Bounded: past `maxDevices` the device whose last replay
 * is oldest is forgotten.
 */
export interface DeviceRow {
  device: string;
  replays: number;
  lastReplay: number;
}

export class DeviceBoard {
  private readonly index: RecencyIndex;
  private replays = new Float64Array(0);
  private lastReplay = new Float64Array(0);

  constructor(maxDevices: number) {
    this.index = new RecencyIndex(maxDevices, (capacity) => {
      this.replays = grown(this.replays, capacity);
      this.lastReplay = grown(this.lastReplay, capacity);
    });
  }

  get size(): number {
    return this.index.size;
  }

  replayed(device: string, now: number): void {
    let slot = this.index.slot(device);
    if (slot === undefined) {
      slot = this.index.insert(device);
      this.replays[slot] = 0;
    } else {
      this.index.touch(slot);
    }
    this.replays[slot] = (this.replays[slot] as number) + 1;
    this.lastReplay[slot] = now;
  }

  /** The `n` devices with the most replays, most first. */
  top(n: number): DeviceRow[] {
    const top: DeviceRow[] = [];
    for (let slot = this.index.oldest; slot !== -1; slot = this.index.next(slot)) {
      const replays = this.replays[slot] as number;
      if (top.length === n && replays <= (top[n - 1] as DeviceRow).replays) continue;
      let at = top.length;
      while (at > 0 && replays > (top[at - 1] as DeviceRow).replays) at--;
      top.splice(at, 0, { device: this.index.keyAt(slot), replays, lastReplay: this.lastReplay[slot] as number });
      if (top.length > n) top.pop();
    }
    return top;
  }
}
