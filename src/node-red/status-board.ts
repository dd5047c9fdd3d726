/**
 * The node's status line: running counts, the Redis connection state, and
 * the latest store failure. Status changes travel to every open editor, so
 * the line is redrawn at most every `intervalMs` rather than per message.
 */
import type { ConnectionEvent } from '../redis/shared-connection';
import type { Node } from './api';
import { errorMessage } from '../core/parse/errors';

export class StatusBoard {
  private connection: ConnectionEvent | undefined;
  private failure: string | undefined;
  /** Why the memory store's state is not being saved (e.g. ENOSPC), while it is not. */
  private notSaving: string | undefined;
  private timer: NodeJS.Timeout | undefined;
  private lastDrawn = 0;
  private stopped = false;

  constructor(
    private readonly node: Pick<Node, 'status'>,
    /** The counts, e.g. "12 admitted / 30 suppressed". */
    private readonly describeCounts: () => string,
    private readonly t: (key: string, subs?: Record<string, string | number>) => string,
    private readonly intervalMs = 500,
  ) {}

  connectionChanged(event: ConnectionEvent): void {
    this.connection = event;
    if (event.state === 'ready') this.failure = undefined;
    this.draw();
  }

  storeFailed(error: unknown): void {
    this.failure = errorMessage(error);
    this.draw();
  }

  storeWorked(): void {
    if (this.failure !== undefined) {
      this.failure = undefined;
      this.draw();
    }
  }

  /** Saving the memory store's state started failing (its cause) or works again (undefined). */
  savingChanged(cause: string | undefined): void {
    if (cause === this.notSaving) return;
    this.notSaving = cause;
    this.draw();
  }

  /** A count changed: redraw now, or once the interval has passed. */
  changed(): void {
    if (this.timer !== undefined || this.stopped) return;
    const wait = this.lastDrawn + this.intervalMs - Date.now();
    if (wait <= 0) this.draw();
    else this.timer = setTimeout(() => this.draw(), wait);
  }

  /** A fixed message that replaces the counts, e.g. a configuration error. */
  fixed(fill: 'red' | 'yellow' | 'grey', text: string): void {
    this.stop();
    this.node.status({ fill, shape: 'ring', text });
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
    const counts = this.describeCounts();
    // A connection that has failed says why, whether it ever got ready or not:
    // that cause, when known, comes before the failure of a single decision.
    const connection = this.connection;
    if (connection?.state === 'unusable') {
      // Connected, to a server that cannot run the scripts: what it answered, from deploy on.
      this.node.status({ fill: 'red', shape: 'ring', text: this.t('status.storeFailed', { error: errorMessage(connection.error), counts }) });
      return;
    }
    const broken = connection !== undefined && connection.state !== 'ready' && connection.error !== undefined;
    if (this.failure !== undefined && !broken) {
      this.node.status({ fill: 'red', shape: 'ring', text: this.t('status.storeFailed', { error: this.failure, counts }) });
      return;
    }
    const state = broken ? 'reconnecting' : connection?.state;
    switch (state) {
      case 'connecting':
        this.node.status({ fill: 'yellow', shape: 'ring', text: this.t('status.connecting', { counts }) });
        return;
      case 'reconnecting':
        // The cause in the network's or Redis's words: ECONNREFUSED 127.0.0.1:6390, WRONGPASS, ENOTFOUND.
        // A connection closed without an error (a server shut down cleanly) has
        // none until the first reconnect attempt fails: say so, not "?".
        this.node.status({
          fill: 'red',
          shape: 'ring',
          text: this.t('status.reconnecting', { counts, cause: this.connection?.error?.message ?? this.t('status.causeNotKnownYet') }),
        });
        return;
      default:
        if (this.notSaving !== undefined) this.node.status({ fill: 'yellow', shape: 'ring', text: this.t('status.notSaving', { cause: this.notSaving, counts }) });
        else this.node.status({ fill: 'green', shape: 'dot', text: counts });
    }
  }
}
