/**
 * What a system run shows, per fault: the tables the test prints and the
 * numbers it asserts on. A reading is `device:seq`, a ping `asset|ts`.
 */
import { greatCircleMetres } from '../support/geodesy';
import type { RunResult } from './system-run';

/** A reading handed to the broker this long before the snapshot had time to reach the database. */
const SETTLE_MS = 3000;
/** The pack's distance is within 0.5 % of the great circle (it is the haversine: core/window/geo). */
const DISTANCE_TOLERANCE = 0.995;

export interface ReadingRow {
  fault: string;
  note: string;
  made: number;
  copies: number;
  inserted: number;
  insertedTwice: number;
  /** Missing just before the replay, by where they were lost. */
  missingNeverReached: number;
  missingInKilled: number;
  missingCaught: number;
  missingOther: number;
  /** Missing after the replay, at the end of the run. */
  lost: number;
}

export interface PingRow {
  fault: string;
  made: number;
  copies: number;
  reached: number;
  admitted: number;
  admittedTwice: number;
  neverReached: number;
  diedInKilled: number;
  undecidedElsewhere: number;
  caught: number;
  violations: number;
}

export interface Report {
  readings: ReadingRow[];
  pings: PingRow[];
  /** Examples of anything that must not happen, for the assertion messages. */
  problems: string[];
  text: string;
}

const key = (device: string | undefined, seq: number | undefined): string => `${device}:${seq}`;

function table(header: string[], rows: (string | number)[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => String(r[i]).length)));
  const line = (cells: (string | number)[]): string => `| ${cells.map((c, i) => (i === 0 ? String(c).padEnd(widths[i] as number) : String(c).padStart(widths[i] as number))).join(' | ')} |`;
  return [line(header), `|${widths.map((w, i) => (i === 0 ? '-'.repeat(w + 2) : `${'-'.repeat(w + 1)}:`)).join('|')}|`, ...rows.map(line)].join('\n');
}

export function report(run: RunResult): Report {
  const problems: string[] = [];
  const doubles: string[] = [];
  /** A few readings of each kind of loss before a replay, with what happened to them. */
  const examples = new Map<string, string[]>();
  const losses: string[] = [];
  /** What each instance did with a reading, in record order, for the explanations. */
  const history = new Map<string, { text: string; at?: number }[]>();
  /** A reading's history, its times counted from `from` (the start of its fault). */
  const told = (k: string, from: number): string =>
    (history.get(k) ?? [{ text: 'reached no flow' }]).map((h) => (h.at === undefined ? h.text : `${h.text} at ${((h.at - from) / 1000).toFixed(2)} s`)).join('; ');
  /** `device:seq` -> instance -> when a copy first reached its flow */
  const reachedBy = new Map<string, Map<string, number>>();
  const caught = new Set<string>();
  const pingReached = new Map<string, Set<string>>();
  const pingDecided = new Set<string>();
  const pingCaught = new Set<string>();
  const admittedCount = new Map<string, number>();
  const admittedByAsset = new Map<string, { t: number; lat: number; lon: number; why: string }[]>();
  for (const r of run.records) {
    if (r.d !== undefined && (r.k === 'r' || r.k === 'm' || r.k === 'x' || r.k === 'e')) {
      const k = key(r.d, r.s);
      let list = history.get(k);
      if (list === undefined) history.set(k, (list = []));
      const what = { r: 'reached', m: 'admitted', x: 'suppressed', e: 'caught' }[r.k];
      list.push({ text: `${r.n} ${what}${r.why ? ` (${r.why})` : ''}${r.m ? ` (${r.m})` : ''}`, ...(r.at === undefined ? {} : { at: r.at }) });
    }
    if (r.k === 'r') {
      const k = key(r.d, r.s);
      let first = reachedBy.get(k);
      if (first === undefined) reachedBy.set(k, (first = new Map<string, number>()));
      first.set(r.n, Math.min(first.get(r.n) ?? Infinity, r.at ?? 0));
    } else if (r.k === 'e') {
      if (r.d !== undefined) caught.add(key(r.d, r.s));
      if (r.a !== undefined) pingCaught.add(`${r.a}|${r.t}`);
    } else if (r.k === 'p') {
      const k = `${r.a}|${r.t}`;
      let set = pingReached.get(k);
      if (set === undefined) pingReached.set(k, (set = new Set()));
      set.add(r.n);
    } else if (r.k === 'a' || r.k === 's') {
      const k = `${r.a}|${r.t}`;
      pingDecided.add(k);
      if (r.k === 'a') {
        admittedCount.set(k, (admittedCount.get(k) ?? 0) + 1);
        let list = admittedByAsset.get(String(r.a));
        if (list === undefined) admittedByAsset.set(String(r.a), (list = []));
        list.push({ t: Date.parse(String(r.t)), lat: Number(r.lat), lon: Number(r.lon), why: String(r.why) });
      }
    }
  }

  // Each asset's admitted pings in time order: each at least the heartbeat
  // or the movement from the one before.
  const violationsOf = new Map<string, number>();
  const { minSeconds, minMetres } = run.options;
  for (const [asset, list] of admittedByAsset) {
    list.sort((a, b) => a.t - b.t);
    for (let i = 1; i < list.length; i++) {
      const a = list[i - 1] as (typeof list)[number];
      const b = list[i] as (typeof list)[number];
      if (a.t === b.t) continue; // a double admission, counted as such
      const dt = (b.t - a.t) / 1000;
      const metres = greatCircleMetres(a.lat, a.lon, b.lat, b.lon);
      if (dt < minSeconds && metres < minMetres * DISTANCE_TOLERANCE) {
        const t = new Date(b.t).toISOString();
        violationsOf.set(`${asset}|${t}`, 1);
        if (problems.length < 40) problems.push(`${asset} admitted ${t} (${b.why}) ${dt.toFixed(1)} s and ${metres.toFixed(1)} m after the one before`);
      }
    }
  }

  const readings: ReadingRow[] = run.windows.map((w, k) => {
    const row: ReadingRow = { fault: w.fault, note: w.note, made: 0, copies: run.readingCopies[k] ?? 0, inserted: 0, insertedTwice: 0, missingNeverReached: 0, missingInKilled: 0, missingCaught: 0, missingOther: 0, lost: 0 };
    for (const made of run.readings) {
      if (made.window !== k) continue;
      row.made++;
      const k_ = key(made.reading.device_id, made.reading.seq);
      if ((run.inserted.get(k_) ?? 0) > 0) row.inserted++;
      else {
        row.lost++;
        losses.push(`reading ${k_} (window ${k + 1}, made ${((made.at - w.from) / 1000).toFixed(1)} s after the fault began) is not in the database after its replay: ${told(k_, w.from)}`);
      }
      const twice = Math.max(0, (run.attempts.get(k_) ?? 0) - 1);
      row.insertedTwice += twice;
      if (twice > 0) {
        const attempts = (run.doubleAttempts.get(k_) ?? []).map(([n, at]) => `${n} at ${((at - w.from) / 1000).toFixed(2)} s`).join(', ');
        doubles.push(`reading ${k_} (window ${k + 1}, made ${((made.at - w.from) / 1000).toFixed(2)} s after the fault began) inserted ${twice + 1} times: ${attempts}; ${told(k_, w.from)}`);
      }
      if (made.at < w.snapshotAt - SETTLE_MS && !w.beforeReplay.has(k_)) {
        // Only what reached a flow before the snapshot: the replay's copy comes after it.
        const who = new Set([...(reachedBy.get(k_) ?? new Map<string, number>())].filter(([, at]) => at < w.snapshotAt).map(([n]) => n));
        let kind: string;
        if (who.size === 0) kind = 'never reached a flow';
        else if (caught.has(k_)) kind = 'caught';
        else if (w.fault === 'kill -9 a Node-RED' && who.has(run.killed)) kind = 'reached the killed instance';
        else kind = 'other';
        if (kind === 'never reached a flow') row.missingNeverReached++;
        else if (kind === 'caught') row.missingCaught++;
        else if (kind === 'reached the killed instance') row.missingInKilled++;
        else row.missingOther++;
        const list = examples.get(`${w.fault}: ${kind}`) ?? [];
        if (list.length < 3) list.push(`${k_} made ${((made.at - w.from) / 1000).toFixed(2)} s after the fault began: ${told(k_, w.from)}; first INSERT ${run.firstAttempt.has(k_) ? `at ${(((run.firstAttempt.get(k_) as number) - w.from) / 1000).toFixed(2)} s` : 'never'}`);
        examples.set(`${w.fault}: ${kind}`, list);
      }
    }
    return row;
  });

  /** When the pings that never reached a flow were made, in seconds from the start of their fault. */
  const neverReachedSpan = new Map<string, [number, number]>();
  const pings: PingRow[] = run.windows.map((w, k) => {
    const row: PingRow = { fault: w.fault, made: 0, copies: run.pingCopies[k] ?? 0, reached: 0, admitted: 0, admittedTwice: 0, neverReached: 0, diedInKilled: 0, undecidedElsewhere: 0, caught: 0, violations: 0 };
    for (const p of run.pings) {
      if (p.window !== k) continue;
      row.made++;
      const k_ = `${p.assetId}|${p.ts}`;
      const who = pingReached.get(k_);
      const n = admittedCount.get(k_) ?? 0;
      if (n > 0) row.admitted++;
      if (n > 1) {
        row.admittedTwice += n - 1;
        if (problems.length < 40) problems.push(`ping ${k_} admitted ${n} times`);
      }
      if (violationsOf.has(k_)) row.violations++;
      if (pingCaught.has(k_)) row.caught++;
      if (who === undefined) {
        row.neverReached++;
        const offset = (p.t - w.from) / 1000;
        const span = neverReachedSpan.get(w.fault) ?? [offset, offset];
        neverReachedSpan.set(w.fault, [Math.min(span[0], offset), Math.max(span[1], offset)]);
        continue;
      }
      row.reached++;
      if (pingDecided.has(k_) || pingCaught.has(k_)) continue;
      if (who.has(run.killed)) row.diedInKilled++;
      else {
        row.undecidedElsewhere++;
        if (problems.length < 40) problems.push(`ping ${k_} reached ${[...who].join(',')} and was never decided`);
      }
    }
    return row;
  });

  const total = <T>(rows: T[], pick: (r: T) => number): number => rows.reduce((s, r) => s + pick(r), 0);
  const readingTable = table(
    ['fault (window)', 'readings made', 'copies published', 'inserted', 'inserted twice', 'missing before replay: never reached a flow before it', 'reached the killed instance', 'caught (store error)', 'other', 'lost after replay'],
    [
      ...readings.map((r) => [r.fault, r.made, r.copies, r.inserted, r.insertedTwice, r.missingNeverReached, r.missingInKilled, r.missingCaught, r.missingOther, r.lost]),
      ['total', total(readings, (r) => r.made), total(readings, (r) => r.copies), total(readings, (r) => r.inserted), total(readings, (r) => r.insertedTwice), total(readings, (r) => r.missingNeverReached), total(readings, (r) => r.missingInKilled), total(readings, (r) => r.missingCaught), total(readings, (r) => r.missingOther), total(readings, (r) => r.lost)],
    ],
  );
  const pingTable = table(
    ['fault (window)', 'pings made', 'copies published', 'reached a flow', 'admitted', 'admitted twice', 'lost: never reached a flow', 'lost in the killed instance', 'undecided elsewhere', 'caught', 'heartbeat/movement violations'],
    [
      ...pings.map((r) => [r.fault, r.made, r.copies, r.reached, r.admitted, r.admittedTwice, r.neverReached, r.diedInKilled, r.undecidedElsewhere, r.caught, r.violations]),
      ['total', total(pings, (r) => r.made), total(pings, (r) => r.copies), total(pings, (r) => r.reached), total(pings, (r) => r.admitted), total(pings, (r) => r.admittedTwice), total(pings, (r) => r.neverReached), total(pings, (r) => r.diedInKilled), total(pings, (r) => r.undecidedElsewhere), total(pings, (r) => r.caught), total(pings, (r) => r.violations)],
    ],
  );
  // Admission to the first INSERT attempt: what the lease must outlast.
  const firstAdmitted = new Map<string, number>();
  let reachedUnkilled = 0;
  let reachedAll = 0;
  for (const r of run.records) {
    if (r.k === 'm' && r.at !== undefined) {
      const k = key(r.d, r.s);
      if (!firstAdmitted.has(k)) firstAdmitted.set(k, r.at);
    }
    if (r.k === 'r' || r.k === 'p') {
      reachedAll++;
      if (run.cpu.unkilled.includes(r.n)) reachedUnkilled++;
    }
  }
  const waits: number[] = [];
  for (const [k, at] of firstAdmitted) {
    const attempt = run.firstAttempt.get(k);
    if (attempt !== undefined) waits.push(attempt - at);
  }
  waits.sort((a, b) => a - b);
  const pct = (q: number): number => waits[Math.min(waits.length - 1, Math.floor(q * waits.length))] ?? NaN;
  const us = (seconds: number, n: number): string => (n > 0 ? ((seconds * 1e6) / n).toFixed(0) : 'n/a');
  const figures = [
    `Admission to INSERT (ms, ${waits.length} readings): p50 ${pct(0.5)}, p99 ${pct(0.99)}, max ${waits.at(-1) ?? NaN} (the lease is ${run.options.leaseSeconds} s)`,
    `CPU per message that reached a flow: Node-RED ${us(run.cpu.nodeRedUnkilled, reachedUnkilled)} µs (${run.cpu.unkilled.join(' + ')}, ${reachedUnkilled} messages, ${run.cpu.nodeRedUnkilled.toFixed(1)} s), Redis ${us(run.cpu.redis, reachedAll)} µs (${reachedAll} messages, ${run.cpu.redis.toFixed(1)} s), mosquitto ${us(run.cpu.broker, run.publisher.published)} µs per message published (${run.cpu.broker.toFixed(1)} s)`,
  ].join('\n');
  const notes = run.windows.map((w, k) => `  window ${k + 1}, ${w.fault}: ${w.note}`).join('\n');
  const o = run.options;
  const text = [
    `Redis ${o.redis}; ${o.fleet.bins} bins every ${o.fleet.binPeriodMs / 1000} s, ${o.fleet.vehicles} vehicles every ${o.fleet.vehiclePeriodMs / 1000} s; ${run.windows.length} windows of ${o.windowMs / 1000} s; lease ${o.leaseSeconds} s; give up after ${o.timeoutMs} ms; ${run.publisher.published} messages published, ${run.publisher.acknowledged} acknowledged by the broker, ${run.publisher.failed} failed; ${(run.elapsedMs / 1000).toFixed(0)} s in all`,
    notes,
    figures,
    '',
    'Bin readings (every bin replays its buffer at the end of each window):',
    readingTable,
    '',
    'Vehicle pings (no replay: what the broker or a killed instance dropped stays lost):',
    pingTable,
    ...[...neverReachedSpan].map(([fault, [from, to]]) => `  ${fault}: the pings that never reached a flow were made ${from.toFixed(2)} to ${to.toFixed(2)} s after the fault began`),
    '',
    'Readings missing before their replay, examples:',
    ...(examples.size === 0 ? ['  none'] : []),
    ...[...examples].flatMap(([kind, list]) => [`  ${kind}`, ...list.map((line) => `    ${line}`)]),
  ].join('\n');
  problems.unshift(...doubles.slice(0, 20), ...losses.slice(0, 20));
  return { readings, pings, problems, text };
}
