import { grown, RecencyIndex } from '../core/structures/recency-index';

/**
 * The assets of a sliding-window node as the sidebar lists them: when each
 * was last heard from, its running accepted / suppressed counts as the
 * store reported them with its last decision, and since when its pings
 * have had no usable fix (no-fix or poor-fix, as read), if they have not. Ordered by last ping
 * (core/structures/recency-index), so the assets silent longest are the head of the
 * chain, and a ping costs one map lookup and a relink, no allocation.
 * Bounded like the node's own store: past `maxAssets`, the asset heard from
 * longest ago is forgotten.
 */
export interface AssetRow {
  assetId: string;
  lastSeen: number;
  accepted: number;
  suppressed: number;
  /** suppressed / accepted (accepted taken as at least 1). */
  ratio: number;
  /** In the list of assets without a fix: epoch ms of the first ping of the run without one. */
  noFixSince?: number;
}

/** An asset's counts as its store reported them with a decision; NaN when the store gave none (it failed). */
export interface AssetCounts {
  readonly accepted: number;
  readonly suppressed: number;
}

/** The counts of a decision the store did not make. */
export const UNKNOWN_COUNTS: AssetCounts = { accepted: NaN, suppressed: NaN };

export class AssetBoard {
  private readonly index: RecencyIndex;
  private lastSeen = new Float64Array(0);
  private accepted = new Float64Array(0);
  private suppressed = new Float64Array(0);
  /** Epoch ms since which the asset's pings have had no fix; NaN while its last ping had one. */
  private noFixSince = new Float64Array(0);

  constructor(maxAssets: number) {
    this.index = new RecencyIndex(maxAssets, (capacity) => {
      this.lastSeen = grown(this.lastSeen, capacity);
      this.accepted = grown(this.accepted, capacity);
      this.suppressed = grown(this.suppressed, capacity);
      this.noFixSince = grown(this.noFixSince, capacity);
    });
  }

  get size(): number {
    return this.index.size;
  }

  /** A ping of the asset, with or without a fix; counts NaN (UNKNOWN_COUNTS) when the store gave none, keeping the last known. */
  seen(assetId: string, now: number, counts: AssetCounts, fix: boolean): void {
    let slot = this.index.slot(assetId);
    if (slot === undefined) {
      slot = this.index.insert(assetId);
      this.accepted[slot] = 0;
      this.suppressed[slot] = 0;
      this.noFixSince[slot] = NaN;
    } else {
      this.index.touch(slot);
    }
    this.lastSeen[slot] = now;
    const accepted = counts.accepted;
    if (accepted === accepted) {
      this.accepted[slot] = accepted;
      this.suppressed[slot] = counts.suppressed;
    }
    if (fix) this.noFixSince[slot] = NaN;
    else if (this.noFixSince[slot] !== this.noFixSince[slot]) this.noFixSince[slot] = now;
  }

  /** The `n` assets with the highest suppressed/accepted ratio (devices stuck re-sending a fix), highest first. */
  stuck(n: number): AssetRow[] {
    return this.top(n, ranksAbove);
  }

  /** The `n` assets with the most suppressed pings (as the store counts them), most first; ties by ratio. */
  mostSuppressed(n: number): AssetRow[] {
    return this.top(n, (ratio, suppressed, row) => suppressed > row.suppressed || (suppressed === row.suppressed && ratio > row.ratio));
  }

  /** The `n` assets with something suppressed that rank highest by `above`, highest first; one pass, `n` rows held. */
  private top(n: number, above: (ratio: number, suppressed: number, row: AssetRow) => boolean): AssetRow[] {
    const top: AssetRow[] = [];
    if (n <= 0) return top;
    for (let slot = this.index.oldest; slot !== -1; slot = this.index.next(slot)) {
      const suppressed = this.suppressed[slot] as number;
      if (suppressed === 0) continue;
      const ratio = suppressed / Math.max(1, this.accepted[slot] as number);
      if (top.length === n && !above(ratio, suppressed, top[n - 1] as AssetRow)) continue;
      let at = top.length;
      while (at > 0 && above(ratio, suppressed, top[at - 1] as AssetRow)) at--;
      top.splice(at, 0, this.row(slot));
      if (top.length > n) top.pop();
    }
    return top;
  }

  /**
   * The `n` assets whose pings have had no fix for at least `forMs` by
   * `now` (each ping since, and the last, without one), longest first; one
   * pass, `n` rows held.
   */
  withoutFix(n: number, now: number, forMs: number): AssetRow[] {
    const top: AssetRow[] = [];
    if (n <= 0) return top;
    for (let slot = this.index.oldest; slot !== -1; slot = this.index.next(slot)) {
      const since = this.noFixSince[slot] as number;
      // NaN (a fix) fails both tests.
      if (!(now - since >= forMs)) continue;
      if (top.length === n && !(since < (top[n - 1]?.noFixSince as number))) continue;
      let at = top.length;
      while (at > 0 && since < (top[at - 1]?.noFixSince as number)) at--;
      top.splice(at, 0, { ...this.row(slot), noFixSince: since });
      if (top.length > n) top.pop();
    }
    return top;
  }

  /** The `n` assets heard from longest ago, longest first. */
  silent(n: number): AssetRow[] {
    const rows: AssetRow[] = [];
    for (let slot = this.index.oldest; slot !== -1 && rows.length < n; slot = this.index.next(slot)) rows.push(this.row(slot));
    return rows;
  }

  private row(slot: number): AssetRow {
    const accepted = this.accepted[slot] as number;
    const suppressed = this.suppressed[slot] as number;
    return { assetId: this.index.keyAt(slot), lastSeen: this.lastSeen[slot] as number, accepted, suppressed, ratio: suppressed / Math.max(1, accepted) };
  }
}

function ranksAbove(ratio: number, suppressed: number, row: AssetRow): boolean {
  return ratio > row.ratio || (ratio === row.ratio && suppressed > row.suppressed);
}
