/**
 * Messages whose decision was lost: the store failed (Redis not answering)
 * and, by the node's policy, the message went to a Catch node. The call may
 * still have run on the server, so a Catch flow that sends the same message
 * again could see it judged a duplicate of itself and lose it. Remembered
 * here by _msgid and content (never by content alone: a genuine duplicate
 * must stay a duplicate), a retried message is marked as such, and the
 * store admits it again as `replayed` when it holds exactly what the lost
 * attempt wrote.
 *
 * Bounded: at most MAX entries, each kept for at most maxAgeMs; the oldest
 * go first. A message retried later than that, or by another Node-RED
 * process, is decided as any other.
 */
const MAX = 10_000;

export class LostDecisions<T> {
  private readonly entries = new Map<string, { value: T; at: number }>();

  constructor(
    private readonly maxAgeMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  /**
   * Nothing remembered: the common case, checked before any fingerprint is
   * made. Entries past maxAgeMs are forgotten first, so one failure whose
   * message is never retried does not make every later message pay for a
   * fingerprint. The map is in age order: remember() deletes before it sets.
   */
  get empty(): boolean {
    if (this.entries.size === 0) return true;
    const oldestAllowed = this.now() - this.maxAgeMs;
    for (const [fingerprint, entry] of this.entries) {
      if (entry.at >= oldestAllowed) break;
      this.entries.delete(fingerprint);
    }
    return this.entries.size === 0;
  }

  remember(fingerprint: string, value: T): void {
    this.entries.delete(fingerprint);
    this.entries.set(fingerprint, { value, at: this.now() });
    if (this.entries.size > MAX) this.entries.delete(this.entries.keys().next().value as string);
  }

  /** The remembered value of a message, once: a second retry is an ordinary message again. */
  take(fingerprint: string): T | undefined {
    const entry = this.entries.get(fingerprint);
    if (entry === undefined) return undefined;
    this.entries.delete(fingerprint);
    return this.now() - entry.at <= this.maxAgeMs ? entry.value : undefined;
  }
}

/** A message's fingerprint: its _msgid and what it carries. */
export function fingerprintOf(msgid: unknown, content: string): string {
  return `${String(msgid)}\u0000${content}`;
}
