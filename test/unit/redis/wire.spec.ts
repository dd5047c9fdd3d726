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
  EPOCH,
  extendedRecordBytes,
  SEEN_CALL,
  SEEN_DEADLINE,
  SEEN_ENTRY,
  SEEN_OP,
  WINDOW_CALL,
  WINDOW_CANDIDATE,
  WINDOW_OP,
  WINDOW_PART,
  WINDOW_PARTS,
  WINDOW_RECORD,
  WINDOW_REPLY,
  WINDOW_RULE,
  WINDOW_TAIL,
  WINDOW_VALUE,
  type Layout,
} from '../../../src/redis/wire';
import { decodeOutcomes, decodeWindowRecord, encodePings, encodeRule } from '../../../src/stores/redis-window-store';
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
      Object.entries({ EPOCH, WINDOW_RULE, WINDOW_CALL, WINDOW_OP, WINDOW_REPLY, WINDOW_RECORD, WINDOW_TAIL, WINDOW_PARTS, WINDOW_VALUE, WINDOW_CANDIDATE, SEEN_CALL, SEEN_OP, SEEN_ENTRY, SEEN_DEADLINE }).map(([name, l]) => [name, [l.format, l.bytes]]),
    );
    assert.deepEqual(formats, {
      EPOCH: ['<I4I6', 10],
      WINDOW_RULE: ['<ddddI4BdBddd', 70],
      WINDOW_CALL: ['<dI6', 14],
      WINDOW_OP: ['<BBI6dddddd', 56],
      WINDOW_REPLY: ['<BdddI4I4Bd', 42],
      WINDOW_RECORD: ['<di4i4I4I4I6I2I6I2I2I2', 44],
      WINDOW_TAIL: ['<di4i4I6I2I2', 26],
      WINDOW_PARTS: ['<B', 1],
      WINDOW_VALUE: ['<d', 8],
      WINDOW_CANDIDATE: ['<di4i4I2I6', 24],
      SEEN_CALL: ['<dI4dBI6', 27],
      SEEN_OP: ['<BI2I2I6', 11],
      SEEN_ENTRY: ['<I2I2BI6', 11],
      SEEN_DEADLINE: ['<d', 8],
    });
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
    ]);
    assert.deepEqual(decodeOutcomes(reply), [
      { admit: true, reason: 'moved', dtSeconds: 12.5, distanceMetres: 31.25, headingChange: null, valueChange: null, accepted: 4_000_000_000, suppressed: 3 },
      undefined,
      { admit: true, reason: 'changed', dtSeconds: 900, distanceMetres: null, headingChange: null, valueChange: -6.5, accepted: 2, suppressed: 1 },
    ]);
    const values = { t: 1_780_000_000_000, lat: 525_200_080, lon: -134_049_540, accepted: 7, suppressed: 9, call: 2 ** 48 - 2, first: 65_535, events: 2 ** 40 + 1, heading: 27_150, accuracy: 42, epoch: 65_535 };
    const record = pack(WINDOW_RECORD, values);
    const tail = pack(WINDOW_TAIL, { t: 5, lat: -1, lon: 1, events: 3, heading: 65_535, accuracy: 0 });
    const expected = { t: values.t, lat: 52.520008, lon: -13.404954, accepted: 7, suppressed: 9, call: values.call, first: 65_535, events: values.events, heading: 271.5, accuracy: 4.2, epoch: 65_535 };
    assert.deepEqual(decodeWindowRecord(record), { ...expected, before: null });
    assert.deepEqual(decodeWindowRecord(Buffer.concat([record, tail])), { ...expected, before: { t: 5, lat: -1e-7, lon: 1e-7 } });
    // Extended: a PARTS byte, then the parts it names, in the table's order.
    const value = pack(WINDOW_VALUE, { value: 0.1 + 0.2 });
    const candidate = pack(WINDOW_CANDIDATE, { t: 7.25, lat: 10, lon: -20, count: 2, call: 2 ** 48 - 3 });
    const parts = (bits: number): Buffer => pack(WINDOW_PARTS, { parts: bits });
    const { value: V, candidate: C, tail: T, tailValue: TV, tailCandidate: TC } = WINDOW_PART;
    assert.deepEqual(decodeWindowRecord(Buffer.concat([record, parts(V), value])), { ...expected, value: 0.1 + 0.2, before: null });
    assert.deepEqual(decodeWindowRecord(Buffer.concat([record, parts(C), candidate])), { ...expected, candidate: { t: 7.25, lat: 1e-6, lon: -2e-6, count: 2, call: 2 ** 48 - 3 }, before: null });
    const all = Buffer.concat([record, parts(V | C | T | TV | TC), value, candidate, tail, value, candidate]);
    assert.equal(all.length, extendedRecordBytes(V | C | T | TV | TC));
    assert.deepEqual(decodeWindowRecord(all), {
      ...expected,
      value: 0.1 + 0.2,
      candidate: { t: 7.25, lat: 1e-6, lon: -2e-6, count: 2, call: 2 ** 48 - 3 },
      before: { t: 5, lat: -1e-7, lon: 1e-7, value: 0.1 + 0.2, candidate: { t: 7.25, lat: 1e-6, lon: -2e-6, count: 2, call: 2 ** 48 - 3 } },
    });
    assert.deepEqual(decodeWindowRecord(Buffer.concat([record, parts(T | TV), tail, value])), { ...expected, before: { t: 5, lat: -1e-7, lon: 1e-7, value: 0.1 + 0.2 } });
    // What no writer makes: no part, a tail alone (that is the plain form), tail parts without a tail, a length that does not match.
    for (const broken of [Buffer.concat([record, parts(0)]), Buffer.concat([record, parts(T), tail]), Buffer.concat([record, parts(V | TV), value, value]), Buffer.concat([record, parts(V), value, value])]) {
      assert.throws(() => decodeWindowRecord(broken), /no known layout/);
    }
  });

  it('never gives an extended record the length of a plain one', () => {
    for (let bits = 1; bits < 2 * WINDOW_PART.tailCandidate; bits++) {
      assert.ok(![WINDOW_RECORD.bytes, WINDOW_RECORD.bytes + WINDOW_TAIL.bytes].includes(extendedRecordBytes(bits)), String(bits));
    }
  });

  it('is where the scripts get every format and size: their files spell none', () => {
    for (const file of ['sliding-window.lua', 'seen-set.lua']) {
      const text = readFileSync(join(LUA_DIR, file), 'utf8');
      const code = text.replace(/--.*$/gm, '');
      assert.doesNotMatch(code, /'<[^']*'/, `${file} spells a struct format`);
      assert.doesNotMatch(code, /\b(?:44|48|56|34|42|26|24|11|10|70|65536|65535|1e7)\b/, `${file} spells a layout number`);
      assert.doesNotMatch(code, /^\s*local\s+[\w\s,]*\b(?:OP|OP_BYTES|RECORD|RECORD_BYTES|TAIL|ENTRY|EPOCH|REPLY|DEGREE_STEPS)\b[\w\s,]*=/m, `${file} defines a layout of its own`);
    }
  });

  it('hands the scripts the table in their prelude, after the codes of their first line', () => {
    const window = scriptSource('dedupSlidingWindow');
    assert.match(window.split('\n')[0] as string, /^local REASON, ADMITS = /);
    assert.ok(window.includes(`local RULE, CALL, OP, OP_BYTES, REPLY = '${WINDOW_RULE.format}', '${WINDOW_CALL.format}', '${WINDOW_OP.format}', ${WINDOW_OP.bytes}, '${WINDOW_REPLY.format}'\n`));
    assert.ok(window.includes(`TAIL_CUTS, SUPPRESSED_AT, COUNT = '${WINDOW_RECORD.format}', ${WINDOW_RECORD.bytes}, '${WINDOW_TAIL.format}', ${WINDOW_TAIL.bytes}, { 1, 16, 33, 42 }, '20', '<I4'\n`));
    const seen = scriptSource('dedupSeenSet');
    assert.match(seen.split('\n')[0] as string, /^local CLAIM, LEASE_EXPIRED, SETTLE = /);
    assert.ok(seen.includes(`local ENTRY, ENTRY_BYTES, DEADLINE, DEADLINE_BYTES = '${SEEN_ENTRY.format}', ${SEEN_ENTRY.bytes}, '<d', 8\n`));
  });
});
