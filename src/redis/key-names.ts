/**
 * Redis key names. Every key that one script call touches carries the same
 * hash tag, `{<asset or device id>}`, so the call lands in one Cluster slot.
 *
 * Ids are written with `%`, `{` and `}` percent-encoded: an id such as
 * `}x` would otherwise close the tag early (or leave it empty, which makes
 * Redis hash the whole key) and scatter one device's keys over several
 * slots. The encoding is reversible and leaves every other character alone.
 */
export function escapeTagContent(id: string): string {
  return id.replace(/[%{}]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}

/** Escapes glob metacharacters for SCAN MATCH. */
export function escapeGlob(text: string): string {
  return text.replace(/[*?[\]\\]/g, (c) => `\\${c}`);
}

export const WINDOW_SEGMENT = 'sw:';
export const SEEN_SEGMENT = 'rc:';

export function windowRecordKey(prefix: string, assetId: string): string {
  return `${prefix}${WINDOW_SEGMENT}{${escapeTagContent(assetId)}}`;
}

/** The seen-set entry of one idempotency key of one device. */
export function seenKey(prefix: string, deviceId: string, seq: number, hash: string): string {
  return `${prefix}${SEEN_SEGMENT}{${escapeTagContent(deviceId)}}:${seq}:${hash}`;
}

/** SCAN patterns: every window record, or every seen-set entry (of one device). */
export function windowPattern(prefix: string, assetId?: string): string {
  return assetId === undefined
    ? `${escapeGlob(prefix)}${WINDOW_SEGMENT}*`
    : escapeGlob(windowRecordKey(prefix, assetId));
}

export function seenPattern(prefix: string, deviceId?: string): string {
  return deviceId === undefined
    ? `${escapeGlob(prefix)}${SEEN_SEGMENT}*`
    : `${escapeGlob(`${prefix}${SEEN_SEGMENT}{${escapeTagContent(deviceId)}}:`)}*`;
}
