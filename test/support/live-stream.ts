/**
 * The harness of the fault and scale tests that hurt Redis while both dedup
 * nodes are deciding: a suite's servers and runtime (runtimeWithRedis), its
 * flow (streamFlow), and the stream itself (LiveStream): messages sent on a
 * ticker, where and when each one came out, and done() counted per message.
 */
import assert from 'node:assert/strict';
import { collect, helper, node, sleep, startServer, stopServer, until, watchCompletions, type DedupType, type FlowNode, type Msg } from './node-red-helper';
import { skipLoudlyWithoutRedisServer } from './redis-server';

/**
 * Mocha hooks for a suite with servers of its own and a Node-RED runtime:
 * skipped loudly without redis-server; `start` runs before the runtime
 * starts; after the suite the runtime stops, then the servers, also when the
 * suite was skipped or something failed to start. Returns what `start` made.
 */
export function runtimeWithRedis<T extends { stop(): Promise<void> }>(what: string, start: () => Promise<T>): () => T {
  let servers: T | undefined;
  let runtimeStarted = false;
  before(async function () {
    skipLoudlyWithoutRedisServer(this, what);
    servers = await start();
    await startServer();
    runtimeStarted = true;
  });
  after(async function () {
    if (runtimeStarted) {
      await helper.unload();
      await stopServer();
    }
    await servers?.stop();
  });
  return () => {
    if (servers === undefined) throw new Error(`the servers for ${what} did not start`);
    return servers;
  };
}

/** A dedup node of a stream test, with its settings; it uses the Redis store. */
export interface NodeUnderTest {
  id: string;
  type: DedupType;
  [setting: string]: unknown;
}

/**
 * The flow of a stream test, its ids starting with `name`: a tab; the config
 * node `<name>-conn` with `connection`; the nodes under test, each output
 * wired to a helper node of its own (`<id>-1`, `<id>-2`); and a Catch and a
 * Status node scoped to them, wired to the helpers `<name>-caught` and
 * `<name>-statuses`.
 */
export function streamFlow(name: string, connection: Record<string, unknown>, nodes: readonly NodeUnderTest[]): FlowNode[] {
  const tab = `${name}-tab`;
  const scope = nodes.map((n) => n.id);
  const flow: FlowNode[] = [
    { id: tab, type: 'tab' },
    { id: `${name}-conn`, type: 'dedup-redis', ...connection },
    { id: `${name}-catch`, type: 'catch', z: tab, scope, uncaught: false, wires: [[`${name}-caught`]] },
    { id: `${name}-caught`, type: 'helper', z: tab },
    { id: `${name}-status`, type: 'status', z: tab, scope, wires: [[`${name}-statuses`]] },
    { id: `${name}-statuses`, type: 'helper', z: tab },
  ];
  for (const n of nodes) {
    flow.push(
      { store: 'redis', redis: `${name}-conn`, ...n, z: tab, wires: [[`${n.id}-1`], [`${n.id}-2`]] },
      { id: `${n.id}-1`, type: 'helper', z: tab },
      { id: `${n.id}-2`, type: 'helper', z: tab },
    );
  }
  return flow;
}

/** Where a message came out (the helper node's id), and when. */
export interface Exit {
  at: number;
  door: string;
  msg: Msg;
}

/**
 * The messages sent to the nodes of a loaded streamFlow(), and where each
 * came out. A burst's admitted readings (a sensor node's output 1) ride along
 * with its audit and are not an exit of their own.
 */
export class LiveStream {
  /** When each message was sent, and to which node, by _msgid. */
  readonly sent = new Map<string, { at: number; node: string }>();
  /** The helper node of the Catch node. */
  readonly caught: string;
  private readonly exits = new Map<string, Exit[]>();
  private readonly statuses: Msg[];
  private readonly completions: ReturnType<typeof watchCompletions>[];

  constructor(name: string, nodes: readonly NodeUnderTest[]) {
    this.caught = `${name}-caught`;
    const doors = [this.caught];
    for (const n of nodes) {
      if (n.type !== 'sensor-reconnect-dedup') doors.push(`${n.id}-1`);
      doors.push(`${n.id}-2`);
    }
    for (const door of doors) {
      node(door).on('input', (msg: Msg) => {
        const id = String(msg._msgid);
        this.exits.set(id, [...this.exitsOf(id), { at: Date.now(), door, msg }]);
      });
    }
    this.statuses = collect(`${name}-statuses`);
    this.completions = nodes.map((n) => watchCompletions(n.id));
  }

  send(nodeId: string, msgid: string, payload: unknown): void {
    this.sent.set(msgid, { at: Date.now(), node: nodeId });
    node(nodeId).receive({ _msgid: msgid, payload });
  }

  /** Calls `tick` every `tickMs` while `during` runs. */
  async whileSending<T>(tickMs: number, tick: () => void, during: () => Promise<T>): Promise<T> {
    const ticker = setInterval(tick, tickMs);
    try {
      return await during();
    } finally {
      clearInterval(ticker);
    }
  }

  exitsOf(msgid: string): Exit[] {
    return this.exits.get(msgid) ?? [];
  }

  /** The one exit of a message; fails unless there is exactly one. */
  onlyExit(msgid: string): Exit {
    const exits = this.exitsOf(msgid);
    assert.equal(exits.length, 1, `${msgid} left through ${exits.map((e) => e.door).join(', ') || 'nothing'}`);
    return exits[0] as Exit;
  }

  /** A decision the store made: not an error at the Catch node, not admitted unchecked. */
  private decided(exit: Exit): boolean {
    return exit.door !== this.caught && exit.msg.dedup?.reason !== 'store-unavailable';
  }

  /** How many of the messages sent to `nodeId` the store decided after `since`. */
  decidedAfter(nodeId: string, since: number): number {
    let count = 0;
    for (const [msgid, exits] of this.exits) {
      if (this.sent.get(msgid)?.node !== nodeId) continue;
      count += exits.filter((e) => e.at > since && this.decided(e)).length;
    }
    return count;
  }

  /** When the store first decided a message sent after `since` (Infinity if it never did). */
  firstDecisionSentAfter(since: number): number {
    let first = Infinity;
    for (const [msgid, exits] of this.exits) {
      if ((this.sent.get(msgid)?.at ?? 0) <= since) continue;
      for (const e of exits) if (this.decided(e)) first = Math.min(first, e.at);
    }
    return first;
  }

  /**
   * Waits until done() was called as often as messages were sent, waits
   * `settleMs` more for any extra call, then checks done() once per message;
   * stops counting in any case.
   */
  async expectDoneOnce(timeoutMs: number, settleMs: number): Promise<void> {
    try {
      const total = (): number => this.completions.reduce((n, c) => n + c.total(), 0);
      await until(() => total() >= this.sent.size, 'done() for every message', timeoutMs);
      await sleep(settleMs);
      for (const c of this.completions) assert.ok([...c.perMessage.values()].every((n) => n === 1), 'done() once per message');
    } finally {
      for (const c of this.completions) c.dispose();
    }
  }

  /** The status of each node as the Status node saw it, in order; only `nodeId`'s if given. */
  statusesOf(nodeId?: string): { fill?: string; text?: string }[] {
    return this.statuses
      .map((m) => m.status as { fill?: string; text?: string; source?: { id?: string } })
      .filter((s) => nodeId === undefined || s.source?.id === nodeId);
  }
}
