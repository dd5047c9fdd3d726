/**
 * The node's status line: its counts since it started (from its telemetry
 * record), the Redis connection's state, and the latest store failure
 * (from its store's health). Status changes travel to every open editor,
 * so a change of the counts redraws the line at most every `intervalMs`
 * rather than per message; a change of the store's health at once.
 */
import { errorMessage } from '../core/parse/errors';
import type { Node } from './api';
import type { StoreHealth } from './store-health';

export type Translate = (key: string, subs?: Record<string, string | number>) => string;

/** A node's counts as its status line shows them, e.g. "12 admitted / 30 suppressed". */
export interface StatusCounts {
  line(t: Translate): string;
  /** Tells `changed` of every change of the counts from now on. */
  follow(changed: () => void): void;
}

export class StatusBoard {
  private timer: NodeJS.Timeout | undefined;
  private lastDrawn = 0;
  private stopped = false;

  constructor(
    private readonly node: Pick<Node, 'status'>,
    private readonly counts: StatusCounts,
    private readonly health: StoreHealth,
    private readonly t: Translate,
    private readonly intervalMs = 500,
  ) {
    health.follow(() => this.draw());
    counts.follow(() => this.changed());
  }

  /** A count changed: redraw now, or once the interval has passed. */
  changed(): void {
    if (this.timer !== undefined || this.stopped) return;
    const wait = this.lastDrawn + this.intervalMs - Date.now();
    if (wait <= 0) this.draw();
    else this.timer = setTimeout(() => this.draw(), wait);
  }

  stop(): void {
    this.stopped = true;
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
  }

  private draw(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    if (this.stopped) return;
    this.lastDrawn = Date.now();
    const { t, health } = this;
    const counts = this.counts.line(t);
    // A connection that has failed says why, whether it ever got ready or not:
    // that cause, when known, comes before the failure of a single decision.
    const connection = health.connection;
    if (connection?.state === 'unusable') {
      // Connected, to a server that cannot run the scripts: what it answered, from deploy on.
      this.node.status({ fill: 'red', shape: 'ring', text: t('status.storeFailed', { error: errorMessage(connection.error), counts }) });
      return;
    }
    const broken = connection !== undefined && connection.state !== 'ready' && connection.error !== undefined;
    if (health.failure !== undefined && !broken) {
      this.node.status({ fill: 'red', shape: 'ring', text: t('status.storeFailed', { error: health.failure, counts }) });
      return;
    }
    const state = broken ? 'reconnecting' : connection?.state;
    switch (state) {
      case 'connecting':
        this.node.status({ fill: 'yellow', shape: 'ring', text: t('status.connecting', { counts }) });
        return;
      case 'reconnecting':
        // The cause in the network's or Redis's words: ECONNREFUSED 127.0.0.1:6390, WRONGPASS, ENOTFOUND.
        // A connection closed without an error (a server shut down cleanly) has
        // none until the first reconnect attempt fails: say so, not "?".
        this.node.status({
          fill: 'red',
          shape: 'ring',
          text: t('status.reconnecting', { counts, cause: connection?.error?.message ?? t('status.causeNotKnownYet') }),
        });
        return;
      default:
        if (health.notSaving !== undefined) this.node.status({ fill: 'yellow', shape: 'ring', text: t('status.notSaving', { cause: health.notSaving, counts }) });
        else this.node.status({ fill: 'green', shape: 'dot', text: counts });
    }
  }
}
