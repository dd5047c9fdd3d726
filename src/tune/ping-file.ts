import { createReadStream } from 'fs';
import { StringDecoder } from 'string_decoder';
import { readPing, type RawPing } from '../core/ping';
import { PingColumns, PingColumnsBuilder } from '../core/ping-columns';

/**
 * Recorded pings, read for the what-if (the dedup-tune command and the
 * sidebar's upload): CSV with a header naming `assetId`, `ts`, `lat` and
 * `lon` (other columns allowed; `heading` and `accuracy` are read only for a
 * node whose rule reads them, as the node itself does), or JSON Lines with the same property names. Each row is checked by
 * core/ping's readPing, the very function the node reads a message with, so
 * a row the node would reject is a bad row here, and a good row becomes the
 * same Ping, bit for bit.
 *
 * A bad row is counted and its line number kept (the first ten), never
 * thrown: a file of a million rows with three broken ones is still worth
 * reading. Only a file that cannot be read at all (a CSV header without the
 * needed columns) is an error, a PingFileError.
 */

export type PingFileFormat = 'csv' | 'jsonl';

export interface BadRow {
  /** 1-based line number in the file, the header being line 1 of a CSV. */
  line: number;
  problem: string;
}

export interface PingFileResult {
  format: PingFileFormat;
  columns: PingColumns;
  /** Data rows seen (blank lines are not rows). */
  rows: number;
  /** Rows that could not be read, all of them counted ... */
  badRows: number;
  /** ... and the first MAX_REPORTED_BAD_ROWS of them named. */
  firstBad: BadRow[];
}

export const MAX_REPORTED_BAD_ROWS = 10;
const REQUIRED = ['assetId', 'ts', 'lat', 'lon'] as const;
const OPTIONAL = ['heading', 'accuracy'] as const;
type Column = (typeof REQUIRED)[number] | (typeof OPTIONAL)[number];

/** The file as a whole cannot be read; `code` names the reason for the catalog. */
export class PingFileError extends Error {
  constructor(
    readonly code: 'header' | 'empty' | 'unreadable',
    message: string,
    readonly details: Record<string, string> = {},
  ) {
    super(message);
  }
}

/** The rule fields to read besides the four required ones: what the node reads. */
export interface RuleFields {
  /** The node has a turn rule (minHeadingDegrees). */
  heading?: boolean;
  /** The node reads a fix's accuracy. */
  accuracy?: boolean;
}

/** Reads a file line by line; the format is told by its first non-blank line (`{`: JSON Lines). */
export class PingLineReader {
  private format: PingFileFormat | undefined;
  private header: Partial<Record<Column, number>> | undefined;
  private readonly builder = new PingColumnsBuilder();
  private rows = 0;
  private badRows = 0;
  private readonly firstBad: BadRow[] = [];

  constructor(private readonly fields: RuleFields = {}) {}

  /** Pings read so far. */
  get pings(): number {
    return this.builder.length;
  }

  line(text: string, lineNumber: number): void {
    if (lineNumber === 1 && text.charCodeAt(0) === 0xfeff) text = text.slice(1);
    if (text.trim() === '') return;
    if (this.format === undefined) {
      this.format = text.trimStart().startsWith('{') ? 'jsonl' : 'csv';
      if (this.format === 'csv') {
        this.header = headerOf(text);
        return;
      }
    }
    this.rows++;
    const raw = this.format === 'csv' ? this.csvRow(text) : jsonRow(text, this.fields);
    if (typeof raw === 'string') {
      this.bad(lineNumber, raw);
      return;
    }
    const read = readPing(raw);
    if (!read.ok) {
      this.bad(lineNumber, `${read.field === 'time' ? 'ts' : read.field} = ${read.value}: ${read.problem}`);
      return;
    }
    this.builder.add(read.ping, NaN);
  }

  result(): PingFileResult {
    if (this.format === undefined) throw new PingFileError('empty', 'the file holds no rows');
    return { format: this.format, columns: this.builder.build(), rows: this.rows, badRows: this.badRows, firstBad: this.firstBad.slice() };
  }

  private bad(line: number, problem: string): void {
    this.badRows++;
    if (this.firstBad.length < MAX_REPORTED_BAD_ROWS) this.firstBad.push({ line, problem });
  }

  private csvRow(text: string): RawPing | string {
    const fields = splitCsvLine(text);
    if (fields === undefined) return 'a quoted field is not closed';
    const header = this.header as Partial<Record<Column, number>>;
    const at = (column: Column): string | undefined => {
      const index = header[column];
      return index === undefined ? undefined : fields[index];
    };
    const missing = REQUIRED.filter((column) => at(column) === undefined);
    if (missing.length > 0) return `has ${fields.length} fields; ${missing.join(', ')} missing`;
    return {
      assetId: at('assetId'),
      time: at('ts'),
      lat: at('lat'),
      lon: at('lon'),
      heading: this.fields.heading === true ? blankAsAbsent(at('heading')) : undefined,
      accuracy: this.fields.accuracy === true ? blankAsAbsent(at('accuracy')) : undefined,
    };
  }
}

/** A CSV header's column indexes; names match regardless of case and surrounding spaces. */
function headerOf(text: string): Partial<Record<Column, number>> {
  const names = (splitCsvLine(text) ?? []).map((name) => name.trim().toLowerCase());
  const header: Partial<Record<Column, number>> = {};
  for (const column of [...REQUIRED, ...OPTIONAL]) {
    const index = names.indexOf(column.toLowerCase());
    if (index !== -1) header[column] = index;
  }
  const missing = REQUIRED.filter((column) => header[column] === undefined);
  if (missing.length > 0) {
    throw new PingFileError('header', `the CSV header must name ${REQUIRED.join(', ')}; missing: ${missing.join(', ')} (header: ${text.slice(0, 200)})`, {
      missing: missing.join(', '),
      header: text.slice(0, 200),
    });
  }
  return header;
}

function jsonRow(text: string, fields: RuleFields): RawPing | string {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return `not valid JSON (${error instanceof Error ? error.message : String(error)})`;
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return 'not a JSON object';
  const row = value as Record<string, unknown>;
  return {
    assetId: row.assetId,
    time: row.ts,
    lat: row.lat,
    lon: row.lon,
    heading: fields.heading === true ? row.heading : undefined,
    accuracy: fields.accuracy === true ? row.accuracy : undefined,
  };
}

/** An empty CSV field is "no value" for the optional columns, as an absent property is in JSON. */
function blankAsAbsent(value: string | undefined): string | undefined {
  return value === undefined || value.trim() === '' ? undefined : value;
}

/**
 * One CSV line (RFC 4180 quoting: `"a,b"`, `"say ""hi"""`); undefined when
 * a quote is left open (a field spanning lines is not supported: it is a bad
 * row). Fields are not trimmed; readPing trims numbers itself, and an id is
 * taken as written.
 */
export function splitCsvLine(line: string): string[] | undefined {
  if (line.indexOf('"') === -1) return line.split(',');
  const fields: string[] = [];
  let field = '';
  let i = 0;
  for (;;) {
    if (line[i] === '"') {
      i++;
      for (;;) {
        const quote = line.indexOf('"', i);
        if (quote === -1) return undefined;
        field += line.slice(i, quote);
        i = quote + 1;
        if (line[i] === '"') {
          field += '"';
          i++;
          continue;
        }
        break;
      }
      const comma = line.indexOf(',', i);
      field += line.slice(i, comma === -1 ? line.length : comma);
      fields.push(field);
      if (comma === -1) return fields;
      field = '';
      i = comma + 1;
    } else {
      const comma = line.indexOf(',', i);
      fields.push(line.slice(i, comma === -1 ? line.length : comma));
      if (comma === -1) return fields;
      i = comma + 1;
    }
  }
}

/** Splits text into lines (LF or CRLF) and hands each to `each` with its 1-based number; returns the next line number. */
function eachLine(text: string, firstLine: number, each: (line: string, lineNumber: number) => void): number {
  let lineNumber = firstLine;
  let start = 0;
  for (;;) {
    const end = text.indexOf('\n', start);
    if (end === -1) {
      if (start < text.length) each(stripCr(text.slice(start)), lineNumber++);
      return lineNumber;
    }
    each(stripCr(text.slice(start, end)), lineNumber++);
    start = end + 1;
  }
}

function stripCr(line: string): string {
  return line.endsWith('\r') ? line.slice(0, -1) : line;
}

/** A whole file held in memory (an upload). */
export function readPingText(text: string, fields: RuleFields = {}): PingFileResult {
  const reader = new PingLineReader(fields);
  eachLine(text, 1, (line, n) => reader.line(line, n));
  return reader.result();
}

export interface ReadProgress {
  /** Called after every `every` pings read. */
  onPings?: (pings: number) => void;
  every?: number;
}

/** A file on disk, streamed: its size is bounded by the pings it holds, not by its text. */
export function readPingFile(path: string, progress: ReadProgress = {}, fields: RuleFields = {}): Promise<PingFileResult> {
  const reader = new PingLineReader(fields);
  const every = progress.every ?? 1_000_000;
  let nextReport = every;
  return new Promise((resolve, reject) => {
    const decoder = new StringDecoder('utf8');
    let rest = '';
    let lineNumber = 1;
    const stream = createReadStream(path, { highWaterMark: 1 << 20 });
    const fail = (error: unknown): void => {
      stream.destroy();
      reject(error);
    };
    const feed = (text: string): void => {
      const last = text.lastIndexOf('\n');
      if (last === -1) {
        rest = text;
        return;
      }
      // Up to and with the last newline: a blank line just before it is a line too.
      lineNumber = eachLine(text.slice(0, last + 1), lineNumber, (line, n) => reader.line(line, n));
      rest = text.slice(last + 1);
      if (progress.onPings !== undefined && reader.pings >= nextReport) {
        progress.onPings(reader.pings);
        while (nextReport <= reader.pings) nextReport += every;
      }
    };
    stream.on('data', (chunk: Buffer | string) => {
      try {
        feed(rest + decoder.write(chunk as Buffer));
      } catch (error) {
        fail(error);
      }
    });
    stream.on('error', (error) => reject(new PingFileError('unreadable', error.message, { path })));
    stream.on('end', () => {
      try {
        const tail = rest + decoder.end();
        if (tail !== '') eachLine(tail, lineNumber, (line, n) => reader.line(line, n));
        resolve(reader.result());
      } catch (error) {
        reject(error);
      }
    });
  });
}
