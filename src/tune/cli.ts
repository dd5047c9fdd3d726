import { writeFileSync } from 'fs';
import { join } from 'path';
import { SLIDING_WINDOW_DEFAULTS } from '../core/defaults';
import type { WindowMode } from '../core/window/sliding-window';
import { loadCatalog, type Translate } from './catalog';
import { DEFAULT_DEADBANDS, type GridCell } from './grid';
import { DEFAULT_METRES, DEFAULT_SECONDS, MAX_VALUES, parseList, readRuleOf, ruleOf } from './grid-spec';
import { ROLE_OPTIONS, type ColumnChoice, type Role } from './file-columns';
import { PingFileError, readPingFile } from './ping-file';
import { badRowLines, readLines, toCsv, toJson, toTable, type Report } from './report';
import { DEFAULT_TIME_ZONE, timeZoneName } from './time-zone';
import { cores, runGridThreaded } from './threads';
import { whatIf, type WhatIfResult } from './what-if';

/**
 * dedup-tune: the what-if of the dedup sidebar for a recorded file.
 *
 *   dedup-tune FILE [--seconds 10,30,60,120,300] [--metres 5,10,25,50,100]
 *                   [--ttl 21600] [--heartbeat 60] [--format table|csv|json]
 *                   [--svg FILE] [--threads N]
 *                   [--asset COLUMN] [--time COLUMN] [--lat COLUMN] [--lon COLUMN] [--tz ZONE]
 *                   [--no-fix on|off] [--valid COLUMN] [--min-satellites N] [--satellites COLUMN]
 *                   [--max-hdop X] [--hdop COLUMN]
 *                   [--max-speed KMH] [--relocate-after SECONDS] [--relocate-pings N]
 *                   [--mode position|value] [--value COLUMN] [--deadbands 1,2,5,10,20] [--percent]
 *
 * Reads CSV with a header, or JSON Lines (tune/ping-file: the columns named
 * or recognised, times without a zone read in --tz, the pings put in time
 * order), says which columns it read, runs every Heartbeat × Movement pair
 * (in value mode, Heartbeat × Deadband) through the sliding-window node's
 * own store (tune/grid), with the node's guards as the options set them
 * (the no-fix guard on, as a new node has it), and prints what each would
 * have admitted, and why. Exit status: 0 done (bad rows are reported, not
 * fatal), 1 the file could not be read, 2 a wrong option.
 */
export interface Io {
  stdout(text: string): void;
  stderr(text: string): void;
}

const PROCESS_IO: Io = {
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
};

/** Progress goes to stderr for files of more than this many pings, every this many pings read. */
const PROGRESS_FROM = 1_000_000;
const FORMATS = ['table', 'csv', 'json'] as const;
/** The roles whose column an option names (heading and accuracy are read only by the sidebar, for a node whose rules read them). */
const COLUMN_ROLES = ['assetId', 'time', 'lat', 'lon', 'value', 'valid', 'satellites', 'hdop'] as const satisfies readonly Role[];
/** The options of the rule's guards and of value mode, each a positive number. */
const GUARD_OPTIONS = {
  'min-satellites': 'minSatellites',
  'max-hdop': 'maxHdop',
  'max-speed': 'maxSpeedKmh',
  'relocate-after': 'relocateAfterSeconds',
  'relocate-pings': 'relocateAfterPings',
} as const;
type GuardOption = keyof typeof GUARD_OPTIONS;
const OPTIONS = ['seconds', 'metres', 'deadbands', 'ttl', 'heartbeat', 'threads', 'format', 'svg', 'tz', 'mode', 'no-fix', ...Object.keys(GUARD_OPTIONS), ...COLUMN_ROLES.map((role) => ROLE_OPTIONS[role])];
/** Options that take no value. */
const FLAGS = ['percent'];
const MODES = ['position', 'value'] as const;
type Format = (typeof FORMATS)[number];

interface Options {
  file: string;
  seconds: number[];
  metres: number[];
  ttlSeconds: number;
  heartbeatSeconds: number;
  format: Format;
  svg: string | undefined;
  threads: number;
  columns: ColumnChoice;
  timeZone: string;
  mode: WindowMode;
  deadbands: number[];
  percent: boolean;
  noFix: boolean;
  guards: Partial<Record<(typeof GUARD_OPTIONS)[GuardOption], number>>;
}

class UsageError extends Error {}

/** `progressFrom`: where progress starts (PROGRESS_FROM; smaller in tests). */
export async function main(argv: readonly string[], io: Io = PROCESS_IO, progressFrom: number = PROGRESS_FROM): Promise<number> {
  const t = loadCatalog();
  let options: Options | 'help';
  try {
    options = parseArgs(argv, t);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    io.stderr(`dedup-tune: ${error.message}\n${t('cli.tryHelp')}\n`);
    return 2;
  }
  if (options === 'help') {
    io.stdout(
      `${t('cli.usage', { seconds: DEFAULT_SECONDS.join(','), metres: DEFAULT_METRES.join(','), ttl: SLIDING_WINDOW_DEFAULTS.ttlSeconds, heartbeat: SLIDING_WINDOW_DEFAULTS.minSeconds, max: MAX_VALUES, deadbands: DEFAULT_DEADBANDS.join(',') })}\n`,
    );
    return 0;
  }
  const { file } = options;
  const rule = ruleOf({
    ttlSeconds: options.ttlSeconds,
    noFix: options.noFix,
    ...options.guards,
    ...(options.mode === 'value' ? { mode: 'value', deadbandPercent: options.percent } : {}),
  });
  let read;
  try {
    const progress = { every: progressFrom, onPings: (pings: number) => io.stderr(t('cli.progress.read', { pings: pings.toLocaleString('en-US') }) + '\n') };
    read = await readPingFile(file, progress, { rule: readRuleOf(rule) }, { columns: options.columns, timeZone: options.timeZone });
  } catch (error) {
    if (!(error instanceof PingFileError)) throw error;
    io.stderr(`dedup-tune: ${t(`cli.errors.${error.code}`, { file, ...error.details, message: error.message })}\n`);
    return 1;
  }
  const { columns, ...summary } = read;
  if (options.format !== 'table') {
    // What was read goes beside CSV and JSON, on stderr: their stdout stays the data alone.
    for (const line of readLines(summary, t, rule)) io.stderr(`${line}\n`);
    if (summary.badRows > 0) for (const line of badRowLines(summary, t)) io.stderr(`${line}\n`);
  }
  const spec = { seconds: options.seconds, metres: options.metres, ...(options.mode === 'value' ? { deadbands: options.deadbands } : {}) };
  const loud = columns.size > progressFrom;
  const cells = await runGridThreaded(columns, spec, rule, {
    threads: options.threads,
    onCell: (done, total) => {
      if (loud) io.stderr(t('cli.progress.cell', { done, total }) + '\n');
    },
  });
  const result = whatIf(columns, { spec, rule, heartbeatSeconds: options.heartbeatSeconds }, cells);
  const report: Report = { file, read: summary, rule, result };
  io.stdout(options.format === 'csv' ? toCsv(cells, options.mode) : options.format === 'json' ? toJson(report) : toTable(report, t));
  if (options.svg !== undefined) writeFileSync(options.svg, svgOf(result, t, options.mode === 'value' ? options.percent : undefined));
  return 0;
}

function parseArgs(argv: readonly string[], t: Translate): Options | 'help' {
  const files: string[] = [];
  const options: Omit<Options, 'file'> = {
    seconds: DEFAULT_SECONDS,
    metres: DEFAULT_METRES,
    ttlSeconds: SLIDING_WINDOW_DEFAULTS.ttlSeconds,
    heartbeatSeconds: SLIDING_WINDOW_DEFAULTS.minSeconds,
    format: 'table',
    svg: undefined,
    threads: cores(),
    columns: {},
    timeZone: DEFAULT_TIME_ZONE,
    mode: 'position',
    deadbands: [...DEFAULT_DEADBANDS],
    percent: false,
    noFix: SLIDING_WINDOW_DEFAULTS.noFix,
    guards: {},
  };
  let modeGiven = false;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    if (arg === '-h' || arg === '--help') return 'help';
    if (!arg.startsWith('--') || arg === '--') {
      files.push(arg);
      continue;
    }
    const eq = arg.indexOf('=');
    const name = eq === -1 ? arg.slice(2) : arg.slice(2, eq);
    if (FLAGS.includes(name) && eq === -1) {
      options.percent = true;
      continue;
    }
    if (!OPTIONS.includes(name)) throw new UsageError(t('cli.errors.unknownOption', { option: arg }));
    let value: string;
    if (eq !== -1) value = arg.slice(eq + 1);
    else {
      const next = argv[++i];
      if (next === undefined) throw new UsageError(t('cli.errors.missingValue', { option: `--${name}` }));
      value = next;
    }
    switch (name) {
      case 'seconds':
      case 'metres':
      case 'deadbands':
        options[name] = list(name, value, t);
        break;
      case 'mode':
        if (!(MODES as readonly string[]).includes(value)) throw new UsageError(t('cli.errors.mode', { value, modes: MODES.join(', ') }));
        options.mode = value as WindowMode;
        modeGiven = true;
        break;
      case 'no-fix':
        if (value !== 'on' && value !== 'off') throw new UsageError(t('cli.errors.onOff', { option: '--no-fix', value }));
        options.noFix = value === 'on';
        break;
      case 'min-satellites':
      case 'max-hdop':
      case 'max-speed':
      case 'relocate-after':
      case 'relocate-pings': {
        const number = positive(`--${name}`, value, t);
        if (name === 'relocate-pings' && !Number.isInteger(number)) throw new UsageError(t('cli.errors.whole', { option: `--${name}`, value }));
        options.guards[GUARD_OPTIONS[name]] = number;
        break;
      }
      case 'ttl':
        options.ttlSeconds = positive('--ttl', value, t);
        break;
      case 'heartbeat':
        options.heartbeatSeconds = positive('--heartbeat', value, t);
        break;
      case 'threads':
        options.threads = Math.floor(positive('--threads', value, t));
        break;
      case 'format':
        if (!(FORMATS as readonly string[]).includes(value)) throw new UsageError(t('cli.errors.format', { value, formats: FORMATS.join(', ') }));
        options.format = value as Format;
        break;
      case 'svg':
        options.svg = value;
        break;
      case 'tz': {
        const zone = timeZoneName(value);
        if (zone === undefined) throw new UsageError(t('cli.errors.tz', { value }));
        options.timeZone = zone;
        break;
      }
      default: {
        const role = COLUMN_ROLES.find((r) => ROLE_OPTIONS[r] === name) as Role;
        if (value.trim() === '') throw new UsageError(t('cli.errors.column', { option: `--${name}` }));
        options.columns[role] = value;
      }
    }
  }
  if (files.length !== 1) throw new UsageError(t(files.length === 0 ? 'cli.errors.noFile' : 'cli.errors.manyFiles'));
  // A value column names what value mode reads: it is value mode, unless --mode says otherwise.
  if (options.columns.value !== undefined && !modeGiven) options.mode = 'value';
  if (options.mode !== 'value' && options.columns.value !== undefined) throw new UsageError(t('cli.errors.valueInPosition'));
  return { file: files[0] as string, ...options };
}

function list(name: 'seconds' | 'metres' | 'deadbands', value: string, t: Translate): number[] {
  const parsed = parseList(value);
  if (!parsed.ok) throw new UsageError(t(`cli.errors.list.${parsed.problem}`, { option: `--${name}`, value: parsed.value, max: MAX_VALUES }));
  return parsed.values;
}

function positive(option: string, value: string, t: Translate): number {
  const parsed = parseList(value);
  if (!parsed.ok || parsed.values.length !== 1) throw new UsageError(t('cli.errors.positive', { option, value }));
  return parsed.values[0] as number;
}

/** The chart module the sidebar draws with (resources/dedup-chart.js), from src/tune or nodes/tune alike. */
interface ChartModule {
  whatIf(model: object, options: object): string;
  histogram(model: object, options: object): string;
  stack(svgs: string[], options: object): string;
}

/**
 * The chart the sidebar draws, and in position mode the jitter's histogram
 * below it. `deadbandPercent`: value mode (and whether its deadbands are
 * percentages); the chart's Movement axis then carries the deadbands.
 */
function svgOf(result: WhatIfResult, t: Translate, deadbandPercent?: boolean): string {
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- a browser script that is also a CommonJS module
  const chart = require(join(__dirname, '..', '..', 'resources', 'dedup-chart.js')) as ChartModule;
  const percent = (f: number): string => `${Math.round(f * 100)}%`;
  const value = deadbandPercent !== undefined;
  // The chart module draws a second axis called metres: in value mode it is given the deadbands.
  const cells: GridCell[] = value ? result.cells.map((c) => ({ ...c, minMetres: c.deadband ?? 0 })) : result.cells;
  const whatIf = chart.whatIf(
    { seconds: result.spec.seconds, metres: value ? (result.spec.deadbands ?? DEFAULT_DEADBANDS) : result.spec.metres, cells, current: null, suggestedMetres: result.jitter?.suggestedMetres ?? null },
    {
      width: 720,
      height: 380,
      texts: {
        title: t('whatIf.chartTitle'),
        xAxis: t(value ? (deadbandPercent ? 'cli.chart.deadbandPercentAxis' : 'cli.chart.deadbandAxis') : 'whatIf.xAxis'),
        yAxis: t('whatIf.yAxis'),
        heartbeat: (s: number) => t('whatIf.heartbeat', { seconds: s }),
        suggested: (m: number) => t('whatIf.suggestedMark', { metres: m }),
        percent,
        point: (c: { minSeconds: number; minMetres: number; admittedFraction: number; admitted: number; received: number }) =>
          t(value ? 'cli.chart.pointTipValue' : 'whatIf.pointTip', { seconds: c.minSeconds, metres: c.minMetres, deadband: c.minMetres, percent: percent(c.admittedFraction), admitted: c.admitted, received: c.received }),
      },
    },
  );
  const j = result.jitter;
  if (j === null) return `<?xml version="1.0" encoding="UTF-8"?>\n${chart.stack([whatIf], { background: '#ffffff', colour: '#222222', gap: 12 })}\n`;
  const histogram = chart.histogram(j, {
    width: 720,
    height: 220,
    texts: {
      title: t('jitter.chartTitle', { heartbeat: j.heartbeatSeconds }),
      xAxis: t('jitter.xAxis'),
      yAxis: t('jitter.yAxis'),
      p95: (m: string) => t('jitter.p95Mark', { metres: m }),
      suggested: (m: string) => t('jitter.suggestedMark', { metres: m }),
      bar: (from: string, to: string, count: number) => t('jitter.barTip', { from, to, count }),
      beyond: (count: number) => t('jitter.beyondTip', { count }),
    },
  });
  return `<?xml version="1.0" encoding="UTF-8"?>\n${chart.stack([whatIf, histogram], { background: '#ffffff', colour: '#222222', gap: 12 })}\n`;
}
