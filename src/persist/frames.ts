/**
 * The on-disk format of a memory store's saved state (see state-journal.ts):
 * a header, then frames of records, each frame checked by its CRC-32, so
 * that a write cut short (a power cut, a full disk, a `kill -9` mid-append)
 * or a damaged file is noticed rather than read as records.
 *
 *   header  'NRDD'  u8 format version  u8 kind  u16 0  u32 generation
 *           u32 CRC-32 of the 12 bytes before it                    (16 bytes)
 *   frame   u32 payload length  u32 CRC-32 of the payload  payload
 *
 * In format 2 a payload is its records compressed (raw deflate, level 1,
 * done off the event loop): a seen-set's record of 45 bytes takes about 16,
 * a window's of 55 about 15, so a small card (or a 256 KB tmpfs) holds
 * three times the state, and is written a third as much. The CRC is of the
 * bytes on disk.
 *
 * Little-endian throughout. The header's own checksum is there because the
 * generation decides which journals a snapshot supersedes: one flipped bit
 * must not make a load skip (and a compaction delete) journals that still
 * hold changes. Format 1 (the previous release) had a 12-byte header with
 * no checksum and uncompressed payloads; it is still read, and never
 * written (nor appended to: the first save after loading one writes a new
 * snapshot).
 *
 * A snapshot ends with an empty frame, so that a snapshot missing its end is
 * known to be truncated; a journal has none, as it is only ever appended to.
 */
import { deflateRaw, inflateRawSync } from 'zlib';

export const MAGIC = 0x4444524e; // 'NRDD' read as a little-endian u32
export const FORMAT_VERSION = 2;
/** The previous format: read, never written. */
export const LEGACY_VERSION = 1;
export const HEADER_BYTES = 16;
const LEGACY_HEADER_BYTES = 12;
export const FRAME_HEAD_BYTES = 8;

export type StateKind = 1 | 2;
export const WINDOW_STATE: StateKind = 1;
export const SEEN_STATE: StateKind = 2;

export function encodeHeader(kind: StateKind, generation: number): Buffer {
  const header = Buffer.alloc(HEADER_BYTES);
  header.writeUInt32LE(MAGIC, 0);
  header[4] = FORMAT_VERSION;
  header[5] = kind;
  header.writeUInt32LE(generation, 8);
  header.writeUInt32LE(crc32(header.subarray(0, LEGACY_HEADER_BYTES)), LEGACY_HEADER_BYTES);
  return header;
}

/** A header read: its generation, where its frames start, and whether their payloads are compressed. */
export type HeaderResult = { ok: true; generation: number; bytes: number; deflated: boolean } | { ok: false; problem: string };

export function decodeHeader(data: Buffer, kind: StateKind): HeaderResult {
  if (data.length < LEGACY_HEADER_BYTES) return { ok: false, problem: `is ${data.length} bytes long, shorter than its header` };
  if (data.readUInt32LE(0) !== MAGIC) return { ok: false, problem: 'is not a saved dedup state' };
  const version = data[4] as number;
  if (version > FORMAT_VERSION) {
    return { ok: false, problem: `was written in format ${version} by a newer release (this one reads ${FORMAT_VERSION})` };
  }
  if (version !== FORMAT_VERSION && version !== LEGACY_VERSION) return { ok: false, problem: `has an unknown format ${version}` };
  if (version === FORMAT_VERSION) {
    if (data.length < HEADER_BYTES) return { ok: false, problem: `is ${data.length} bytes long, shorter than its header` };
    if (crc32(data.subarray(0, LEGACY_HEADER_BYTES)) !== data.readUInt32LE(LEGACY_HEADER_BYTES)) {
      return { ok: false, problem: 'has a header failing its checksum' };
    }
  }
  if (data[5] !== kind) return { ok: false, problem: 'belongs to the other kind of dedup node' };
  const current = version === FORMAT_VERSION;
  return { ok: true, generation: data.readUInt32LE(8), bytes: current ? HEADER_BYTES : LEGACY_HEADER_BYTES, deflated: current };
}

/** Records as a format-2 payload: compressed in the thread pool, so the event loop only hands them over. */
export function packRecords(records: Buffer): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    deflateRaw(records, { level: 1 }, (error, packed) => (error ? reject(error) : resolve(packed)));
  });
}

/** A frame's records can never be larger than this: a payload that claims more is damage, not a reason to allocate. */
const MAX_RECORDS_BYTES = 256 << 20;

/** The records of a format-2 payload; throws when it is not a whole deflate stream. */
export function unpackRecords(payload: Buffer): Buffer {
  return inflateRawSync(payload, { maxOutputLength: MAX_RECORDS_BYTES });
}

export function encodeFrame(payload: Buffer): Buffer {
  const head = Buffer.allocUnsafe(FRAME_HEAD_BYTES);
  head.writeUInt32LE(payload.length, 0);
  head.writeUInt32LE(crc32(payload), 4);
  return Buffer.concat([head, payload]);
}

export interface FrameScan {
  payloads: Buffer[];
  /** Set when the data ends in a frame cut short or fails its check: what and where. */
  damage?: string;
  /** True when an empty frame (a snapshot's end) was read. */
  ended: boolean;
}

/** The frames after the header (of `start` bytes); stops at the first damaged one. */
export function readFrames(data: Buffer, start: number = HEADER_BYTES): FrameScan {
  const payloads: Buffer[] = [];
  let at = start;
  while (at < data.length) {
    if (at + FRAME_HEAD_BYTES > data.length) return { payloads, damage: `a frame header cut short at byte ${at}`, ended: false };
    const length = data.readUInt32LE(at);
    if (length === 0) return { payloads, ended: true };
    const end = at + FRAME_HEAD_BYTES + length;
    if (end > data.length) return { payloads, damage: `a frame of ${length} bytes cut short at byte ${at}`, ended: false };
    const payload = data.subarray(at + FRAME_HEAD_BYTES, end);
    if (crc32(payload) !== data.readUInt32LE(at + 4)) return { payloads, damage: `a frame failing its checksum at byte ${at}`, ended: false };
    payloads.push(payload);
    at = end;
  }
  return { payloads, ended: false };
}

/** The end of a snapshot: an empty frame. */
export const END_FRAME = Buffer.alloc(FRAME_HEAD_BYTES);

const CRC_TABLE = (() => {
  const table = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    table[n] = c >>> 0;
  }
  return table;
})();

/** CRC-32 (IEEE 802.3), as zlib computes it. */
export function crc32(data: Buffer): number {
  let c = 0xffffffff;
  for (let i = 0; i < data.length; i++) c = (CRC_TABLE[(c ^ (data[i] as number)) & 0xff] as number) ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}
