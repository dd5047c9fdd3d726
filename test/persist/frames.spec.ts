/**
 * The saved state's framing: a header that names the format and kind, and
 * frames that each carry their length and CRC-32, so that a file cut short
 * or damaged is noticed, and where.
 */
import assert from 'node:assert/strict';
import { crc32 as zlibCrc32 } from 'zlib';
import {
  crc32,
  decodeHeader,
  encodeFrame,
  encodeHeader,
  END_FRAME,
  FORMAT_VERSION,
  FRAME_HEAD_BYTES,
  HEADER_BYTES,
  readFrames,
  SEEN_STATE,
  WINDOW_STATE,
} from '../../src/persist/frames';

const file = (...parts: Buffer[]): Buffer => Buffer.concat([encodeHeader(WINDOW_STATE, 3), ...parts]);

describe('persist/frames', () => {
  describe('crc32', () => {
    it('is CRC-32 (IEEE): the check value of "123456789" is 0xCBF43926, and it agrees with zlib', () => {
      assert.equal(crc32(Buffer.from('123456789')), 0xcbf43926);
      assert.equal(crc32(Buffer.alloc(0)), 0);
      const data = Buffer.from(Array.from({ length: 1000 }, (_, i) => (i * 31) & 0xff));
      // zlib.crc32 exists from Node 20.15 / 22.2; compare where it does.
      if (typeof zlibCrc32 === 'function') assert.equal(crc32(data), zlibCrc32(data));
    });
  });

  describe('header', () => {
    it('round-trips the kind and the generation in 16 bytes starting "NRDD"', () => {
      const header = encodeHeader(SEEN_STATE, 0xfffffffe);
      assert.equal(header.length, HEADER_BYTES);
      assert.equal(header.subarray(0, 4).toString('latin1'), 'NRDD');
      assert.equal(header[4], FORMAT_VERSION);
      assert.deepEqual(decodeHeader(header, SEEN_STATE), { ok: true, generation: 0xfffffffe, bytes: HEADER_BYTES, deflated: true });
    });

    it('checks its own checksum: any flipped bit, the generation above all, is refused', () => {
      const header = encodeHeader(WINDOW_STATE, 1);
      for (let byte = 0; byte < HEADER_BYTES; byte++) {
        for (let bit = 0; bit < 8; bit++) {
          const damaged = Buffer.from(header);
          damaged[byte] = (damaged[byte] as number) ^ (1 << bit);
          const result = decodeHeader(damaged, WINDOW_STATE);
          assert.equal(result.ok, false, `byte ${byte} bit ${bit}`);
        }
      }
      const generation = Buffer.from(header);
      generation[8] = 2;
      assert.deepEqual(decodeHeader(generation, WINDOW_STATE), { ok: false, problem: 'has a header failing its checksum' });
    });

    it('reads the previous format (a 12-byte header without a checksum), its frames after byte 12', () => {
      const legacy = Buffer.alloc(12);
      legacy.writeUInt32LE(0x4444524e, 0);
      legacy[4] = 1;
      legacy[5] = WINDOW_STATE;
      legacy.writeUInt32LE(7, 8);
      assert.deepEqual(decodeHeader(legacy, WINDOW_STATE), { ok: true, generation: 7, bytes: 12, deflated: false });
      const data = Buffer.concat([legacy, encodeFrame(Buffer.from('old')), END_FRAME]);
      assert.deepEqual(readFrames(data, 12), { payloads: [Buffer.from('old')], ended: true });
    });

    it('refuses a short file, a foreign file, the other kind, a newer format and an unknown one, saying which', () => {
      const header = encodeHeader(WINDOW_STATE, 1);
      const newer = Buffer.from(header);
      newer[4] = FORMAT_VERSION + 1;
      const unknown = Buffer.from(header);
      unknown[4] = 0;
      const foreign = Buffer.from(header);
      foreign.write('PK\u0003\u0004', 0, 'latin1');
      const cases: [Buffer, RegExp][] = [
        [Buffer.alloc(0), /0 bytes long, shorter than its header/],
        [header.subarray(0, 11), /11 bytes long/],
        [foreign, /not a saved dedup state/],
        [newer, /format 3 by a newer release \(this one reads 2\)/],
        [unknown, /unknown format 0/],
        [encodeHeader(SEEN_STATE, 1), /other kind of dedup node/],
      ];
      for (const [data, problem] of cases) {
        const result = decodeHeader(data, WINDOW_STATE);
        assert.equal(result.ok, false);
        assert.match(result.ok ? '' : result.problem, problem);
      }
    });
  });

  describe('frames', () => {
    it('reads back the frames written, in order, and an end frame marks a snapshot’s end', () => {
      const payloads = [Buffer.from('first'), Buffer.from([0, 1, 2, 255]), Buffer.alloc(70_000, 7)];
      const data = file(...payloads.map(encodeFrame), END_FRAME, Buffer.from('ignored after the end'));
      const scan = readFrames(data);
      assert.deepEqual(scan.payloads.map((p) => Buffer.from(p)), payloads);
      assert.equal(scan.ended, true);
      assert.equal(scan.damage, undefined);
    });

    it('reads a journal (no end frame) as whole, not ended', () => {
      const scan = readFrames(file(encodeFrame(Buffer.from('a')), encodeFrame(Buffer.from('b'))));
      assert.equal(scan.payloads.length, 2);
      assert.equal(scan.ended, false);
      assert.equal(scan.damage, undefined);
      assert.deepEqual(readFrames(file()), { payloads: [], ended: false });
    });

    it('detects a file cut short at every byte of its last frame, and keeps the whole frames before it', () => {
      const whole = encodeFrame(Buffer.from('the first frame'));
      const last = encodeFrame(Buffer.from('the frame a crash cut short'));
      const data = file(whole, last);
      for (let cut = 1; cut < last.length; cut++) {
        const scan = readFrames(data.subarray(0, data.length - cut));
        assert.equal(scan.payloads.length, 1, `cut ${cut}`);
        assert.equal(scan.payloads[0]?.toString(), 'the first frame');
        assert.match(scan.damage ?? '', new RegExp(`cut short at byte ${HEADER_BYTES + whole.length}`), `cut ${cut}`);
        assert.equal(scan.ended, false);
      }
    });

    it('detects a changed byte in a payload or in a frame’s checksum', () => {
      const data = file(encodeFrame(Buffer.from('good')), encodeFrame(Buffer.from('damaged')), encodeFrame(Buffer.from('after')));
      const second = HEADER_BYTES + FRAME_HEAD_BYTES + 4;
      for (const at of [second + FRAME_HEAD_BYTES + 2, second + 5]) {
        const damaged = Buffer.from(data);
        damaged[at] = (damaged[at] as number) ^ 0x01;
        const scan = readFrames(damaged);
        assert.deepEqual(scan.payloads.map(String), ['good'], `byte ${at}`);
        assert.match(scan.damage ?? '', new RegExp(`failing its checksum at byte ${second}`));
      }
    });

    it('treats a length that runs past the end as damage, not as a huge allocation', () => {
      const head = Buffer.alloc(FRAME_HEAD_BYTES);
      head.writeUInt32LE(0xffffffff, 0);
      const scan = readFrames(file(encodeFrame(Buffer.from('ok')), head));
      assert.equal(scan.payloads.length, 1);
      assert.match(scan.damage ?? '', /a frame of 4294967295 bytes cut short/);
    });
  });
});
