/**
 * A status line of counts ("3 admitted / 1 suppressed / 0 rejected"). Each
 * count is worded by its own catalog entry, `status.count.<name>`, given
 * `{ count }` as a number: i18next chooses that entry's plural form
 * (`<name>_plural` in the catalogs, which Node-RED 4 and 5 read as
 * `<name>_other`), which one string holding several counts could not do.
 * `status.tally` (or the template named) then puts the worded counts in order.
 */
import type { Translate } from './node-lifecycle';

export function countsLine(t: Translate, counts: Readonly<Record<string, number>>, template = 'status.tally'): string {
  const worded: Record<string, string> = {};
  for (const [name, count] of Object.entries(counts)) worded[name] = t(`status.count.${name}`, { count });
  return t(template, worded);
}

/** `line`, followed by the count of messages the store failed for, once there is one (a healthy node's status stays short). */
export function withStoreErrors(t: Translate, line: string, storeErrors: number): string {
  if (storeErrors === 0) return line;
  return t('status.withStoreErrors', { counts: line, errors: t('status.count.storeErrors', { count: storeErrors }) });
}
