import { errorMessage, toError } from '../core/parse/errors';
import { unparsedKind } from '../core/parse/fields';
import { readPing, type RawPing } from '../core/window/ping';
import type { Ping } from '../core/window/sliding-window';
import type { Replies, WindowOutcome, WindowStore } from '../stores/types';
import { windowTelemetry } from '../telemetry/records';
import { WINDOW_TYPE, type WindowSubject } from '../telemetry/subjects';
import type { WindowTelemetry } from '../telemetry/window-telemetry';
import type { DoneFunction, NodeMessage, SendFunction } from './api';
import { fingerprintOf, LostDecisions } from './lost-decisions';
import { DecidingController } from './deciding-controller';
import type { NodeParts } from './node-lifecycle';
import type { Leaving } from './outlet';
import type { SlidingWindowConfig } from './sliding-window-config';
import type { StatusCounts } from './status-board';
import { windowStatus } from './status-counts';
import type { OwnStore } from './store-binding';
import type { StoreCall } from './store-calls';

/** A message waiting on the store for its decision: the one object a decision allocates. */
interface Waiting extends Leaving {
  ping: Ping;
}

/**
 * The sliding-window node's behaviour: read a ping from the message, ask the
 * store, route by the answer, and write the decision to the node's
 * telemetry once. Built by node-lifecycle's start with everything it needs.
 */
export class SlidingWindowController extends DecidingController<SlidingWindowConfig, WindowStore> {
  readonly status: StatusCounts;
  private readonly telemetry: WindowTelemetry;
  private readonly lost = new LostDecisions<true>(3_600_000);
  private readonly raw: RawPing = {
    assetId: undefined,
    time: undefined,
    lat: undefined,
    lon: undefined,
    heading: undefined,
    accuracy: undefined,
    events: undefined,
    value: undefined,
    valid: undefined,
    satellites: undefined,
    hdop: undefined,
  };
  /** Value mode: msg.dedup says by how much the reading changed. */
  private readonly valueMode: boolean;
  // Made once per node: a waiting message costs its Waiting object only.
  private readonly replies: Replies<WindowOutcome, Waiting>;
  private readonly decide: StoreCall<Ping, WindowOutcome, Waiting>;

  constructor(parts: NodeParts<SlidingWindowConfig, OwnStore<WindowStore>>) {
    super(parts);
    const { node, config, store } = parts;
    this.valueMode = config.settings.mode === 'value';
    const subject: WindowSubject = {
      type: WINDOW_TYPE,
      id: node.id,
      name: node.name ?? '',
      store: store.kind,
      settings: { ...config.settings, eventFields: config.paths.events.map((p) => p.label), accuracyProperty: config.paths.accuracy?.label ?? '' },
      sampleSize: config.sampleSize,
    };
    this.telemetry = this.running(windowTelemetry(subject), parts);
    this.status = windowStatus(this.telemetry);
    this.replies = this.calls.answers(
      (outcome, w) => this.route(w, outcome),
      (error, w) => this.storeFailed(w, error),
    );
    const windows = this.store;
    this.decide = (ping, replies, w) => windows.decide(ping, replies, w);
  }

  input(msg: NodeMessage, send: SendFunction, done: DoneFunction): void {
    let w: Waiting | undefined;
    try {
      w = this.read(msg, send, done);
    } catch (error) {
      // Reading a message may not throw, whatever it holds; should it, the message still leaves, with the reason.
      this.out.end(msg, done, toError(error));
      return;
    }
    if (w !== undefined) this.calls.ask(this.decide, w.ping, this.replies, w);
  }

  /** The message's ping, waiting for its decision; undefined when the message has ended already (a reset, a bad ping). */
  private read(msg: NodeMessage, send: SendFunction, done: DoneFunction): Waiting | undefined {
    if (this.calls.reset(msg, send, done, this.store)) return undefined;
    const paths = this.config.paths;
    const unparsed = paths.insidePayload ? unparsedKind(msg.payload) : undefined;
    if (unparsed !== undefined) {
      this.rejected(msg, done, new Error(this.t(`errors.payloadIs${unparsed}`)));
      return undefined;
    }
    // One object for every message, filled in place: readPing keeps nothing of it.
    const raw = this.raw;
    raw.assetId = paths.assetId.read(msg);
    raw.time = paths.time.read(msg);
    raw.lat = paths.lat === undefined ? undefined : paths.lat.read(msg);
    raw.lon = paths.lon === undefined ? undefined : paths.lon.read(msg);
    raw.value = paths.value === undefined ? undefined : paths.value.read(msg);
    raw.heading = paths.heading === undefined ? undefined : paths.heading.read(msg);
    raw.accuracy = paths.accuracy === undefined ? undefined : paths.accuracy.read(msg);
    raw.valid = paths.valid === undefined ? undefined : paths.valid.read(msg);
    raw.satellites = paths.satellites === undefined ? undefined : paths.satellites.read(msg);
    raw.hdop = paths.hdop === undefined ? undefined : paths.hdop.read(msg);
    raw.events = paths.events.length === 0 ? undefined : paths.events.map((p) => p.read(msg));
    // The rule's settings are what reading applies of it too: the mode and the fix's quality.
    const read = readPing(raw, this.config.settings);
    if (!read.ok) {
      const label = paths[read.field]?.label ?? read.field;
      this.rejected(msg, done, new Error(this.t('errors.badField', { path: label, value: read.value, problem: read.problem })));
      return undefined;
    }
    const ping = read.ping;
    if (!this.lost.empty && this.lost.take(fingerprintOf(msg._msgid, contentOf(ping))) === true) ping.retry = true;
    return { msg, ping, send, done, left: false, ended: false };
  }

  /** A message that cannot be decided: counted, and ended with the reason for a Catch node. */
  private rejected(msg: NodeMessage, done: DoneFunction, error: Error): void {
    this.telemetry.rejectedOne();
    this.out.end(msg, done, error);
  }

  private route(w: Waiting, outcome: WindowOutcome): void {
    const { msg, ping } = w;
    const dedup: Record<string, unknown> = {
      decision: outcome.admit ? 'admitted' : 'suppressed',
      reason: outcome.reason,
      assetId: ping.assetId,
      dtSeconds: outcome.dtSeconds,
      distanceMetres: outcome.distanceMetres,
      headingChange: outcome.headingChange,
      accepted: outcome.accepted,
      suppressed: outcome.suppressed,
      store: this.storeKind,
    };
    if (this.valueMode) dedup.valueChange = outcome.valueChange;
    msg.dedup = dedup;
    this.telemetry.decided(ping, outcome);
    this.out.leave(w, outcome.admit ? 0 : 1);
  }

  private storeFailed(w: Waiting, error: unknown): void {
    const { msg, ping } = w;
    const raised = this.failure.failed(error);
    if (raised !== undefined) {
      // The call may still run on the server: a retry of this very message is recognised.
      this.lost.remember(fingerprintOf(msg._msgid, contentOf(ping)), true);
      this.telemetry.failedToCatch(error);
      this.out.fail(w, raised);
      return;
    }
    const dedup: Record<string, unknown> = {
      decision: 'admitted',
      reason: 'store-unavailable',
      error: errorMessage(error),
      assetId: ping.assetId,
      dtSeconds: null,
      distanceMetres: null,
      headingChange: null,
      accepted: null,
      suppressed: null,
      store: this.storeKind,
    };
    if (this.valueMode) dedup.valueChange = null;
    msg.dedup = dedup;
    this.telemetry.admittedWithoutStore(ping, error);
    this.out.leave(w, 0);
  }
}

/** What a ping carries, for recognising the same message retried. */
function contentOf(ping: Ping): string {
  return `${ping.assetId}|${ping.t}|${ping.lat}|${ping.lon}|${ping.value}`;
}
