import { createReadStream } from 'fs';
import { readPing, type PingReadRule, type RawPing } from '../core/window/ping';
import { textOf } from '../core/parse/fields';
import { PingColumns, PingColumnsBuilder } from '../core/window/ping-columns';
import { errorMessage } from '../core/parse/errors';
import { chooseColumns, requiredRoles, ROLE_NAMES, ROLE_OPTIONS, type ColumnChoice, type Role } from './file-columns';
import { toTimeOrder } from './time-order';
import { DEFAULT_TIME_ZONE, FileTimes } from './time-zone';

/**
 * Recorded pings, read for the what-if (the dedup-tune command and the
 * sidebar's upload): CSV with a header, or JSON Lines. Which column holds
 * the asset id, the time, the latitude and the longitude is named by the
 * user or recognised by name (tune/file-columns: `assetId,ts,lat,lon`,
 * `vehicle,timestamp,latitude,longitude` and the like; other columns
 * allowed); `heading` and `accuracy` are read only for a node whose rule
 * reads them, as the node itself does, and so are the reading instead of
 * the position (value mode), the fix's validity (the no-fix guard), its
 * satellites and its HDOP (Min satellites, Max HDOP), each decided into
 * the ping's fix quality as the node decides it. A CSV's header names its columns; a
 * JSON Lines file's are the properties of its first object. Times without
 * a zone are read in the zone given (tune/time-zone, UTC by default). Each
 * row is checked by core/window/ping's readPing, the very function the node reads
 * a message with, so a row the node would reject is a bad row here, and a
 * good row becomes the same Ping, bit for bit.
 *
 * The pings come out in time order (tune/time-order), whatever the file's
 * order: each asset's pings are decided as the node would have seen them
 * live.
 *
 * A bad row is counted and its line number kept (the first ten), never
 * thrown: a file of a million rows with three broken ones is still worth
 * reading. Only a file that cannot be read at all (no column for the asset
 * id, time or position, or a named column it does not have) is an error, a
 * PingFileError.
 *
 * Lines are cut from the bytes, never from the file decoded whole, and a line
 * longer than MAX_LINE_BYTES is a bad row whose bytes are counted and
 * skipped: a file of one 50 MB line (or binary junk without a newline) costs
 * one line's worth of memory, not the 3 GB JSON.parse takes over it.
 */

export type PingFileFormat = 'csv' | 'jsonl';

export interface BadRow {
  /** 1-based line number in the file, the header being line 1 of a CSV. */
  line: number;
  problem: string;
}

export interface PingFileResult {
  format: PingFileFormat;
  /** The pings, in time order. */
  columns: PingColumns;
  /** The file's column read for each role, as the file writes it; heading and accuracy only when read. */
  mapping: Partial<Record<Role, string>>;
  /** The roles whose column the user named (the others were recognised by name). */
  given: Role[];
  /** The zone times without one were read in, and how many such times the good rows had. */
  timeZone: string;
  zonelessTimes: number;
  /** Whether the file's rows were out of time order (and were put in order). */
  reordered: boolean;
  /** Data rows seen (blank lines are not rows). */
  rows: number;
  /** Rows that could not be read, all of them counted ... */
  badRows: number;
  /** ... and the first MAX_REPORTED_BAD_ROWS of them named. */
  firstBad: BadRow[];
}

export const MAX_REPORTED_BAD_ROWS = 10;
/** The longest line read, in bytes without its newline: a ping is some 50, a JSON uplink some 2,000. */
export const MAX_LINE_BYTES = 64 * 1024;
/** How much of an over-long line is shown in its bad row, in characters. */
const SHOWN = 60;
/** The file as a whole cannot be read; `code` names the reason for the catalog. */
export class PingFileError extends Error {
  constructor(
    readonly code: 'header' | 'noColumn' | 'empty' | 'unreadable' | 'tooManyPings',
    message: string,
    readonly details: Record<string, string> = {},
  ) {
    super(message);
  }
}

/** The rule fields to read besides the required ones: what the node reads. */
export interface RuleFields {
  /** The node has a turn rule (minHeadingDegrees). */
  heading?: boolean;
  /** The node reads a fix's accuracy. */
  accuracy?: boolean;
  /**
   * The node's rule as reading a ping applies it (core/window/ping): value
   * mode reads the reading instead of the position; noFix reads the
   * validity, minSatellites the satellites, maxHdop the HDOP, where the
   * file has them (absent: unknown, a fix). Absent: pings read as before
   * those rules existed.
   */
  rule?: PingReadRule;
}

/** The optional roles a node with these fields reads. */
function optionalRoles(fields: RuleFields): Role[] {
  const roles: Role[] = [];
  if (fields.heading === true) roles.push('heading');
  if (fields.accuracy === true) roles.push('accuracy');
  const rule = fields.rule;
  if (rule !== undefined && rule.mode !== 'value') {
    if (rule.noFix === true) roles.push('valid');
    if (rule.minSatellites !== undefined) roles.push('satellites');
    if (rule.maxHdop !== undefined) roles.push('hdop');
  }
  return roles;
}

/** How to read a file's columns: which the user named, and the zone of times written without one. */
export interface FileLayout {
  columns?: ColumnChoice;
  /** An IANA zone name the runtime knows (checked by the caller: tune/time-zone's timeZoneName); UTC when absent. */
  timeZone?: string;
}

/** Each role's column: its index in a CSV row, or its property in a JSON object. */
type Found = Partial<Record<Role, { name: string; index: number }>>;

/** Reads a file line by line; the format is told by its first non-blank line (`{`: JSON Lines). */
export class PingLineReader {
  private format: PingFileFormat | undefined;
  private found: Found | undefined;
  private given: Role[] = [];
  private readonly builder = new PingColumnsBuilder();
  private readonly times: FileTimes;
  private rows = 0;
  private badRows = 0;
  private readonly firstBad: BadRow[] = [];

  /** `maxPings`: more good rows than this is a PingFileError (the sidebar bounds its columns so). */
  constructor(
    private readonly fields: RuleFields = {},
    private readonly maxPings: number = Infinity,
    private readonly layout: FileLayout = {},
  ) {
    this.times = new FileTimes(layout.timeZone ?? DEFAULT_TIME_ZONE);
  }

  /** The roles every row must have: the position's, or value mode's reading. */
  private get required(): readonly Role[] {
    return requiredRoles(this.fields.rule?.mode);
  }

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
        this.choose(splitCsvLine(text) ?? [], text.slice(0, 200));
        return;
      }
    }
    this.rows++;
    const raw = this.format === 'csv' ? this.csvRow(text) : this.jsonRow(text);
    if (typeof raw === 'string') {
      this.bad(lineNumber, raw);
      return;
    }
    raw.time = this.times.read(raw.time);
    const read = this.fields.rule === undefined ? readPing(raw) : readPing(raw, this.fields.rule);
    if (!read.ok) {
      this.bad(lineNumber, `${this.nameOf(read.field)} = ${read.value}: ${read.problem}`);
      return;
    }
    if (this.builder.length >= this.maxPings) {
      const max = this.maxPings.toLocaleString('en-US');
      throw new PingFileError('tooManyPings', `the file holds more than ${max} pings (line ${lineNumber})`, { max, line: String(lineNumber) });
    }
    this.builder.add(read.ping, NaN);
  }

  /** A line over MAX_LINE_BYTES: a bad row (or, as a CSV header, a file that cannot be read). `start`: its first characters. */
  tooLong(lineNumber: number, bytes: number, start: string): void {
    if (lineNumber === 1 && start.charCodeAt(0) === 0xfeff) start = start.slice(1);
    if (this.format === undefined) {
      this.format = start.trimStart().startsWith('{') ? 'jsonl' : 'csv';
      if (this.format === 'csv') {
        throw new PingFileError('header', `the CSV header is longer than ${MAX_LINE_BYTES} bytes (${bytes} bytes; it starts: ${start.slice(0, SHOWN)})`, {
          missing: this.required.map((role) => ROLE_NAMES[role]).join(', '),
          header: start.slice(0, SHOWN),
        });
      }
    }
    this.rows++;
    this.bad(lineNumber, `longer than ${MAX_LINE_BYTES} bytes (${bytes} bytes), not read; it starts: ${JSON.stringify(start.slice(0, SHOWN))}`);
  }

  /** What was read, the pings in time order. */
  result(): PingFileResult {
    if (this.format === undefined) throw new PingFileError('empty', 'the file holds no rows');
    const built = this.builder.build();
    const t = built.t;
    const columns = toTimeOrder(built);
    const mapping: Partial<Record<Role, string>> = {};
    for (const [role, column] of Object.entries(this.found ?? {}) as [Role, { name: string }][]) mapping[role] = column.name;
    return {
      format: this.format,
      columns,
      mapping,
      given: this.given.slice(),
      timeZone: this.times.zone,
      zonelessTimes: this.times.zoneless,
      reordered: columns.t !== t,
      rows: this.rows,
      badRows: this.badRows,
      firstBad: this.firstBad.slice(),
    };
  }

  /**
   * Each role's column among a CSV header's names or a JSON object's keys;
   * a file without the asset id, time or position, or without a column the
   * user named, cannot be read.
   */
  private choose(names: readonly string[], shown: string): void {
    const roles: Role[] = [...this.required, ...optionalRoles(this.fields)];
    const given = this.layout.columns ?? {};
    const chosen = chooseColumns(names, given, roles, this.required);
    if (!chosen.ok) {
      const where = this.format === 'csv' ? 'the CSV header' : 'the first JSON object';
      const header = names.join(', ').slice(0, 200) || shown;
      if (chosen.problem === 'missing') {
        const missing = chosen.roles.map((role) => ROLE_NAMES[role]).join(', ');
        throw new PingFileError('header', `${where} has no column for the ${missing} (its columns: ${header})`, { missing, header });
      }
      throw new PingFileError('noColumn', `${where} has no column "${chosen.column}", named for the ${ROLE_NAMES[chosen.role]} (its columns: ${header})`, {
        column: chosen.column,
        role: ROLE_NAMES[chosen.role],
        option: ROLE_OPTIONS[chosen.role],
        header,
      });
    }
    this.found = {};
    for (const [role, column] of Object.entries(chosen.chosen) as [Role, { name: string; index: number; given: boolean }][]) {
      this.found[role] = { name: column.name, index: column.index };
      if (column.given) this.given.push(role);
    }
  }

  /** A field of readPing as the file calls it. */
  private nameOf(field: Role): string {
    return this.found?.[field]?.name ?? field;
  }

  private bad(line: number, problem: string): void {
    this.badRows++;
    if (this.firstBad.length < MAX_REPORTED_BAD_ROWS) this.firstBad.push({ line, problem });
  }

  private csvRow(text: string): RawPing | string {
    const fields = splitCsvLine(text);
    if (fields === undefined) return 'a quoted field is not closed';
    const found = this.found as Found;
    const at = (role: Role): string | undefined => {
      const column = found[role];
      return column === undefined ? undefined : fields[column.index];
    };
    const missing = this.required.filter((role) => at(role) === undefined);
    if (missing.length > 0) return `has ${fields.length} fields; ${missing.map((role) => this.nameOf(role)).join(', ')} missing`;
    return {
      assetId: at('assetId'),
      time: at('time'),
      lat: at('lat'),
      lon: at('lon'),
      heading: blankAsAbsent(at('heading')),
      accuracy: blankAsAbsent(at('accuracy')),
      value: at('value'),
      valid: blankAsAbsent(at('valid')),
      satellites: blankAsAbsent(at('satellites')),
      hdop: blankAsAbsent(at('hdop')),
    };
  }

  private jsonRow(text: string): RawPing | string {
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (error) {
      return `not valid JSON (${errorMessage(error)})`;
    }
    if (value === null || typeof value !== 'object' || Array.isArray(value)) return 'not a JSON object';
    const row = value as Record<string, unknown>;
    if (this.found === undefined) this.choose(Object.keys(row), text.slice(0, 200));
    const found = this.found as Found;
    // Own properties only: a column called "constructor" is not Object.prototype's.
    const at = (role: Role): unknown => {
      const name = found[role]?.name;
      return name !== undefined && Object.hasOwn(row, name) ? row[name] : undefined;
    };
    return {
      assetId: at('assetId'),
      time: at('time'),
      lat: at('lat'),
      lon: at('lon'),
      heading: at('heading'),
      accuracy: at('accuracy'),
      value: at('value'),
      valid: at('valid'),
      satellites: at('satellites'),
      hdop: at('hdop'),
    };
  }
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

/**
 * Cuts bytes into lines (LF or CRLF), as they come, and hands each to the
 * reader with its 1-based number. A line is held only up to `maxBytes`:
 * past that its bytes are counted and dropped until its newline. Cutting at
 * the byte 0x0A never splits a UTF-8 character (no multi-byte sequence holds
 * it), so each line is decoded on its own.
 */
export class LineSplitter {
  private held: Buffer[] = [];
  private heldBytes = 0;
  /** Bytes of the current line when it is over the limit (its first bytes are in `start`), else -1. */
  private overBytes = -1;
  private start = '';
  private lineNumber = 1;

  constructor(
    private readonly reader: Pick<PingLineReader, 'line' | 'tooLong'>,
    private readonly maxBytes: number = MAX_LINE_BYTES,
  ) {}

  write(chunk: Uint8Array): void {
    const bytes = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    let from = 0;
    for (;;) {
      const end = bytes.indexOf(0x0a, from);
      if (end === -1) {
        this.keep(bytes, from, bytes.length);
        return;
      }
      if (this.heldBytes === 0 && this.overBytes === -1 && end - from <= this.maxBytes) {
        // The usual case: the whole line inside this chunk.
        this.reader.line(stripCr(bytes.toString('utf8', from, end)), this.lineNumber++);
      } else {
        this.keep(bytes, from, end);
        this.finish();
      }
      from = end + 1;
    }
  }

  /** The last line, when the bytes do not end with a newline. */
  end(): void {
    if (this.heldBytes > 0 || this.overBytes !== -1) this.finish();
  }

  private keep(bytes: Buffer, from: number, to: number): void {
    if (from === to) return;
    if (this.overBytes !== -1) {
      this.overBytes += to - from;
      return;
    }
    if (this.heldBytes + (to - from) <= this.maxBytes) {
      // A copy: the chunk's memory may be reused by the stream it came from.
      this.held.push(Buffer.from(bytes.subarray(from, to)));
      this.heldBytes += to - from;
      return;
    }
    const line = Buffer.concat([...this.held, bytes.subarray(from, Math.min(to, from + SHOWN * 4))]);
    this.start = line.toString('utf8', 0, Math.min(line.length, SHOWN * 4));
    this.overBytes = this.heldBytes + (to - from);
    this.held = [];
    this.heldBytes = 0;
  }

  private finish(): void {
    const lineNumber = this.lineNumber++;
    if (this.overBytes !== -1) {
      const bytes = this.overBytes;
      this.overBytes = -1;
      this.reader.tooLong(lineNumber, bytes, this.start);
      this.start = '';
      return;
    }
    const line = this.held.length === 1 ? (this.held[0] as Buffer) : Buffer.concat(this.held);
    this.held = [];
    this.heldBytes = 0;
    this.reader.line(stripCr(line.toString('utf8')), lineNumber);
  }
}

function stripCr(line: string): string {
  return line.endsWith('\r') ? line.slice(0, -1) : line;
}

/** A whole file held in memory (an upload): its bytes, or (in tests) its text. `maxPings`: see PingLineReader. */
export function readPingText(text: Uint8Array | string, fields: RuleFields = {}, maxPings: number = Infinity, layout: FileLayout = {}): PingFileResult {
  const reader = new PingLineReader(fields, maxPings, layout);
  const lines = new LineSplitter(reader);
  lines.write(typeof text === 'string' ? Buffer.from(text, 'utf8') : text);
  lines.end();
  return reader.result();
}

export interface ReadProgress {
  /** Called after every `every` pings read. */
  onPings?: (pings: number) => void;
  every?: number;
}

/** A file on disk, streamed: its size is bounded by the pings it holds, not by its text. */
export function readPingFile(path: string, progress: ReadProgress = {}, fields: RuleFields = {}, layout: FileLayout = {}): Promise<PingFileResult> {
  const reader = new PingLineReader(fields, Infinity, layout);
  const lines = new LineSplitter(reader);
  const every = progress.every ?? 1_000_000;
  let nextReport = every;
  return new Promise((resolve, reject) => {
    const stream = createReadStream(path, { highWaterMark: 1 << 20 });
    const fail = (error: unknown): void => {
      stream.destroy();
      reject(asError(error));
    };
    stream.on('data', (chunk: Buffer | string) => {
      try {
        lines.write(chunk as Buffer);
        if (progress.onPings !== undefined && reader.pings >= nextReport) {
          progress.onPings(reader.pings);
          while (nextReport <= reader.pings) nextReport += every;
        }
      } catch (error) {
        fail(error);
      }
    });
    stream.on('error', (error) => reject(new PingFileError('unreadable', error.message, { path })));
    stream.on('end', () => {
      try {
        lines.end();
        resolve(reader.result());
      } catch (error) {
        reject(asError(error));
      }
    });
  });
}

/** What the reader throws is an Error already (a PingFileError); anything else is wrapped, so a caller always gets one. */
function asError(error: unknown): Error {
  return error instanceof Error ? error : new Error(textOf(error));
}
