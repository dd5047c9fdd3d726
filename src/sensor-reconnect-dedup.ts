import { showValue } from './core/fields';
import { idempotencyKey } from './core/idempotency-key';
import { isRecord, readReading, type ReadingFields, type ReadingRejection } from './core/reading';
import type { DoneFunction, Node, NodeAPI, NodeDef, NodeMessage, SendFunction } from './node-red/api';
import { isBlank, oneOf, optionalNumber, positiveInteger, positiveNumber } from './node-red/config-values';
import { upgradeConfig } from './node-red/migrations';
import { NodeLifecycle } from './node-red/node-lifecycle';
import { bindStore, type BoundStore } from './node-red/store-binding';
import { errorMessage, StoreFailurePolicy } from './node-red/store-failure';
import { MemorySeenStore } from './stores/memory-seen-store';
import { RedisSeenStore } from './stores/redis-seen-store';
import type { SeenClaim, SeenStore } from './stores/types';

interface SensorReconnectDef extends NodeDef {
  store?: string;
  redis?: string;
  ttlSeconds?: string | number;
  maxKeys?: string | number;
  deviceField?: string;
  seqField?: string;
  tsField?: string;
  contentFields?: string;
  valueMin?: string | number;
  valueMax?: string | number;
  outputMode?: string;
  onStoreError?: string;
}

const DEFAULTS = {
  ttlSeconds: 21_600,
  maxKeys: 100_000,
  deviceField: 'device_id',
  seqField: 'seq',
  tsField: 'ts',
  contentFields: 'fill_pct',
  valueMin: 0,
  valueMax: 100,
} as const;

type OutputMode = 'burst' | 'each';

/** A reading that passed validation, with its place in the input. */
interface Keyed {
  index: number;
  raw: unknown;
  key: string;
  /** Index into the claims sent to the store; -1 for a repeat of a key earlier in the same input. */
  claimAt: number;
}

interface Rejected {
  index: number;
  raw: unknown;
  rejection: ReadingRejection;
}

/** One input message, read: its readings in order, and the keys to claim. */
interface Prepared {
  /** True when msg.payload was an array; a single reading is routed whole. */
  burst: boolean;
  received: number;
  keyed: Keyed[];
  rejected: Rejected[];
  claims: SeenClaim[];
}

interface Settled {
  admitted: Keyed[];
  suppressed: Keyed[];
  /** Set when the store failed and the readings were admitted without it. */
  storeError?: string;
}

interface Counts {
  received: number;
  unique: number;
  duplicates_suppressed: number;
  rejected: number;
}

export = function registerSensorReconnectDedup(RED: NodeAPI): void {
  function SensorReconnectDedupNode(this: Node, def: SensorReconnectDef): void {
    RED.nodes.createNode(this, def);
    const node = this;
    const totals = { received: 0, unique: 0, suppressed: 0, rejected: 0 };
    const life = new NodeLifecycle(RED, node, 'sensor-reconnect-dedup', (t) => t('status.counts', totals));
    const { t, board } = life;

    let bound: BoundStore<SeenStore> | undefined;
    let fields: ReadingFields;
    let outputMode: OutputMode;
    let failure: StoreFailurePolicy;
    life.closeWith(() => bound);
    try {
      def = upgradeConfig('sensor-reconnect-dedup', def, (version, supported) => node.warn(t('warnings.newerConfig', { version, supported })));
      const settingMax = RED.settings.sensorReconnectDedupMaxKeys;
      const settings = {
        ttlSeconds: positiveNumber(def.ttlSeconds, 'ttlSeconds', DEFAULTS.ttlSeconds),
        // Blank in the editor means "use the runtime setting", as does absent.
        maxKeys: positiveInteger(isBlank(def.maxKeys) ? settingMax : def.maxKeys, 'maxKeys', DEFAULTS.maxKeys),
      };
      fields = readingFields(def);
      outputMode = oneOf(def.outputMode, ['burst', 'each'], 'burst');
      failure = new StoreFailurePolicy(node, oneOf(def.onStoreError, ['admit', 'error'], 'admit'), board, t);
      bound = bindStore<SeenStore>(RED, node.id, oneOf(def.store, ['memory', 'redis'], 'memory'), def.redis, board, t, {
        memory: () => new MemorySeenStore(settings),
        redis: (client, options) => new RedisSeenStore(client, settings, options),
      });
    } catch (error) {
      life.refuseMessages(error);
      return;
    }
    const store = bound;
    board.changed();

    /** Where a field sits in the message, for error texts: msg.payload[2].seq */
    function locate(burst: boolean, index: number, field: string | null): string {
      const reading = burst ? `msg.payload[${index}]` : 'msg.payload';
      if (field === null) return reading;
      return /^[A-Za-z_$][\w$]*$/.test(field) ? `${reading}.${field}` : `${reading}[${JSON.stringify(field)}]`;
    }

    function rejectionError(burst: boolean, r: Rejected): Error {
      return new Error(
        t('errors.badReading', { where: locate(burst, r.index, r.rejection.field), value: r.rejection.value, problem: r.rejection.problem }),
      );
    }

    function rejectionInfo(r: Rejected): Record<string, unknown> {
      return { index: r.index, field: r.rejection.field, value: r.rejection.value, problem: r.rejection.problem };
    }

    function prepare(readings: readonly unknown[], burst: boolean): Prepared {
      const prepared: Prepared = { burst, received: readings.length, keyed: [], rejected: [], claims: [] };
      // A key repeated inside one input is a duplicate whatever the store
      // says, so only its first occurrence is claimed: that also keeps an
      // in-burst replay collapsed when the store is down.
      const claimOfKey = new Map<string, number>();
      // An index loop, not forEach: a sparse array's holes must be counted
      // (and rejected), or received would exceed what the audit accounts for.
      for (let index = 0; index < readings.length; index++) {
        const raw = readings[index];
        const read = readReading(raw, fields);
        if (!read.ok) {
          prepared.rejected.push({ index, raw, rejection: read });
          continue;
        }
        const { deviceId, seq, epochMicros, measures } = read.reading;
        const key = idempotencyKey({ deviceId, seq, timeField: fields.ts, epochMicros, measures });
        if (claimOfKey.has(key)) {
          prepared.keyed.push({ index, raw, key, claimAt: -1 });
          continue;
        }
        claimOfKey.set(key, prepared.claims.length);
        prepared.keyed.push({ index, raw, key, claimAt: prepared.claims.length });
        prepared.claims.push({ deviceId, seq, hash: key.slice(key.lastIndexOf(':') + 1), key });
      }
      return prepared;
    }

    /** answers === undefined: the store failed, and every first occurrence is admitted. */
    function settle(prepared: Prepared, answers: readonly boolean[] | undefined, storeError?: string): Settled {
      const settled: Settled = { admitted: [], suppressed: [], ...(storeError !== undefined ? { storeError } : {}) };
      for (const k of prepared.keyed) {
        const first = k.claimAt >= 0 && (answers === undefined || answers[k.claimAt] === true);
        (first ? settled.admitted : settled.suppressed).push(k);
      }
      return settled;
    }

    function countsOf(prepared: Prepared, settled: Settled): Counts {
      return {
        received: prepared.received,
        unique: settled.admitted.length,
        duplicates_suppressed: settled.suppressed.length,
        rejected: prepared.rejected.length,
      };
    }

    function tally(counts: Counts): void {
      totals.received += counts.received;
      totals.unique += counts.unique;
      totals.suppressed += counts.duplicates_suppressed;
      totals.rejected += counts.rejected;
      board.changed();
    }

    function reasonOf(settled: Settled): { reason: string; error?: string } {
      return settled.storeError === undefined
        ? { reason: 'new' }
        : { reason: 'store-unavailable', error: settled.storeError };
    }

    function routeSingle(msg: NodeMessage, prepared: Prepared, settled: Settled, send: SendFunction, done: DoneFunction): void {
      const counts = countsOf(prepared, settled);
      tally(counts);
      const admitted = settled.admitted[0];
      if (admitted !== undefined) {
        msg.dedup = { decision: 'admitted', ...reasonOf(settled), key: admitted.key, ...counts, store: store.kind };
        send([msg, null]);
      } else {
        const suppressed = settled.suppressed[0] as Keyed;
        msg.dedup = { decision: 'suppressed', reason: 'duplicate', key: suppressed.key, ...counts, store: store.kind };
        send([null, msg]);
      }
      done();
    }

    function routeBurst(msg: NodeMessage, prepared: Prepared, settled: Settled, send: SendFunction, done: DoneFunction): void {
      const counts = countsOf(prepared, settled);
      tally(counts);
      const why = reasonOf(settled);
      const keys = settled.admitted.map((k) => k.key);
      // The audit copy is taken before msg becomes output 1; Node-RED clones
      // every message of a send after the first, so sharing is safe.
      const audit: NodeMessage = {
        ...msg,
        payload: {
          ...counts,
          suppressed: settled.suppressed.map((k) => ({ index: k.index, key: k.key, reading: k.raw })),
          rejections: prepared.rejected.map(rejectionInfo),
        },
        dedup: { decision: 'audit', ...why, keys, ...counts, store: store.kind },
      };
      let admitted: NodeMessage | NodeMessage[] | null = null;
      if (settled.admitted.length > 0 && outputMode === 'burst') {
        msg.payload = settled.admitted.map((k) => k.raw);
        msg.dedup = { decision: 'admitted', ...why, keys, ...counts, store: store.kind };
        admitted = msg;
      } else if (settled.admitted.length > 0) {
        admitted = settled.admitted.map((k) => ({
          ...msg,
          payload: k.raw,
          dedup: { decision: 'admitted', ...why, key: k.key, index: k.index, ...counts, store: store.kind },
        }));
      }
      send([admitted, audit]);
      done();
    }

    function route(msg: NodeMessage, prepared: Prepared, settled: Settled, send: SendFunction, done: DoneFunction): void {
      if (prepared.burst) routeBurst(msg, prepared, settled, send, done);
      else routeSingle(msg, prepared, settled, send, done);
    }

    function storeFailed(msg: NodeMessage, prepared: Prepared, error: unknown, send: SendFunction, done: DoneFunction): void {
      const raised = failure.failed(error);
      if (raised !== undefined) {
        // Not passed on, so counted with the readings that were not decided.
        const undecided = prepared.keyed.length;
        tally({ received: prepared.received, unique: 0, duplicates_suppressed: 0, rejected: prepared.rejected.length + undecided });
        done(raised);
        return;
      }
      route(msg, prepared, settle(prepared, undefined, errorMessage(error)), send, done);
    }

    function decide(msg: NodeMessage, prepared: Prepared, send: SendFunction, done: DoneFunction): void {
      if (prepared.claims.length === 0) {
        route(msg, prepared, settle(prepared, []), send, done);
        return;
      }
      life.settle(
        () => store.store.claim(prepared.claims),
        (answers) => route(msg, prepared, settle(prepared, answers), send, done),
        (error) => storeFailed(msg, prepared, error, send, done),
      );
    }

    node.on('input', (msg, send, done) => {
      if (life.reset(msg, store.store, done)) return;
      const payload = msg.payload;
      if (Array.isArray(payload)) {
        const prepared = prepare(payload, true);
        // One error per bad reading, each carrying that reading, so a Catch
        // flow can quarantine it; the burst itself ends with a plain done().
        for (const r of prepared.rejected) {
          node.error(rejectionError(true, r), {
            ...msg,
            payload: r.raw,
            dedup: { decision: 'rejected', ...rejectionInfo(r) },
          });
        }
        decide(msg, prepared, send, done);
        return;
      }
      if (!isRecord(payload)) {
        tally({ received: 1, unique: 0, duplicates_suppressed: 0, rejected: 1 });
        done(new Error(t('errors.badPayload', { value: showValue(payload) })));
        return;
      }
      const prepared = prepare([payload], false);
      const bad = prepared.rejected[0];
      if (bad !== undefined) {
        tally({ received: 1, unique: 0, duplicates_suppressed: 0, rejected: 1 });
        msg.dedup = { decision: 'rejected', ...rejectionInfo(bad) };
        // done(err) alone reaches the Catch node; node.error as well would report it twice.
        done(rejectionError(false, bad));
        return;
      }
      decide(msg, prepared, send, done);
    });
  }

  RED.nodes.registerType('sensor-reconnect-dedup', SensorReconnectDedupNode, {
    settings: { sensorReconnectDedupMaxKeys: { value: DEFAULTS.maxKeys, exportable: true } },
  });
};

function fieldName(value: string | undefined, fallback: string): string {
  const name = (value ?? '').trim();
  return name === '' ? fallback : name;
}

/** The reading's field names and range from the config, checked for clashes. */
function readingFields(def: SensorReconnectDef): ReadingFields {
  const device = fieldName(def.deviceField, DEFAULTS.deviceField);
  const seq = fieldName(def.seqField, DEFAULTS.seqField);
  const ts = fieldName(def.tsField, DEFAULTS.tsField);
  if (new Set([device, seq, ts]).size < 3) {
    throw new Error(`the device, seq and timestamp fields must differ, not ${JSON.stringify([device, seq, ts])}`);
  }
  const listed = fieldName(def.contentFields, DEFAULTS.contentFields)
    .split(',')
    .map((name) => name.trim())
    .filter((name) => name !== '');
  // The timestamp is always hashed, under its own name: listing it again changes nothing.
  const measures = [...new Set(listed)].filter((name) => name !== ts);
  for (const name of measures) {
    if (name === device || name === seq) {
      throw new Error(`contentFields lists ${JSON.stringify(name)}, which is already the device or seq field`);
    }
  }
  // Absent means the default range; blank (cleared in the editor) means unbounded.
  const min = def.valueMin === undefined ? DEFAULTS.valueMin : optionalNumber(def.valueMin, 'valueMin');
  const max = def.valueMax === undefined ? DEFAULTS.valueMax : optionalNumber(def.valueMax, 'valueMax');
  if (min !== undefined && max !== undefined && min > max) {
    throw new Error(`valueMin (${min}) must not be greater than valueMax (${max})`);
  }
  return {
    device,
    seq,
    ts,
    measures,
    ...(min !== undefined ? { min } : {}),
    ...(max !== undefined ? { max } : {}),
  };
}
