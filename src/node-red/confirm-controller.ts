import { SETTLE } from '../core/seen-codes';
import { confirmClosed, confirmFailed, confirmReported, confirmStarted, confirmStoreFailed } from '../metrics/confirm-counters';
import type { Replies, SeenStore, SettleRequest } from '../stores/types';
import type { DoneFunction, Node, NodeAPI, NodeMessage, SendFunction } from './api';
import { claimHolder } from './claim-registry';
import { drainLimit } from './close-times';
import { oneOf } from './config-values';
import { CONFIRM_DEFAULTS } from '../core/defaults';
import { errorMessage, toError } from './errors';
import { Outlet, type Leaving } from './guarded-send';
import { InFlight } from './in-flight';
import { upgradeConfig } from './migrations';
import { StatusBoard } from './status-board';

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
  private action: 'confirm' | 'release' = 'confirm';
  private readonly board: StatusBoard;
  /** Every send, done() and Catch of the node's messages goes through it (see guarded-send). */
  private readonly out: Outlet;
  private readonly inFlight = new InFlight();
  private readonly t: (key: string, subs?: Record<string, string | number>) => string;
  private readonly replies: Replies<number[], Waiting>;

  constructor(
    RED: NodeAPI,
    private readonly node: Node,
  ) {
    this.t = (key, subs) => RED._(`${CONFIRM_TYPE}.${key}`, subs);
    this.board = new StatusBoard(node, () => this.t(this.action === 'confirm' ? 'status.confirmed' : 'status.released', this.counts), this.t);
    this.out = new Outlet(RED, node, this.t);
    // An answer whose handling throws (a fault of this pack: sends are
    // guarded) is reported through the node, and its message still leaves;
    // it is never thrown back at the store, where it would stop Node-RED.
    this.replies = {
      value: (codes, w) => {
        this.inFlight.end();
        try {
          // Any answer, matched or not, means the store works again.
          this.board.storeWorked();
          this.settled(w, codes);
        } catch (thrown) {
          this.out.rescue(w, thrown);
        }
      },
      error: (error, w) => {
        this.inFlight.end();
        try {
          this.board.storeFailed(error);
          confirmStoreFailed(this.node, error);
          this.fail(w, this.t('errors.storeFailed', { error: errorMessage(error) }));
        } catch (thrown) {
          this.out.rescue(w, thrown);
        }
      },
    };
  }

  start(def: ConfirmDef): void {
    const upgraded = upgradeConfig(CONFIRM_TYPE, def, (version, supported) => this.node.warn(this.t('warnings.newerConfig', { version, supported })));
    this.action = oneOf(upgraded.action, 'action', ['confirm', 'release'], CONFIRM_DEFAULTS.action);
    this.board.changed();
    confirmStarted(this.node);
    this.node.on('input', (msg, send, done) => this.input(msg, send, done));
    this.node.on('close', (removed, done) => {
      confirmClosed(this.node.id, removed);
      // A settle waits on Redis at most its give-up time; let it finish.
      // drained() never rejects: it resolves when the settles are done or the limit passes.
      void this.inFlight
        .drained(drainLimit(Infinity))
        .finally(() => {
          this.board.stop();
          done();
        });
    });
  }

  input(msg: NodeMessage, send: SendFunction, done: DoneFunction): void {
    const w: Waiting = { msg, keys: [], pendingMode: false, send, done, left: false, ended: false };
    let request: SettleRequest;
    let store: SeenStore;
    try {
      const claimed = claimedOf(msg.dedup);
      if (typeof claimed === 'string') {
        this.fail(w, this.t(`errors.${claimed}`));
        return;
      }
      const holder = claimHolder(claimed.node);
      if (holder === undefined) {
        this.fail(w, this.t('errors.noNode', { node: claimed.node }));
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
      if (!w.left) this.out.finish(w, toError(error));
      else if (!w.ended) this.out.finish(w);
      return;
    }
    this.inFlight.begin();
    try {
      store.settle(request, this.replies, w);
    } catch (error) {
      // Thrown before the store answered (an answer ends the message, and never throws).
      if (!w.ended) this.replies.error(error, w);
      else this.out.callbackFailed(error);
    }
  }

  /** Sends the message on (or, if it cannot be sent, to Catch) and ends it. */
  private pass(w: Waiting): void {
    this.out.send(w.send, 0, w.msg);
    w.left = true;
    this.out.finish(w);
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
      this.board.changed();
      this.pass(w);
      return;
    }
    this.counts.settled += settled + late;
    const problems: string[] = [];
    if (late > 0) problems.push(this.t(`errors.late.${this.action}`, { count: late }));
    if (kept > 0) problems.push(this.t(w.pendingMode ? 'errors.kept' : 'errors.keptConfirmOff', { count: kept }));
    if (notHeld > 0) problems.push(this.t('errors.notHeld', { count: notHeld }));
    this.fail(w, this.t('errors.unmatched', { count: late + kept + notHeld, total: w.keys.length, problems: problems.join('; ') }));
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
    this.board.changed();
    this.out.finish(w, new Error(text));
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
