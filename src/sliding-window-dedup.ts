import { readPing, type PingField } from './core/ping';
import type { Ping } from './core/sliding-window';
import type { DoneFunction, Node, NodeAPI, NodeDef, NodeMessage, SendFunction } from './node-red/api';
import { isBlank, oneOf, positiveInteger, positiveNumber } from './node-red/config-values';
import { compileMessagePath, type MessagePath } from './node-red/message-path';
import { upgradeConfig } from './node-red/migrations';
import { NodeLifecycle } from './node-red/node-lifecycle';
import { bindStore, type BoundStore } from './node-red/store-binding';
import { errorMessage, StoreFailurePolicy } from './node-red/store-failure';
import { MemoryWindowStore } from './stores/memory-window-store';
import { RedisWindowStore } from './stores/redis-window-store';
import type { WindowOutcome, WindowStore } from './stores/types';

interface SlidingWindowDef extends NodeDef {
  store?: string;
  redis?: string;
  minSeconds?: string | number;
  minMetres?: string | number;
  ttlSeconds?: string | number;
  maxAssets?: string | number;
  assetIdProperty?: string;
  timeProperty?: string;
  latProperty?: string;
  lonProperty?: string;
  onStoreError?: string;
}

/** A message waiting on the Redis store for its decision. */
interface Waiting {
  msg: NodeMessage;
  ping: Ping;
  send: SendFunction;
  done: DoneFunction;
}

const DEFAULTS = {
  minSeconds: 60,
  minMetres: 25,
  ttlSeconds: 21_600,
  maxAssets: 100_000,
  assetIdProperty: 'payload.assetId',
  timeProperty: 'payload.ts',
  latProperty: 'payload.lat',
  lonProperty: 'payload.lon',
} as const;

export = function registerSlidingWindowDedup(RED: NodeAPI): void {
  function SlidingWindowDedupNode(this: Node, def: SlidingWindowDef): void {
    RED.nodes.createNode(this, def);
    const node = this;
    const counts = { admitted: 0, suppressed: 0, rejected: 0 };
    const life = new NodeLifecycle(RED, node, 'sliding-window-dedup', (t) => t('status.counts', counts));
    const { t, board } = life;

    let bound: BoundStore<WindowStore> | undefined;
    let paths: Record<PingField, MessagePath>;
    let failure: StoreFailurePolicy;
    life.closeWith(() => bound);
    try {
      def = upgradeConfig('sliding-window-dedup', def, (version, supported) => node.warn(t('warnings.newerConfig', { version, supported })));
      const settingMax = RED.settings.slidingWindowDedupMaxAssets;
      const settings = {
        minSeconds: positiveNumber(def.minSeconds, 'minSeconds', DEFAULTS.minSeconds),
        minMetres: positiveNumber(def.minMetres, 'minMetres', DEFAULTS.minMetres),
        ttlSeconds: positiveNumber(def.ttlSeconds, 'ttlSeconds', DEFAULTS.ttlSeconds),
        // Blank in the editor means "use the runtime setting", as does absent.
        maxAssets: positiveInteger(isBlank(def.maxAssets) ? settingMax : def.maxAssets, 'maxAssets', DEFAULTS.maxAssets),
      };
      paths = {
        assetId: compileMessagePath(RED, def.assetIdProperty || DEFAULTS.assetIdProperty),
        time: compileMessagePath(RED, def.timeProperty || DEFAULTS.timeProperty),
        lat: compileMessagePath(RED, def.latProperty || DEFAULTS.latProperty),
        lon: compileMessagePath(RED, def.lonProperty || DEFAULTS.lonProperty),
      };
      failure = new StoreFailurePolicy(node, oneOf(def.onStoreError, ['admit', 'error'], 'admit'), board, t);
      bound = bindStore<WindowStore>(RED, node.id, oneOf(def.store, ['memory', 'redis'], 'memory'), def.redis, board, t, {
        memory: () => new MemoryWindowStore(settings),
        redis: (client, options) => new RedisWindowStore(client, settings, options),
      });
    } catch (error) {
      life.refuseMessages(error);
      return;
    }
    const store = bound;
    board.changed();

    function route(msg: NodeMessage, ping: Ping, outcome: WindowOutcome, send: SendFunction, done: DoneFunction): void {
      msg.dedup = {
        decision: outcome.admit ? 'admitted' : 'suppressed',
        reason: outcome.reason,
        assetId: ping.assetId,
        dtSeconds: outcome.dtSeconds,
        distanceMetres: outcome.distanceMetres,
        accepted: outcome.accepted,
        suppressed: outcome.suppressed,
        store: store.kind,
      };
      if (outcome.admit) counts.admitted++;
      else counts.suppressed++;
      board.changed();
      send(outcome.admit ? [msg, null] : [null, msg]);
      done();
    }

    function storeFailed(msg: NodeMessage, ping: Ping, error: unknown, send: SendFunction, done: DoneFunction): void {
      const raised = failure.failed(error);
      if (raised !== undefined) {
        done(raised);
        return;
      }
      msg.dedup = {
        decision: 'admitted',
        reason: 'store-unavailable',
        error: errorMessage(error),
        assetId: ping.assetId,
        dtSeconds: null,
        distanceMetres: null,
        accepted: null,
        suppressed: null,
        store: store.kind,
      };
      counts.admitted++;
      send([msg, null]);
      done();
    }

    // A store that answers through callbacks (Redis) is asked with one small
    // object per message instead of two closures, a promise and its
    // reactions; the memory store answers at once through settle().
    const windowStore = store.store;
    const askLater = windowStore.decideThen?.bind(windowStore);
    const answers = life.answers<WindowOutcome, Waiting>(
      (outcome, w) => route(w.msg, w.ping, outcome, w.send, w.done),
      (error, w) => storeFailed(w.msg, w.ping, error, w.send, w.done),
    );

    node.on('input', (msg, send, done) => {
      if (life.reset(msg, store.store, done)) return;
      const read = readPing({
        assetId: paths.assetId.read(msg),
        time: paths.time.read(msg),
        lat: paths.lat.read(msg),
        lon: paths.lon.read(msg),
      });
      if (!read.ok) {
        counts.rejected++;
        board.changed();
        done(new Error(t('errors.badField', { path: paths[read.field].label, value: read.value, problem: read.problem })));
        return;
      }
      const ping = read.ping;
      if (askLater !== undefined) {
        life.settleThen(askLater, ping, answers, { msg, ping, send, done });
        return;
      }
      life.settle(
        () => store.store.decide(ping),
        (outcome) => route(msg, ping, outcome, send, done),
        (error) => storeFailed(msg, ping, error, send, done),
      );
    });
  }

  RED.nodes.registerType('sliding-window-dedup', SlidingWindowDedupNode, {
    settings: { slidingWindowDedupMaxAssets: { value: DEFAULTS.maxAssets, exportable: true } },
  });
};
