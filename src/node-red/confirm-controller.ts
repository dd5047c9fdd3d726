import { CONFIRM_DEFAULTS } from '../core/defaults';
import { errorMessage, toError } from '../core/parse/errors';
import { SETTLE } from '../core/sensor/seen-codes';
import type { Replies, SeenStore, SettleRequest } from '../stores/types';
import type { ConfirmTelemetry, SettleCounts } from '../telemetry/confirm-telemetry';
import { confirmTelemetry } from '../telemetry/records';
import { CONFIRM_TYPE } from '../telemetry/subjects';
import type { DoneFunction, NodeDef, NodeMessage, SendFunction } from './api';
import { oneOf } from './config-values';
import type { Controller, NodeParts } from './node-lifecycle';
import { leaving, type Leaving, type Outlet } from './outlet';
import type { StatusCounts, Translate } from './status-board';
import { confirmStatus } from './status-counts';
import type { ClaimStores } from './store-binding';
import type { StoreCall, StoreCalls } from './store-calls';
import type { StoreHealth } from './store-health';

export interface ConfirmDef extends NodeDef {
  action?: string;
}

export interface ConfirmConfig {
  action: 'confirm' | 'release';
}

export function readConfirmConfig(def: ConfirmDef): ConfirmConfig {
  return { action: oneOf(def.action, 'action', ['confirm', 'release'], CONFIRM_DEFAULTS.action) };
}

interface Waiting extends Leaving {
  keys: string[];
  /** Whether the sensor node holds its keys pending (Confirm delivery on). */
  pendingMode: boolean;
  /** The seen-set of the sensor node that claimed the keys. */
  store: SeenStore;
}

/** What the sensor node puts on an admitted message, as this node reads it. */
interface Claimed {
  node: string;
  token: number;
  keys: string[];
}

/**
 * The dedup confirm node: after the step that proves a delivery (confirm),
 * or from a Catch node (release), it settles the keys a message carries
 * with the token of the claim that admitted them. It needs no wire back to
 * the sensor node: msg.dedup names the node, and its seen-set is found in
 * the claim registry (memory, or Redis through the same dedup-redis
 * connection). A key only the token still holds is settled: a late confirm
 * never confirms another worker's newer claim.
 */
export class ConfirmController implements Controller {
  readonly status: StatusCounts;
  private readonly action: 'confirm' | 'release';
  private readonly stores: ClaimStores;
  private readonly t: Translate;
  private readonly out: Outlet;
  private readonly calls: StoreCalls;
  private readonly health: StoreHealth;
  private readonly telemetry: ConfirmTelemetry;
  private readonly replies: Replies<number[], Waiting>;
  private readonly settle: StoreCall<SettleRequest, number[], Waiting>;

  constructor({ node, t, config, store, out, calls, health }: NodeParts<ConfirmConfig, ClaimStores>) {
    this.action = config.action;
    this.stores = store;
    this.t = t;
    this.out = out;
    this.calls = calls;
    this.health = health;
    // Its counts are kept with the node's id: a redeploy keeps them, and a removed node's are forgotten with it.
    this.telemetry = confirmTelemetry({ type: CONFIRM_TYPE, id: node.id, name: node.name ?? '', action: config.action });
    this.status = confirmStatus(this.telemetry, config.action);
    // Any answer, matched or not, means the store works again (answers() tells the store's health).
    this.replies = calls.answers(
      (codes, w) => this.settled(w, codes),
      (error, w) => {
        this.health.storeFailed(error);
        this.telemetry.storeFailed(error);
        this.out.finish(w, new Error(this.t('errors.storeFailed', { error: errorMessage(error) })));
      },
    );
    this.settle = (request, replies, w) => w.store.settle(request, replies, w);
  }

  input(msg: NodeMessage, send: SendFunction, done: DoneFunction): void {
    let w: Waiting;
    let request: SettleRequest;
    try {
      const claimed = claimedOf(msg.dedup);
      if (typeof claimed === 'string') {
        this.failOne(msg, done, this.t(`errors.${claimed}`));
        return;
      }
      const holder = this.stores.holder(claimed.node);
      if (holder === undefined) {
        this.failOne(msg, done, this.t('errors.noNode', { node: claimed.node }));
        return;
      }
      if (claimed.keys.length === 0) {
        const none: SettleCounts = { settled: 0, late: 0, kept: 0, notHeld: 0 };
        this.report(msg, none);
        this.telemetry.settled(this.action, none, false);
        this.out.leave(leaving(msg, send, done), 0);
        return;
      }
      request = { claims: claimed.keys.map((key) => holder.claimOf(key)), token: claimed.token, action: this.action };
      w = { msg, keys: claimed.keys, pendingMode: holder.confirm, store: holder.store, send, done, left: false, ended: false };
    } catch (error) {
      // Reading a message may not throw, whatever it holds; should it, the message still leaves, with the reason.
      this.out.end(msg, done, toError(error));
      return;
    }
    this.calls.ask(this.settle, request, this.replies, w);
  }

  private settled(w: Waiting, codes: readonly number[]): void {
    const counts: SettleCounts = { settled: 0, late: 0, kept: 0, notHeld: 0 };
    for (const code of codes) {
      if (code === SETTLE.settled) counts.settled++;
      else if (code === SETTLE.lateSettled) counts.late++;
      else if (code === SETTLE.kept) counts.kept++;
      else counts.notHeld++;
    }
    const { late, kept, notHeld } = counts;
    this.report(w.msg, counts);
    const unmatched = late + kept + notHeld;
    this.telemetry.settled(this.action, counts, unmatched > 0);
    if (unmatched === 0) {
      this.out.leave(w, 0);
      return;
    }
    const problems: string[] = [];
    if (late > 0) problems.push(this.t(`errors.late.${this.action}`, { count: late }));
    if (kept > 0) problems.push(this.t(w.pendingMode ? 'errors.kept' : 'errors.keptConfirmOff', { count: kept }));
    if (notHeld > 0) problems.push(this.t('errors.notHeld', { count: notHeld }));
    this.out.finish(w, new Error(this.t('errors.unmatched', { count: unmatched, total: w.keys.length, problems: problems.join('; ') })));
  }

  /** Puts the counts on the message: msg.dedup.confirmed (or released), late, kept and notHeld. */
  private report(msg: NodeMessage, counts: SettleCounts): void {
    const dedup = msg.dedup as Record<string, unknown>;
    dedup[this.action === 'confirm' ? 'confirmed' : 'released'] = counts.settled + counts.late;
    dedup.late = counts.late;
    dedup.kept = counts.kept;
    dedup.notHeld = counts.notHeld;
  }

  /** A message whose keys cannot be settled at all: counted, and to Catch with the reason. */
  private failOne(msg: NodeMessage, done: DoneFunction, text: string): void {
    this.telemetry.failedOne();
    this.out.end(msg, done, new Error(text));
  }
}

/** The claim on a message, or the catalog key of what is wrong with it. */
function claimedOf(dedup: unknown): Claimed | 'noDedup' | 'noClaim' {
  if (dedup === null || typeof dedup !== 'object') return 'noDedup';
  const d = dedup as Record<string, unknown>;
  if (typeof d.node !== 'string' || typeof d.token !== 'number' || !Number.isSafeInteger(d.token)) return 'noClaim';
  let keys: unknown[];
  if (Array.isArray(d.keys)) keys = d.keys;
  else if (typeof d.key === 'string') keys = [d.key];
  else return 'noClaim';
  if (!keys.every((key) => typeof key === 'string')) return 'noClaim';
  return { node: d.node, token: d.token, keys: keys };
}
