import { closeRun, type DecidingTelemetry } from '../telemetry/records';
import type { StoreKind } from '../telemetry/subjects';
import type { DoneFunction, NodeMessage, SendFunction } from './api';
import type { Controller, NodeParts } from './node-lifecycle';
import type { Outlet } from './outlet';
import type { StatusCounts, Translate } from './status-board';
import type { OwnStore } from './store-binding';
import type { StoreCalls } from './store-calls';
import { StoreFailurePolicy, type OnStoreError } from './store-failure';

/**
 * What the sliding-window and the sensor controllers are built from alike:
 * a store of their own (memory or Redis) with its failure policy, the way
 * out of their messages, the requests to the store, and the node's
 * telemetry record, which this node object runs until it closes.
 */
export abstract class DecidingController<C extends { onStoreError: OnStoreError }, S> implements Controller {
  abstract readonly status: StatusCounts;
  protected readonly config: C;
  protected readonly store: S;
  /** As msg.dedup.store names it. */
  protected readonly storeKind: StoreKind;
  protected readonly t: Translate;
  protected readonly out: Outlet;
  protected readonly calls: StoreCalls;
  protected readonly failure: StoreFailurePolicy;

  constructor({ node, t, config, store, out, calls, health }: NodeParts<C, OwnStore<S>>) {
    this.config = config;
    this.store = store.store;
    this.storeKind = store.kind;
    this.t = t;
    this.out = out;
    this.calls = calls;
    this.failure = new StoreFailurePolicy(node, config.onStoreError, health, t);
  }

  abstract input(msg: NodeMessage, send: SendFunction, done: DoneFunction): void;

  /** The node's telemetry record, run by this node object (with its store's info) until the node closes. */
  protected running<R extends DecidingTelemetry>(record: R, { store, onClose }: Pick<NodeParts<C, OwnStore<S>>, 'store' | 'onClose'>): R {
    const run = record.start(() => store.info());
    onClose((removed) => closeRun(record, run, removed));
    return record;
  }
}
