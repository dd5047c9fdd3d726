import { parseInstant } from '../core/parse/instant';

/**
 * Date-times written without a zone (`2014-10-01 08:31:00`, as many fleet
 * exports write local time), read in a zone the user names (dedup-tune's
 * --tz, the sidebar's picker): an IANA name such as `Europe/Berlin`, UTC by
 * default. The zone's offsets come from the runtime's own time-zone data
 * (Intl), so nothing is added to the pack.
 *
 * A wall-clock time that a change of offset skips (02:30 on the night the
 * clocks go forward) is read as the instant that many minutes after the
 * change, and one that happens twice (the night they go back) as the first
 * of the two: what Temporal calls "compatible", and what most databases do.
 */

export const DEFAULT_TIME_ZONE = 'UTC';

/** The zone's canonical name (`utc` is `UTC`), or undefined when the runtime knows no such zone. */
export function timeZoneName(name: string): string | undefined {
  if (name.trim() === '') return undefined;
  try {
    return new Intl.DateTimeFormat('en-US', { timeZone: name.trim() }).resolvedOptions().timeZone;
  } catch {
    return undefined;
  }
}

const HOUR_MS = 3_600_000;
const DAY_MS = 86_400_000;
/** Hours whose offset is remembered, at most; a file spanning more just looks some up again. */
const MAX_CACHED_HOURS = 100_000;

/**
 * A zone's offsets. Intl's formatToParts costs some microseconds, so the
 * offset is remembered per hour: an hour whose start and end have the same
 * offset has it throughout (no zone changes its offset twice within an
 * hour); in an hour with a change, each instant asked is looked up.
 */
export class ZoneOffsets {
  private readonly format: Intl.DateTimeFormat;
  private readonly hours = new Map<number, number>();

  constructor(readonly zone: string) {
    this.format = new Intl.DateTimeFormat('en-US', {
      timeZone: zone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
  }

  /** The instant (epoch ms) at which the zone's clocks show `wallMs` (the wall-clock time written as if it were UTC). */
  instantOf(wallMs: number): number {
    const before = this.offsetAt(wallMs - DAY_MS);
    const after = this.offsetAt(wallMs + DAY_MS);
    const early = wallMs - before;
    const late = wallMs - after;
    const earlyHolds = this.offsetAt(early) === before;
    const lateHolds = this.offsetAt(late) === after;
    if (earlyHolds && lateHolds) return Math.min(early, late);
    if (lateHolds) return late;
    // In a gap, or early holds alone: the offset from before the change.
    return early;
  }

  /** The zone's offset from UTC at an instant, in ms (east positive). */
  offsetAt(instantMs: number): number {
    const hour = Math.floor(instantMs / HOUR_MS);
    const known = this.hours.get(hour);
    if (known !== undefined) return known;
    const start = this.lookUp(hour * HOUR_MS);
    const end = this.lookUp((hour + 1) * HOUR_MS - 1000);
    if (start !== end) return this.lookUp(instantMs);
    if (this.hours.size >= MAX_CACHED_HOURS) this.hours.clear();
    this.hours.set(hour, start);
    return start;
  }

  private lookUp(instantMs: number): number {
    const whole = Math.floor(instantMs / 1000) * 1000;
    const part: Record<string, number> = {};
    for (const { type, value } of this.format.formatToParts(whole)) if (type !== 'literal') part[type] = Number(value);
    const wall = new Date(0);
    wall.setUTCFullYear(part.year ?? 1970, (part.month ?? 1) - 1, part.day ?? 1);
    wall.setUTCHours(part.hour ?? 0, part.minute ?? 0, part.second ?? 0, 0);
    return wall.getTime() - whole;
  }
}

/**
 * Reads the time values of a file: a date-time without a zone becomes the
 * instant it names in the zone (a Date, which core/window/ping's readPing takes as
 * it is); every other value (epoch numbers, ISO with Z or an offset, junk
 * for readPing to refuse) is passed on untouched. Counts the zone-less ones,
 * for the report.
 */
export class FileTimes {
  zoneless = 0;
  private readonly offsets: ZoneOffsets | undefined;

  constructor(readonly zone: string = DEFAULT_TIME_ZONE) {
    // UTC is how readPing reads a zone-less time already.
    this.offsets = zone === 'UTC' ? undefined : new ZoneOffsets(zone);
  }

  read(value: unknown): unknown {
    if (typeof value !== 'string' || !isZoneless(value)) return value;
    const wall = parseInstant(value);
    // An impossible date (2014-02-30) is left to readPing, to say so.
    if (!wall.ok) return value;
    this.zoneless++;
    if (this.offsets === undefined) return value;
    return new Date(this.offsets.instantOf(wall.epochMicros / 1000));
  }
}

/** `YYYY-MM-DD?hh:mm...` with nothing after the time that names a zone (Z, z, +hh, -hh). Looked at by character: this runs per row. */
export function isZoneless(value: string): boolean {
  const text = value.trim();
  if (text.length < 16 || text.charCodeAt(4) !== 0x2d || text.charCodeAt(7) !== 0x2d || text.charCodeAt(13) !== 0x3a) return false;
  for (let i = 16; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code === 0x5a || code === 0x7a || code === 0x2b || code === 0x2d) return false;
  }
  return true;
}
