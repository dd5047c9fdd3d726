import type { PingColumns } from '../core/window/ping-columns';

/**
 * A recorded file's pings put in time order, as a node would have received
 * them live: real exports are often sorted by vehicle, and a file read in
 * its own order would give each vehicle's pings to the what-if's clock
 * (the latest ping time so far) hours out of step. The sort is stable, so
 * that pings of one time keep the file's order (a redelivery still follows
 * its original, and is `late`).
 *
 * A file in time order already costs one pass. Otherwise the sort is a
 * merge of the file's runs in order (a file sorted by vehicle is one run per
 * vehicle, merged in log2(vehicles) passes) on typed arrays: 8 bytes a ping
 * for the order, then each column rewritten in turn, so that the peak is
 * some 16 bytes a ping over the columns, never a second copy of them all
 * (the runs' starts are the one list on the heap: 8 bytes a run).
 */

/** Whether the columns' times never go back. */
export function inTimeOrder(columns: PingColumns): boolean {
  const { t, size } = columns;
  for (let i = 1; i < size; i++) if ((t[i] as number) < (t[i - 1] as number)) return false;
  return true;
}

/** The columns in time order (the same object, its columns replaced); unchanged when in order already. */
export function toTimeOrder(columns: PingColumns): PingColumns {
  if (inTimeOrder(columns)) return columns;
  const order = timeOrder(columns.t, columns.size);
  const permute = (column: Float64Array): Float64Array => {
    const out = new Float64Array(column.length);
    for (let k = 0; k < order.length; k++) out[k] = column[order[k] as number] as number;
    return out;
  };
  columns.t = permute(columns.t);
  columns.lat = permute(columns.lat);
  columns.lon = permute(columns.lon);
  columns.heading = permute(columns.heading);
  columns.accuracy = permute(columns.accuracy);
  columns.events = permute(columns.events);
  if (columns.value.length > 0) columns.value = permute(columns.value);
  columns.arrival = permute(columns.arrival);
  const fix = new Uint8Array(columns.size);
  for (let k = 0; k < order.length; k++) fix[k] = columns.fix[order[k] as number] as number;
  columns.fix = fix;
  const asset = new Int32Array(columns.size);
  for (let k = 0; k < order.length; k++) asset[k] = columns.asset[order[k] as number] as number;
  columns.asset = asset;
  return columns;
}

/** The indexes 0 .. size-1 ordered by time, stably: a bottom-up merge of the natural runs. */
export function timeOrder(t: Float64Array, size: number): Uint32Array {
  let from = new Uint32Array(size);
  let into = new Uint32Array(size);
  for (let i = 0; i < size; i++) from[i] = i;
  // Where each run starts, and the end; a run is a stretch whose times never go back.
  let starts: number[] = [0];
  for (let i = 1; i < size; i++) if ((t[i] as number) < (t[i - 1] as number)) starts.push(i);
  starts.push(size);
  while (starts.length > 2) {
    const next: number[] = [];
    for (let r = 0; r + 1 < starts.length; r += 2) {
      const lo = starts[r] as number;
      const mid = starts[r + 1] as number;
      const hi = r + 2 < starts.length ? (starts[r + 2] as number) : mid;
      next.push(lo);
      let a = lo;
      let b = mid;
      let k = lo;
      // The current head of each run and its time, read once per move.
      let ia = from[a] as number;
      let ib = from[b] as number;
      let ta = t[ia] as number;
      let tb = t[ib] as number;
      while (a < mid && b < hi) {
        // Ties go to the left run: the earlier in the file.
        if (tb < ta) {
          into[k++] = ib;
          if (++b < hi) tb = t[(ib = from[b] as number)] as number;
        } else {
          into[k++] = ia;
          if (++a < mid) ta = t[(ia = from[a] as number)] as number;
        }
      }
      if (a < mid) into.set(from.subarray(a, mid), k);
      else if (b < hi) into.set(from.subarray(b, hi), k);
    }
    next.push(size);
    starts = next;
    [from, into] = [into, from];
  }
  return from;
}
