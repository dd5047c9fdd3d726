import { SETTLE } from '../core/sensor/seen-codes';
import { confirmFailed, confirmReported, confirmStarted, confirmStoreFailed } from '../metrics/confirm-counters';
import type { Replies, SeenStore, SettleRequest } from '../stores/types';
import type { DoneFunction, Node, NodeAPI, NodeMessage, SendFunction } from './api';
import { claimHolder } from './claim-registry';
import { oneOf } from './config-values';
import { CONFIRM_DEFAULTS } from '../core/defaults';
import { errorMessage, toError } from '../core/parse/errors';
import type { Leaving } from './guarded-send';
import { upgradeConfig } from './migrations';
import { NodeLifecycle } from './node-lifecycle';
import { countsLine } from './status-counts';

export const CONFIRM_TYPE = 'dedup-confirm';

export interface ConfirmDef {
  id: string;
  type: string;
  name?: string;
  action?: string;
}

interface Waiting extends Leaving {
  keys: string[];
  /** Whether the sensor node holds its keys pending (Confirm delivery on). */
  pendingMode: boolean;
  send: SendFunction;
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
export class ConfirmController {
  readonly counts = { settled: 0, failed: 0 };
  readonly life: NodeLifecycle;
  private action: 'confirm' | 'release' = 'confirm';
  private readonly replies: Replies<number[], Waiting>;

  constructor(
    RED: NodeAPI,
    private readonly node: Node,
  ) {
    this.life = new NodeLifecycle(RED, node, CONFIRM_TYPE, (t) =>
      this.action === 'confirm'
        ? countsLine(t, { confirmed: this.counts.settled, unmatched: this.counts.failed }, 'status.tallyConfirmed')
        : countsLine(t, { released: this.counts.settled, unmatched: this.counts.failed }, 'status.tallyReleased'),
    );
    // Any answer, matched or not, means the store works again (answers() tells the status).
    this.replies = this.life.answers(
      (codes, w) => this.settled(w, codes),
      (error, w) => {
        this.life.board.storeFailed(error);
        confirmStoreFailed(this.node, error);
        this.fail(w, this.life.t('errors.storeFailed', { error: errorMessage(error) }));
      },
    );
    // Its settles go to the sensor nodes' stores: see storeless() for how it drains on close.
    this.life.storeless();
  }

  start(def: ConfirmDef): void {
    const { life, node } = this;
    const upgraded = upgradeConfig(CONFIRM_TYPE, def, (version, supported) => node.warn(life.t('warnings.newerConfig', { version, supported })));
    this.action = oneOf(upgraded.action, 'action', ['confirm', 'release'], CONFIRM_DEFAULTS.action);
    life.board.changed();
    confirmStarted(node);
    // Its counts are kept with the node's id: a redeploy keeps them, and the lifecycle forgets a removed node's.
    node.on('input', (msg, send, done) => this.input(msg, send, done));
  }

  input(msg: NodeMessage, send: SendFunction, done: DoneFunction): void {
    const w: Waiting = { msg, keys: [], pendingMode: false, send, done, left: false, ended: false };
    let request: SettleRequest;
    let store: SeenStore;
    try {
      const claimed = claimedOf(msg.dedup);
      if (typeof claimed === 'string') {
        this.fail(w, this.life.t(`errors.${claimed}`));
        return;
      }
      const holder = claimHolder(claimed.node);
      if (holder === undefined) {
        this.fail(w, this.life.t('errors.noNode', { node: claimed.node }));
        return;
      }
      if (claimed.keys.length === 0) {
        this.report(msg, 0, 0, 0, 0);
        this.pass(w);
        return;
      }
      w.keys = claimed.keys;
      w.pendingMode = holder.confirm;
      request = { claims: claimed.keys.map((key) => holder.claimOf(key)), token: claimed.token, action: this.action };
      store = holder.store;
    } catch (error) {
      // Reading a message may not throw, whatever it holds; should it, the message still leaves, with the reason.
      if (!w.left) this.life.out.finish(w, toError(error));
      else if (!w.ended) this.life.out.finish(w);
      return;
    }
    this.life.begin();
    try {
      store.settle(request, this.replies, w);
    } catch (error) {
      // Thrown before the store answered (an answer ends the message, and never throws).
      if (!w.ended) this.replies.error(error, w);
      else this.life.callbackFailed(error);
    }
  }

  /** Sends the message on (or, if it cannot be sent, to Catch) and ends it. */
  private pass(w: Waiting): void {
    this.life.out.send(w.send, 0, w.msg);
    w.left = true;
    this.life.out.finish(w);
  }

  private settled(w: Waiting, codes: readonly number[]): void {
    let settled = 0;
    let late = 0;
    let kept = 0;
    let notHeld = 0;
    for (const code of codes) {
      if (code === SETTLE.settled) settled++;
      else if (code === SETTLE.lateSettled) late++;
      else if (code === SETTLE.kept) kept++;
      else notHeld++;
    }
    this.report(w.msg, settled + late, late, kept, notHeld);
    if (late === 0 && kept === 0 && notHeld === 0) {
      this.counts.settled += settled;
      this.life.board.changed();
      this.pass(w);
      return;
    }
    this.counts.settled += settled + late;
    const problems: string[] = [];
    if (late > 0) problems.push(this.life.t(`errors.late.${this.action}`, { count: late }));
    if (kept > 0) problems.push(this.life.t(w.pendingMode ? 'errors.kept' : 'errors.keptConfirmOff', { count: kept }));
    if (notHeld > 0) problems.push(this.life.t('errors.notHeld', { count: notHeld }));
    this.fail(w, this.life.t('errors.unmatched', { count: late + kept + notHeld, total: w.keys.length, problems: problems.join('; ') }));
  }

  /** Puts the counts on the message: msg.dedup.confirmed (or released), late, kept and notHeld. */
  private report(msg: NodeMessage, done: number, late: number, kept: number, notHeld: number): void {
    confirmReported(this.node, this.action, done, late, kept, notHeld);
    const dedup = msg.dedup as Record<string, unknown>;
    dedup[this.action === 'confirm' ? 'confirmed' : 'released'] = done;
    dedup.late = late;
    dedup.kept = kept;
    dedup.notHeld = notHeld;
  }

  private fail(w: Waiting, text: string): void {
    this.counts.failed++;
    confirmFailed(this.node);
    this.life.board.changed();
    this.life.out.finish(w, new Error(text));
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
