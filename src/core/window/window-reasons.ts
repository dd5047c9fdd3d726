/**
 * The reasons a sliding-window decision can give, in the order the rule
 * checks them (the first that applies wins), with the one-byte code each
 * has in the Redis script's reply. This table is the only place the codes
 * are written: src/redis/scripts.ts hands it to lua/sliding-window.lua as
 * a table of names, so neither side spells a bare number.
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
 * - `window`: none of the above: neither waited nor moved.
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
} as const;

export type WindowReason = keyof typeof WINDOW_REASONS;

/** Reasons by code, for decoding a reply; index 0 is unused. */
export const WINDOW_REASON_BY_CODE: readonly (WindowReason | undefined)[] = (() => {
  const byCode: (WindowReason | undefined)[] = [];
  for (const reason of Object.keys(WINDOW_REASONS) as WindowReason[]) byCode[WINDOW_REASONS[reason].code] = reason;
  return byCode;
})();
