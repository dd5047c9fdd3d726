/**
 * The one table of binary formats (src/redis/wire.ts): the stores' hand-fast
 * encoders and decoders agree with what the table says, field by field
 * (packed here by a plain reading of the table's struct codes), and with
 * the test support's packing from the scripts' documented layouts; the
 * scripts spell no format or size of their own.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'fs';
import { join } from 'path';
import type { Ping } from '../../../src/core/window/sliding-window';
import { scriptSource } from '../../../src/redis/scripts';
import { NO_FIX, POOR_FIX } from '../../../src/core/window/fix-quality';
import {
  BUCKET_PERIOD,
  EPOCH,
  LAYOUT_MARK,
  LEGACY_ENTRY,
  LEGACY_RECORD,
  RECORD_FLAG,
  SEEN_CALL,
  SEEN_DEADLINE,
  SEEN_ENTRY,
  SEEN_OP,
  WINDOW_CALL,
  WINDOW_CANDIDATE,
  WINDOW_OP,
  WINDOW_RECORD,
  WINDOW_REPLY,
  WINDOW_RULE,
  WINDOW_STATUS,
  WINDOW_TAIL,
  WINDOW_VALUE,
  windowRecordLayout,
  windowTailBytes,
  type Layout,
} from '../../../src/redis/wire';
import { decodeOutcomes, decodeWindowCandidate, decodeWindowRecord, decodeWindowTail, encodePings, encodeRule } from '../../../src/stores/redis-window-store';
import { windowOps, windowRule } from '../../support/scripted-redis';

const LUA_DIR = join(__dirname, '..', '..', '..', 'lua');

/** Packs values by the layout's struct codes, one at a time, as Lua's struct.pack would. */
function pack<F extends string>(layout: Layout<F>, values: Record<F, number>): Buffer {
  const out = Buffer.alloc(layout.bytes);
  let at = 0;
  for (const [name, code] of layout.fields) {
    const value = values[name];
    if (code === 'B') out.writeUInt8(value, at);
    else if (code === 'I2') out.writeUInt16LE(value, at);
    else if (code === 'I4') out.writeUInt32LE(value, at);
    else if (code === 'i4') out.writeInt32LE(value, at);
    else if (code === 'I6') out.writeUIntLE(value, at, 6);
    else out.writeDoubleLE(value, at);
    assert.equal(layout.at[name], at, `${name} at ${at}`);
    at += { B: 1, I2: 2, I4: 4, i4: 4, I6: 6, d: 8 }[code];
  }
  assert.equal(at, layout.bytes);
  return out;
}

describe('redis/wire: the one table of binary formats', () => {
  it('has the format strings, sizes and fields the scripts were written to', () => {
    const formats = Object.fromEntries(
      Object.entries({
        EPOCH,
        LAYOUT_MARK,
        BUCKET_PERIOD,
        WINDOW_RULE,
        WINDOW_CALL,
        WINDOW_OP,
        WINDOW_REPLY,
        WINDOW_STATUS,
        WINDOW_TAIL,
        WINDOW_VALUE,
        WINDOW_CANDIDATE,
        LEGACY_RECORD,
        SEEN_CALL,
        SEEN_OP,
        SEEN_ENTRY,
        SEEN_DEADLINE,
        LEGACY_ENTRY,
      }).map(([name, l]) => [name, [l.format, l.bytes]]),
    );
    assert.deepEqual(formats, {
      EPOCH: ['<I4I6', 10],
      LAYOUT_MARK: ['<I6', 6],
      BUCKET_PERIOD: ['<I4I6', 10],
      WINDOW_RULE: ['<ddddI4BdBddd', 70],
      WINDOW_CALL: ['<dI6', 14],
      WINDOW_OP: ['<BBI6dddddd', 56],
      WINDOW_REPLY: ['<BdddI4I4Bd', 42],
      WINDOW_STATUS: ['<B', 1],
      WINDOW_TAIL: ['<di4i4I6I2I2', 26],
      WINDOW_VALUE: ['<d', 8],
      WINDOW_CANDIDATE: ['<di4i4I2I6', 24],
      // The previous release's, read while a flow moves to the buckets: as that release wrote them.
      LEGACY_RECORD: ['<di4i4I4I4I6I2I6I2I2I2', 44],
      SEEN_CALL: ['<dI4dBI6B', 28],
      SEEN_OP: ['<BI2I2I2I6', 13],
      SEEN_ENTRY: ['<I6I2I2I6', 16],
      SEEN_DEADLINE: ['<d', 8],
      LEGACY_ENTRY: ['<I2I2BI6', 11],
    });
    const records = [0, 1, 2, 3, 4, 5, 6, 7].map((flags) => [windowRecordLayout(flags)?.format, windowRecordLayout(flags)?.bytes]);
    assert.deepEqual(records, [
      ['<I6BI2I6i4i4I4I6I2I4', 39],
      ['<I6BI2I6i4i4I4I6I2I6I2I2I4', 49],
      ['<I6BI2I6i4i4I4I6I2I4', 39],
      ['<I6BI2I6i4i4I4I6I2I6I2I2I4', 49],
      ['<I6BI2di4i4I4I6I2I4', 41],
      ['<I6BI2di4i4I4I6I2I6I2I2I4', 51],
      ['<I6BI2di4i4I4I6I2I4', 41],
      ['<I6BI2di4i4I4I6I2I6I2I2I4', 51],
    ]);
    // Issue 29: the value before the count; the candidate and the tail are fields of their own, so their bits change no layout.
    assert.deepEqual(windowRecordLayout(RECORD_FLAG.value)?.format, '<I6BI2I6i4i4I4I6I2dI4');
    assert.deepEqual(windowRecordLayout(RECORD_FLAG.value | RECORD_FLAG.fleet | RECORD_FLAG.fraction)?.bytes, 59);
    assert.deepEqual(windowRecordLayout(RECORD_FLAG.candidate | RECORD_FLAG.before), windowRecordLayout(0));
    // At 0,0 (value mode's records) lat and lon are left out: a value takes their place.
    assert.deepEqual(windowRecordLayout(RECORD_FLAG.value | RECORD_FLAG.origin)?.format, '<I6BI2I6I4I6I2dI4');
    assert.equal(windowRecordLayout(RECORD_FLAG.value | RECORD_FLAG.origin)?.bytes, 39);
    assert.equal(windowRecordLayout(64), undefined, 'a kind of record this release does not know');
    assert.equal(WINDOW_RECORD.bytes + 4, 39);
    // Every record and tail fits a listpack value (hash-max-listpack-value, 64 by default).
    for (let flags = 0; flags < 64; flags++) assert.ok((windowRecordLayout(flags)?.bytes ?? 0) <= 64, String(flags));
    assert.deepEqual([windowTailBytes(false, false), windowTailBytes(true, false), windowTailBytes(false, true), windowTailBytes(true, true)], [26, 34, 50, 58]);
  });

  it('packs pings as the table says, and as the scripts\' documented layout', () => {
    const pings: Ping[] = [
      { assetId: 'a', t: 1_780_000_000_123.5, lat: 52.520008, lon: -13.404954, heading: 271.5, accuracy: 4.2, events: 2 ** 47 + 12_345, retry: true },
      { assetId: 'b', t: 1, lat: -89.9, lon: 179.99 },
      { assetId: 'c', t: 2, lat: 0, lon: 0, fix: NO_FIX },
      { assetId: 'd', t: 3, lat: 1, lon: 2, fix: POOR_FIX, value: -0.1 },
    ];
    const byTable = Buffer.concat([
      pack(WINDOW_OP, { op: 1, flags: 3, events: 2 ** 47 + 12_345, t: 1_780_000_000_123.5, lat: 52.520008, lon: -13.404954, heading: 271.5, accuracy: 4.2, value: NaN }),
      pack(WINDOW_OP, { op: 1, flags: 0, events: 0, t: 1, lat: -89.9, lon: 179.99, heading: 0, accuracy: 0, value: NaN }),
      pack(WINDOW_OP, { op: 1, flags: 4, events: 0, t: 2, lat: 0, lon: 0, heading: 0, accuracy: 0, value: NaN }),
      pack(WINDOW_OP, { op: 1, flags: 8, events: 0, t: 3, lat: 1, lon: 2, heading: 0, accuracy: 0, value: -0.1 }),
    ]);
    assert.deepEqual(encodePings(pings), byTable);
    const fixNames = { 1: 'no-fix', 2: 'poor-fix' } as const;
    assert.deepEqual(
      encodePings(pings),
      windowOps(pings.map(({ assetId: _, fix, ...ping }) => ({ op: 'ping' as const, ...ping, ...(fix === NO_FIX || fix === POOR_FIX ? { fix: fixNames[fix] } : {}) }))),
    );
  });

  it('packs the rule as the table says, and as the script\'s documented layout', () => {
    const position = { minSeconds: 60, minMetres: 25, ttlSeconds: 3600 };
    assert.deepEqual(encodeRule(position), windowRule(position));
    assert.deepEqual(
      encodeRule(position),
      pack(WINDOW_RULE, { ...position, minHeadingDegrees: 0, maxAheadSeconds: -1, mode: 0, deadband: 0, deadbandPercent: 0, maxSpeedKmh: 0, relocateAfterSeconds: 600, relocateAfterPings: 3 }),
    );
    const value = { minSeconds: 21_600, minMetres: 0, ttlSeconds: 86_400, mode: 'value' as const, deadband: 2.5, deadbandPercent: true, maxSpeedKmh: 150, relocateAfterSeconds: 90, relocateAfterPings: 4 };
    assert.deepEqual(encodeRule(value), windowRule(value));
  });

  it('reads replies and records as the table says', () => {
    const reply = Buffer.concat([
      pack(WINDOW_REPLY, { reason: 7, dt: 12.5, distance: 31.25, turn: 0, accepted: 4_000_000_000, suppressed: 3, present: 3, change: 0 }),
      pack(WINDOW_REPLY, { reason: 0, dt: 0, distance: 0, turn: 0, accepted: 0, suppressed: 0, present: 0, change: 0 }),
      pack(WINDOW_REPLY, { reason: 14, dt: 900, distance: 0, turn: 0, accepted: 2, suppressed: 1, present: 9, change: -6.5 }),
      pack(WINDOW_STATUS, { status: 1 }),
    ]);
    assert.deepEqual(decodeOutcomes(reply), [
      { admit: true, reason: 'moved', dtSeconds: 12.5, distanceMetres: 31.25, headingChange: null, valueChange: null, accepted: 4_000_000_000, suppressed: 3 },
      undefined,
      { admit: true, reason: 'changed', dtSeconds: 900, distanceMetres: null, headingChange: null, valueChange: -6.5, accepted: 2, suppressed: 1 },
    ]);
    const fleet = windowRecordLayout(RECORD_FLAG.fleet) as Layout<string>;
    const values: Record<string, number> = { expires: 1_780_003_600_000, flags: RECORD_FLAG.fleet, epoch: 3, t: 1_780_000_000_000, lat: 525_200_080, lon: -134_049_540, accepted: 7, call: 2 ** 48 - 2, first: 65_535, events: 2 ** 40 + 1, heading: 27_150, accuracy: 42, suppressed: 9 };
    const expected = { expires: values.expires, epoch: 3, t: values.t, lat: 52.520008, lon: -13.404954, accepted: 7, suppressed: 9, call: values.call, first: 65_535, events: values.events, heading: 271.5, accuracy: 4.2 };
    assert.deepEqual(decodeWindowRecord(pack(fleet, values)), { ...expected, before: false, candidate: false });
    const plain = windowRecordLayout(RECORD_FLAG.before | RECORD_FLAG.fraction) as Layout<string>;
    assert.deepEqual(decodeWindowRecord(pack(plain, { ...values, flags: RECORD_FLAG.before | RECORD_FLAG.fraction, t: 5.25 })), { ...expected, t: 5.25, events: 0, heading: NaN, accuracy: 0, before: true, candidate: false });
    const tail = pack(WINDOW_TAIL, { t: 5, lat: -1, lon: 1, events: 3, heading: 65_535, accuracy: 0 });
    assert.deepEqual(decodeWindowTail(tail), { t: 5, lat: -1e-7, lon: 1e-7 });
    // Issue 29: a value before the count; a candidate in a field of its own; a tail with the value and the candidate it had.
    const valued = windowRecordLayout(RECORD_FLAG.fleet | RECORD_FLAG.value | RECORD_FLAG.candidate) as Layout<string>;
    assert.deepEqual(decodeWindowRecord(pack(valued, { ...values, flags: RECORD_FLAG.fleet | RECORD_FLAG.value | RECORD_FLAG.candidate, value: 0.1 + 0.2 })), {
      ...expected,
      value: 0.1 + 0.2,
      before: false,
      candidate: true,
    });
    const atOrigin = windowRecordLayout(RECORD_FLAG.value | RECORD_FLAG.origin) as Layout<string>;
    assert.deepEqual(decodeWindowRecord(pack(atOrigin, { ...values, flags: RECORD_FLAG.value | RECORD_FLAG.origin, value: 46 })), {
      ...expected,
      lat: 0,
      lon: 0,
      events: 0,
      heading: NaN,
      accuracy: 0,
      value: 46,
      before: false,
      candidate: false,
    });
    const value = pack(WINDOW_VALUE, { value: 0.1 + 0.2 });
    const candidate = pack(WINDOW_CANDIDATE, { t: 7.25, lat: 10, lon: -20, count: 2, call: 2 ** 48 - 3 });
    const decodedCandidate = { t: 7.25, lat: 1e-6, lon: -2e-6, count: 2, call: 2 ** 48 - 3 };
    assert.deepEqual(decodeWindowCandidate(candidate), decodedCandidate);
    assert.deepEqual(decodeWindowTail(Buffer.concat([tail, value])), { t: 5, lat: -1e-7, lon: 1e-7, value: 0.1 + 0.2 });
    assert.deepEqual(decodeWindowTail(Buffer.concat([tail, candidate])), { t: 5, lat: -1e-7, lon: 1e-7, candidate: decodedCandidate });
    assert.deepEqual(decodeWindowTail(Buffer.concat([tail, value, candidate])), { t: 5, lat: -1e-7, lon: 1e-7, value: 0.1 + 0.2, candidate: decodedCandidate });
    assert.throws(() => decodeWindowTail(Buffer.concat([tail, value, value])), /no known layout/);
  });

  it('is where the scripts get every format and size: their files spell none', () => {
    for (const file of ['sliding-window.lua', 'seen-set.lua', 'layout-mark.lua']) {
      const text = readFileSync(join(LUA_DIR, file), 'utf8');
      const code = text.replace(/--.*$/gm, '');
      assert.doesNotMatch(code, /'<[^']*'/, `${file} spells a struct format`);
      assert.doesNotMatch(code, /(?<![\d.])(?:4|6|7|8|10|11|13|17|24|26|34|39|41|42|44|48|49|50|51|56|58|59|255|65536|65535|1e7)(?![\d.])/, `${file} spells a layout number`);
      assert.doesNotMatch(code, /^\s*local\s+[\w\s,]*\b(?:OP|OP_BYTES|RECORD_FORMATS|RECORD_FORMAT_WIDTH|RECORD_SIZES|TAIL|VALUE|CANDIDATE|ENTRY|EPOCH|REPLY|PERIOD|DEGREE_STEPS)\b[\w\s,]*=/m, `${file} defines a layout of its own`);
    }
  });

  it('hands the scripts the table in their prelude, after the codes of their first line', () => {
    const window = scriptSource('dedupSlidingWindow');
    assert.match(window.split('\n')[0] as string, /^local ADMITS, AHEAD, FIRST, /);
    assert.ok(window.includes(`local RULE, CALL, OP, OP_BYTES, REPLY, STATUS = '${WINDOW_RULE.format}', '${WINDOW_CALL.format}', '${WINDOW_OP.format}', ${WINDOW_OP.bytes}, '${WINDOW_REPLY.format}', '<B'\n`));
    // Every record's format padded to the widest, in the order of its flags; a byte of size each.
    const formats = Array.from({ length: 64 }, (_, flags) => windowRecordLayout(flags)?.format ?? '');
    const width = Math.max(...formats.map((f) => f.length));
    assert.equal(formats.filter((f) => f === '').length, 0);
    assert.ok(window.includes(`local RECORD_FORMATS, RECORD_FORMAT_WIDTH, RECORD_SIZES, RECORD_FLAGS_AT, COUNT, COUNT_BYTES = '${formats.map((f) => f.padEnd(width)).join('')}', ${width}, '`));
    assert.ok(window.includes(`local BUCKET_FIELD, BEFORE_FIELD, PERIOD_FIELD, OWN_FIELD_BYTE, PERIODS_PER_TTL = '\\255', '\\255b', '\\255p', 255, 4\n`));
    const seen = scriptSource('dedupSeenSet');
    assert.match(seen.split('\n')[0] as string, /^local LEASE_EXPIRED, CLAIM_ADMITTED, /);
    assert.ok(seen.includes(`local ENTRY, ENTRY_BYTES, STATE_UNIT, DEADLINE, DEADLINE_BYTES = '${SEEN_ENTRY.format}', ${SEEN_ENTRY.bytes}, ${2 ** 46}, '<d', 8\n`));
  });
});
