/**
 * What counting for Prometheus adds to the write every decision makes to
 * its node's telemetry record (src/telemetry), in µs per message: the same reports timed with the
 * counting on and off, alternating in one run so that both see the same
 * machine. The budget is 0.2 µs per message. The part `metrics` of npm run
 * bench (BENCH_ONLY=metrics), its lines in bench/results.md; alone (no
 * Redis, no build: docs/metrics.md quotes it):
 *
 *   node --expose-gc --require tsx/cjs bench/metrics-cost.ts [messages]
 */
import { prepareReadings, settleReadings, type Prepared, type Settled } from '../src/core/sensor/burst';
import { CLAIM } from '../src/core/sensor/seen-codes';
import type { Ping } from '../src/core/window/sliding-window';
import type { WindowOutcome } from '../src/stores/types';
import { countReasons } from '../src/telemetry/decision-slots';
import { closeRun, sensorTelemetry, windowTelemetry } from '../src/telemetry/records';
import type { SensorTelemetry } from '../src/telemetry/sensor-telemetry';
import type { WindowTelemetry } from '../src/telemetry/window-telemetry';
import { answerParent, gc } from './runtime';
import { median } from './stats';

export interface MetricsCostJob {
  /** Reports per timing. */
  messages: number;
}

export interface MetricsCostRow {
  report: string;
  /** µs per message, median of ROUNDS timings each. */
  without: number;
  with: number;
}

export interface MetricsCostResult {
  messages: number;
  rounds: number;
  rows: MetricsCostRow[];
}

const ROUNDS = 7;
const ASSETS = 5_000;
const REASONS = ['first', 'elapsed', 'moved', 'window', 'window', 'late'] as const;

function windowNode(): WindowTelemetry {
  return windowTelemetry({
    id: 'bench-window',
    type: 'sliding-window-dedup',
    name: 'bench',
    store: 'memory',
    settings: { minSeconds: 60, minMetres: 25, ttlSeconds: 3600, maxAssets: ASSETS, eventFields: [], accuracyProperty: '' },
    sampleSize: 10_000,
  });
}

function sensorNode(): SensorTelemetry {
  return sensorTelemetry({
    id: 'bench-sensor',
    type: 'sensor-reconnect-dedup',
    name: 'bench',
    store: 'memory',
    settings: { ttlSeconds: 3600, maxKeys: 100_000, confirm: false, leaseSeconds: 60, keyMode: 'reading', outputMode: 'burst' },
  });
}

// Made before timing: only the reports are timed, not the making of their arguments.
const pings: Ping[] = [];
const outcomes: WindowOutcome[] = [];
for (let i = 0; i < 4096; i++) {
  pings.push({ assetId: `van-${i % ASSETS}`, t: 1_700_000_000_000 + i * 1000, lat: 50 + i / 1e5, lon: 8, heading: NaN, accuracy: 0, events: 0, retry: false });
  const reason = REASONS[i % REASONS.length] as (typeof REASONS)[number];
  const admit = reason !== 'window' && reason !== 'late';
  outcomes.push({ admit, reason, dtSeconds: 10, distanceMetres: 5, headingChange: null, valueChange: null, accepted: i, suppressed: i >> 1 });
}
const readings: { prepared: Prepared; settled: Settled }[] = [];
for (let i = 0; i < 4096; i++) {
  const prepared = prepareReadings([i], false, (raw) => ({ ok: true, key: `bin-${i % 1000}:${String(raw)}:00`, group: `bin-${i % 1000}` }));
  readings.push({ prepared, settled: settleReadings(prepared, [i % 3 === 0 ? CLAIM.duplicate : CLAIM.admitted]) });
}

function timeWindow(record: WindowTelemetry, n: number): number {
  const start = process.hrtime.bigint();
  for (let i = 0; i < n; i++) record.decided(pings[i & 4095] as Ping, outcomes[i & 4095] as WindowOutcome);
  return Number(process.hrtime.bigint() - start) / 1000 / n;
}

function timeSensor(record: SensorTelemetry, n: number): number {
  const start = process.hrtime.bigint();
  for (let i = 0; i < n; i++) {
    const r = readings[i & 4095] as { prepared: Prepared; settled: Settled };
    record.decided(r.prepared, r.settled);
  }
  return Number(process.hrtime.bigint() - start) / 1000 / n;
}

function measure(report: string, messages: number, time: (n: number) => number): MetricsCostRow {
  // Warm up both paths so that neither is timed while being optimised.
  for (const on of [true, false, true]) {
    countReasons(on);
    time(messages / 4);
  }
  const withMetrics: number[] = [];
  const without: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    for (const on of round % 2 === 0 ? [true, false] : [false, true]) {
      countReasons(on);
      gc();
      (on ? withMetrics : without).push(time(messages));
    }
  }
  countReasons(true);
  return { report, without: median(without), with: median(withMetrics) };
}

export function metricsCost(job: MetricsCostJob): MetricsCostResult {
  const window = windowNode();
  const sensor = sensorNode();
  const windowRun = window.start(() => ({ kind: 'memory' }));
  const sensorRun = sensor.start(() => ({ kind: 'memory' }));
  try {
    const rows = [measure('sliding-window report (windowDecided)', job.messages, (n) => timeWindow(window, n)), measure('sensor report, one reading', job.messages, (n) => timeSensor(sensor, n))];
    return { messages: job.messages, rounds: ROUNDS, rows };
  } finally {
    closeRun(window, windowRun, true);
    closeRun(sensor, sensorRun, true);
  }
}

/** What the part prints, alone and in bench/results.md. */
export function metricsCostLines(r: MetricsCostResult): string[] {
  return [
    `metrics cost: ${r.messages.toLocaleString('en')} reports per timing, median of ${r.rounds}, alternating on/off`,
    ...r.rows.map((row) => `${row.report.padEnd(34)} without metrics ${row.without.toFixed(4)} µs/msg   with metrics ${row.with.toFixed(4)} µs/msg   added ${(row.with - row.without).toFixed(4)} µs/msg (budget 0.2)`),
  ];
}

if (require.main === module) {
  const arg = process.argv[2] ?? '1000000';
  if (arg.startsWith('{')) answerParent(Promise.resolve().then(() => metricsCost(JSON.parse(arg) as MetricsCostJob)));
  else console.log(metricsCostLines(metricsCost({ messages: Number(arg) })).join('\n'));
}
