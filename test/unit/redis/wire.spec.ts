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
  WINDOW_OP,
  WINDOW_RECORD,
  WINDOW_REPLY,
  WINDOW_RULE,
  WINDOW_STATUS,
  WINDOW_TAIL,
  windowRecordLayout,
  type Layout,
} from '../../../src/redis/wire';
import { decodeOutcomes, decodeWindowRecord, decodeWindowTail, encodePings } from '../../../src/stores/redis-window-store';
import { windowOps } from '../../support/scripted-redis';

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
      WINDOW_RULE: ['<ddddI4', 36],
      WINDOW_CALL: ['<dI6', 14],
      WINDOW_OP: ['<BBI6ddddd', 48],
      WINDOW_REPLY: ['<BdddI4I4B', 34],
      WINDOW_STATUS: ['<B', 1],
      WINDOW_TAIL: ['<di4i4I6I2I2', 26],
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
    assert.equal(windowRecordLayout(8), undefined, 'a kind of record this release does not know');
    assert.equal(WINDOW_RECORD.bytes + 4, 39);
  });

  it('packs pings as the table says, and as the scripts\' documented layout', () => {
    const pings: Ping[] = [
      { assetId: 'a', t: 1_780_000_000_123.5, lat: 52.520008, lon: -13.404954, heading: 271.5, accuracy: 4.2, events: 2 ** 47 + 12_345, retry: true },
      { assetId: 'b', t: 1, lat: -89.9, lon: 179.99 },
    ];
    const byTable = Buffer.concat([
      pack(WINDOW_OP, { op: 1, flags: 3, events: 2 ** 47 + 12_345, t: 1_780_000_000_123.5, lat: 52.520008, lon: -13.404954, heading: 271.5, accuracy: 4.2 }),
      pack(WINDOW_OP, { op: 1, flags: 0, events: 0, t: 1, lat: -89.9, lon: 179.99, heading: 0, accuracy: 0 }),
    ]);
    assert.deepEqual(encodePings(pings), byTable);
    assert.deepEqual(encodePings(pings), windowOps(pings.map(({ assetId: _, ...ping }) => ({ op: 'ping' as const, ...ping }))));
  });

  it('reads replies and records as the table says', () => {
    const reply = Buffer.concat([
      pack(WINDOW_REPLY, { reason: 7, dt: 12.5, distance: 31.25, turn: 0, accepted: 4_000_000_000, suppressed: 3, present: 3 }),
      pack(WINDOW_REPLY, { reason: 0, dt: 0, distance: 0, turn: 0, accepted: 0, suppressed: 0, present: 0 }),
      pack(WINDOW_STATUS, { status: 1 }),
    ]);
    assert.deepEqual(decodeOutcomes(reply), [
      { admit: true, reason: 'moved', dtSeconds: 12.5, distanceMetres: 31.25, headingChange: null, accepted: 4_000_000_000, suppressed: 3 },
      undefined,
    ]);
    const fleet = windowRecordLayout(RECORD_FLAG.fleet) as Layout<string>;
    const values: Record<string, number> = { expires: 1_780_003_600_000, flags: RECORD_FLAG.fleet, epoch: 3, t: 1_780_000_000_000, lat: 525_200_080, lon: -134_049_540, accepted: 7, call: 2 ** 48 - 2, first: 65_535, events: 2 ** 40 + 1, heading: 27_150, accuracy: 42, suppressed: 9 };
    const expected = { expires: values.expires, epoch: 3, t: values.t, lat: 52.520008, lon: -13.404954, accepted: 7, suppressed: 9, call: values.call, first: 65_535, events: values.events, heading: 271.5, accuracy: 4.2 };
    assert.deepEqual(decodeWindowRecord(pack(fleet, values)), { ...expected, before: false });
    const plain = windowRecordLayout(RECORD_FLAG.before | RECORD_FLAG.fraction) as Layout<string>;
    assert.deepEqual(decodeWindowRecord(pack(plain, { ...values, flags: RECORD_FLAG.before | RECORD_FLAG.fraction, t: 5.25 })), { ...expected, t: 5.25, events: 0, heading: NaN, accuracy: 0, before: true });
    const tail = pack(WINDOW_TAIL, { t: 5, lat: -1, lon: 1, events: 3, heading: 65_535, accuracy: 0 });
    assert.deepEqual(decodeWindowTail(tail), { t: 5, lat: -1e-7, lon: 1e-7 });
  });

  it('is where the scripts get every format and size: their files spell none', () => {
    for (const file of ['sliding-window.lua', 'seen-set.lua']) {
      const text = readFileSync(join(LUA_DIR, file), 'utf8');
      const code = text.replace(/--.*$/gm, '');
      assert.doesNotMatch(code, /'<[^']*'/, `${file} spells a struct format`);
      assert.doesNotMatch(code, /(?<![\d.])(?:4|6|7|8|10|11|13|17|26|34|39|41|44|48|49|51|255|65536|65535|1e7)(?![\d.])/, `${file} spells a layout number`);
      assert.doesNotMatch(code, /^\s*local\s+[\w\s,]*\b(?:OP|OP_BYTES|RECORD_FORMAT|RECORD_SIZE|TAIL|ENTRY|EPOCH|REPLY|PERIOD|DEGREE_STEPS)\b[\w\s,]*=/m, `${file} defines a layout of its own`);
    }
  });

  it('hands the scripts the table in their prelude, after the codes of their first line', () => {
    const window = scriptSource('dedupSlidingWindow');
    assert.match(window.split('\n')[0] as string, /^local REASON, ADMITS = /);
    assert.ok(window.includes(`local RULE, CALL, OP, OP_BYTES, REPLY, STATUS = '${WINDOW_RULE.format}', '${WINDOW_CALL.format}', '${WINDOW_OP.format}', ${WINDOW_OP.bytes}, '${WINDOW_REPLY.format}', '<B'\n`));
    assert.ok(window.includes(`local RECORD_FORMAT, RECORD_SIZE, RECORD_FLAGS_AT, COUNT, COUNT_BYTES = { '<I6BI2I6i4i4I4I6I2I4', '<I6BI2I6i4i4I4I6I2I6I2I2I4', `));
    assert.ok(window.includes(`local BUCKET_FIELD, BEFORE_FIELD, PERIOD_FIELD, OWN_FIELD_BYTE, PERIODS_PER_TTL = '\\255', '\\255b', '\\255p', 255, 4\n`));
    const seen = scriptSource('dedupSeenSet');
    assert.match(seen.split('\n')[0] as string, /^local CLAIM, LEASE_EXPIRED, SETTLE = /);
    assert.ok(seen.includes(`local ENTRY, ENTRY_BYTES, STATE_UNIT, DEADLINE, DEADLINE_BYTES = '${SEEN_ENTRY.format}', ${SEEN_ENTRY.bytes}, ${2 ** 46}, '<d', 8\n`));
  });
});
