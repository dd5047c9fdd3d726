/**
 * The records of a saved state: one per entry written (its whole current
 * value, so replaying a record twice, or after a newer snapshot, is
 * harmless), one per entry deleted, and one for "everything was reset".
 * Compact and binary, because on a Raspberry Pi's SD card every byte
 * written per admission counts (see state-journal.ts).
 *
 * Window record:  u8 1  u16 id length  id (UTF-8)  f64 t  i32 lat  i32 lon
 *                 (1e-7 degrees)  u16 heading (0.01 degrees, 65535 none)
 *                 u16 accuracy (0.1 m)  u48 events  f64 expires  u32 accepted
 *                 u32 suppressed
 * Window record, format 2 (issue 29): u8 6, the fields of format 1, then
 *                 u8 parts (1: a value, 2: a jump candidate)
 *                 [f64 value]  [f64 candidate t  i32 candidate lat
 *                 i32 candidate lon (1e-7 degrees)  u16 candidate count]
 * Seen record:    u8 1 seen | 4 pending | 5 released  u16 key length  key
 *                 f64 expires  u48 token  (pending: f64 deadline)
 * Delete:         u8 2  u16 length  key
 * Reset all:      u8 3
 *
 * The window record holds the baseline at the precision the stores keep it
 * (see core/window/sliding-window), so restoring it is exact.
 *
 * A window entry is written in format 1, byte for byte as before, unless it
 * holds what format 1 cannot: a value (value mode's baseline, an exact
 * double) or a jump candidate. Then it is written in format 2, a record
 * type of its own, so that a reader never mistakes one for the other. Both
 * are read. The state of a node that uses neither stays readable by the
 * previous release (which would take a format-2 record for damage, and keep
 * the frames before it).
 */
import { ACCURACY_STEPS, DEGREE_STEPS, HEADING_STEPS, NO_HEADING } from '../core/window/sliding-window';
import { RELEASED_DEADLINE, SEEN_DEADLINE } from '../core/sensor/seen-codes';
import type { SeenEntry } from '../core/sensor/seen-set';
import type { WindowEntry } from '../stores/memory-window-store';
import { SEEN_STATE, WINDOW_STATE, type StateKind } from './frames';

const UPSERT = 1;
const DELETE = 2;
const CLEAR = 3;
const PENDING_RECORD = 4;
const RELEASED_RECORD = 5;
const WINDOW_RECORD_2 = 6;
const HAS_VALUE = 1;
const HAS_CANDIDATE = 2;
/** The largest candidate count a record holds: far above any relocateAfterPings. */
const MAX_CANDIDATE_COUNT = 0xffff;
const MAX_COUNT = 0xffff_ffff;

/** A growable buffer of records. */
export class RecordWriter {
  private buffer = Buffer.allocUnsafe(4096);
  private at = 0;

  get length(): number {
    return this.at;
  }

  /** The records written so far, and a fresh start (the bytes handed out are not copied, nor written again). */
  take(): Buffer {
    const out = this.buffer.subarray(0, this.at);
    this.buffer = Buffer.allocUnsafe(Math.max(4096, this.at));
    this.at = 0;
    return out;
  }

  private room(bytes: number): void {
    if (this.at + bytes <= this.buffer.length) return;
    const bigger = Buffer.allocUnsafe(Math.max(this.buffer.length * 2, this.at + bytes));
    this.buffer.copy(bigger, 0, 0, this.at);
    this.buffer = bigger;
  }

  u8(value: number): void {
    this.room(1);
    this.buffer[this.at++] = value;
  }

  u16(value: number): void {
    this.room(2);
    this.at = this.buffer.writeUInt16LE(value, this.at);
  }

  u32(value: number): void {
    this.room(4);
    this.at = this.buffer.writeUInt32LE(Math.min(value, MAX_COUNT), this.at);
  }

  i32(value: number): void {
    this.room(4);
    this.at = this.buffer.writeInt32LE(value, this.at);
  }

  u48(value: number): void {
    this.room(6);
    this.at = this.buffer.writeUIntLE(value, this.at, 6);
  }

  f64(value: number): void {
    this.room(8);
    this.at = this.buffer.writeDoubleLE(value, this.at);
  }

  text(value: string): void {
    const bytes = Buffer.byteLength(value, 'utf8');
    if (bytes > 0xffff) throw new RangeError(`a key of ${bytes} bytes is too long to save`);
    this.u16(bytes);
    this.room(bytes);
    this.at += this.buffer.write(value, this.at, 'utf8');
  }
}

/** Reads records back; throws a RangeError when they run past the end (a damaged frame). */
class RecordReader {
  at = 0;
  constructor(private readonly data: Buffer) {}

  get done(): boolean {
    return this.at >= this.data.length;
  }

  u8(): number {
    return this.data.readUInt8(this.at++);
  }

  u16(): number {
    const v = this.data.readUInt16LE(this.at);
    this.at += 2;
    return v;
  }

  u32(): number {
    const v = this.data.readUInt32LE(this.at);
    this.at += 4;
    return v;
  }

  i32(): number {
    const v = this.data.readInt32LE(this.at);
    this.at += 4;
    return v;
  }

  u48(): number {
    const v = this.data.readUIntLE(this.at, 6);
    this.at += 6;
    return v;
  }

  f64(): number {
    const v = this.data.readDoubleLE(this.at);
    this.at += 8;
    return v;
  }

  text(): string {
    const length = this.u16();
    if (this.at + length > this.data.length) throw new RangeError('a key runs past the end of its frame');
    const v = this.data.toString('utf8', this.at, this.at + length);
    this.at += length;
    return v;
  }
}

/** What restoring writes into: a memory store. */
export interface RestoreTarget<E> {
  restore(entry: E, nowMs: number): void;
  forget(key: string): void;
  clearAll(): void;
}

export interface StateCodec<E> {
  readonly kind: StateKind;
  /** The current entry of a key, or a delete when there is none. */
  write(out: RecordWriter, key: string, entry: E | undefined): void;
  /** Applies one frame's records, in order. */
  apply(payload: Buffer, target: RestoreTarget<E>, nowMs: number): void;
}

export function writeClear(out: RecordWriter): void {
  out.u8(CLEAR);
}

function writeDelete(out: RecordWriter, key: string): void {
  out.u8(DELETE);
  out.text(key);
}

/** Applies records until the end; the codec reads each kind's own upsert. */
function applyRecords<E>(payload: Buffer, target: RestoreTarget<E>, nowMs: number, upsert: (type: number, reader: RecordReader) => E | undefined): void {
  const reader = new RecordReader(payload);
  while (!reader.done) {
    const type = reader.u8();
    if (type === CLEAR) target.clearAll();
    else if (type === DELETE) target.forget(reader.text());
    else {
      const entry = upsert(type, reader);
      if (entry === undefined) throw new RangeError(`an unknown record type ${type}`);
      target.restore(entry, nowMs);
    }
  }
}

export const windowCodec: StateCodec<WindowEntry> = {
  kind: WINDOW_STATE,
  write(out, key, entry) {
    if (entry === undefined) {
      writeDelete(out, key);
      return;
    }
    const value = entry.value ?? NaN;
    const candidate = entry.candidate;
    const parts = (Number.isNaN(value) ? 0 : HAS_VALUE) | (candidate.count > 0 ? HAS_CANDIDATE : 0);
    out.u8(parts === 0 ? UPSERT : WINDOW_RECORD_2);
    out.text(entry.assetId);
    out.f64(entry.t);
    out.i32(Math.round(entry.lat * DEGREE_STEPS));
    out.i32(Math.round(entry.lon * DEGREE_STEPS));
    out.u16(Number.isNaN(entry.heading) ? NO_HEADING : Math.round(entry.heading * HEADING_STEPS));
    out.u16(Math.round(entry.accuracy * ACCURACY_STEPS));
    out.u48(entry.events);
    out.f64(entry.expiresAt);
    out.u32(entry.accepted);
    out.u32(entry.suppressed);
    if (parts === 0) return;
    out.u8(parts);
    if (parts & HAS_VALUE) out.f64(value);
    if (parts & HAS_CANDIDATE) {
      out.f64(candidate.t);
      out.i32(Math.round(candidate.lat * DEGREE_STEPS));
      out.i32(Math.round(candidate.lon * DEGREE_STEPS));
      out.u16(Math.min(candidate.count, MAX_CANDIDATE_COUNT));
    }
  },
  apply(payload, target, nowMs) {
    applyRecords(payload, target, nowMs, (type, r) => {
      if (type !== UPSERT && type !== WINDOW_RECORD_2) return undefined;
      const assetId = r.text();
      const t = r.f64();
      const lat = r.i32() / DEGREE_STEPS;
      const lon = r.i32() / DEGREE_STEPS;
      const heading = r.u16();
      const entry: WindowEntry = {
        assetId,
        t,
        lat,
        lon,
        heading: heading === NO_HEADING ? NaN : heading / HEADING_STEPS,
        accuracy: r.u16() / ACCURACY_STEPS,
        events: r.u48(),
        value: NaN,
        expiresAt: r.f64(),
        accepted: r.u32(),
        suppressed: r.u32(),
        candidate: { t: 0, lat: 0, lon: 0, count: 0 },
      };
      if (type === UPSERT) return entry;
      const parts = r.u8();
      // A part this release does not know would be read as the next record.
      if ((parts & ~(HAS_VALUE | HAS_CANDIDATE)) !== 0) throw new RangeError(`a window record with unknown parts ${parts}`);
      if (parts & HAS_VALUE) entry.value = r.f64();
      if (parts & HAS_CANDIDATE) {
        entry.candidate.t = r.f64();
        entry.candidate.lat = r.i32() / DEGREE_STEPS;
        entry.candidate.lon = r.i32() / DEGREE_STEPS;
        entry.candidate.count = r.u16();
      }
      return entry;
    });
  },
};

export const seenCodec: StateCodec<SeenEntry> = {
  kind: SEEN_STATE,
  write(out, key, entry) {
    if (entry === undefined) {
      writeDelete(out, key);
      return;
    }
    const pending = entry.deadline > SEEN_DEADLINE;
    out.u8(pending ? PENDING_RECORD : entry.deadline === RELEASED_DEADLINE ? RELEASED_RECORD : UPSERT);
    out.text(entry.key);
    out.f64(entry.expiry);
    out.u48(entry.token);
    if (pending) out.f64(entry.deadline);
  },
  apply(payload, target, nowMs) {
    applyRecords(payload, target, nowMs, (type, r) => {
      if (type !== UPSERT && type !== PENDING_RECORD && type !== RELEASED_RECORD) return undefined;
      const key = r.text();
      const expiry = r.f64();
      const token = r.u48();
      const deadline = type === PENDING_RECORD ? r.f64() : type === RELEASED_RECORD ? RELEASED_DEADLINE : SEEN_DEADLINE;
      return { key, expiry, token, deadline };
    });
  },
};
