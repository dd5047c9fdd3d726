/**
 * A status line of counts ("3 admitted / 1 suppressed / 0 rejected"). Each
 * count is worded by its own catalog entry, `status.count.<name>`, given
 * `{ count }` as a number: i18next chooses that entry's plural form
 * (`<name>_plural` in the catalogs, which Node-RED 4 and 5 read as
 * `<name>_other`), which one string holding several counts could not do.
 * `status.tally` (or the template named) then puts the worded counts in order.
 *
 * The counts are the node's telemetry record's (src/telemetry), from the
 * node object's start: a redeploy starts the line from zero, while the
 * record (the sidebar's, Prometheus') counts on.
 */
import type { ConfirmTelemetry } from '../telemetry/confirm-telemetry';
import type { SensorTelemetry } from '../telemetry/sensor-telemetry';
import { UNUSABLE_REASONS, type WindowTelemetry } from '../telemetry/window-telemetry';
import type { StatusCounts, Translate } from './status-board';

export function countsLine(t: Translate, counts: Readonly<Record<string, number>>, template = 'status.tally'): string {
  const worded: Record<string, string> = {};
  for (const [name, count] of Object.entries(counts)) worded[name] = t(`status.count.${name}`, { count });
  return t(template, worded);
}

/** `line`, followed by the count of messages the store failed for, once there is one (a healthy node's status stays short). */
function withStoreErrors(t: Translate, line: string, storeErrors: number): string {
  if (storeErrors === 0) return line;
  return t('status.withStoreErrors', { counts: line, errors: t('status.count.storeErrors', { count: storeErrors }) });
}

/**
 * A sliding-window node's line: pings admitted, suppressed, rejected;
 * messages the store failed for. Once the fleet rules have suppressed a
 * ping that was no usable position (no fix, a poor fix, a jump), the
 * suppressed count says how many of each, so a GPS that lost its fix shows
 * on the canvas, not only in the sidebar.
 */
export function windowStatus(record: WindowTelemetry): StatusCounts {
  const since = record.counts();
  return {
    line: (t) => {
      const now = record.counts();
      const suppressed = now.suppressed - since.suppressed;
      const because = UNUSABLE_REASONS.flatMap((reason, i) => {
        const count = (now.unusable[i] ?? 0) - (since.unusable[i] ?? 0);
        return count > 0 ? [t(`status.count.${reason}`, { count })] : [];
      });
      const worded = {
        admitted: t('status.count.admitted', { count: now.admitted - since.admitted }),
        suppressed: because.length === 0 ? t('status.count.suppressed', { count: suppressed }) : t('status.count.suppressedBecause', { count: suppressed, because: because.join(', ') }),
        rejected: t('status.count.rejected', { count: now.rejected - since.rejected }),
      };
      return withStoreErrors(t, t('status.tally', worded), now.storeErrors - since.storeErrors);
    },
    follow: (changed) => record.follow(changed),
  };
}

/** A sensor node's line, by reading; the lease part only while Confirm delivery is on. */
export function sensorStatus(record: SensorTelemetry, confirm: boolean): StatusCounts {
  const since = record.counts();
  return {
    line: (t) => {
      const now = record.counts();
      const shown = {
        received: now.received - since.received,
        unique: now.unique - since.unique,
        suppressed: now.suppressed - since.suppressed,
        rejected: now.rejected - since.rejected,
        ...(confirm ? { expired: now.leaseExpired - since.leaseExpired } : {}),
      };
      return withStoreErrors(t, countsLine(t, shown, confirm ? 'status.tallyConfirm' : 'status.tally'), now.storeErrors - since.storeErrors);
    },
    follow: (changed) => record.follow(changed),
  };
}

/** A confirm node's line: keys confirmed (or released) and messages unmatched. */
export function confirmStatus(record: ConfirmTelemetry, action: 'confirm' | 'release'): StatusCounts {
  const since = record.counts(action);
  return {
    line: (t) => {
      const now = record.counts(action);
      const settled = now.settled - since.settled;
      const unmatched = now.failed - since.failed;
      return action === 'confirm'
        ? countsLine(t, { confirmed: settled, unmatched }, 'status.tallyConfirmed')
        : countsLine(t, { released: settled, unmatched }, 'status.tallyReleased');
    },
    follow: (changed) => record.follow(changed),
  };
}
