/**
 * tune/grid: the what-if runs the sliding-window node's own store
 * (stores/memory-window-store) over columns of pings, once per Heartbeat ×
 * Movement pair, with the node's clock: the arrival times of a node's
 * sample, or the latest ping time of a file.
 */
import assert from 'node:assert/strict';
import { baselineOf, decideWindow, type Ping, type WindowBaseline } from '../../../src/core/window/sliding-window';
import { cellSettings, decideAll, decideEach, DEFAULT_DEADBANDS, runGrid, type GridRule } from '../../../src/tune/grid';
import { NO_FIX, POOR_FIX } from '../../../src/core/window/fix-quality';
import { runJob, type Reply, type WhatIfJob } from '../../../src/tune/jobs';
import { whatIf } from '../../../src/tune/what-if';
import { nodeRule, parseList, readRuleOf, ruleOf, withCurrent } from '../../../src/tune/grid-spec';
import { PingColumnsBuilder, type PingColumns } from '../../../src/core/window/ping-columns';

const T0 = Date.parse('2026-07-16T09:00:00Z');
/** About 1.1 m of latitude. */
const METRE = 0.00001;

function columnsOf(pings: Ping[], arrivals?: number[]): PingColumns {
  const builder = new PingColumnsBuilder();
  pings.forEach((p, i) => builder.add({ heading: NaN, accuracy: 0, events: 0, value: NaN, ...p }, arrivals?.[i] ?? NaN));
  return builder.build();
}

const RULE = { ttlSeconds: 21_600, maxAssets: 100_000, maxAheadSeconds: 300 };

describe('tune/grid', function () {
  it('counts what the rule admits for each pair: a parked asset every 10 s, 3 m of jitter', function () {
    const pings: Ping[] = [];
    for (let k = 0; k < 60; k++) pings.push({ assetId: 'parked', t: T0 + k * 10_000, lat: 52.5 + (k % 2) * 3 * METRE, lon: 13.4 });
    const cells = runGrid(columnsOf(pings), { seconds: [10, 30, 60], metres: [2, 25] }, RULE);
    assert.deepEqual(
      cells.map((c) => [c.minSeconds, c.minMetres, c.admitted, c.suppressed]),
      [
        [10, 2, 60, 0],
        [10, 25, 60, 0],
        // 30 s: every third ping; with Movement 2 m the 3.3 m jitter is admitted as a move each time the position flips.
        [30, 2, 60, 0],
        [30, 25, 20, 40],
        [60, 2, 60, 0],
        [60, 25, 10, 50],
      ],
    );
    const cell = cells[3];
    assert.equal(cell?.received, 60);
    assert.equal(cell?.admittedFraction, 20 / 60);
    assert.deepEqual(cell?.reasons, { first: 1, elapsed: 19, window: 40 });
  });

  it('decides each ping as decideWindow does against the last admitted one (a hand-written loop agrees)', function () {
    let seed = 7;
    const random = (): number => ((seed = (seed * 16807) % 2147483647) / 2147483647);
    const pings: Ping[] = [];
    for (let i = 0; i < 3000; i++) {
      const asset = Math.floor(random() * 12);
      pings.push({ assetId: `a${asset}`, t: T0 + i * 1000 + Math.floor(random() * 4000) - 2000, lat: 52 + asset * 0.01 + random() * 0.0008, lon: 13 + random() * 0.0008 });
    }
    const settings = { ...RULE, minSeconds: 20, minMetres: 30 };
    const cell = decideAll(columnsOf(pings), settings);
    // The reference: a bare loop of the rule and the baseline it keeps.
    const baselines = new Map<string, WindowBaseline>();
    let admitted = 0;
    for (const ping of pings) {
      const verdict = decideWindow(baselines.get(ping.assetId), ping, settings, Infinity);
      if (verdict.admit) {
        admitted++;
        baselines.set(ping.assetId, baselineOf(ping));
      }
    }
    assert.equal(cell.admitted, admitted);
    assert.ok(cell.reasons.late !== undefined && cell.reasons.late > 0, 'the file has late pings, suppressed without moving the baseline');
  });

  it('forgets an asset after ttlSeconds of the file\'s own time, as a live node would', function () {
    const pings: Ping[] = [
      { assetId: 'a', t: T0, lat: 1, lon: 1 },
      { assetId: 'b', t: T0 + 7_200_000, lat: 1, lon: 1 },
      { assetId: 'a', t: T0 + 7_201_000, lat: 1, lon: 1 },
    ];
    assert.deepEqual(decideAll(columnsOf(pings), { ...RULE, ttlSeconds: 3600, minSeconds: 1e9, minMetres: 1e9 }).reasons, { first: 3 });
    assert.deepEqual(decideAll(columnsOf(pings), { ...RULE, ttlSeconds: 86_400, minSeconds: 1e9, minMetres: 1e9 }).reasons, { first: 2, window: 1 });
  });

  it('uses the arrival times of a sample for the clock guard, as the node did when it decided', function () {
    const pings: Ping[] = [{ assetId: 'a', t: T0 + 3_600_000, lat: 1, lon: 1 }];
    assert.deepEqual(decideAll(columnsOf(pings, [T0]), { ...RULE, minSeconds: 60, minMetres: 25 }).reasons, { ahead: 1 });
    assert.deepEqual(decideAll(columnsOf(pings, [T0 + 3_600_000]), { ...RULE, minSeconds: 60, minMetres: 25 }).reasons, { first: 1 });
  });

  it('reads the lists of the command and the sidebar alike: sorted, each once, bounded', function () {
    assert.deepEqual(parseList('60, 10,30,10'), { ok: true, values: [10, 30, 60] });
    assert.deepEqual(parseList([5, '2.5']), { ok: true, values: [2.5, 5] });
    assert.deepEqual(parseList('10,-1'), { ok: false, problem: 'notPositive', value: '-1' });
    assert.deepEqual(parseList('10,abc'), { ok: false, problem: 'notPositive', value: 'abc' });
    assert.deepEqual(parseList('1e400'), { ok: false, problem: 'notPositive', value: '1e400' });
    assert.deepEqual(parseList(''), { ok: false, problem: 'notPositive', value: '' });
    assert.deepEqual(parseList([]), { ok: false, problem: 'empty', value: '' });
    assert.deepEqual(parseList(Array.from({ length: 21 }, (_, i) => i + 1)), { ok: false, problem: 'tooMany', value: '21' });
    assert.deepEqual(withCurrent({ seconds: [10, 30], metres: [5] }, 20, 5), { seconds: [10, 20, 30], metres: [5] });
  });

  it('keeps the node\'s other settings: its clock guard off when it turned it off, the default for the command', function () {
    assert.deepEqual(ruleOf({ ttlSeconds: 600 }), { ttlSeconds: 600, maxAssets: 100_000, maxAheadSeconds: 300, noFix: true });
    assert.deepEqual(nodeRule({ ttlSeconds: 600, maxAssets: 50, minSeconds: 60, minMetres: 25, minHeadingDegrees: 30 }), { ttlSeconds: 600, maxAssets: 50, minHeadingDegrees: 30 });
    assert.deepEqual(nodeRule({ ttlSeconds: 600, maxAssets: 100_000, minSeconds: 60, minMetres: 25, maxAheadSeconds: 120 }), { ttlSeconds: 600, maxAssets: 100_000, maxAheadSeconds: 120 });
  });

  describe('issue 29: every guard of the node, and value mode', function () {
    it('runs the node\'s guards: no-fix and poor-fix as read, jumps with the candidate the store keeps', function () {
      const pings: Ping[] = [
        { assetId: 'a', t: T0, lat: 52.5, lon: 13.4 },
        { assetId: 'a', t: T0 + 10_000, lat: 0, lon: 0, fix: NO_FIX },
        { assetId: 'a', t: T0 + 20_000, lat: 52.5, lon: 13.4, fix: POOR_FIX },
        { assetId: 'a', t: T0 + 30_000, lat: 52.6, lon: 13.4 },
        { assetId: 'a', t: T0 + 40_000, lat: 52.6 + 100 * METRE, lon: 13.4 },
        { assetId: 'a', t: T0 + 50_000, lat: 52.6 + 200 * METRE, lon: 13.4 },
      ];
      const columns = columnsOf(pings);
      assert.deepEqual(decideAll(columns, { ...RULE, minSeconds: 60, minMetres: 25, maxSpeedKmh: 150 }).reasons, { first: 1, 'no-fix': 1, 'poor-fix': 1, jump: 2, relocated: 1 });
      assert.deepEqual(decideAll(columns, { ...RULE, minSeconds: 60, minMetres: 25 }).reasons, { first: 1, 'no-fix': 1, 'poor-fix': 1, moved: 3 }, 'no jump guard');
      const seen: string[] = [];
      decideEach(columns, { ...RULE, minSeconds: 60, minMetres: 25, maxSpeedKmh: 150 }, (outcome, i) => seen.push(`${i} ${outcome.reason}`));
      assert.deepEqual(seen, ['0 first', '1 no-fix', '2 poor-fix', '3 jump', '4 jump', '5 relocated']);
    });

    it('makes a value-mode grid Heartbeat × Deadband, and carries the values', function () {
      const pings: Ping[] = [40, 41, 42, 46, 46].map((value, i) => ({ assetId: 'bin', t: T0 + i * 900_000, lat: 0, lon: 0, value }));
      const rule = { ...RULE, mode: 'value' as const };
      const cells = runGrid(columnsOf(pings), { seconds: [21_600], metres: [25], deadbands: [1, 5, 10] }, rule);
      assert.deepEqual(
        cells.map((c) => [c.minSeconds, c.deadband, c.minMetres, c.admitted, c.reasons]),
        [
          [21_600, 1, undefined, 4, { first: 1, changed: 3, unchanged: 1 }],
          [21_600, 5, undefined, 2, { first: 1, changed: 1, unchanged: 3 }],
          [21_600, 10, undefined, 1, { first: 1, unchanged: 4 }],
        ],
      );
      assert.deepEqual(cellSettings({ seconds: [60], metres: [25] }, rule).map((s) => s.deadband), DEFAULT_DEADBANDS, 'the default deadbands');
      assert.equal(whatIf(columnsOf(pings), { spec: { seconds: [60], metres: [25] }, rule, heartbeatSeconds: 60 }).jitter, null, 'a reading has no parked jitter');
    });

    it('takes every guard and the mode from a node\'s settings, and gives reading its part', function () {
      const node = {
        ttlSeconds: 600,
        maxAssets: 50,
        noFix: true,
        minSatellites: 4,
        maxHdop: 2.5,
        maxSpeedKmh: 150,
        relocateAfterSeconds: 900,
        relocateAfterPings: 2,
        mode: 'value' as const,
        deadband: 5,
        deadbandPercent: true,
      };
      const rule = nodeRule({ ...node, minSeconds: 60, minMetres: 25 });
      assert.deepEqual(rule, node);
      assert.deepEqual(readRuleOf(rule), { mode: 'value', noFix: true, minSatellites: 4, maxHdop: 2.5 });
      assert.deepEqual(nodeRule({ ttlSeconds: 600, maxAssets: 100_000, minSeconds: 60, minMetres: 25 }), { ttlSeconds: 600, maxAssets: 100_000 }, 'a node without them has them off');
      assert.deepEqual(ruleOf({ ttlSeconds: 600, noFix: false }), { ttlSeconds: 600, maxAssets: 100_000, maxAheadSeconds: 300 }, 'the command, no-fix turned off');
      assert.deepEqual(ruleOf({ ttlSeconds: 600, maxSpeedKmh: 150, mode: 'value', deadbandPercent: true }), { ttlSeconds: 600, maxAssets: 100_000, maxAheadSeconds: 300, noFix: true, maxSpeedKmh: 150, mode: 'value', deadbandPercent: true }, 'the command\'s guards and mode');
      assert.deepEqual(withCurrent({ seconds: [60], metres: [5], deadbands: [1, 10] }, 60, 5, 5), { seconds: [60], metres: [5], deadbands: [1, 5, 10] });
      assert.deepEqual(withCurrent({ seconds: [60], metres: [5] }, 60, 5, 3).deadbands, [1, 2, 3, 5, 10, 20]);
    });

    it('reads an upload with the node\'s own rule: its mode and its fix guards', function () {
      const text = new TextEncoder().encode(`id,ts,lat,lon,value\nb,2026-07-16T09:00:00Z,0,0,40\nb,2026-07-16T09:15:00Z,0,0,46\n`);
      const replies: Reply[] = [];
      const request = (rule: GridRule): WhatIfJob => ({ kind: 'what-if', input: { text: text.slice(), maxPings: 10 }, fields: {}, request: { spec: { seconds: [3600], metres: [25], deadbands: [5] }, rule, heartbeatSeconds: 60 } });
      runJob(request({ ttlSeconds: 3600, maxAssets: 10, mode: 'value' }), (r) => replies.push(r));
      runJob(request({ ttlSeconds: 3600, maxAssets: 10, noFix: true }), (r) => replies.push(r));
      const cells = replies.map((r) => (r.kind === 'what-if' ? r.result.cells[0]?.reasons : r));
      assert.deepEqual(cells, [{ first: 1, changed: 1 }, { 'no-fix': 2 }]);
    });
  });
});
