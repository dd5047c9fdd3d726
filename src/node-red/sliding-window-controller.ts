import { unparsedKind } from '../core/parse/fields';
import { readPing, type RawPing } from '../core/window/ping';
import type { Ping } from '../core/window/sliding-window';
import { windowCodec } from '../persist/codecs';
import { MemoryWindowStore, type WindowEntry } from '../stores/memory-window-store';
import { RedisWindowStore } from '../stores/redis-window-store';
import type { Replies, WindowOutcome, WindowStore } from '../stores/types';
import type { DoneFunction, Node, NodeAPI, NodeMessage, SendFunction } from './api';
import { errorMessage, toError } from '../core/parse/errors';
import type { Leaving } from './guarded-send';
import type { NodeInsight } from './insight';
import { fingerprintOf, LostDecisions } from './lost-decisions';
import { NodeLifecycle } from './node-lifecycle';
import { readSlidingWindowConfig, type SlidingWindowConfig, type SlidingWindowDef } from './sliding-window-config';
import { countsLine, withStoreErrors } from './status-counts';
import type { BoundStore } from './store-binding';
import type { StoreFailurePolicy } from './store-failure';

export const SLIDING_WINDOW_TYPE = 'sliding-window-dedup';

/** A message waiting on the store for its decision: the one object a decision allocates. */
interface Waiting extends Leaving {
  ping: Ping;
  send: SendFunction;
}

/**
 * The sliding-window node's behaviour: read a ping from the message, ask the
 * store, route by the answer. The entry file (src/sliding-window-dedup.ts)
 * only hands it the node.
 */
export class SlidingWindowController {
  /** `storeErrors`: messages sent to Catch because the store failed (onStoreError `error`). */
  readonly counts = { admitted: 0, suppressed: 0, rejected: 0, storeErrors: 0 };
  readonly life: NodeLifecycle;
  private config!: SlidingWindowConfig;
  private bound!: BoundStore<WindowStore>;
  private failure!: StoreFailurePolicy;
  private insight!: NodeInsight;
  private readonly lost = new LostDecisions<true>(3_600_000);
  private readonly raw: RawPing = { assetId: undefined, time: undefined, lat: undefined, lon: undefined, heading: undefined, accuracy: undefined, events: undefined };
  private readonly replies: Replies<WindowOutcome, Waiting>;

  constructor(
    private readonly RED: NodeAPI,
    node: Node,
  ) {
    this.life = new NodeLifecycle(RED, node, SLIDING_WINDOW_TYPE, (t) => {
      const { storeErrors, ...shown } = this.counts;
      return withStoreErrors(t, countsLine(t, shown), storeErrors);
    });
    // Made once per node: a waiting message costs its Waiting object only.
    this.replies = this.life.answers(
      (outcome, w) => this.route(w, outcome),
      (error, w) => this.storeFailed(w, error),
    );
  }

  /** Reads the config and binds the store; a config that cannot start answers every message with the reason. */
  start(def: SlidingWindowDef): void {
    this.life.start<SlidingWindowDef, SlidingWindowConfig, WindowStore, MemoryWindowStore, WindowEntry, RedisWindowStore>(def, {
      read: (upgraded) => readSlidingWindowConfig(this.RED, upgraded),
      stores: (config) => ({
        memory: {
          make: () => new MemoryWindowStore(config.settings),
          reuse: (store) => store.reconfigure(config.settings),
          codec: windowCodec,
        },
        redis: (client, options) => new RedisWindowStore(client, config.settings, { ...options, onCallbackError: this.life.callbackFailed }),
      }),
      subject: (config) => ({
        settings: () => ({ ...config.settings, eventFields: config.paths.events.map((p) => p.label), accuracyProperty: config.paths.accuracy?.label ?? '' }),
        sampleSize: config.sampleSize,
      }),
      ready: ({ config, bound, failure, insight }) => {
        this.config = config;
        this.bound = bound;
        this.failure = failure;
        this.insight = insight;
      },
      input: (msg, send, done) => this.input(msg, send, done),
    });
  }

  input(msg: NodeMessage, send: SendFunction, done: DoneFunction): void {
    let w: Waiting | undefined;
    try {
      w = this.read(msg, send, done);
    } catch (error) {
      // Reading a message may not throw, whatever it holds; should it, the message still leaves, with the reason.
      this.life.out.end(msg, done, toError(error));
      return;
    }
    if (w === undefined) return;
    this.life.begin();
    try {
      this.bound.store.decide(w.ping, this.replies, w);
    } catch (error) {
      // Thrown before the store answered (an answer ends the message, and never throws).
      if (!w.ended) this.replies.error(error, w);
      else this.life.callbackFailed(error);
    }
  }

  /** The message's ping, waiting for its decision; undefined when the message has ended already (a reset, a bad ping). */
  private read(msg: NodeMessage, send: SendFunction, done: DoneFunction): Waiting | undefined {
    if (this.life.reset(msg, this.bound.store, done)) return undefined;
    const paths = this.config.paths;
    const unparsed = paths.insidePayload ? unparsedKind(msg.payload) : undefined;
    if (unparsed !== undefined) {
      this.rejected(msg, done, new Error(this.life.t(`errors.payloadIs${unparsed}`)));
      return undefined;
    }
    // One object for every message, filled in place: readPing keeps nothing of it.
    const raw = this.raw;
    raw.assetId = paths.assetId.read(msg);
    raw.time = paths.time.read(msg);
    raw.lat = paths.lat.read(msg);
    raw.lon = paths.lon.read(msg);
    raw.heading = paths.heading === undefined ? undefined : paths.heading.read(msg);
    raw.accuracy = paths.accuracy === undefined ? undefined : paths.accuracy.read(msg);
    raw.events = paths.events.length === 0 ? undefined : paths.events.map((p) => p.read(msg));
    const read = readPing(raw);
    if (!read.ok) {
      const label = paths[read.field]?.label ?? read.field;
      this.rejected(msg, done, new Error(this.life.t('errors.badField', { path: label, value: read.value, problem: read.problem })));
      return undefined;
    }
    const ping = read.ping;
    if (!this.lost.empty && this.lost.take(fingerprintOf(msg._msgid, contentOf(ping))) === true) ping.retry = true;
    return { msg, ping, send, done, left: false, ended: false };
  }

  /** A message that cannot be decided: counted, and ended with the reason for a Catch node. */
  private rejected(msg: NodeMessage, done: DoneFunction, error: Error): void {
    this.counts.rejected++;
    this.insight.rejected(1);
    this.life.board.changed();
    this.life.out.end(msg, done, error);
  }

  private route(w: Waiting, outcome: WindowOutcome): void {
    const { msg, ping } = w;
    msg.dedup = {
      decision: outcome.admit ? 'admitted' : 'suppressed',
      reason: outcome.reason,
      assetId: ping.assetId,
      dtSeconds: outcome.dtSeconds,
      distanceMetres: outcome.distanceMetres,
      headingChange: outcome.headingChange,
      accepted: outcome.accepted,
      suppressed: outcome.suppressed,
      store: this.bound.kind,
    };
    if (outcome.admit) this.counts.admitted++;
    else this.counts.suppressed++;
    this.insight.windowDecided(ping, outcome);
    this.life.board.changed();
    this.leave(w, outcome.admit ? 0 : 1);
  }

  /** Sends the message on its output (or, if it cannot be sent, to Catch) and ends it. */
  private leave(w: Waiting, port: number): void {
    this.life.out.send(w.send, port, w.msg);
    w.left = true;
    this.life.out.finish(w);
  }

  private storeFailed(w: Waiting, error: unknown): void {
    const { msg, ping } = w;
    this.insight.storeFailed(error);
    const raised = this.failure.failed(error);
    if (raised !== undefined) {
      // The call may still run on the server: a retry of this very message is recognised.
      this.lost.remember(fingerprintOf(msg._msgid, contentOf(ping)), true);
      this.counts.storeErrors++;
      this.life.board.changed();
      this.life.failed(w, raised);
      return;
    }
    msg.dedup = {
      decision: 'admitted',
      reason: 'store-unavailable',
      error: errorMessage(error),
      assetId: ping.assetId,
      dtSeconds: null,
      distanceMetres: null,
      headingChange: null,
      accepted: null,
      suppressed: null,
      store: this.bound.kind,
    };
    this.counts.admitted++;
    this.insight.windowDecided(ping, undefined);
    this.life.board.changed();
    this.leave(w, 0);
  }
}

/** What a ping carries, for recognising the same message retried. */
function contentOf(ping: Ping): string {
  return `${ping.assetId}|${ping.t}|${ping.lat}|${ping.lon}`;
}
