/**
 * The binary formats the Lua scripts and the Redis stores share: every
 * argument, reply, record and entry, its fields in order, the struct codes
 * they are packed with, the flags inside them, and the steps a stored
 * number is counted in. This table is the only place they are written:
 * src/redis/scripts.ts hands it to each script in its prelude, as it does
 * the reason codes, and the stores' encoders and decoders read their sizes
 * and offsets here, so neither side spells a layout number.
 *
 * Binary, little-endian, read in Lua with Redis' struct library: neither
 * side formats or parses decimal text, and Redis would truncate a Lua
 * number to an integer on the way out. A layout is its fields in order,
 * each with its struct code; its format string, size and each field's
 * offset follow from that.
 */
import { ACCURACY_STEPS, DEGREE_STEPS, HEADING_STEPS, MAX_ACCURACY_STEP, NO_HEADING } from '../core/window/sliding-window';

/** The struct codes the layouts use, and their sizes in bytes. */
const CODE_BYTES = { B: 1, I2: 2, I4: 4, I6: 6, i4: 4, d: 8 } as const;
type Code = keyof typeof CODE_BYTES;

export interface Layout<F extends string> {
  /** The struct format, '<' and the codes in order: what the script packs and unpacks with. */
  readonly format: string;
  readonly bytes: number;
  /** Each field's offset from the layout's start, in bytes. */
  readonly at: Readonly<Record<F, number>>;
  readonly fields: readonly (readonly [F, Code])[];
}

function layout<const F extends string>(fields: readonly (readonly [F, Code])[]): Layout<F> {
  const at = {} as Record<F, number>;
  let bytes = 0;
  for (const [name, code] of fields) {
    at[name] = bytes;
    bytes += CODE_BYTES[code];
  }
  return { format: `<${fields.map(([, code]) => code).join('')}`, bytes, at, fields };
}

/** The fields named, in the order given, as a layout of their own. */
function pick<F extends string, P extends F>(from: Layout<F>, names: readonly P[]): Layout<P> {
  return layout(names.map((name) => from.fields.find(([field]) => field === name) as readonly [P, Code]));
}

/** The largest unsigned number a field of the layout holds. */
function maxOf<F extends string>(of: Layout<F>, field: F): number {
  const code = (of.fields.find(([name]) => name === field) as readonly [F, Code])[1];
  return 2 ** (8 * CODE_BYTES[code]) - 1;
}

/** An epoch key's value: a counter, and the call that raised it last (so that a resent call raises it once). */
export const EPOCH = layout([
  ['count', 'I4'],
  ['call', 'I6'],
]);

/*
 * The sliding-window script (lua/sliding-window.lua).
 */

/**
 * ARGV[1]: the rule. minHeadingDegrees 0 is off, maxAheadSeconds negative
 * is off; mode a code of WINDOW_MODE; deadbandPercent 1 when the deadband is
 * a percentage; maxSpeedKmh 0 is off (the jump guard); relocateAfterSeconds
 * and relocateAfterPings as the rule has them, or their defaults, resolved by
 * the client (so that both sides compare the one double).
 */
export const WINDOW_RULE = layout([
  ['minSeconds', 'd'],
  ['minMetres', 'd'],
  ['minHeadingDegrees', 'd'],
  ['maxAheadSeconds', 'd'],
  ['ttlSeconds', 'I4'],
  ['mode', 'B'],
  ['deadband', 'd'],
  ['deadbandPercent', 'B'],
  ['maxSpeedKmh', 'd'],
  ['relocateAfterSeconds', 'd'],
  ['relocateAfterPings', 'd'],
]);

/** The codes of WINDOW_RULE's `mode`. */
export const WINDOW_MODE = { position: 0, value: 1 } as const;

/** ARGV[2]: the host's clock in epoch ms (the clock guard's "now"), and 48 bits naming the call. */
export const WINDOW_CALL = layout([
  ['now', 'd'],
  ['call', 'I6'],
]);

/** ARGV[3]: one per operation; t in epoch ms; heading and accuracy 0 when the ping has none; value NaN when it has none (position mode). */
export const WINDOW_OP = layout([
  ['op', 'B'],
  ['flags', 'B'],
  ['events', 'I6'],
  ['t', 'd'],
  ['lat', 'd'],
  ['lon', 'd'],
  ['heading', 'd'],
  ['accuracy', 'd'],
  ['value', 'd'],
]);

/** The operation codes of WINDOW_OP's `op` (any code but the resets is a ping). */
export const WINDOW_OP_CODE = { ping: 1, resetAsset: 2, resetAll: 3 } as const;

/**
 * Bits of WINDOW_OP's `flags`: the ping has a heading; it is a retried
 * message (its decision was lost); its fix's quality (core/window/fix-quality,
 * decided by the client when the ping was read) is NO_FIX, or POOR_FIX.
 */
export const WINDOW_OP_FLAG = { heading: 1, retry: 2, noFix: 4, poorFix: 8 } as const;

/** The reply: one per operation, in order; reason 0 for a reset. */
export const WINDOW_REPLY = layout([
  ['reason', 'B'],
  ['dt', 'd'],
  ['distance', 'd'],
  ['turn', 'd'],
  ['accepted', 'I4'],
  ['suppressed', 'I4'],
  ['present', 'B'],
  ['change', 'd'],
]);

/** Bits of WINDOW_REPLY's `present`: which measures the decision has. */
export const WINDOW_PRESENT = { dt: 1, distance: 2, turn: 4, change: 8 } as const;

/**
 * An asset's record: its baseline (the last admitted ping, at the steps
 * below), its counts, the call that last admitted a ping of it and that
 * call's index of its first admitted ping, and the epoch it was written in.
 * 44 bytes, so that Redis 7 keeps the key's object and its value in one
 * 64-byte allocation (an "embstr"; a 45th byte costs a second one:
 * test/memory/redis-footprint.spec.ts).
 */
export const WINDOW_RECORD = layout([
  ['t', 'd'],
  ['lat', 'i4'],
  ['lon', 'i4'],
  ['accepted', 'I4'],
  ['suppressed', 'I4'],
  ['call', 'I6'],
  ['first', 'I2'],
  ['events', 'I6'],
  ['heading', 'I2'],
  ['accuracy', 'I2'],
  ['epoch', 'I2'],
]);

/**
 * What follows the record, sometimes: the baseline from before the call
 * the record names, kept when that call suppressed a ping of the asset
 * before admitting one (see "Resent calls" in the script). Its fields are
 * the record's, cut from the record as read.
 */
export const WINDOW_TAIL = pick(WINDOW_RECORD, ['t', 'lat', 'lon', 'events', 'heading', 'accuracy']);

/*
 * The optional parts of issue 29: value mode's baseline value, the jump
 * guard's candidate, and the same two for the tail's baseline. A record
 * with none of them is the record above, as it always was (44 bytes, 70
 * with a tail). A record with any of them is EXTENDED: the record, a PARTS
 * byte saying which parts follow (WINDOW_PART), then those parts in this
 * order: value, candidate, tail, the tail's value, the tail's candidate.
 * Its length always differs from 44 and 70 (checked below), so the length
 * tells the plain forms apart and the byte the rest.
 */
export const WINDOW_PARTS = layout([['parts', 'B']]);

/** The baseline's value, exactly: value mode's reading (and the tail's). */
export const WINDOW_VALUE = layout([['value', 'd']]);

/**
 * The jump candidate: t exactly, the position in the record's degree steps,
 * the count of agreeing jumps, and the call that set it (so that a resend
 * of a call that only suppressed pings of the asset is recognised too).
 */
export const WINDOW_CANDIDATE = layout([
  ['t', 'd'],
  ['lat', 'i4'],
  ['lon', 'i4'],
  ['count', 'I2'],
  ['call', 'I6'],
]);

/** Bits of an extended record's PARTS byte. */
export const WINDOW_PART = { value: 1, candidate: 2, tail: 4, tailValue: 8, tailCandidate: 16 } as const;

/** The length of an extended record with the given PARTS byte. */
export function extendedRecordBytes(parts: number): number {
  let bytes = WINDOW_RECORD.bytes + WINDOW_PARTS.bytes;
  if (parts & WINDOW_PART.value) bytes += WINDOW_VALUE.bytes;
  if (parts & WINDOW_PART.candidate) bytes += WINDOW_CANDIDATE.bytes;
  if (parts & WINDOW_PART.tail) bytes += WINDOW_TAIL.bytes;
  if (parts & WINDOW_PART.tailValue) bytes += WINDOW_VALUE.bytes;
  if (parts & WINDOW_PART.tailCandidate) bytes += WINDOW_CANDIDATE.bytes;
  return bytes;
}

for (let parts = 1; parts < 2 * WINDOW_PART.tailCandidate; parts++) {
  const bytes = extendedRecordBytes(parts);
  if (bytes === WINDOW_RECORD.bytes || bytes === WINDOW_RECORD.bytes + WINDOW_TAIL.bytes) {
    throw new Error('wire: an extended window record must never have the length of a plain one');
  }
}

/*
 * The seen-set script (lua/seen-set.lua).
 */

/** ARGV[1]: the host's clock (epoch ms), the TTL, the lease (ms), 1 in confirm mode, and 48 bits naming the call. */
export const SEEN_CALL = layout([
  ['now', 'd'],
  ['ttlSeconds', 'I4'],
  ['leaseMs', 'd'],
  ['confirm', 'B'],
  ['call', 'I6'],
]);

/** ARGV[2]: one per operation: its code, the KEYS index of its entry (of a group's epoch key, for a group reset) and of the entry's group epoch, and the 48-bit token of its message. */
export const SEEN_OP = layout([
  ['op', 'B'],
  ['key', 'I2'],
  ['group', 'I2'],
  ['token', 'I6'],
]);

/** The operation codes of SEEN_OP's `op`. */
export const SEEN_OP_CODE = { claim: 1, confirm: 2, release: 3, resetGroup: 4, resetAll: 5 } as const;

/** An entry: the slot's and the group's epochs it was written in, its state (core/sensor/seen-codes KEY_STATE), the token that holds it. */
export const SEEN_ENTRY = layout([
  ['slotEpoch', 'I2'],
  ['groupEpoch', 'I2'],
  ['state', 'B'],
  ['token', 'I6'],
]);

/** What follows an entry while it is pending: the lease's deadline, epoch ms. */
export const SEEN_DEADLINE = layout([['deadline', 'd']]);

/** The largest count a record holds; a count stops there. */
export const MAX_COUNT = maxOf(WINDOW_RECORD, 'accepted');

/** Operations in one call: the record keeps the index of one in `first`. */
export const MAX_WINDOW_OPS = maxOf(WINDOW_RECORD, 'first');

/** Epochs are kept in records and entries modulo this (the counters themselves are longer). */
export const EPOCH_MODULUS = maxOf(WINDOW_RECORD, 'epoch') + 1;
if (EPOCH_MODULUS !== maxOf(SEEN_ENTRY, 'slotEpoch') + 1 || EPOCH_MODULUS !== maxOf(SEEN_ENTRY, 'groupEpoch') + 1) {
  throw new Error('wire: the epochs of window records and seen entries must have one width');
}

/*
 * The prelude: the lines scripts.ts puts before a script's text, naming
 * what the script reads here as Lua locals.
 */

type LuaValue = string | number | readonly number[];

function luaValue(value: LuaValue): string {
  if (typeof value === 'string') return `'${value}'`;
  if (typeof value === 'number') return String(value);
  return `{ ${value.join(', ')} }`;
}

/** `local A, B = 1, 'x'`: one line of locals. */
function luaLocals(names: Record<string, LuaValue>): string {
  return `local ${Object.keys(names).join(', ')} = ${Object.values(names).map(luaValue).join(', ')}\n`;
}

/**
 * The 1-based, inclusive byte ranges of the record that make up the tail,
 * in order, as pairs: `string.sub(raw, from, to)` of each, joined.
 */
function tailCuts(): number[] {
  const cuts: number[] = [];
  for (const [name, code] of WINDOW_TAIL.fields) {
    const from = WINDOW_RECORD.at[name] + 1;
    const to = from + CODE_BYTES[code] - 1;
    if (cuts.length > 0 && cuts[cuts.length - 1] === from - 1) cuts[cuts.length - 1] = to;
    else cuts.push(from, to);
  }
  return cuts;
}

/**
 * Numbers a script hands to redis.call are strings, as Redis would make them
 * (it formats a Lua number with sprintf on every call): SETRANGE's offset.
 */
export function windowPrelude(): string {
  return (
    luaLocals({ RULE: WINDOW_RULE.format, CALL: WINDOW_CALL.format, OP: WINDOW_OP.format, OP_BYTES: WINDOW_OP.bytes, REPLY: WINDOW_REPLY.format }) +
    luaLocals({ HAS_HEADING: WINDOW_OP_FLAG.heading, RETRY: WINDOW_OP_FLAG.retry, HAS_DT: WINDOW_PRESENT.dt, HAS_DISTANCE: WINDOW_PRESENT.distance, HAS_TURN: WINDOW_PRESENT.turn }) +
    luaLocals({
      RECORD: WINDOW_RECORD.format,
      RECORD_BYTES: WINDOW_RECORD.bytes,
      TAIL: WINDOW_TAIL.format,
      TAIL_BYTES: WINDOW_TAIL.bytes,
      TAIL_CUTS: tailCuts(),
      // 0-based, for SETRANGE, and the field's own format.
      SUPPRESSED_AT: String(WINDOW_RECORD.at.suppressed),
      COUNT: pick(WINDOW_RECORD, ['suppressed']).format,
    }) +
    luaLocals({ EPOCH: EPOCH.format, EPOCH_BYTES: EPOCH.bytes, EPOCH_MODULUS }) +
    luaLocals({ DEGREE_STEPS, HEADING_STEPS, ACCURACY_STEPS, MAX_ACCURACY_STEP, NO_HEADING, MAX_COUNT }) +
    // Issue 29: value mode, the fix's quality, the change in the reply, and the record's optional parts.
    luaLocals({ VALUE_MODE: WINDOW_MODE.value, NO_FIX_FLAG: WINDOW_OP_FLAG.noFix, POOR_FIX_FLAG: WINDOW_OP_FLAG.poorFix, HAS_CHANGE: WINDOW_PRESENT.change }) +
    luaLocals({
      PARTS: WINDOW_PARTS.format,
      PARTS_BYTES: WINDOW_PARTS.bytes,
      VALUE: WINDOW_VALUE.format,
      VALUE_BYTES: WINDOW_VALUE.bytes,
      CANDIDATE: WINDOW_CANDIDATE.format,
      CANDIDATE_BYTES: WINDOW_CANDIDATE.bytes,
      PART_VALUE: WINDOW_PART.value,
      PART_CANDIDATE: WINDOW_PART.candidate,
      PART_TAIL: WINDOW_PART.tail,
      PART_TAIL_VALUE: WINDOW_PART.tailValue,
      PART_TAIL_CANDIDATE: WINDOW_PART.tailCandidate,
    })
  );
}

export function seenPrelude(): string {
  return (
    luaLocals({ SETTINGS: SEEN_CALL.format, OP: SEEN_OP.format, OP_BYTES: SEEN_OP.bytes }) +
    luaLocals({ ENTRY: SEEN_ENTRY.format, ENTRY_BYTES: SEEN_ENTRY.bytes, DEADLINE: SEEN_DEADLINE.format, DEADLINE_BYTES: SEEN_DEADLINE.bytes }) +
    luaLocals({ EPOCH: EPOCH.format, EPOCH_BYTES: EPOCH.bytes, EPOCH_MODULUS })
  );
}
/*
 * 48-bit fields (I6: tokens, calls, fingerprints), which neither Buffer nor
 * DataView has a method of its own for.
 */
const TWO_32 = 2 ** 32;

/** Into a DataView: the low 32 bits, then the high 16 (DataView's own methods, without Buffer's checks per call). */
export function setUint48(view: DataView, at: number, value: number): void {
  const low = value % TWO_32;
  view.setUint32(at, low, true);
  view.setUint16(at + 4, (value - low) / TWO_32, true);
}

export function writeUint48(buffer: Buffer, at: number, value: number): void {
  buffer.writeUIntLE(value, at, CODE_BYTES.I6);
}

export function readUint48(buffer: Buffer, at: number): number {
  return buffer.readUIntLE(at, CODE_BYTES.I6);
}
