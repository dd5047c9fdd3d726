import type { Translate } from './catalog';
import type { GridCell, GridRule } from './grid';
import type { ReadSummary } from './jobs';
import { ROLE_OPTIONS, type Role } from './file-columns';
import { MAX_REPORTED_BAD_ROWS } from './ping-file';
import type { WhatIfResult } from './what-if';

/**
 * The what-if's answer as the dedup-tune command prints it: a table for
 * people, CSV for spreadsheets (exactly the columns
 * minSeconds,minMetres,received,admitted,suppressed,admittedFraction, one
 * row per cell, Heartbeat first), JSON for programs.
 */
export const CSV_COLUMNS = ['minSeconds', 'minMetres', 'received', 'admitted', 'suppressed', 'admittedFraction'] as const;

export interface Report {
  file: string;
  read: ReadSummary;
  rule: GridRule;
  result: WhatIfResult;
}

/** A fraction to six decimals, as few as needed: what CSV and JSON carry. */
export function fraction(value: number): number {
  return Number(value.toFixed(6));
}

export function toCsv(cells: readonly GridCell[]): string {
  const rows = cells.map((c) => [c.minSeconds, c.minMetres, c.received, c.admitted, c.suppressed, fraction(c.admittedFraction)].join(','));
  return `${CSV_COLUMNS.join(',')}\n${rows.join('\n')}\n`;
}

export function toJson(report: Report): string {
  const { result, read } = report;
  return `${JSON.stringify(
    {
      file: report.file,
      format: read.format,
      columns: read.mapping,
      timeZone: read.timeZone,
      zonelessTimes: read.zonelessTimes,
      reordered: read.reordered,
      rows: read.rows,
      received: result.received,
      assets: result.assets,
      badRows: read.badRows,
      firstBad: read.firstBad,
      rule: report.rule,
      seconds: result.spec.seconds,
      metres: result.spec.metres,
      cells: result.cells.map((c) => ({ ...c, admittedFraction: fraction(c.admittedFraction) })),
      jitter: result.jitter,
    },
    null,
    2,
  )}\n`;
}

const thousands = (n: number): string => n.toLocaleString('en-US');

export function toTable(report: Report, t: Translate): string {
  const { result, read } = report;
  const lines: string[] = [];
  lines.push(
    t('cli.table.summary', {
      file: report.file,
      format: read.format === 'csv' ? 'CSV' : 'JSON Lines',
      pings: thousands(result.received),
      assets: thousands(result.assets),
    }),
  );
  lines.push(...readLines(read, t));
  lines.push(t('cli.table.rule', { ttl: thousands(report.rule.ttlSeconds), maxAssets: thousands(report.rule.maxAssets) }));
  lines.push('');
  lines.push(t('cli.table.heading'));
  const corner = t('cli.table.corner');
  const header = [corner, ...result.spec.metres.map((m) => t('cli.table.metres', { metres: m }))];
  const rows = result.spec.seconds.map((s) => [
    t('cli.table.seconds', { seconds: s }),
    ...result.spec.metres.map((m) => {
      const cell = result.cells.find((c) => c.minSeconds === s && c.minMetres === m);
      return cell === undefined ? '' : `${(cell.admittedFraction * 100).toFixed(1)}%`;
    }),
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] as string).length)));
  const format = (row: string[]): string => row.map((value, i) => (i === 0 ? value.padEnd(widths[i] as number) : value.padStart(widths[i] as number))).join('  ');
  lines.push(format(header));
  for (const row of rows) lines.push(format(row));
  lines.push('');
  const j = result.jitter;
  lines.push(
    j.p95Metres === null
      ? t('cli.table.noJitter', { heartbeat: j.heartbeatSeconds })
      : t('cli.table.jitter', {
          pairs: thousands(j.parkedPairs),
          heartbeat: j.heartbeatSeconds,
          p95: j.p95Metres.toFixed(1),
          suggested: j.suggestedMetres ?? '',
        }),
  );
  if (read.badRows > 0) lines.push('', ...badRowLines(read, t));
  return `${lines.join('\n')}\n`;
}

/**
 * How the file was read: the column of each role (and whether it was named
 * or recognised), the zone of times without one, and whether the rows were
 * put in time order.
 */
export function readLines(read: ReadSummary, t: Translate): string[] {
  const roles = ['assetId', 'time', 'lat', 'lon'] as const satisfies readonly Role[];
  const name = (role: Role): string => read.mapping[role] ?? '';
  let columns = t('cli.table.columns', { asset: name('assetId'), time: name('time'), lat: name('lat'), lon: name('lon') });
  if (roles.some((role) => !read.given.includes(role))) columns += ` ${t('cli.table.recognised', { options: roles.map((role) => `--${ROLE_OPTIONS[role]}`).join(', ') })}`;
  const lines = [columns, t('cli.table.zone', { zone: read.timeZone, count: thousands(read.zonelessTimes) })];
  if (read.reordered) lines.push(t('cli.table.reordered'));
  return lines;
}

/** How many rows were bad, then the first of them named: in the table, or on stderr beside CSV and JSON. */
export function badRowLines(read: ReadSummary, t: Translate): string[] {
  return [
    t('cli.table.badRows', { count: thousands(read.badRows), max: MAX_REPORTED_BAD_ROWS }),
    ...read.firstBad.map((bad) => t('cli.table.badRow', { line: bad.line, problem: bad.problem })),
  ];
}
