/**
 * The reasons a sliding-window decision can give, each with the one-byte
 * code it has in the Redis script's reply and in the Prometheus counters'
 * slots. This table is the only place the codes are written:
 * src/redis/scripts.ts hands it to lua/sliding-window.lua as a table of
 * names, so neither side spells a bare number.
 *
 * A code, once given, is never changed nor reused: codes travel in Redis
 * replies (a worker of the previous release may share the server) and index
 * the metrics. New reasons are appended. So the codes do NOT say in which
 * order the rule checks the reasons: core/window/sliding-window's header
 * writes that order down, for each mode.
 *
 * - `ahead`: dated more than maxAheadSeconds ahead of the host's clock;
 *   never becomes the baseline, not even the first one;
 * - `first`: no baseline for the asset (new, expired, or reset);
 * - `replayed`: a retried message whose earlier attempt had admitted it;
 * - `late`: not newer than the baseline; the baseline is kept;
 * - `elapsed`: at least minSeconds since the baseline;
 * - `event`: a watched property changed since the baseline;
 * - `moved`: at least minMetres, and more than the two fixes' accuracies together;
 * - `turned`: the heading changed by at least minHeadingDegrees;
 * - `window`: none of the above: neither waited nor moved;
 * - `no-fix`: the ping is not a position (0,0, or its validity field says
 *   so); never becomes the baseline;
 * - `poor-fix`: too few satellites or too high an HDOP; never the baseline;
 * - `jump`: further from the baseline than maxSpeedKmh allows in the time
 *   between them; never the baseline, but the asset's relocation candidate;
 * - `relocated`: the asset is somewhere new: after a long silence, or after
 *   relocateAfterPings jumps that agree with each other; the new baseline;
 * - `changed` (value mode): the value moved by at least the deadband;
 * - `unchanged` (value mode): neither waited nor changed.
 */
export const WINDOW_REASONS = {
  ahead: { code: 1, admit: false },
  first: { code: 2, admit: true },
  replayed: { code: 3, admit: true },
  late: { code: 4, admit: false },
  elapsed: { code: 5, admit: true },
  event: { code: 6, admit: true },
  moved: { code: 7, admit: true },
  turned: { code: 8, admit: true },
  window: { code: 9, admit: false },
  'no-fix': { code: 10, admit: false },
  'poor-fix': { code: 11, admit: false },
  jump: { code: 12, admit: false },
  relocated: { code: 13, admit: true },
  changed: { code: 14, admit: true },
  unchanged: { code: 15, admit: false },
} as const;

export type WindowReason = keyof typeof WINDOW_REASONS;

/** Reasons by code, for decoding a reply; index 0 is unused. */
export const WINDOW_REASON_BY_CODE: readonly (WindowReason | undefined)[] = (() => {
  const byCode: (WindowReason | undefined)[] = [];
  for (const reason of Object.keys(WINDOW_REASONS) as WindowReason[]) byCode[WINDOW_REASONS[reason].code] = reason;
  return byCode;
})();

/** Each mode's reasons in the order decideWindow checks them; the first that applies wins. */
export const REASON_ORDER = {
  position: ['ahead', 'no-fix', 'poor-fix', 'first', 'replayed', 'late', 'jump', 'relocated', 'elapsed', 'event', 'moved', 'turned', 'window'],
  value: ['ahead', 'first', 'replayed', 'late', 'elapsed', 'event', 'changed', 'unchanged'],
} as const satisfies Record<string, readonly WindowReason[]>;
