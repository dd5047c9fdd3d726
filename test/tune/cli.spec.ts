/**
 * dedup-tune, the command (bin/dedup-tune.js, run as users run it, on the
 * compiled pack: `npm run build` first, as for the node tests). Above all:
 * for a file, the table equals what the sliding-window node itself decides
 * when the same file is sent through it, one node per Heartbeat × Movement
 * pair, in a real Node-RED runtime.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'fs';
import { tmpdir } from 'os';
import { join } from 'path';
import { main } from '../../src/tune/cli';
import { CSV_COLUMNS } from '../../src/tune/report';
import { collect, coreNodes, helper, node, packNodes, until, type FlowNode, type Msg } from '../support/node-red-helper';

const ROOT = join(__dirname, '..', '..');
const BIN = join(ROOT, 'bin', 'dedup-tune.js');

type Row = Record<'assetId' | 'ts' | 'lat' | 'lon', string>;

/**
 * A recorded fleet, ending an hour ago (the node's clock guard never sees
 * it ahead, and the file spans less than Forget after): 14 assets, half
 * parked with up to 10 m of jitter, half driving; pings every 5 to 15 s in
 * three time formats; redeliveries, late pings and bad rows among them.
 */
function fleet(): { rows: Row[]; bad: number } {
  let seed = 20_260_716;
  const random = (): number => (seed = (seed * 48_271) % 2_147_483_647) / 2_147_483_647;
  const end = Date.now() - 3_600_000;
  const start = end - 40 * 60_000;
  const rows: Row[] = [];
  let bad = 0;
  const clocks = Array.from({ length: 14 }, () => start + random() * 10_000);
  const place = Array.from({ length: 14 }, (_, a) => ({ lat: 48 + a * 0.05, lon: 11 + a * 0.05 }));
  for (let step = 0; step < 1400; step++) {
    const a = step % 14;
    const parked = a % 2 === 0;
    clocks[a] = (clocks[a] as number) + 5_000 + random() * 10_000;
    const p = place[a] as { lat: number; lon: number };
    if (!parked) p.lat += (8 + random() * 7) * 10 * 0.000009;
    const jitter = parked ? (random() - 0.5) * 0.00018 : 0;
    const t = Math.round(clocks[a]);
    const format = step % 3;
    const ts = format === 0 ? new Date(t).toISOString() : format === 1 ? String(Math.floor(t / 1000)) : String(t);
    const row: Row = { assetId: `veh-${a}`, ts, lat: (p.lat + jitter).toFixed(7), lon: (p.lon + jitter).toFixed(7) };
    rows.push(row);
    if (step % 29 === 0) rows.push({ ...row });
    if (step % 41 === 0) rows.push({ ...row, ts: new Date(t - 60_000).toISOString() });
    if (step % 97 === 0) {
      rows.push({ ...row, lat: step % 2 === 0 ? 'north' : '95' });
      bad++;
    }
    if (step % 211 === 0) {
      rows.push({ ...row, ts: 'yesterday' });
      bad++;
    }
  }
  return { rows, bad };
}

/** A row's time in epoch ms, as readPing reads it (NaN for a time it refuses). */
function timeOf(ts: string): number {
  if (/^\d+$/.test(ts)) return Number(ts) < 1e11 ? Number(ts) * 1000 : Number(ts);
  return Date.parse(ts);
}

/** The rows as a node receives them live: in time order, stably (the command decides a file's pings so). */
function live(rows: Row[]): Row[] {
  return rows.map((row, i) => ({ row, i, t: timeOf(row.ts) })).sort((a, b) => (a.t === b.t ? a.i - b.i : Number.isNaN(a.t) ? 1 : Number.isNaN(b.t) ? -1 : a.t - b.t)).map((x) => x.row);
}

/**
 * An export as a fleet system writes it: columns of its own names, local
 * times (Europe/Berlin) without a zone, sorted by vehicle; and the same
 * pings as dedup-tune's own names with epoch seconds, in time order.
 */
function export_(start: string, minutes: number): { local: string; epoch: string } {
  const wall = new Intl.DateTimeFormat('sv-SE', { timeZone: 'Europe/Berlin', year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', second: '2-digit' });
  const pings: { id: string; t: number; lat: string; lon: string }[] = [];
  for (let v = 0; v < 6; v++) {
    for (let k = 0; k < minutes * 6; k++) {
      const t = Date.parse(start) + k * 10_000 + v * 1000;
      const parked = v % 2 === 0;
      const lat = 52.5 + v * 0.01 + (parked ? Math.sin(k * 3 + v) * 0.00004 : k * 0.0004);
      pings.push({ id: `veh-${v}`, t, lat: lat.toFixed(6), lon: (13.4 + (parked ? Math.cos(k * 5) * 0.00004 : 0)).toFixed(6) });
    }
  }
  const byVehicle = pings.map((p) => `${p.lon},${p.lat},${wall.format(p.t)},${p.id}`);
  const byTime = pings.slice().sort((a, b) => a.t - b.t).map((p) => `${p.id},${p.t / 1000},${p.lat},${p.lon}`);
  return { local: `longitude,latitude,timestamp,name_id\n${byVehicle.join('\n')}\n`, epoch: `assetId,ts,lat,lon\n${byTime.join('\n')}\n` };
}

function csvOf(rows: Row[]): string {
  return `assetId,ts,lat,lon,driver\n${rows.map((r) => `${r.assetId},${r.ts},${r.lat},${r.lon},someone`).join('\n')}\n`;
}

function jsonlOf(rows: Row[]): string {
  const value = (v: string): string | number => (/^-?\d+(\.\d+)?$/.test(v) ? Number(v) : v);
  return rows.map((r) => JSON.stringify({ assetId: r.assetId, ts: value(r.ts), lat: value(r.lat), lon: value(r.lon) })).join('\n') + '\n';
}

function run(...args: string[]): { status: number | null; stdout: string; stderr: string } {
  const result = spawnSync(process.execPath, [BIN, ...args], { encoding: 'utf8', timeout: 60_000 });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

type Cell = Record<(typeof CSV_COLUMNS)[number], number>;

function parseCsv(text: string): { header: string; cells: Cell[] } {
  const [header, ...lines] = text.trim().split('\n');
  return {
    header: header as string,
    cells: lines.map((line) => {
      const [minSeconds, minMetres, received, admitted, suppressed, admittedFraction] = line.split(',').map(Number);
      return { minSeconds, minMetres, received, admitted, suppressed, admittedFraction } as Cell;
    }),
  };
}

describe('dedup-tune (the command)', function () {
  this.timeout(120_000);
  let dir: string;
  const { rows, bad } = fleet();

  before(function () {
    if (!existsSync(join(ROOT, 'nodes', 'tune', 'cli.js'))) throw new Error('nodes/tune/cli.js is missing: run npm run build first');
    dir = mkdtempSync(join(tmpdir(), 'dedup-tune-cli-'));
    writeFileSync(join(dir, 'fleet.csv'), csvOf(rows));
    writeFileSync(join(dir, 'fleet.jsonl'), jsonlOf(rows));
  });

  after(function () {
    rmSync(dir, { recursive: true, force: true });
  });

  afterEach(async function () {
    await helper.unload();
  });

  it('prints exactly what the sliding-window node decides for the same file, pair by pair', async function () {
    const seconds = [10, 60, 300];
    const metres = [5, 25, 100];
    const csv = run(join(dir, 'fleet.csv'), '--seconds', seconds.join(','), '--metres', metres.join(','), '--format', 'csv');
    assert.equal(csv.status, 0, csv.stderr);
    const { header, cells } = parseCsv(csv.stdout);
    assert.equal(header, 'minSeconds,minMetres,received,admitted,suppressed,admittedFraction');
    assert.equal(cells.length, 9);
    assert.match(csv.stderr, new RegExp(`^Bad rows, not counted: ${bad}; by line number \\(at most 10\\):\n {2}line \\d+: `, 'm'), 'bad rows are reported on stderr, the CSV stays clean');
    assert.match(csv.stderr, /^Columns: asset id assetId, time ts, latitude lat, longitude lon \(recognised by name/m);

    // The same rows through nine real nodes, one per pair, in a real Node-RED runtime,
    // in time order: as they would have arrived live, and as the command decides them.
    const pairs = seconds.flatMap((s) => metres.map((m) => ({ s, m })));
    // One Catch node for all (the test helper registers a core node type once per node of that type).
    const flow: FlowNode[] = [
      { id: 'tab', type: 'tab' },
      { id: 'tune-on-error', type: 'catch', z: 'tab', scope: pairs.map((_, i) => `tune-sw-${i}`), uncaught: false, wires: [['tune-bad']] },
      { id: 'tune-bad', type: 'helper', z: 'tab' },
    ];
    pairs.forEach(({ s, m }, i) => {
      flow.push(
        { id: `tune-sw-${i}`, type: 'sliding-window-dedup', z: 'tab', minSeconds: String(s), minMetres: String(m), wires: [[`tune-adm-${i}`], [`tune-sup-${i}`]] },
        { id: `tune-adm-${i}`, type: 'helper', z: 'tab' },
        { id: `tune-sup-${i}`, type: 'helper', z: 'tab' },
      );
    });
    await helper.load([...packNodes(['dedup-redis', 'sliding-window-dedup']), ...coreNodes()], flow);
    const caught = collect('tune-bad');
    const badOf = (i: number): Msg[] => caught.filter((msg) => msg.error?.source?.id === `tune-sw-${i}`);
    const outputs = pairs.map((_, i) => ({ admitted: collect(`tune-adm-${i}`), suppressed: collect(`tune-sup-${i}`) }));
    for (const row of live(rows)) pairs.forEach((_, i) => node(`tune-sw-${i}`).receive({ payload: { ...row, driver: 'someone' } }));
    await until(() => outputs.every((o, i) => o.admitted.length + o.suppressed.length + badOf(i).length === rows.length), 'every node to decide every row', 30_000);

    pairs.forEach(({ s, m }, i) => {
      const cell = cells.find((c) => c.minSeconds === s && c.minMetres === m);
      const o = outputs[i] as (typeof outputs)[number];
      assert.ok(cell, `a row for ${s} s / ${m} m`);
      assert.deepEqual(
        { received: cell.received, admitted: cell.admitted, suppressed: cell.suppressed },
        { received: rows.length - bad, admitted: o.admitted.length, suppressed: o.suppressed.length },
        `${s} s / ${m} m`,
      );
      assert.equal(badOf(i).length, bad, 'the node rejects the rows the command counts as bad');
      assert.equal(cell.admittedFraction, Number((cell.admitted / cell.received).toFixed(6)));
    });
    // Not a dull file: the pairs disagree.
    assert.ok(new Set(cells.map((c) => c.admitted)).size >= 5, cells.map((c) => c.admitted).join(' '));

    // The same pings as JSON Lines give the same answers.
    const json = run(join(dir, 'fleet.jsonl'), '--seconds', seconds.join(','), '--metres', metres.join(','), '--format', 'json');
    assert.equal(json.status, 0, json.stderr);
    const report = JSON.parse(json.stdout) as { cells: Cell[]; badRows: number; firstBad: { line: number }[]; format: string; columns: unknown; timeZone: string; reordered: boolean };
    assert.equal(report.format, 'jsonl');
    assert.deepEqual({ columns: report.columns, timeZone: report.timeZone, reordered: report.reordered }, { columns: { assetId: 'assetId', time: 'ts', lat: 'lat', lon: 'lon' }, timeZone: 'UTC', reordered: true });
    assert.deepEqual(
      report.cells.map((c) => [c.minSeconds, c.minMetres, c.received, c.admitted, c.suppressed, c.admittedFraction]),
      cells.map((c) => [c.minSeconds, c.minMetres, c.received, c.admitted, c.suppressed, c.admittedFraction]),
    );
    assert.equal(report.badRows, bad);
  });

  it('prints a table by default: the grid, the parked jitter and the bad rows by line', function () {
    const table = run(join(dir, 'fleet.csv'));
    assert.equal(table.status, 0, table.stderr);
    const lines = table.stdout.split('\n');
    assert.match(lines[0] as string, /fleet\.csv \(CSV\): [\d,]+ pings of 14 assets/);
    const header = lines.find((l) => l.startsWith('Heartbeat'));
    assert.deepEqual(header?.split(/\s+/), ['Heartbeat', '5', 'm', '10', 'm', '25', 'm', '50', 'm', '100', 'm']);
    for (const s of [10, 30, 60, 120, 300]) assert.ok(lines.some((l) => new RegExp(`^${s} s(\\s+\\d+\\.\\d%){5}$`).test(l)), `a row for ${s} s`);
    assert.match(table.stdout, /Parked jitter: [\d,]+ pairs of pings at most 60 s apart while parked; 95th percentile [\d.]+ m; suggested Movement \d+ m \(twice the 95th percentile\)\./);
    const badLines = lines.filter((l) => /^ {2}line \d+: /.test(l));
    assert.equal(badLines.length, Math.min(10, bad));
    // Line numbers count the header as line 1.
    const first = Number(/line (\d+)/.exec(badLines[0] as string)?.[1]);
    const text = readFileSync(join(dir, 'fleet.csv'), 'utf8').split('\n');
    assert.match(text[first - 1] as string, /north|,95,|yesterday/);
  });

  it('reads an export with its own column names and local times, sorted by vehicle, as the same pings named assetId,ts,lat,lon in epoch seconds', function () {
    const seconds = '10,30,60,300';
    const metres = '5,10,25,100';
    const grid = (file: string, ...args: string[]): { cells: string; stderr: string } => {
      const result = run(join(dir, file), '--seconds', seconds, '--metres', metres, '--format', 'csv', ...args);
      assert.equal(result.status, 0, result.stderr);
      return { cells: result.stdout, stderr: result.stderr };
    };
    const october = export_('2014-10-01T06:00:00Z', 60);
    writeFileSync(join(dir, 'export.csv'), october.local);
    writeFileSync(join(dir, 'renamed.csv'), october.epoch);
    const mapped = grid('export.csv', '--asset', 'name_id', '--time', 'timestamp', '--lat', 'latitude', '--lon', 'longitude');
    const renamed = grid('renamed.csv');
    assert.equal(mapped.cells, renamed.cells);
    assert.ok(new Set(parseCsv(renamed.cells).cells.map((c) => c.admitted)).size >= 4, 'the cells disagree: not a dull file');
    assert.match(mapped.stderr, /^Columns: asset id name_id, time timestamp, latitude latitude, longitude longitude$/m);
    assert.match(mapped.stderr, /^Times without a zone: 2,160, read in UTC \(--tz\)$/m);
    assert.match(mapped.stderr, /^The rows were not in time order: each asset's pings are decided in time order/m);
    assert.equal(grid('export.csv').cells, renamed.cells, 'the same columns recognised by name');
    // Across the night the clocks go forward, local times are read right only in their own zone.
    const spring = export_('2015-03-29T00:30:00Z', 60);
    writeFileSync(join(dir, 'spring.csv'), spring.local);
    writeFileSync(join(dir, 'spring-epoch.csv'), spring.epoch);
    const zoned = grid('spring.csv', '--tz', 'Europe/Berlin');
    assert.equal(zoned.cells, grid('spring-epoch.csv').cells);
    assert.match(zoned.stderr, /^Times without a zone: 2,160, read in Europe\/Berlin \(--tz\)$/m);
    assert.notEqual(grid('spring.csv').cells, zoned.cells, 'read as UTC, the hour the clocks skip is a gap in every vehicle\'s pings');
  });

  it('writes the chart the sidebar draws with --svg', function () {
    const svg = join(dir, 'chart.svg');
    const result = run(join(dir, 'fleet.csv'), '--seconds', '30,60', '--metres', '10,25,50', '--svg', svg, '--format', 'csv');
    assert.equal(result.status, 0, result.stderr);
    const text = readFileSync(svg, 'utf8');
    assert.match(text, /^<\?xml version="1.0" encoding="UTF-8"\?>\n<svg xmlns="http:\/\/www.w3.org\/2000\/svg"/);
    assert.equal((text.match(/class="dedup-chart-point"/g) ?? []).length, 6, 'a point per pair');
    assert.equal((text.match(/class="dedup-chart-line"/g) ?? []).length, 2, 'a line per Heartbeat');
    assert.match(text, /class="dedup-chart dedup-chart-jitter"/);
  });

  it('says what is wrong: exit 2 for a wrong option, 1 for a file it cannot read', function () {
    const cases: [string[], number, RegExp][] = [
      [[], 2, /name one file to read/],
      [['a.csv', 'b.csv'], 2, /name only one file/],
      [['x.csv', '--seconds', '10,-5'], 2, /--seconds: "-5" is not a number greater than 0/],
      [['x.csv', '--metres'], 2, /--metres needs a value/],
      [['x.csv', '--format', 'xml'], 2, /--format must be one of table, csv, json, not "xml"/],
      [['x.csv', '--ttl', '0'], 2, /--ttl must be a number greater than 0, not "0"/],
      [['x.csv', '--fast'], 2, /unknown option --fast/],
      [['x.csv', '--mode', 'speed'], 2, /--mode must be one of position, value, not "speed"/],
      [['x.csv', '--no-fix', 'maybe'], 2, /--no-fix must be on or off, not "maybe"/],
      [['x.csv', '--relocate-pings', '2.5'], 2, /--relocate-pings must be a whole number greater than 0, not "2.5"/],
      [['x.csv', '--max-speed', '-1'], 2, /--max-speed must be a number greater than 0, not "-1"/],
      [['x.csv', '--deadbands', '5,x'], 2, /--deadbands: "x" is not a number greater than 0/],
      [['x.csv', '--value', 'fill', '--mode', 'position'], 2, /--value names the reading of value mode/],
      [[join(dir, 'nope.csv')], 1, /cannot read .*nope\.csv/],
    ];
    for (const [args, status, message] of cases) {
      const result = run(...args);
      assert.equal(result.status, status, `${args.join(' ')}: ${result.stderr}`);
      assert.match(result.stderr, message);
      assert.equal(result.stdout, '');
    }
    writeFileSync(join(dir, 'wrong.csv'), 'unit,when,lat,lon\nv,1,2,3\n');
    const header = run(join(dir, 'wrong.csv'));
    assert.equal(header.status, 1);
    assert.match(header.stderr, /wrong\.csv: no column for the asset id, time \(its columns: unit, when, lat, lon\); name it with --asset, --time, --lat, --lon or --value/);
    const named = run(join(dir, 'wrong.csv'), '--asset', 'vehicle');
    assert.equal(named.status, 1);
    assert.match(named.stderr, /wrong\.csv: no column "vehicle" \(given with --asset\); its columns: unit, when, lat, lon/);
    for (const [args, message] of [[['x.csv', '--tz', 'Mars/Olympus'], /--tz: "Mars\/Olympus" is not a time zone/], [['x.csv', '--asset='], /--asset needs a column name/]] as const) {
      const result = run(...args);
      assert.equal(result.status, 2, result.stderr);
      assert.match(result.stderr, message);
    }
    const help = run('--help');
    assert.equal(help.status, 0);
    assert.match(help.stdout, /^Usage: dedup-tune FILE/);
    assert.match(help.stdout, /minSeconds,minMetres,received,admitted,suppressed,admittedFraction/);
  });

  it('runs value mode over a reading column: the deadband grid, the issue\'s series, CSV with deadband (issue 29)', function () {
    const start = Date.parse('2026-07-16T09:00:00Z');
    const lines = ['bin,time,fill_pct,battery'];
    // bin-A17: the issue's series; bin-B04: the same reading for 6 h 15 min.
    [40, 41, 42, 46, 46].forEach((v, i) => lines.push(`bin-A17,${new Date(start + i * 900_000).toISOString()},${v},3.3`));
    for (let i = 0; i <= 25; i++) lines.push(`bin-B04,${new Date(start + i * 900_000).toISOString()},40,3.3`);
    writeFileSync(join(dir, 'bins.csv'), `${lines.join('\n')}\n`);
    // Forget after a day: at the default 6 h a record is forgotten just as the Heartbeat passes, and the reading is `first` again.
    const table = run(join(dir, 'bins.csv'), '--asset', 'bin', '--value', 'fill_pct', '--seconds', '21600', '--deadbands', '5', '--ttl', '86400');
    assert.equal(table.status, 0, table.stderr);
    assert.match(table.stdout, /^Columns: asset id bin, time time, value fill_pct \(recognised by name; name others with --asset, --time, --value\)$/m);
    assert.match(table.stdout, /^Value mode: a reading is admitted when it changed by at least the Deadband, or the Heartbeat passed$/m);
    assert.match(table.stdout, /^Fraction admitted, by Heartbeat \(rows\) and Deadband \(columns\):\nHeartbeat\s+5\n21600 s\s+12\.9%$/m, '4 of 31: first, changed; first, elapsed at 6 h');
    assert.match(table.stdout, /^Heartbeat\s+Deadband\s+first\s+elapsed\s+changed\s+unchanged\n21600 s\s+5\s+2\s+1\s+1\s+27$/m);
    assert.doesNotMatch(table.stdout, /Parked jitter/, 'a reading has no parked jitter');
    // 10 % of 40 is 4: 46 is still a change; 20 % is 8, and it is not.
    const csv = run(join(dir, 'bins.csv'), '--asset', 'bin', '--mode', 'value', '--seconds', '21600', '--deadbands', '10,20', '--percent', '--ttl', '86400', '--format', 'csv');
    assert.equal(csv.status, 0, csv.stderr);
    assert.equal(csv.stdout, 'minSeconds,deadband,received,admitted,suppressed,admittedFraction\n21600,10,31,4,27,0.129032\n21600,20,31,3,28,0.096774\n');
    assert.match(csv.stderr, /value fill_pct \(recognised by name/, 'the reading recognised by its name, and said so beside CSV');
  });

  it('runs the guards: no-fix on by default, poor-fix, jumps and relocations, each in the reasons table (issue 29)', function () {
    const start = Date.parse('2026-07-16T09:00:00Z');
    const at = (s: number): string => new Date(start + s * 1000).toISOString();
    const rows = [
      `a,${at(0)},52.52,13.4,A,7`,
      `a,${at(10)},0,0,A,7`,
      `a,${at(20)},52.52,13.4,V,7`,
      `a,${at(25)},52.52,13.4,A,3`,
      `a,${at(30)},52.6,13.4,A,8`,
      `a,${at(40)},52.601,13.4,A,8`,
      `a,${at(50)},52.602,13.4,A,8`,
      `b,${at(0)},48.1,11.5,A,9`,
      `b,${at(7200)},48.6,11.5,A,9`,
    ];
    writeFileSync(join(dir, 'guards.csv'), `assetId,ts,lat,lon,valid,sats\n${rows.join('\n')}\n`);
    const guarded = run(join(dir, 'guards.csv'), '--seconds', '60', '--metres', '25', '--max-speed', '150', '--min-satellites', '4');
    assert.equal(guarded.status, 0, guarded.stderr);
    assert.match(guarded.stdout, /; fix: validity valid, satellites sats \(recognised by name/);
    assert.match(guarded.stdout, /^Fix quality: no fix \(0,0 or a validity saying so\) suppressed, at least 4 satellites$/m);
    assert.match(guarded.stdout, /^Jump guard: at most 150 km\/h; relocated after a silence of more than 10 Heartbeats, or after 3 jumps that agree$/m);
    assert.match(guarded.stdout, /^Heartbeat\s+Movement\s+no-fix\s+poor-fix\s+first\s+jump\s+relocated\n60 s\s+25 m\s+2\s+1\s+2\s+2\s+2$/m);
    const off = run(join(dir, 'guards.csv'), '--seconds', '60', '--metres', '25', '--no-fix', 'off', '--format', 'json');
    assert.equal(off.status, 0, off.stderr);
    const report = JSON.parse(off.stdout) as { rule: Record<string, unknown>; cells: { reasons: Record<string, number> }[] };
    assert.equal(report.rule.noFix, undefined);
    assert.deepEqual(report.cells[0]?.reasons, { first: 2, elapsed: 1, moved: 5, window: 1 }, 'no guard: 0,0 is a move, and so is the way back');
  });

  it('reports progress on stderr for a large file, never on stdout', async function () {
    let stdout = '';
    let stderr = '';
    const status = await main([join(dir, 'fleet.csv'), '--format', 'csv', '--seconds', '10,20', '--metres', '5'], { stdout: (t) => (stdout += t), stderr: (t) => (stderr += t) }, 500);
    assert.equal(status, 0);
    // Read in chunks of a megabyte: this small file is one chunk, one report.
    assert.match(stderr, /^read 1,484 pings…$/m);
    assert.match(stderr, /decided 1 of 2 settings…\ndecided 2 of 2 settings…/);
    assert.equal(stdout.split('\n')[0], CSV_COLUMNS.join(','));
    assert.doesNotMatch(stdout, /pings…|settings…/);
  });
});
