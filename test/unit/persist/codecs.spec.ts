/**
 * The records of a saved state, both kinds: what is written reads back
 * exactly (the window baseline at the precision the stores keep it), a
 * delete and a reset are replayed in order, and a damaged frame throws a
 * RangeError rather than inventing an entry.
 */
import assert from 'node:assert/strict';
import { RELEASED_DEADLINE, SEEN_DEADLINE } from '../../../src/core/sensor/seen-codes';
import { baselineOf } from '../../../src/core/window/sliding-window';
import type { SeenEntry } from '../../../src/core/sensor/seen-set';
import { RecordWriter, seenCodec, windowCodec, writeClear, type RestoreTarget, type StateCodec } from '../../../src/persist/codecs';
import { SEEN_STATE, WINDOW_STATE } from '../../../src/persist/frames';
import type { WindowEntry } from '../../../src/stores/memory-window-store';

type Event<E> = ['restore', E, number] | ['forget', string] | ['clear'];

/** A target that records what it is told, in order. */
function recorder<E>(): RestoreTarget<E> & { events: Event<E>[] } {
  const events: Event<E>[] = [];
  return {
    events,
    restore: (entry, nowMs) => events.push(['restore', entry, nowMs]),
    forget: (key) => events.push(['forget', key]),
    clearAll: () => events.push(['clear']),
  };
}

function replay<E>(codec: StateCodec<E>, write: (out: RecordWriter) => void, nowMs = 5): Event<E>[] {
  const out = new RecordWriter();
  write(out);
  const target = recorder<E>();
  codec.apply(out.take(), target, nowMs);
  return target.events;
}

function windowEntry(assetId: string, more: Partial<WindowEntry> = {}): WindowEntry {
  const baseline = baselineOf({ assetId, t: 1_780_000_000_000.5, lat: 52.5200087, lon: -13.4049547, heading: 271.25, accuracy: 12.3, events: 2 ** 48 - 1 });
  return { assetId, ...baseline, expiresAt: 1_780_000_360_000, accepted: 41, suppressed: 7, candidate: { t: 0, lat: 0, lon: 0, count: 0 }, ...more };
}

/** What a window record restores, with NaN written so that deepEqual compares it. */
function shown(entry: WindowEntry): unknown {
  return { ...entry, heading: String(entry.heading), value: String(entry.value) };
}

/** A format-1 record as the previous release wrote it, byte for byte (persist/codecs before issue 29). */
function formatOneRecord(entry: WindowEntry): Buffer {
  const id = Buffer.from(entry.assetId, 'utf8');
  const out = Buffer.alloc(1 + 2 + id.length + 8 + 4 + 4 + 2 + 2 + 6 + 8 + 4 + 4);
  let at = out.writeUInt8(1, 0);
  at = out.writeUInt16LE(id.length, at);
  at += id.copy(out, at);
  at = out.writeDoubleLE(entry.t, at);
  at = out.writeInt32LE(Math.round(entry.lat * 1e7), at);
  at = out.writeInt32LE(Math.round(entry.lon * 1e7), at);
  at = out.writeUInt16LE(Number.isNaN(entry.heading) ? 65_535 : Math.round(entry.heading * 100), at);
  at = out.writeUInt16LE(Math.round(entry.accuracy * 10), at);
  at = out.writeUIntLE(entry.events, at, 6);
  at = out.writeDoubleLE(entry.expiresAt, at);
  at = out.writeUInt32LE(entry.accepted, at);
  out.writeUInt32LE(entry.suppressed, at);
  return out;
}

describe('persist/codecs', () => {
  it('names each codec’s kind', () => {
    assert.equal(windowCodec.kind, WINDOW_STATE);
    assert.equal(seenCodec.kind, SEEN_STATE);
  });

  describe('window records', () => {
    it('round-trip exactly, at the stored precision, a missing heading and edge values included', () => {
      const entries = [
        windowEntry('veh-1'),
        windowEntry('no heading', { heading: Number.NaN, accuracy: 0, events: 0 }),
        windowEntry('ünïcødé {id}', { lat: -90, lon: 180, heading: 359.99, accuracy: 6553.4 }),
        windowEntry('corner', { lat: 90, lon: -180, heading: 0, accepted: 0, suppressed: 0 }),
      ];
      const events = replay(windowCodec, (out) => {
        for (const entry of entries) windowCodec.write(out, entry.assetId, entry);
      });
      assert.equal(events.length, entries.length);
      events.forEach((event, i) => {
        assert.equal(event[0], 'restore');
        const got = event[1];
        const want = entries[i] as WindowEntry;
        assert.deepEqual(shown(got), shown(want));
        assert.equal(event[2], 5, 'the load time is passed on');
      });
    });

    it('hold a record in 45 bytes plus the id, whatever the values', () => {
      const out = new RecordWriter();
      windowCodec.write(out, 'veh-1', windowEntry('veh-1'));
      assert.equal(out.length, 1 + 2 + 'veh-1'.length + 8 + 4 + 4 + 2 + 2 + 6 + 8 + 4 + 4);
    });

    it('write an entry with neither a value nor a jump candidate in format 1, byte for byte as the previous release did, and read that back', () => {
      const entry = windowEntry('veh-1');
      const out = new RecordWriter();
      windowCodec.write(out, entry.assetId, entry);
      const written = out.take();
      assert.deepEqual(written, formatOneRecord(entry));
      const target = recorder<WindowEntry>();
      windowCodec.apply(written, target, 5);
      assert.deepEqual(target.events.map((e) => (e[0] === 'restore' ? shown(e[1]) : e)), [shown(entry)]);
    });

    it('write a value (exactly) or a jump candidate in format 2 (record type 6), and read both back', () => {
      const value = windowEntry('bin-A17', { lat: 0, lon: 0, heading: Number.NaN, value: 0.1 + 0.2 });
      const candidate = windowEntry('veh-jump', { candidate: { t: 1_780_000_030_000.25, lat: 48.1371079, lon: -11.5753822, count: 2 } });
      const both = windowEntry('odd', { value: -0, candidate: { t: 1, lat: -90, lon: 180, count: 70_000 } });
      const events = replay(windowCodec, (out) => {
        for (const entry of [value, candidate, both]) windowCodec.write(out, entry.assetId, entry);
      });
      assert.deepEqual(
        events.map((e) => (e[0] === 'restore' ? shown(e[1]) : e)),
        [value, candidate, { ...both, candidate: { ...both.candidate, count: 0xffff } }].map(shown),
        'the candidate count is kept up to 65535',
      );
      const got = events[2]?.[1] as WindowEntry;
      assert.ok(Object.is(got.value, -0), 'the value is the very double');
      const sizes = [value, candidate].map((entry) => {
        const out = new RecordWriter();
        windowCodec.write(out, entry.assetId, entry);
        const bytes = out.take();
        assert.equal(bytes[0], 6);
        return bytes.length - Buffer.byteLength(entry.assetId);
      });
      assert.deepEqual(sizes, [45 + 1 + 8, 45 + 1 + 18]);
    });

    it('refuse a format-2 record with parts this release does not know, rather than read on into the next record', () => {
      const out = new RecordWriter();
      windowCodec.write(out, 'v', windowEntry('v', { value: 1 }));
      const bytes = out.take();
      bytes[1 + 2 + 1 + 42] = 1 | 4;
      assert.throws(() => windowCodec.apply(bytes, recorder<WindowEntry>(), 0), /unknown parts 5/);
    });

    it('clamp counts that outgrow 32 bits instead of failing the save', () => {
      const [event] = replay(windowCodec, (out) => windowCodec.write(out, 'busy', windowEntry('busy', { accepted: 2 ** 40, suppressed: 2 ** 33 })));
      const got = event?.[1] as WindowEntry;
      assert.equal(got.accepted, 0xffff_ffff);
      assert.equal(got.suppressed, 0xffff_ffff);
    });

    it('write a delete for an entry that is gone, and replay deletes and resets in order', () => {
      const events = replay(windowCodec, (out) => {
        windowCodec.write(out, 'a', windowEntry('a'));
        windowCodec.write(out, 'a', undefined);
        writeClear(out);
        windowCodec.write(out, 'b', windowEntry('b'));
      });
      assert.deepEqual(events.map((e) => (e[0] === 'restore' ? `restore ${e[1].assetId}` : e[0] === 'forget' ? `forget ${e[1]}` : 'clear')), [
        'restore a',
        'forget a',
        'clear',
        'restore b',
      ]);
    });
  });

  describe('seen records', () => {
    const entries: SeenEntry[] = [
      { key: 'bin-A17:41:76c73ee2946cc70e', expiry: 1_780_000_000_000, deadline: SEEN_DEADLINE, token: 2 ** 48 - 1 },
      { key: 'pending', expiry: 1_780_000_060_000, deadline: 1_780_000_030_000.5, token: 1 },
      { key: 'released', expiry: 1_780_000_030_000, deadline: RELEASED_DEADLINE, token: 123_456_789 },
      { key: 'ключ', expiry: 1, deadline: SEEN_DEADLINE, token: 0 },
    ];

    it('round-trip seen, pending and released entries exactly', () => {
      const events = replay(seenCodec, (out) => {
        for (const entry of entries) seenCodec.write(out, entry.key, entry);
      });
      assert.deepEqual(events, entries.map((entry) => ['restore', entry, 5]));
    });

    it('cost 8 bytes more for a pending entry (its deadline) and nothing for the others', () => {
      const size = (entry: SeenEntry): number => {
        const out = new RecordWriter();
        seenCodec.write(out, entry.key, entry);
        return out.length - Buffer.byteLength(entry.key);
      };
      assert.equal(size(entries[0] as SeenEntry), 1 + 2 + 8 + 6);
      assert.equal(size(entries[1] as SeenEntry), 1 + 2 + 8 + 6 + 8);
      assert.equal(size(entries[2] as SeenEntry), 1 + 2 + 8 + 6);
    });

    it('write a delete for a key that is gone', () => {
      assert.deepEqual(replay(seenCodec, (out) => seenCodec.write(out, 'gone', undefined)), [['forget', 'gone']]);
    });
  });

  describe('damage', () => {
    it('throws a RangeError for a record cut short, a key running past the end, or an unknown type', () => {
      const out = new RecordWriter();
      seenCodec.write(out, 'a-key', entriesOne());
      const whole = out.take();
      for (let cut = 1; cut < whole.length; cut++) {
        assert.throws(() => seenCodec.apply(whole.subarray(0, whole.length - cut), recorder<SeenEntry>(), 0), RangeError, `cut ${cut}`);
      }
      const two = new RecordWriter();
      windowCodec.write(two, 'veh', windowEntry('veh', { value: 3, candidate: { t: 2, lat: 1, lon: 1, count: 1 } }));
      const format2 = two.take();
      for (let cut = 1; cut < format2.length; cut++) {
        assert.throws(() => windowCodec.apply(format2.subarray(0, format2.length - cut), recorder<WindowEntry>(), 0), RangeError, `format 2, cut ${cut}`);
      }
      assert.throws(() => seenCodec.apply(Buffer.from([9]), recorder<SeenEntry>(), 0), /unknown record type 9/);
      assert.throws(() => windowCodec.apply(Buffer.from([4, 0, 0]), recorder<WindowEntry>(), 0), /unknown record type 4/, 'a seen-only record in a window state');
    });

    it('refuses to write a key too long to frame', () => {
      const out = new RecordWriter();
      assert.throws(() => seenCodec.write(out, 'k', { key: 'x'.repeat(70_000), expiry: 1, deadline: SEEN_DEADLINE, token: 1 }), /too long to save/);
    });
  });

  it('grows its buffer as needed and starts afresh after take()', () => {
    const out = new RecordWriter();
    for (let i = 0; i < 2000; i++) seenCodec.write(out, `k${i}`, { key: `k${i}`, expiry: i + 1, deadline: SEEN_DEADLINE, token: i });
    const first = out.take();
    assert.ok(first.length > 4096);
    assert.equal(out.length, 0);
    const target = recorder<SeenEntry>();
    seenCodec.apply(first, target, 0);
    assert.equal(target.events.length, 2000);
    assert.deepEqual(target.events[1999], ['restore', { key: 'k1999', expiry: 2000, deadline: SEEN_DEADLINE, token: 1999 }, 0]);
  });
});

function entriesOne(): SeenEntry {
  return { key: 'a-key', expiry: 10, deadline: 5, token: 3 };
}
