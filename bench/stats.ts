/** Small statistics and formatting helpers for the benchmark report. */

export function median(values: readonly number[]): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? (sorted[mid] as number) : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}

export function min(values: readonly number[]): number {
  return values.length === 0 ? Number.NaN : Math.min(...values);
}

export function max(values: readonly number[]): number {
  return values.length === 0 ? Number.NaN : Math.max(...values);
}

/** 123456.7 -> "123,457" */
export function thousands(n: number): string {
  return Number.isFinite(n) ? Math.round(n).toLocaleString('en-US') : '–';
}

/** 0.8734 -> "0.87x" */
export function times(n: number): string {
  return Number.isFinite(n) ? `${n.toFixed(2)}x` : '–';
}

export function bytes(n: number): string {
  return Number.isFinite(n) ? `${n.toFixed(0)} B` : '–';
}

/** A GitHub-flavoured Markdown table, padded so it also reads in a terminal. */
export function markdownTable(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: readonly string[]): string => `| ${cells.map((c, i) => c.padEnd(widths[i] as number)).join(' | ')} |`;
  return [line(header), `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`, ...rows.map(line)].join('\n');
}

/** Milliseconds: 0.0123 -> "0.01", 12.3 -> "12.3", 1234 -> "1,234". */
export function millis(n: number): string {
  if (!Number.isFinite(n)) return '–';
  const size = Math.abs(n);
  if (size < 10) return n.toFixed(2);
  if (size < 100) return n.toFixed(1);
  return thousands(n);
}

/** Microseconds of CPU per unit, one decimal. */
export function micros(n: number | undefined): string {
  return n !== undefined && Number.isFinite(n) ? n.toFixed(1) : '';
}

/** 0.1234 -> "12 %" */
export function percent(n: number): string {
  return Number.isFinite(n) ? `${Math.round(n * 100)} %` : '–';
}
