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
 *
 * Where they live (docs/redis.md, "Keys"): records and entries are fields
 * of hashes, one hash per bucket of ids (redis/key-names), so that Redis
 * keeps each bucket in its compact listpack encoding, a few bytes per field
 * beyond the field's own; each holds when it expires and the epochs it was
 * written in, so that a read needs nothing but it, and the bucket itself
 * is kept and swept by periods (PERIODS_PER_TTL). The records of the
 * earlier builds (one string key per asset or reading: LEGACY_RECORD,
 * LEGACY_ENTRY) are still read, for one TTL after the first call of this
 * layout (LAYOUT_MARK).
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
 * Buckets (both scripts).
 */

/**
 * Field names no id can take: ids reach Redis as UTF-8, which never has
 * the byte 0xff. `bucket` (an empty value) is in a bucket from its first
 * write on; a record's extra parts are `before` (WINDOW_TAIL) or
 * `candidate` (WINDOW_CANDIDATE) and the record's field; `period` and a BUCKET_PERIOD name a period of a bucket
 * (below).
 */
export const BUCKET_FIELD = { bucket: '\xff', before: '\xffb', candidate: '\xffc', period: '\xffp' } as const;

/**
 * A bucket (a hash) is kept (PEXPIRE, never shortened) until a period after
 * the end of the latest period an entry of it expires in: a TTL is
 * PERIODS_PER_TTL periods, numbered from the epoch, and named by the TTL
 * and the index. A write of an entry whose expiry falls in a period names
 * the period, and the bucket itself, in fields of the bucket (empty values)
 * in the same HSET, whose count of fields it added then says (the entry's
 * own known) whether the bucket is new (both new: give it its expiry) or
 * this is the bucket's first write of the period (the period new: renew its
 * expiry, and sweep it: delete its expired entries, those of another epoch,
 * and the fields of earlier periods: one HGETALL, one HDEL). So no record
 * outlives its bucket, a bucket holds at most a period's worth of expired
 * entries, and neither renewal nor sweep costs a read on the way to a
 * decision.
 */
export const PERIODS_PER_TTL = 4;

/** What follows BUCKET_FIELD.period in a period's field name: the TTL (whole seconds) and the period's index (a TTL of a second makes periods of 250 ms: 7e9 of them since 1970). */
export const BUCKET_PERIOD = layout([
  ['ttlSeconds', 'I4'],
  ['index', 'I6'],
]);

/**
 * The first call of this layout in a slot writes LAYOUT_MARK: its time
 * (host clock, epoch ms), or 0 when the database was empty then. While a
 * TTL has not passed since, a script that misses an entry in its bucket
 * reads the key earlier builds kept it in (LEGACY_RECORD,
 * LEGACY_ENTRY), if the client sent those keys; its reply says when to stop.
 */
export const LAYOUT_MARK = layout([['since', 'I6']]);

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

/** ARGV[2]: the host's clock in epoch ms (the clock guard's "now", and the clock records expire by), and 48 bits naming the call. */
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

/** The reply: one per operation, in order; reason 0 for a reset. Then one REPLY_STATUS. */
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

/** The last byte of a sliding-window reply (the last integer of a seen-set reply): REPLY_STATUS bits. */
export const WINDOW_STATUS = layout([['status', 'B']]);

/** What a script tells the client after its answers: `legacyReads`, the client is to go on sending the keys of earlier builds (LAYOUT_MARK). */
export const REPLY_STATUS = { legacyReads: 1 } as const;

/**
 * An asset's record, the value of its field (the asset id) in its bucket:
 * when it expires (host clock, epoch ms: ttlSeconds after the last
 * admission), its flags (RECORD_FLAG), the slot epoch (mod EPOCH_MODULUS)
 * it was written in, its baseline (the last admitted ping, at the steps
 * below), its accepted count, and the call that last admitted a ping of it
 * and that call's index of its first admitted ping. The baseline's time is
 * a whole number of milliseconds here, a double in WINDOW_RECORD_FRACTION.
 * Then, when the baseline has a heading, an accuracy or event values
 * (RECORD_FLAG.fleet), WINDOW_FLEET; and last, always, WINDOW_COUNT, so
 * that a suppression rewrites the record as read with only its last bytes
 * changed. windowRecordLayout gives the whole layout a record's flags name.
 *
 * Small, because a bucket's fields are its memory: 39 bytes, 49 with
 * WINDOW_FLEET, well under Redis' hash-max-listpack-value (64 by default).
 * Its epoch is the record's own, so that a read needs nothing but the
 * record.
 */
export const WINDOW_RECORD = layout([
  ['expires', 'I6'],
  ['flags', 'B'],
  ['epoch', 'I2'],
  ['t', 'I6'],
  ['lat', 'i4'],
  ['lon', 'i4'],
  ['accepted', 'I4'],
  ['call', 'I6'],
  ['first', 'I2'],
]);

/** WINDOW_RECORD with a time that is not a whole number of milliseconds (or not between 0 and 2^48). */
export const WINDOW_RECORD_FRACTION = layout(WINDOW_RECORD.fields.map(([name, code]) => [name, name === 't' ? 'd' : code] as const));

/** What follows the record when RECORD_FLAG.fleet is set: the baseline's event fingerprint, heading (NO_HEADING for none) and accuracy. */
export const WINDOW_FLEET = layout([
  ['events', 'I6'],
  ['heading', 'I2'],
  ['accuracy', 'I2'],
]);

/** The last field of every record: the suppressed count. */
export const WINDOW_COUNT = layout([['suppressed', 'I4']]);

/**
 * Bits of WINDOW_RECORD's `flags`. `fleet`: WINDOW_FLEET follows.
 * `before`: the bucket holds a WINDOW_TAIL for the record (field
 * BUCKET_FIELD.before and the asset id). `fraction`: the time is a double
 * (WINDOW_RECORD_FRACTION). `value` (issue 29): WINDOW_VALUE follows
 * (after WINDOW_FLEET, before WINDOW_COUNT). `candidate` (issue 29): the
 * bucket holds the asset's WINDOW_CANDIDATE (field BUCKET_FIELD.candidate
 * and the asset id). `origin`: lat and lon are both 0 and left out, which
 * is every record of value mode (its pings have no position): its value
 * takes their 8 bytes, and the record is no longer than a position's. The
 * other bits are free: a record of another kind takes a bit of its own,
 * and a script that does not know the bit reads the record as absent and
 * leaves it to the release that wrote it.
 */
export const RECORD_FLAG = { fleet: 1, before: 2, fraction: 4, value: 8, candidate: 16, origin: 32 } as const;

/** The flags windowRecordLayout (and the script's RECORD_FORMATS) tell layouts apart by. */
const LAYOUT_FLAGS = RECORD_FLAG.fleet | RECORD_FLAG.before | RECORD_FLAG.fraction | RECORD_FLAG.value | RECORD_FLAG.candidate | RECORD_FLAG.origin;

/** The whole layout of a record with these flags; undefined for flags of a kind this release does not know. */
export function windowRecordLayout(flags: number): Layout<string> | undefined {
  if ((flags & ~LAYOUT_FLAGS) !== 0) return undefined;
  const base = flags & RECORD_FLAG.fraction ? WINDOW_RECORD_FRACTION : WINDOW_RECORD;
  return layout<string>([
    ...base.fields.filter(([name]) => (flags & RECORD_FLAG.origin) === 0 || (name !== 'lat' && name !== 'lon')),
    ...(flags & RECORD_FLAG.fleet ? WINDOW_FLEET.fields : []),
    ...(flags & RECORD_FLAG.value ? WINDOW_VALUE.fields : []),
    ...WINDOW_COUNT.fields,
  ]);
}

/**
 * The asset's baseline from before the call the record names, kept when
 * that call suppressed a ping of the asset before admitting one (see
 * "Resent calls" in the script): a field of its own, beside the record,
 * while the record's `before` flag is set.
 */
export const WINDOW_TAIL = layout([
  ['t', 'd'],
  ['lat', 'i4'],
  ['lon', 'i4'],
  ['events', 'I6'],
  ['heading', 'I2'],
  ['accuracy', 'I2'],
]);

/**
 * The record of earlier builds: a string key per asset (redis/key-names
 * legacyWindowKey) that expired ttlSeconds after its last admission, in the
 * slot epoch (mod LEGACY_EPOCH_MODULUS) it was written in, sometimes
 * followed by a WINDOW_TAIL (which only a resend of the call that wrote it
 * would read: none reaches this release). Read, never written: a decision
 * against one writes the record into its bucket and deletes the old key.
 */
export const LEGACY_RECORD = layout([
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

/*
 * Issue 29's optional parts: value mode's baseline value and the jump
 * guard's candidate. A record without them is the record above, as it
 * always was: a node in position mode without the jump guard writes and
 * reads exactly what it did.
 */

/** The baseline's value, exactly: value mode's reading. Inside the record, before WINDOW_COUNT, while RECORD_FLAG.value is set. */
export const WINDOW_VALUE = layout([['value', 'd']]);

/**
 * The jump candidate: t exactly, the position in the record's degree steps,
 * the count of agreeing jumps, and the call that set it (so that a resend
 * of a call that only suppressed pings of the asset is recognised too). A
 * field of its own (BUCKET_FIELD.candidate and the asset id) while the
 * record's RECORD_FLAG.candidate is set: in the record it would take a
 * fleet record past hash-max-listpack-value, and one such field turns its
 * whole bucket into a hashtable; a candidate is seldom there, and only
 * for a few pings.
 */
export const WINDOW_CANDIDATE = layout([
  ['t', 'd'],
  ['lat', 'i4'],
  ['lon', 'i4'],
  ['count', 'I2'],
  ['call', 'I6'],
]);

/**
 * The length of a tail field (WINDOW_TAIL) that keeps the value and the
 * candidate of the baseline from before the call as well, when it had
 * them: WINDOW_TAIL, then WINDOW_VALUE, then WINDOW_CANDIDATE. The four
 * lengths differ (checked below), so the length says which follow.
 */
export function windowTailBytes(value: boolean, candidate: boolean): number {
  return WINDOW_TAIL.bytes + (value ? WINDOW_VALUE.bytes : 0) + (candidate ? WINDOW_CANDIDATE.bytes : 0);
}

if (new Set([windowTailBytes(false, false), windowTailBytes(true, false), windowTailBytes(false, true), windowTailBytes(true, true)]).size !== 4) {
  throw new Error('wire: a tail field must say by its length which parts it keeps');
}

/**
 * Redis keeps a hash in its compact listpack encoding only while every
 * value is at most hash-max-listpack-value bytes (64 by default), and one
 * larger value turns the whole bucket into a hashtable for good: every
 * record and tail stays within it.
 */
const LISTPACK_VALUE_BYTES = 64;
for (let flags = 0; flags <= LAYOUT_FLAGS; flags++) {
  if ((windowRecordLayout(flags) as Layout<string>).bytes > LISTPACK_VALUE_BYTES || windowTailBytes(true, true) > LISTPACK_VALUE_BYTES) {
    throw new Error('wire: a window record or tail must fit a listpack value');
  }
}

/*
 * The seen-set script (lua/seen-set.lua).
 */

/**
 * ARGV[1]: the host's clock (epoch ms: leases and entries expire by it),
 * the TTL, the lease (ms), 1 in confirm mode, 48 bits naming the call, and
 * 1 when the operations name the keys of earlier builds (LAYOUT_MARK).
 */
export const SEEN_CALL = layout([
  ['now', 'd'],
  ['ttlSeconds', 'I4'],
  ['leaseMs', 'd'],
  ['confirm', 'B'],
  ['call', 'I6'],
  ['legacy', 'B'],
]);

/**
 * ARGV[2]: one per operation: its code, the KEYS index of its bucket (of
 * a group's epoch key, for a group reset), of the entry's group epoch key,
 * and of the key earlier builds kept it in (0: not sent), and the
 * 48-bit token of its message. Its field (the idempotency key) is ARGV[2+i].
 */
export const SEEN_OP = layout([
  ['op', 'B'],
  ['bucket', 'I2'],
  ['group', 'I2'],
  ['legacy', 'I2'],
  ['token', 'I6'],
]);

/** The operation codes of SEEN_OP's `op`. */
export const SEEN_OP_CODE = { claim: 1, confirm: 2, release: 3, resetGroup: 4, resetAll: 5 } as const;

/**
 * An entry, the value of its field (the idempotency key) in its bucket:
 * when it expires (host clock, epoch ms) and its state (core/sensor/seen-codes
 * KEY_STATE) in one number, `expires + state * STATE_UNIT` (a time below
 * STATE_UNIT, the year 4199, leaves the bits above it to the state: a byte
 * less per entry, of a few tens); the slot and group epochs (mod
 * EPOCH_MODULUS) it was written in; the token that holds it.
 */
export const SEEN_ENTRY = layout([
  ['expiresState', 'I6'],
  ['slotEpoch', 'I2'],
  ['groupEpoch', 'I2'],
  ['token', 'I6'],
]);

/** See SEEN_ENTRY: 2^46. */
export const STATE_UNIT = 2 ** 46;

/** What follows an entry while it is pending: the lease's deadline, epoch ms. */
export const SEEN_DEADLINE = layout([['deadline', 'd']]);

/** The entry of earlier builds: a string key per reading, expiring by its own TTL; SEEN_DEADLINE follows while pending. */
export const LEGACY_ENTRY = layout([
  ['slotEpoch', 'I2'],
  ['groupEpoch', 'I2'],
  ['state', 'B'],
  ['token', 'I6'],
]);

/** The largest count a record holds; a count stops there. */
export const MAX_COUNT = maxOf(WINDOW_RECORD, 'accepted');

/** Operations in one call: the record keeps the index of one in `first`. */
export const MAX_WINDOW_OPS = maxOf(WINDOW_RECORD, 'first');

/** Epochs are kept in records and entries modulo this (the counters themselves are longer). */
export const EPOCH_MODULUS = maxOf(WINDOW_RECORD, 'epoch') + 1;
if (EPOCH_MODULUS !== maxOf(SEEN_ENTRY, 'slotEpoch') + 1 || EPOCH_MODULUS !== maxOf(SEEN_ENTRY, 'groupEpoch') + 1) {
  throw new Error('wire: the epochs of window records and seen entries must have one width');
}

/** Earlier builds kept slot epochs in records and entries modulo this. */
export const LEGACY_EPOCH_MODULUS = maxOf(LEGACY_RECORD, 'epoch') + 1;

/*
 * The prelude: the lines scripts.ts puts before a script's text, naming
 * what the script reads here as Lua locals.
 */

type LuaValue = string | number | readonly number[] | readonly string[] | readonly boolean[];

/** A Lua string literal: printable ASCII as it is, any other byte as a decimal escape of three digits (so that a digit after it is not read into it). */
function luaString(value: string): string {
  let out = "'";
  for (const byte of Buffer.from(value, 'latin1')) out += byte >= 0x20 && byte < 0x7f && byte !== 0x27 && byte !== 0x5c ? String.fromCharCode(byte) : `\\${String(byte).padStart(3, '0')}`;
  return `${out}'`;
}

/** A number, a string, or a list (a Lua table from 1) of numbers, strings or booleans. */
function luaValue(value: LuaValue): string {
  if (typeof value === 'string') return luaString(value);
  if (typeof value === 'number') return String(value);
  return `{ ${(value as readonly (string | number | boolean)[]).map((item) => (typeof item === 'string' ? luaString(item) : String(item))).join(', ')} }`;
}

/*
 * The record's format and size for each combination of its flags, as two
 * strings rather than two Lua lists: the prelude runs at every call, and
 * lists of 64 built there cost a one-ping call about 3 µs of its 25 in
 * bench/script-cost.ts, where a call now takes out only the formats it
 * meets. RECORD_FORMATS holds every format padded with spaces (which
 * struct skips) to one width, the format for flags f at f * width;
 * RECORD_SIZES a byte per combination, the size for flags f at f + 1.
 */
function recordLocals(): { RECORD_FORMATS: string; RECORD_FORMAT_WIDTH: number; RECORD_SIZES: string } {
  const layouts = Array.from({ length: LAYOUT_FLAGS + 1 }, (_, flags) => windowRecordLayout(flags) as Layout<string>);
  const width = Math.max(...layouts.map((l) => l.format.length));
  const sizes = layouts.map((l) => l.bytes);
  // A byte each: a larger record would need another encoding here.
  if (sizes.some((size) => size > 0xff)) throw new Error('wire: a window record of more than 255 bytes');
  return { RECORD_FORMATS: layouts.map((l) => l.format.padEnd(width, ' ')).join(''), RECORD_FORMAT_WIDTH: width, RECORD_SIZES: String.fromCharCode(...sizes) };
}

/** `local A, B = 1, 'x'`: one line of locals. */
export function luaLocals(names: Record<string, LuaValue>): string {
  return `local ${Object.keys(names).join(', ')} = ${Object.values(names).map(luaValue).join(', ')}\n`;
}

/** The lines both scripts share: buckets, epochs, the layout mark. */
function bucketPrelude(): string {
  return (
    luaLocals({ BUCKET_FIELD: BUCKET_FIELD.bucket, BEFORE_FIELD: BUCKET_FIELD.before, PERIOD_FIELD: BUCKET_FIELD.period, OWN_FIELD_BYTE: BUCKET_FIELD.bucket.charCodeAt(0), PERIODS_PER_TTL }) +
    luaLocals({ PERIOD: BUCKET_PERIOD.format, PERIOD_HEAD_BYTES: BUCKET_FIELD.period.length + BUCKET_PERIOD.at.index }) +
    luaLocals({ EPOCH: EPOCH.format, EPOCH_BYTES: EPOCH.bytes, EPOCH_MODULUS, LEGACY_EPOCH_MODULUS }) +
    luaLocals({ MARK: LAYOUT_MARK.format, MARK_BYTES: LAYOUT_MARK.bytes, LEGACY_READS: REPLY_STATUS.legacyReads })
  );
}

export function windowPrelude(): string {
  return (
    luaLocals({ RULE: WINDOW_RULE.format, CALL: WINDOW_CALL.format, OP: WINDOW_OP.format, OP_BYTES: WINDOW_OP.bytes, REPLY: WINDOW_REPLY.format, STATUS: WINDOW_STATUS.format }) +
    luaLocals({ HAS_HEADING: WINDOW_OP_FLAG.heading, RETRY: WINDOW_OP_FLAG.retry, HAS_DT: WINDOW_PRESENT.dt, HAS_DISTANCE: WINDOW_PRESENT.distance, HAS_TURN: WINDOW_PRESENT.turn }) +
    luaLocals({ ...recordLocals(), RECORD_FLAGS_AT: WINDOW_RECORD.at.flags + 1, COUNT: WINDOW_COUNT.format, COUNT_BYTES: WINDOW_COUNT.bytes }) +
    luaLocals({ TAIL: WINDOW_TAIL.format, TAIL_BYTES: WINDOW_TAIL.bytes }) +
    luaLocals({ REC_FLEET: RECORD_FLAG.fleet, REC_BEFORE: RECORD_FLAG.before, REC_FRACTION: RECORD_FLAG.fraction, REC_KINDS: LAYOUT_FLAGS + 1, MAX_WHOLE_T: maxOf(WINDOW_RECORD, 't') }) +
    luaLocals({ LEGACY_RECORD: LEGACY_RECORD.format, LEGACY_RECORD_BYTES: LEGACY_RECORD.bytes }) +
    bucketPrelude() +
    luaLocals({ DEGREE_STEPS, HEADING_STEPS, ACCURACY_STEPS, MAX_ACCURACY_STEP, NO_HEADING, MAX_COUNT }) +
    // Issue 29: value mode, the fix's quality, the change in the reply, and the record's optional parts.
    luaLocals({ VALUE_MODE: WINDOW_MODE.value, NO_FIX_FLAG: WINDOW_OP_FLAG.noFix, POOR_FIX_FLAG: WINDOW_OP_FLAG.poorFix, HAS_CHANGE: WINDOW_PRESENT.change }) +
    luaLocals({
      REC_VALUE: RECORD_FLAG.value,
      REC_CANDIDATE: RECORD_FLAG.candidate,
      REC_ORIGIN: RECORD_FLAG.origin,
      CANDIDATE_FIELD: BUCKET_FIELD.candidate,
      VALUE: WINDOW_VALUE.format,
      VALUE_BYTES: WINDOW_VALUE.bytes,
      CANDIDATE: WINDOW_CANDIDATE.format,
      CANDIDATE_BYTES: WINDOW_CANDIDATE.bytes,
    })
  );
}

export function seenPrelude(): string {
  return (
    luaLocals({ SETTINGS: SEEN_CALL.format, OP: SEEN_OP.format, OP_BYTES: SEEN_OP.bytes }) +
    luaLocals({ ENTRY: SEEN_ENTRY.format, ENTRY_BYTES: SEEN_ENTRY.bytes, STATE_UNIT, DEADLINE: SEEN_DEADLINE.format, DEADLINE_BYTES: SEEN_DEADLINE.bytes }) +
    luaLocals({ LEGACY_ENTRY: LEGACY_ENTRY.format, LEGACY_ENTRY_BYTES: LEGACY_ENTRY.bytes }) +
    bucketPrelude()
  );
}

/*
 * 48-bit fields (I6: tokens, calls, fingerprints, times), which neither
 * Buffer nor DataView has a method of its own for.
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
