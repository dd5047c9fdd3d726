/**
 * tune/ping-file: recorded pings read as the node reads a message (core/window/ping's
 * readPing), bad rows counted with their line numbers and never thrown.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'fs';
import { tmpdir } from 'os';
import { join } from 'path';
import fc from 'fast-check';
import { FIX_OK, NO_FIX, POOR_FIX } from '../../../src/core/window/fix-quality';
import { readPing } from '../../../src/core/window/ping';
import { LineSplitter, MAX_LINE_BYTES, MAX_REPORTED_BAD_ROWS, PingFileError, readPingFile, readPingText, splitCsvLine } from '../../../src/tune/ping-file';

const T0 = '2026-07-16T09:00:00Z';

describe('tune/ping-file', function () {
  it('reads CSV with the four named columns in any order among others, as readPing reads them', function () {
    const file = readPingText('speed,lon,assetId,extra,lat,ts\n30,13.4,van-1,x,52.5,2026-07-16T09:00:00Z\n0,"13.5","van 2, north",,52.6,1784192410\n');
    assert.equal(file.format, 'csv');
    assert.equal(file.rows, 2);
    assert.equal(file.badRows, 0);
    const { columns } = file;
    assert.equal(columns.size, 2);
    assert.deepEqual(columns.names, ['van-1', 'van 2, north']);
    const expected = readPing({ assetId: 'van-1', time: T0, lat: '52.5', lon: '13.4' });
    assert.ok(expected.ok);
    assert.equal(columns.t[0], expected.ping.t);
    assert.equal(columns.t[1], 1784192410 * 1000, 'epoch seconds');
    assert.equal(columns.lat[1], 52.6);
    assert.equal(columns.lon[1], 13.5);
    assert.ok(Number.isNaN(columns.heading[0]), 'no heading');
    assert.ok(Number.isNaN(columns.arrival[0]), 'a file has no arrival times');
  });

  it('reads JSON Lines with the same property names', function () {
    const file = readPingText(`{"assetId":"a","ts":"${T0}","lat":52.5,"lon":13.4}\r\n\r\n{"assetId":7,"ts":1784192410000,"lat":"1","lon":-2,"other":true}\n`);
    assert.equal(file.format, 'jsonl');
    assert.equal(file.columns.size, 2);
    assert.deepEqual(file.columns.names, ['a', '7']);
    assert.equal(file.columns.t[1], 1784192410000);
  });

  it('counts every bad row and names the first 10 by line number, header and blank lines included in the count of lines', function () {
    const lines = ['assetId,ts,lat,lon'];
    for (let i = 0; i < 30; i++) lines.push(i % 2 === 0 ? `v${i},${T0},52.5,13.4` : `v${i},${T0},north,13.4`);
    lines.splice(3, 0, '');
    lines.push('v-last,not a time,1,1', 'v,2026-07-16T09:00:00Z,1', '"open,1,2,3');
    const file = readPingText(lines.join('\n'));
    assert.equal(file.rows, 33);
    assert.equal(file.badRows, 18);
    assert.equal(file.columns.size, 15);
    assert.equal(file.firstBad.length, MAX_REPORTED_BAD_ROWS);
    assert.deepEqual(
      file.firstBad.map((b) => b.line),
      [3, 6, 8, 10, 12, 14, 16, 18, 20, 22],
    );
    assert.match(file.firstBad[0]?.problem ?? '', /^lat = "north": is not a number/);
  });

  it('names what is wrong with a row: the field and value, a short row, an unclosed quote, bad JSON', function () {
    const csv = readPingText(`assetId,ts,lat,lon\nv,${T0},52.5\n"v,${T0},1,1\nv,${T0},91,1\n,${T0},1,1\n`);
    assert.deepEqual(
      csv.firstBad.map((b) => [b.line, b.problem]),
      [
        [2, 'has 3 fields; lon missing'],
        [3, 'a quoted field is not closed'],
        [4, 'lat = "91": must be between -90 and 90'],
        [5, 'assetId = "": must not be empty'],
      ],
    );
    const jsonl = readPingText(`{"assetId":"a","ts":"${T0}","lat":1,"lon":1}\n{"assetId":"a",\n[1,2]\n{"assetId":"a","ts":"soon","lat":1,"lon":1}\n`);
    assert.deepEqual(jsonl.firstBad.map((b) => b.line), [2, 3, 4]);
    assert.match(jsonl.firstBad[0]?.problem ?? '', /^not valid JSON/);
    assert.equal(jsonl.firstBad[1]?.problem, 'not a JSON object');
    assert.match(jsonl.firstBad[2]?.problem ?? '', /^ts = "soon"/);
  });

  it('refuses a CSV whose header lacks a needed column, naming it', function () {
    assert.throws(
      () => readPingText('unit,ts,lat,lon\nv,1,2,3\n'),
      (error: unknown) => error instanceof PingFileError && error.code === 'header' && error.details.missing === 'asset id' && error.details.header === 'unit, ts, lat, lon',
    );
    assert.throws(
      () => readPingText('unit,when,lat,lon\nv,1,2,3\n'),
      (error: unknown) => error instanceof PingFileError && error.message === 'the CSV header has no column for the asset id, time (its columns: unit, when, lat, lon)',
    );
    assert.throws(() => readPingText('\n\n'), (error: unknown) => error instanceof PingFileError && error.code === 'empty');
  });

  it('reads heading and accuracy only for a node that reads them', function () {
    const text = `assetId,ts,lat,lon,heading,accuracy\nv,${T0},1,1,400,5\n`;
    const plain = readPingText(text);
    assert.equal(plain.badRows, 0, 'a node without a turn rule never looks at the heading');
    assert.ok(Number.isNaN(plain.columns.heading[0]));
    assert.equal(plain.columns.accuracy[0], 0);
    const turning = readPingText(text, { heading: true, accuracy: true });
    assert.equal(turning.badRows, 1);
    assert.match(turning.firstBad[0]?.problem ?? '', /^heading = "400": must be between 0 and 360/);
    const ok = readPingText(`assetId,ts,lat,lon,heading,accuracy\nv,${T0},1,1,90,5\n`, { heading: true, accuracy: true });
    assert.equal(ok.columns.heading[0], 90);
    assert.equal(ok.columns.accuracy[0], 5);
  });

  it('reads the fix\'s validity, satellites and HDOP for a node whose rule judges them, into each ping\'s fix quality (issue 29)', function () {
    const text = [
      'vehicle,timestamp,latitude,longitude,fix,sats,hdop',
      `v,${T0},52.5,13.4,A,7,0.9`,
      `v,${T0},0,0,A,7,0.9`,
      `v,${T0},52.5,13.4,V,7,0.9`,
      `v,${T0},52.5,13.4,false,,`,
      `v,${T0},52.5,13.4,,3,0.9`,
      `v,${T0},52.5,13.4,1,7,4`,
      `v,${T0},52.5,13.4,,,`,
      `v,${T0},52.5,13.4,A,many,1`,
    ].join('\n');
    const guarded = readPingText(text, { rule: { noFix: true, minSatellites: 4, maxHdop: 2 } });
    assert.deepEqual(Array.from(guarded.columns.fix), [FIX_OK, NO_FIX, NO_FIX, NO_FIX, POOR_FIX, POOR_FIX, FIX_OK]);
    assert.deepEqual(guarded.mapping, { assetId: 'vehicle', time: 'timestamp', lat: 'latitude', lon: 'longitude', valid: 'fix', satellites: 'sats', hdop: 'hdop' });
    assert.equal(guarded.badRows, 1);
    assert.match(guarded.firstBad[0]?.problem ?? '', /^sats = "many": is not a number/);
    // A node without those rules reads none of those columns: every row a fix, the bad one too.
    const plain = readPingText(text);
    assert.deepEqual(Array.from(plain.columns.fix), [0, 0, 0, 0, 0, 0, 0, 0]);
    assert.equal(plain.mapping.valid, undefined);
    // Only the no-fix guard: 0,0 without a validity column still is no fix.
    const bare = readPingText(`assetId,ts,lat,lon\nv,${T0},0,0\nv,${T0},1,1\n`, { rule: { noFix: true } });
    assert.deepEqual(Array.from(bare.columns.fix), [NO_FIX, FIX_OK]);
  });

  it('reads value mode\'s reading instead of the position: required, recognised or named, a non-number a bad row (issue 29)', function () {
    const text = ['device_id,ts,fill_pct,lat', `bin-A17,${T0},40,x`, `bin-A17,${T0},41.5,x`, `bin-A17,${T0},full,x`].join('\n');
    const read = readPingText(text, { rule: { mode: 'value' } });
    assert.deepEqual(Array.from(read.columns.value), [40, 41.5]);
    assert.deepEqual(Array.from(read.columns.lat), [0, 0], 'no position read');
    assert.deepEqual(read.mapping, { assetId: 'device_id', time: 'ts', value: 'fill_pct' });
    assert.equal(read.badRows, 1);
    assert.match(read.firstBad[0]?.problem ?? '', /^fill_pct = "full": is not a number/);
    const named = readPingText(['id,ts,level,pct', `b,${T0},1,55`].join('\n'), { rule: { mode: 'value' } }, Infinity, { columns: { value: 'pct' } });
    assert.deepEqual(Array.from(named.columns.value), [55]);
    assert.throws(() => readPingText(`id,ts,lat,lon\nb,${T0},1,1\n`, { rule: { mode: 'value' } }), (error: unknown) => error instanceof PingFileError && error.code === 'header' && /no column for the value/.test(error.message));
    // In position mode a value column is not read, and the position is required as before.
    assert.throws(() => readPingText(`id,ts,value\nb,${T0},1\n`), (error: unknown) => error instanceof PingFileError && /latitude, longitude/.test(error.message));
  });

  it('recognises the common names of an export\'s columns, and says which it read', function () {
    const file = readPingText(`longitude,latitude,timestamp,name_id\n13.4,52.5,${T0},van-1\n`);
    assert.deepEqual(file.mapping, { assetId: 'name_id', time: 'timestamp', lat: 'latitude', lon: 'longitude' });
    assert.deepEqual(file.given, []);
    assert.equal(file.columns.lat[0], 52.5);
    assert.equal(file.columns.lon[0], 13.4);
    assert.deepEqual(readPingText(`Vehicle,Time,LAT,lng\nv,${T0},1,2\n`).mapping, { assetId: 'Vehicle', time: 'Time', lat: 'LAT', lon: 'lng' });
    // A row number called id loses to a vehicle column; ts wins over time.
    assert.deepEqual(readPingText(`id,vehicle,time,ts,lat,lon\n1,v,${T0},${T0},1,2\n`).mapping, { assetId: 'vehicle', time: 'ts', lat: 'lat', lon: 'lon' });
    assert.deepEqual(readPingText(`device_id,datetime,latitude,longitude\nd,${T0},1,2\n`).mapping, { assetId: 'device_id', time: 'datetime', lat: 'latitude', lon: 'longitude' });
    const jsonl = readPingText(`{"id":"d-1","time":"${T0}","latitude":1,"lng":2}\n{"id":"d-1","time":"${T0}","latitude":"north","lng":2}\n`);
    assert.deepEqual(jsonl.mapping, { assetId: 'id', time: 'time', lat: 'latitude', lon: 'lng' });
    assert.equal(jsonl.columns.size, 1);
    assert.match(jsonl.firstBad[0]?.problem ?? '', /^latitude = "north": is not a number/, 'a bad row names the file\'s column');
  });

  it('reads the columns the user names, topic as the asset id included, before any it would recognise', function () {
    const text = `assetId,topic,when,y,x\nignored,fleet/van-7,${T0},52.5,13.4\n`;
    const file = readPingText(text, {}, Infinity, { columns: { assetId: 'topic', time: 'when', lat: 'y', lon: 'x' } });
    assert.deepEqual(file.mapping, { assetId: 'topic', time: 'when', lat: 'y', lon: 'x' });
    assert.deepEqual(file.given, ['assetId', 'time', 'lat', 'lon']);
    assert.deepEqual(file.columns.names, ['fleet/van-7']);
    const jsonl = readPingText(`{"topic":"fleet/van-7","payload":1,"ts":"${T0}","lat":1,"lon":2}\n`, {}, Infinity, { columns: { assetId: 'topic' } });
    assert.deepEqual(jsonl.columns.names, ['fleet/van-7']);
    assert.deepEqual(jsonl.given, ['assetId']);
    assert.throws(
      () => readPingText(text, {}, Infinity, { columns: { assetId: 'vehicle' } }),
      (error: unknown) => error instanceof PingFileError && error.code === 'noColumn' && error.details.column === 'vehicle' && error.details.option === 'asset',
    );
    assert.throws(
      () => readPingText(`{"ts":"${T0}","lat":1,"lon":2}\n`, {}, Infinity, { columns: { assetId: 'topic' } }),
      (error: unknown) => error instanceof PingFileError && error.message === 'the first JSON object has no column "topic", named for the asset id (its columns: ts, lat, lon)',
    );
    // A heading column named for a node with a turn rule.
    const turning = readPingText(`assetId,ts,lat,lon,course\nv,${T0},1,1,90\n`, { heading: true }, Infinity, { columns: { heading: 'course' } });
    assert.equal(turning.columns.heading[0], 90);
    assert.deepEqual(turning.mapping, { assetId: 'assetId', time: 'ts', lat: 'lat', lon: 'lon', heading: 'course' });
  });

  it('puts the pings in time order, stably, whatever the file\'s order, and says so', function () {
    const rows = ['vehicle,ts,lat,lon'];
    // Sorted by vehicle, as exports often are; b's second ping is a redelivery of its first.
    for (const [v, times] of [['a', [0, 10, 20]], ['b', [5, 5, 15]], ['c', [1, 2, 3]]] as const) for (const s of times) rows.push(`${v},${1_784_000_000 + s},${s},1`);
    const file = readPingText(rows.join('\n'));
    assert.equal(file.reordered, true);
    const { columns } = file;
    assert.deepEqual(Array.from(columns.t, (t) => t / 1000 - 1_784_000_000), [0, 1, 2, 3, 5, 5, 10, 15, 20]);
    assert.deepEqual(Array.from(columns.asset, (a) => columns.names[a]), ['a', 'c', 'c', 'c', 'b', 'b', 'a', 'b', 'a']);
    assert.deepEqual(Array.from(columns.lat), [0, 1, 2, 3, 5, 5, 10, 15, 20], 'every column moves with its ping');
    assert.equal(readPingText('assetId,ts,lat,lon\na,1,1,1\nb,1,1,1\na,2,1,1\n').reordered, false);
  });

  it('reads date-times without a zone in the zone given, UTC by default, and counts them', function () {
    const text = 'assetId,ts,lat,lon\nv,2014-10-01 08:31:00,1,1\nv,2014-10-01T08:32:00+02:00,1,1\nv,1412145180,1,1\nv,2014-10-01T08:33:30.250,1,1\nv,2014-02-30 08:00:00,1,1\n';
    const utc = readPingText(text);
    assert.equal(utc.timeZone, 'UTC');
    assert.equal(utc.zonelessTimes, 2);
    assert.equal(utc.columns.t[2], Date.parse('2014-10-01T08:31:00Z'));
    const berlin = readPingText(text, {}, Infinity, { timeZone: 'Europe/Berlin' });
    assert.equal(berlin.timeZone, 'Europe/Berlin');
    assert.equal(berlin.zonelessTimes, 2);
    assert.deepEqual(Array.from(berlin.columns.t), [Date.parse('2014-10-01T06:31:00Z'), Date.parse('2014-10-01T06:32:00Z'), Date.parse('2014-10-01T06:33:00Z'), Date.parse('2014-10-01T06:33:30.250Z')]);
    assert.deepEqual(berlin.firstBad, [{ line: 6, problem: 'ts = "2014-02-30 08:00:00": is not a valid calendar date-time' }]);
  });

  it('splits CSV lines with RFC 4180 quotes', function () {
    assert.deepEqual(splitCsvLine('a,"b,c","say ""hi""",'), ['a', 'b,c', 'say "hi"', '']);
    assert.deepEqual(splitCsvLine('"x"y,z'), ['xy', 'z']);
    assert.equal(splitCsvLine('"never closed,1'), undefined);
  });

  it('never throws on a line of garbage: it is a row, good or bad', function () {
    fc.assert(
      fc.property(fc.array(fc.string({ unit: 'binary', maxLength: 60 }), { maxLength: 20 }), (garbage) => {
        for (const header of ['assetId,ts,lat,lon', `{"assetId":"a","ts":"${T0}","lat":1,"lon":1}`]) {
          const lines = [header, ...garbage.map((g) => g.replace(/[\r\n]/g, ' '))];
          const file = readPingText(lines.join('\n'));
          const nonBlank = garbage.filter((g) => g.replace(/[\r\n]/g, ' ').trim() !== '').length;
          const rows = header.startsWith('{') ? nonBlank + 1 : nonBlank;
          assert.equal(file.rows, rows);
          assert.equal(file.columns.size + file.badRows, rows);
        }
      }),
      { numRuns: 300 },
    );
  });

  it('streams a file from disk, across chunk boundaries, with a BOM and CRLF, reporting progress', async function () {
    const dir = mkdtempSync(join(tmpdir(), 'dedup-tune-'));
    try {
      const path = join(dir, 'pings.csv');
      const lines = ['\ufeffassetId,ts,lat,lon'];
      for (let i = 0; i < 50_000; i++) lines.push(`asset-${i % 97},${1_784_000_000 + i},${(i % 90).toFixed(3)},${(i % 180).toFixed(3)}`);
      writeFileSync(path, lines.join('\r\n'));
      const seen: number[] = [];
      const file = await readPingFile(path, { every: 20_000, onPings: (n) => seen.push(n) });
      assert.equal(file.badRows, 0, JSON.stringify(file.firstBad));
      assert.equal(file.columns.size, 50_000);
      assert.equal(file.columns.names.length, 97);
      assert.equal(file.columns.t[49_999], (1_784_000_000 + 49_999) * 1000);
      assert.ok(seen.length >= 2 && seen[0] as number >= 20_000, `progress: ${seen.join(', ')}`);
      await assert.rejects(readPingFile(join(dir, 'missing.csv')), (error: unknown) => error instanceof PingFileError && error.code === 'unreadable');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
  it('numbers the lines of a streamed file as of the same text in memory, when a chunk ends on a blank line', async function () {
    const dir = mkdtempSync(join(tmpdir(), 'dedup-tune-'));
    try {
      const path = join(dir, 'pings.csv');
      // The first chunk the stream reads (1 MiB) ends on "\n\n": a blank
      // line with nothing after it in that chunk. Bad rows follow it.
      const CHUNK = 1 << 20;
      const row = `v1,${T0},52.5,13.4\n`;
      let text = 'assetId,ts,lat,lon\n';
      while (text.length + row.length <= CHUNK - 1) text += row;
      text = text.padEnd(CHUNK - 1, ' ').slice(0, -1) + '\n\n';
      assert.equal(text.length, CHUNK);
      text += `v2,${T0},north,13.4\nv3,${T0},52.5,east\n`;
      writeFileSync(path, text);
      const streamed = await readPingFile(path);
      const inMemory = readPingText(text);
      assert.equal(streamed.badRows, inMemory.badRows);
      assert.deepEqual(streamed.firstBad, inMemory.firstBad);
      assert.equal(inMemory.firstBad.length, 2, JSON.stringify(inMemory.firstBad));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('reads a line longer than MAX_LINE_BYTES as a bad row with its number, in memory and streamed across chunks, without holding it', async function () {
    const long = `{"assetId":"${'x'.repeat(3 * MAX_LINE_BYTES)}","ts":"${T0}","lat":1,"lon":1}`;
    const text = [`{"assetId":"a","ts":"${T0}","lat":1,"lon":1}`, long, `{"assetId":"b","ts":"${T0}","lat":1,"lon":1}`, long.slice(0, MAX_LINE_BYTES)].join('\n');
    const inMemory = readPingText(text);
    assert.equal(inMemory.rows, 4);
    assert.equal(inMemory.columns.size, 2);
    assert.equal(inMemory.badRows, 2);
    assert.equal(inMemory.firstBad[0]?.line, 2);
    assert.match(inMemory.firstBad[0]?.problem ?? '', new RegExp(`^longer than ${MAX_LINE_BYTES} bytes \\(${Buffer.byteLength(long)} bytes\\), not read; it starts: "\\{\\\\"assetId`));
    // Exactly MAX_LINE_BYTES is read: a bad row for being cut JSON, not for its length.
    assert.equal(inMemory.firstBad[1]?.line, 4);
    assert.match(inMemory.firstBad[1]?.problem ?? '', /^not valid JSON/);
    const dir = mkdtempSync(join(tmpdir(), 'dedup-tune-'));
    try {
      const path = join(dir, 'long.jsonl');
      // Longer than the stream's 1 MiB chunks, so that the line spans several.
      const longer = `{"assetId":"${'y'.repeat(3 << 20)}"}`;
      writeFileSync(path, `${text}\n${longer}\n{"assetId":"c","ts":"${T0}","lat":1,"lon":1}`);
      const streamed = await readPingFile(path);
      assert.deepEqual({ rows: streamed.rows, pings: streamed.columns.size, bad: streamed.firstBad.map((b) => b.line) }, { rows: 6, pings: 3, bad: [2, 4, 5] });
      assert.deepEqual(streamed.firstBad.slice(0, 2), inMemory.firstBad);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('cuts lines as String.split does, however the bytes are chunked, multi-byte characters across chunks included', function () {
    fc.assert(
      fc.property(fc.array(fc.constantFrom('a', 'é', '€', '😀', '\n', '\r\n', ',', ' '), { maxLength: 60 }), fc.array(fc.integer({ min: 1, max: 7 }), { minLength: 1, maxLength: 10 }), (parts, cuts) => {
        const text = parts.join('');
        const bytes = Buffer.from(text, 'utf8');
        const seen: [string, number][] = [];
        const lines = new LineSplitter({ line: (line, n) => seen.push([line, n]), tooLong: () => assert.fail('no line is long here') });
        let at = 0;
        for (let k = 0; at < bytes.length; k++) {
          const next = Math.min(bytes.length, at + (cuts[k % cuts.length] as number));
          lines.write(bytes.subarray(at, next));
          at = next;
        }
        lines.end();
        const expected = text.split('\n').map((line, i): [string, number] => [line.endsWith('\r') ? line.slice(0, -1) : line, i + 1]);
        if (text === '' || text.endsWith('\n')) expected.pop();
        assert.deepEqual(seen, expected);
      }),
      { numRuns: 500 },
    );
  });

  it('refuses a file whose CSV header is over-long, and stops at the pings an upload may hold', function () {
    assert.throws(() => readPingText(`assetId,${'x'.repeat(MAX_LINE_BYTES)}\nv,1,2,3\n`), (error: unknown) => error instanceof PingFileError && error.code === 'header');
    const rows = ['assetId,ts,lat,lon', 'v,1,2,3', 'bad', 'v,2,2,3', 'v,3,2,3', 'v,4,2,3'].join('\n');
    assert.equal(readPingText(rows, {}, 4).columns.size, 4);
    assert.throws(
      () => readPingText(rows, {}, 3),
      (error: unknown) => error instanceof PingFileError && error.code === 'tooManyPings' && error.details.max === '3' && error.details.line === '6',
    );
  });
});
