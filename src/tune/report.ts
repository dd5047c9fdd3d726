import { REASON_ORDER } from '../core/window/window-reasons';
import { DEFAULT_RELOCATE_PINGS, RELOCATE_HEARTBEATS, type WindowMode } from '../core/window/sliding-window';
import type { Translate } from './catalog';
import { secondAxis, type GridCell, type GridRule } from './grid';
import type { ReadSummary } from './jobs';
import { requiredRoles, ROLE_OPTIONS, type Role } from './file-columns';
import { MAX_REPORTED_BAD_ROWS } from './ping-file';
import type { WhatIfResult } from './what-if';

/**
 * The what-if's answer as the dedup-tune command prints it: a table for
 * people, CSV for spreadsheets (exactly the columns
 * minSeconds,minMetres,received,admitted,suppressed,admittedFraction, one
 * row per cell, Heartbeat first; in value mode deadband for minMetres),
 * JSON for programs.
 */
export const CSV_COLUMNS = ['minSeconds', 'minMetres', 'received', 'admitted', 'suppressed', 'admittedFraction'] as const;
export const CSV_VALUE_COLUMNS = ['minSeconds', 'deadband', 'received', 'admitted', 'suppressed', 'admittedFraction'] as const;

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

export function toCsv(cells: readonly GridCell[], mode: WindowMode = 'position'): string {
  const rows = cells.map((c) => [c.minSeconds, secondOf(c), c.received, c.admitted, c.suppressed, fraction(c.admittedFraction)].join(','));
  return `${(mode === 'value' ? CSV_VALUE_COLUMNS : CSV_COLUMNS).join(',')}\n${rows.join('\n')}\n`;
}

/** A cell's place on the second axis: its Movement, or its Deadband. */
function secondOf(cell: GridCell): number {
  return cell.deadband ?? cell.minMetres ?? 0;
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
      ...(report.rule.mode === 'value' ? { deadbands: secondAxis(result.spec, report.rule) } : { metres: result.spec.metres }),
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
  lines.push(...readLines(read, t, report.rule));
  const rule = report.rule;
  lines.push(t('cli.table.rule', { ttl: thousands(rule.ttlSeconds), maxAssets: thousands(rule.maxAssets) }));
  lines.push(...ruleLines(rule, t));
  lines.push('');
  const value = rule.mode === 'value';
  const second = secondAxis(result.spec, rule);
  const label = (x: number): string => (value ? t(rule.deadbandPercent === true ? 'cli.table.deadbandPercent' : 'cli.table.deadband', { deadband: x }) : t('cli.table.metres', { metres: x }));
  lines.push(t(value ? 'cli.table.headingValue' : 'cli.table.heading'));
  const header = [t('cli.table.corner'), ...second.map(label)];
  const rows = result.spec.seconds.map((s) => [
    t('cli.table.seconds', { seconds: s }),
    ...second.map((x) => {
      const cell = result.cells.find((c) => c.minSeconds === s && secondOf(c) === x);
      return cell === undefined ? '' : `${(cell.admittedFraction * 100).toFixed(1)}%`;
    }),
  ]);
  lines.push(...aligned(header, rows));
  lines.push('');
  lines.push(t('cli.table.reasons'));
  const reasons = REASON_ORDER[value ? 'value' : 'position'].filter((reason) => result.cells.some((c) => (c.reasons[reason] ?? 0) > 0));
  const reasonHeader = [t('cli.table.corner'), t(value ? 'cli.table.deadbandColumn' : 'cli.table.movementColumn'), ...reasons];
  const reasonRows = result.cells.map((c) => [t('cli.table.seconds', { seconds: c.minSeconds }), label(secondOf(c)), ...reasons.map((reason) => thousands(c.reasons[reason] ?? 0))]);
  lines.push(...aligned(reasonHeader, reasonRows, 2));
  const j = result.jitter;
  if (j !== null) {
    lines.push('');
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
  }
  if (read.badRows > 0) lines.push('', ...badRowLines(read, t));
  return `${lines.join('\n')}\n`;
}

/** Rows under a header, the first `left` columns to the left, the rest (numbers) to the right. */
function aligned(header: string[], rows: string[][], left = 1): string[] {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] as string).length)));
  const format = (row: string[]): string => row.map((value, i) => (i < left ? value.padEnd(widths[i] as number) : value.padStart(widths[i] as number))).join('  ');
  return [format(header), ...rows.map(format)];
}

/** The rules besides the grid's two that the what-if ran with: value mode, the fix's quality, the jump guard. */
export function ruleLines(rule: GridRule, t: Translate): string[] {
  const lines: string[] = [];
  if (rule.mode === 'value') lines.push(t(rule.deadbandPercent === true ? 'cli.table.valueModePercent' : 'cli.table.valueMode'));
  else {
    const fix: string[] = [];
    if (rule.noFix === true) fix.push(t('cli.table.guardNoFix'));
    if (rule.minSatellites !== undefined) fix.push(t('cli.table.guardSatellites', { count: rule.minSatellites }));
    if (rule.maxHdop !== undefined) fix.push(t('cli.table.guardHdop', { hdop: rule.maxHdop }));
    if (fix.length > 0) lines.push(t('cli.table.guardsFix', { guards: fix.join(', ') }));
    if ((rule.maxSpeedKmh ?? 0) > 0) {
      const seconds = rule.relocateAfterSeconds;
      lines.push(
        t(seconds === undefined ? 'cli.table.guardSpeedHeartbeats' : 'cli.table.guardSpeed', {
          speed: rule.maxSpeedKmh ?? 0,
          seconds: seconds ?? '',
          heartbeats: RELOCATE_HEARTBEATS,
          pings: rule.relocateAfterPings ?? DEFAULT_RELOCATE_PINGS,
        }),
      );
    }
  }
  return lines;
}

/**
 * How the file was read: the column of each role (and whether it was named
 * or recognised), the zone of times without one, and whether the rows were
 * put in time order.
 */
export function readLines(read: ReadSummary, t: Translate, rule: Pick<GridRule, 'mode' | 'noFix' | 'minSatellites' | 'maxHdop'> = {}): string[] {
  const value = rule.mode === 'value';
  // A fix column is named when it was read; satellites and HDOP also when their limit is set
  // but the file has none (the limit then judges nothing). No validity column is the usual
  // case, and the no-fix guard still knows 0,0.
  const judged: Partial<Record<Role, boolean>> = { valid: rule.noFix === true, satellites: rule.minSatellites !== undefined, hdop: rule.maxHdop !== undefined };
  const fixRoles = value ? [] : (['valid', 'satellites', 'hdop'] as const).filter((role) => judged[role] === true && (read.mapping[role] !== undefined || role !== 'valid'));
  const roles = [...requiredRoles(rule.mode), ...fixRoles.filter((role) => read.mapping[role] !== undefined)];
  const name = (role: Role): string => read.mapping[role] ?? t('cli.table.noColumn');
  let columns = value
    ? t('cli.table.columnsValue', { asset: name('assetId'), time: name('time'), value: name('value') })
    : t('cli.table.columns', { asset: name('assetId'), time: name('time'), lat: name('lat'), lon: name('lon') });
  if (fixRoles.length > 0) columns += t('cli.table.columnsFix', { columns: fixRoles.map((role) => t(`cli.table.role.${role}`, { column: name(role) })).join(', ') });
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
