import { SETTLE } from '../core/seen-codes';
import type { Replies } from '../stores/types';
import type { DoneFunction, Node, NodeAPI, NodeMessage, SendFunction } from './api';
import { claimHolder } from './claim-registry';
import { drainLimit } from './close-times';
import { oneOf } from './config-values';
import { CONFIRM_DEFAULTS } from '../core/defaults';
import { errorMessage } from './errors';
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

interface Waiting {
  msg: NodeMessage;
  keys: string[];
  /** Whether the sensor node holds its keys pending (Confirm delivery on). */
  pendingMode: boolean;
  send: SendFunction;
  done: DoneFunction;
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
  private readonly inFlight = new InFlight();
  private readonly t: (key: string, subs?: Record<string, string | number>) => string;
  private readonly replies: Replies<number[], Waiting>;

  constructor(
    RED: NodeAPI,
    private readonly node: Node,
  ) {
    this.t = (key, subs) => RED._(`${CONFIRM_TYPE}.${key}`, subs);
    this.board = new StatusBoard(node, () => this.t(this.action === 'confirm' ? 'status.confirmed' : 'status.released', this.counts), this.t);
    this.replies = {
      value: (codes, w) => {
        this.inFlight.end();
        // Any answer, matched or not, means the store works again.
        this.board.storeWorked();
        this.settled(w, codes);
      },
      error: (error, w) => {
        this.inFlight.end();
        this.board.storeFailed(error);
        this.fail(w.done, this.t('errors.storeFailed', { error: errorMessage(error) }));
      },
    };
  }

  start(def: ConfirmDef): void {
    const upgraded = upgradeConfig(CONFIRM_TYPE, def, (version, supported) => this.node.warn(this.t('warnings.newerConfig', { version, supported })));
    this.action = oneOf(upgraded.action, 'action', ['confirm', 'release'], CONFIRM_DEFAULTS.action);
    this.board.changed();
    this.node.on('input', (msg, send, done) => this.input(msg, send, done));
    this.node.on('close', (_removed, done) => {
      // A settle waits on Redis at most its give-up time; let it finish.
      this.inFlight
        .drained(drainLimit(Infinity))
        .finally(() => {
          this.board.stop();
          done();
        });
    });
  }

  input(msg: NodeMessage, send: SendFunction, done: DoneFunction): void {
    const claimed = claimedOf(msg.dedup);
    if (typeof claimed === 'string') {
      this.fail(done, this.t(`errors.${claimed}`));
      return;
    }
    const holder = claimHolder(claimed.node);
    if (holder === undefined) {
      this.fail(done, this.t('errors.noNode', { node: claimed.node }));
      return;
    }
    if (claimed.keys.length === 0) {
      this.report(msg, 0, 0, 0, 0);
      send(msg);
      done();
      return;
    }
    this.inFlight.begin();
    holder.store.settle(
      { claims: claimed.keys.map((key) => holder.claimOf(key)), token: claimed.token, action: this.action },
      this.replies,
      { msg, keys: claimed.keys, pendingMode: holder.confirm, send, done },
    );
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
      w.send(w.msg);
      w.done();
      return;
    }
    this.counts.settled += settled + late;
    const problems: string[] = [];
    if (late > 0) problems.push(this.t(`errors.late.${this.action}`, { count: late }));
    if (kept > 0) problems.push(this.t(w.pendingMode ? 'errors.kept' : 'errors.keptConfirmOff', { count: kept }));
    if (notHeld > 0) problems.push(this.t('errors.notHeld', { count: notHeld }));
    this.fail(w.done, this.t('errors.unmatched', { count: late + kept + notHeld, total: w.keys.length, problems: problems.join('; ') }));
  }

  /** Puts the counts on the message: msg.dedup.confirmed (or released), late, kept and notHeld. */
  private report(msg: NodeMessage, done: number, late: number, kept: number, notHeld: number): void {
    const dedup = msg.dedup as Record<string, unknown>;
    dedup[this.action === 'confirm' ? 'confirmed' : 'released'] = done;
    dedup.late = late;
    dedup.kept = kept;
    dedup.notHeld = notHeld;
  }

  private fail(done: DoneFunction, text: string): void {
    this.counts.failed++;
    this.board.changed();
    done(new Error(text));
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
  return { node: d.node, token: d.token, keys: keys as string[] };
}
