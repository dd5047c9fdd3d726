/**
 * tune/grid: the what-if runs the sliding-window node's own store
 * (stores/memory-window-store) over columns of pings, once per Heartbeat ×
 * Movement pair, with the node's clock: the arrival times of a node's
 * sample, or the latest ping time of a file.
 */
import assert from 'node:assert/strict';
import { baselineOf, decideWindow, type Ping, type WindowBaseline } from '../../../src/core/window/sliding-window';
import { decideAll, runGrid } from '../../../src/tune/grid';
import { nodeRule, parseList, ruleOf, withCurrent } from '../../../src/tune/grid-spec';
import { PingColumnsBuilder, type PingColumns } from '../../../src/core/window/ping-columns';

const T0 = Date.parse('2026-07-16T09:00:00Z');
/** About 1.1 m of latitude. */
const METRE = 0.00001;

function columnsOf(pings: Ping[], arrivals?: number[]): PingColumns {
  const builder = new PingColumnsBuilder();
  pings.forEach((p, i) => builder.add({ heading: NaN, accuracy: 0, events: 0, ...p }, arrivals?.[i] ?? NaN));
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
    assert.deepEqual(ruleOf({ ttlSeconds: 600 }), { ttlSeconds: 600, maxAssets: 100_000, maxAheadSeconds: 300 });
    assert.deepEqual(nodeRule({ ttlSeconds: 600, maxAssets: 50, minSeconds: 60, minMetres: 25, minHeadingDegrees: 30 }), { ttlSeconds: 600, maxAssets: 50, minHeadingDegrees: 30 });
    assert.deepEqual(nodeRule({ ttlSeconds: 600, maxAssets: 100_000, minSeconds: 60, minMetres: 25, maxAheadSeconds: 120 }), { ttlSeconds: 600, maxAssets: 100_000, maxAheadSeconds: 120 });
  });
});

