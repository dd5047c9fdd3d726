import { auditReason, auditValue, countsOf, prepareReadings, settleReadings, type KeyResult, type Prepared, type Rejected, type Settled } from '../core/sensor/burst';
import { errorMessage, toError } from '../core/parse/errors';
import { showValue, unparsedKind } from '../core/parse/fields';
import { locate } from '../core/parse/property-path';
import { deviceOfKey } from '../core/sensor/idempotency-key';
import { propertyKey, readingKeyer } from '../core/sensor/keys';
import { isRecord } from '../core/sensor/reading';
import { nextToken } from '../core/structures/call-token';
import type { ClaimRequest, Replies, SeenStore } from '../stores/types';
import { sensorTelemetry } from '../telemetry/records';
import type { SensorTelemetry } from '../telemetry/sensor-telemetry';
import { SENSOR_TYPE } from '../telemetry/subjects';
import type { DoneFunction, NodeAPI, NodeMessage, SendFunction } from './api';
import { registerClaimHolder, unregisterClaimHolder, type ClaimHolder } from './claim-registry';
import { fingerprintOf, LostDecisions } from './lost-decisions';
import { DecidingController } from './deciding-controller';
import type { NodeParts } from './node-lifecycle';
import type { Leaving } from './outlet';
import { resetTarget } from './reset';
import type { SensorConfig } from './sensor-config';
import type { StatusCounts } from './status-board';
import { sensorStatus } from './status-counts';
import type { OwnStore } from './store-binding';
import type { StoreCall } from './store-calls';

/** A message waiting on the store: the one object a decision allocates. */
interface Waiting extends Leaving {
  prepared: Prepared;
  token: number;
}

/**
 * The sensor reconnect node's behaviour: key each reading (core/sensor/keys),
 * claim the keys of a message in one request (core/sensor/burst decides the
 * repeats within it), route the admitted readings and the audit, and write
 * the outcome to the node's telemetry once. Built by node-lifecycle's start
 * with everything it needs.
 */
export class SensorController extends DecidingController<SensorConfig, SeenStore> {
  readonly status: StatusCounts;
  private readonly RED: NodeAPI;
  private readonly nodeId: string;
  private readonly telemetry: SensorTelemetry;
  /** Key mode `reading`: the node's fields, ready to key a reading. */
  private readonly keyReading: ((raw: unknown, device?: unknown) => KeyResult) | undefined;
  private readonly lost = new LostDecisions<number>(3_600_000);
  private readonly replies: Replies<number[], Waiting>;
  private readonly claim: StoreCall<ClaimRequest, number[], Waiting>;
  /**
   * Messages whose keys are still being worked out (a JSONata key), and the
   * ones behind them: each runs once everything before it has, so that the
   * store sees messages, and resets, in the order they came.
   */
  private readonly queue: { run: (() => void) | undefined }[] = [];

  constructor(parts: NodeParts<SensorConfig, OwnStore<SeenStore>>) {
    super(parts);
    const { RED, node, config, store, onClose } = parts;
    this.RED = RED;
    this.nodeId = node.id;
    this.keyReading = config.fields === undefined ? undefined : readingKeyer(config.fields);
    this.telemetry = this.running(sensorTelemetry({ type: SENSOR_TYPE, id: node.id, name: node.name ?? '', store: store.kind, settings: { ...config.seen, outputMode: config.outputMode } }), parts);
    this.status = sensorStatus(this.telemetry, config.seen.confirm);
    this.replies = this.calls.answers(
      (codes, w) => this.route(w, settleReadings(w.prepared, codes, undefined, config.seen.confirm)),
      (error, w) => this.storeFailed(w, error),
    );
    const seen = this.store;
    this.claim = (request, replies, w) => seen.claim(request, replies, w);
    // A dedup confirm node finds this node's seen-set by its id.
    const byDevice = config.seen.keyMode === 'reading';
    const holder: ClaimHolder = {
      store: seen,
      claimOf: (key) => ({ key, group: byDevice ? deviceOfKey(key) : key }),
      confirm: config.seen.confirm,
      leaseSeconds: config.seen.leaseSeconds,
    };
    registerClaimHolder(node.id, holder);
    onClose(() => unregisterClaimHolder(node.id, holder));
  }

  input(msg: NodeMessage, send: SendFunction, done: DoneFunction): void {
    try {
      this.read(msg, send, done);
    } catch (error) {
      // Reading a message may not throw, whatever it holds (its decision
      // never does); should it, the message still leaves, with the reason.
      this.rejectedOne();
      this.out.end(msg, done, toError(error));
    }
  }

  /** Keys the message's readings and hands them on to decide(), in order with the messages before. */
  private read(msg: NodeMessage, send: SendFunction, done: DoneFunction): void {
    if (resetTarget(msg) !== undefined) {
      this.inOrder(() => this.calls.reset(msg, send, done, this.store));
      return;
    }
    const payload = msg.payload;
    const burst = Array.isArray(payload);
    const source = this.config.keySource;
    // Text still to parse, where the node reads inside the payload: say so, rather than name a field it cannot find.
    const unparsed = source === undefined || (source.type === 'msg' && source.path.insidePayload) ? unparsedKind(payload) : undefined;
    if (unparsed !== undefined) {
      this.rejectedOne();
      this.out.end(msg, done, new Error(this.t(`errors.payloadIs${unparsed}`)));
      return;
    }
    if (source === undefined) {
      // Key mode `reading`: the payload holds the readings.
      if (!burst && !isRecord(payload)) {
        this.rejectedOne();
        this.out.end(msg, done, new Error(this.t('errors.badPayload', { value: showValue(payload) })));
        return;
      }
      const keyReading = this.keyReading;
      if (keyReading === undefined) throw new Error('key mode reading without its fields');
      // A device id from the message (msg.topic) is read once and is every reading's.
      const device = this.config.deviceFromMessage?.read(msg);
      const prepared = prepareReadings(burst ? (payload as unknown[]) : [payload], burst, (raw) => keyReading(raw, device));
      this.inOrder(() => this.decide(msg, prepared, send, done));
      return;
    }
    // Key mode `property`: each reading's key is read from the message, the
    // reading as its payload.
    const readings = burst ? (payload as unknown[]) : [payload];
    if (source.type === 'msg') {
      // One copy of the message for the whole burst, each reading put in as
      // its payload in turn: the path is read at once and keeps nothing.
      const view: NodeMessage = burst ? { ...msg } : msg;
      // Where the key was read: msg.payload.id of a burst's third reading is msg.payload[2].id.
      const where = (index: number): string => (burst ? source.path.label.replace(/^msg\.payload(?=$|[.[])/, `msg.payload[${index}]`) : source.path.label);
      const prepared = prepareReadings(readings, burst, (raw, index) => {
        view.payload = raw;
        const key = propertyKey(source.path.read(view));
        return key.ok ? key : located(key, where(index));
      });
      this.inOrder(() => this.decide(msg, prepared, send, done));
      return;
    }
    const messageOf = (raw: unknown): NodeMessage => (burst ? { ...msg, payload: raw } : msg);
    const slot: { run: (() => void) | undefined } = { run: undefined };
    this.queue.push(slot);
    const results = new Array<KeyResult>(readings.length);
    let left = readings.length;
    const finish = (): void => {
      slot.run = () => this.decide(msg, prepareReadings(readings, burst, (_raw, index) => results[index] as KeyResult), send, done);
      this.drain();
    };
    if (left === 0) finish();
    readings.forEach((raw, index) => {
      const where = burst ? `msg.payload[${index}]` : 'msg';
      let answered = false;
      const keyed = (error: unknown, value?: unknown): void => {
        // Once per reading, should the evaluation both answer and throw.
        if (answered) return;
        answered = true;
        results[index] = error
          ? { ok: false, path: null, value: source.text, problem: `the key expression failed: ${errorMessage(error)}`, where }
          : located(propertyKey(value), `${where} → ${source.text}`);
        if (--left === 0) finish();
      };
      try {
        this.RED.util.evaluateJSONataExpression(source.expression, messageOf(raw), keyed);
      } catch (error) {
        // Thrown, not answered: the key fails, and the queue behind this message still moves.
        keyed(error);
      }
    });
  }

  /** Runs now when nothing waits ahead of it, else in its turn. */
  private inOrder(run: () => void): void {
    if (this.queue.length === 0) {
      run();
      return;
    }
    this.queue.push({ run });
    this.drain();
  }

  private drain(): void {
    while (this.queue.length > 0 && this.queue[0]?.run !== undefined) {
      const slot = this.queue.shift() as { run: () => void };
      slot.run();
    }
  }

  /** Never throws: it runs from the queue too, where a throw would strand the messages behind. */
  private decide(msg: NodeMessage, prepared: Prepared, send: SendFunction, done: DoneFunction): void {
    const w: Waiting = { msg, prepared, token: 0, send, done, left: false, ended: false };
    try {
      if (!prepared.burst) {
        const bad = prepared.rejected[0];
        if (bad !== undefined) {
          this.rejectedOne();
          msg.dedup = { decision: 'rejected', ...this.rejectionInfo(bad) };
          // done(err) alone reaches the Catch node; node.error as well would report it twice.
          this.out.finish(w, this.rejectionError(false, bad));
          return;
        }
      } else {
        // One error per bad reading, each carrying that reading, so a Catch
        // flow can quarantine it; the burst itself ends with a plain done().
        for (const bad of prepared.rejected) {
          this.out.toCatch({ ...msg, payload: bad.raw, dedup: { decision: 'rejected', ...this.rejectionInfo(bad) } }, this.rejectionError(true, bad));
        }
      }
      if (prepared.claims.length === 0) {
        this.route(w, settleReadings(prepared, []));
        return;
      }
      w.token = (this.lost.empty ? undefined : this.lost.take(fingerprint(msg, prepared))) ?? nextToken();
    } catch (error) {
      this.out.rescue(w, error);
      return;
    }
    this.calls.ask(this.claim, { claims: prepared.claims, token: w.token }, this.replies, w);
  }

  private storeFailed(w: Waiting, error: unknown): void {
    const raised = this.failure.failed(error);
    if (raised !== undefined) {
      // The claims may still be made on the server: a retry of this very
      // message claims under the same token, and is admitted again.
      this.lost.remember(fingerprint(w.msg, w.prepared), w.token);
      // Not passed on, so counted with the readings that were not decided.
      this.telemetry.failedToCatch(w.prepared, error);
      this.out.fail(w, raised);
      return;
    }
    this.route(w, settleReadings(w.prepared, undefined, errorMessage(error)), error);
  }

  /** Routes the readings as decided (`storeError`: admitted without the store, which failed with it), after writing them to the node's telemetry. */
  private route(w: Waiting, settled: Settled, storeError?: unknown): void {
    const { msg, prepared, token } = w;
    if (settled.storeError === undefined) this.telemetry.decided(prepared, settled);
    else this.telemetry.admittedWithoutStore(prepared, settled, storeError);
    const counts = countsOf(prepared, settled);
    const store = this.storeKind;
    const claim = { token, node: this.nodeId };
    const reason = settled.storeError === undefined ? { reason: 'new' } : { reason: 'store-unavailable', error: settled.storeError };
    if (!prepared.burst) {
      const admitted = settled.admitted[0];
      if (admitted !== undefined) {
        msg.dedup = { decision: 'admitted', ...reason, ...(settled.replayed > 0 ? { reason: 'replayed' } : {}), key: admitted.key, ...counts, store, ...claim };
        this.out.leave(w, 0);
      } else {
        const suppressed = settled.suppressed[0];
        msg.dedup = { decision: 'suppressed', reason: suppressed?.reason ?? 'duplicate', key: suppressed?.keyed.key, ...counts, store };
        this.out.leave(w, 1);
      }
      return;
    }
    const keys = settled.admitted.map((k) => k.key);
    // The audit is made before msg becomes output 1; every message sent
    // after the first goes as a copy (outlet), so sharing is safe.
    const audit: NodeMessage = {
      ...msg,
      payload: {
        ...counts,
        suppressed: settled.suppressed.map((s) => ({ index: s.keyed.index, key: s.keyed.key, reason: s.reason, reading: s.keyed.raw })),
        rejections: prepared.rejected.map((r) => this.rejectionInfo(r)),
      },
      dedup: { decision: 'audit', ...reason, reason: auditReason(prepared, settled), keys, ...counts, store },
    };
    let admitted: NodeMessage | NodeMessage[] | null = null;
    if (settled.admitted.length > 0 && this.config.outputMode === 'burst') {
      msg.payload = settled.admitted.map((k) => k.raw);
      msg.dedup = { decision: 'admitted', ...reason, keys, ...counts, store, ...claim };
      admitted = msg;
    } else if (settled.admitted.length > 0) {
      admitted = settled.admitted.map((k) => ({
        ...msg,
        payload: k.raw,
        dedup: { decision: 'admitted', ...reason, key: k.key, index: k.index, ...counts, store, ...claim },
      }));
    }
    // In the order one send([admitted, audit]) would deliver them; the
    // burst leaves through its audit (on output 2, or to Catch).
    const out = this.out;
    let first = true;
    if (Array.isArray(admitted)) {
      for (const one of admitted) {
        out.send(w.send, 0, one, !first);
        first = false;
      }
    } else if (admitted !== null) {
      out.send(w.send, 0, admitted);
      first = false;
    }
    out.leave(w, 1, audit, !first);
  }

  /** A message rejected whole, before any reading of it reached the store. */
  private rejectedOne(): void {
    this.telemetry.rejectedOne();
  }

  private rejectionError(burst: boolean, r: Rejected): Error {
    const where = r.where ?? locate(burst ? `msg.payload[${r.index}]` : 'msg.payload', r.path);
    return new Error(this.t('errors.badReading', { where, value: r.value, problem: r.problem }));
  }

  private rejectionInfo(r: Rejected): Record<string, unknown> {
    return { index: r.index, field: r.path?.text ?? null, value: auditValue(r), problem: r.problem };
  }
}

/** A message's fingerprint for LostDecisions: its _msgid and the keys it claims. */
function fingerprint(msg: NodeMessage, prepared: Prepared): string {
  return fingerprintOf(msg._msgid, prepared.claims.map((c) => c.key).join('\n'));
}

/** A property-mode key's rejection, naming where the key was read. */
function located(result: KeyResult, where: string): KeyResult {
  return result.ok ? result : { ...result, where };
}
