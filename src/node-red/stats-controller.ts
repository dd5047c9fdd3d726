import { STATS_DEFAULTS } from '../core/defaults';
import { errorMessage } from '../core/parse/errors';
import { nodeStats, type NodeStats, type Reading } from '../insight/stats-report';
import type { DoneFunction, Node, NodeAPI, NodeMessage, SendFunction } from './api';
import { isBlank } from './config-values';
import { Outlet } from './outlet';
import { TOP_ROWS } from '../insight/sidebar-view';
import { countedNodeIds, nodeCounts } from '../insight/stats-view';
import { countingReasons } from '../telemetry/decision-slots';
import { flowNameOf } from './metrics-endpoint';
import { upgradeConfig } from './migrations';

export const STATS_TYPE = 'dedup-stats';

export interface StatsDef {
  id: string;
  type: string;
  name?: string;
  dedupNodes?: unknown;
  topRows?: unknown;
}

export interface StatsConfig {
  /** The dedup nodes to report, by id, in this order; empty: every one the pack knows. */
  dedupNodes: string[];
  topRows: number;
}

/** Reads a saved config; throws with the option and the value when it is wrong. */
export function parseStatsConfig(def: StatsDef): StatsConfig {
  const list = isBlank(def.dedupNodes) ? [] : def.dedupNodes;
  if (!Array.isArray(list) || !list.every((id) => typeof id === 'string' && id !== '')) {
    throw new Error(`dedupNodes must be a list of node ids, not ${JSON.stringify(def.dedupNodes)}`);
  }
  const raw = isBlank(def.topRows) ? STATS_DEFAULTS.topRows : typeof def.topRows === 'number' ? def.topRows : Number(String(def.topRows).trim());
  if (!Number.isSafeInteger(raw) || raw < 0 || raw > TOP_ROWS) throw new Error(`topRows must be a whole number from 0 to ${TOP_ROWS}, not ${JSON.stringify(def.topRows)}`);
  return { dedupNodes: [...new Set(list as string[])], topRows: raw };
}

/**
 * Starts a dedup-stats node: reads its config, then builds its controller;
 * a config that cannot start answers every message with the reason (its
 * status set once: it has no counts to redraw). Not a NodeKind of
 * node-lifecycle: it has no store, and its status line is its last report.
 */
export function startStatsNode(RED: NodeAPI, node: Node, def: StatsDef): void {
  const t = (key: string, subs?: Record<string, string | number>): string => RED._(`${STATS_TYPE}.${key}`, subs);
  const outlet = new Outlet(RED, node, t);
  let config: StatsConfig;
  try {
    config = parseStatsConfig(upgradeConfig(STATS_TYPE, def, (version, supported) => node.warn(t('warnings.newerConfig', { version, supported }))));
  } catch (error) {
    const text = t('errors.config', { error: errorMessage(error) });
    node.error(text);
    node.status({ fill: 'red', shape: 'ring', text: t('status.config') });
    node.on('input', (msg, _send, done) => outlet.end(msg, done, new Error(text)));
    return;
  }
  node.status({});
  const controller = new StatsController(RED, node, config, outlet, t);
  node.on('input', (msg, send, done) => controller.input(msg, send, done));
}

/**
 * The dedup-stats node: on any message, it replaces msg.payload with the
 * counts of the dedup nodes (every one, or those chosen in its dialog),
 * read from the records the dedup sidebar and the Prometheus exporter read
 * (the nodes' telemetry, through insight/stats-view): it counts nothing
 * itself. Its per-minute rates run from its own previous message, so it
 * keeps each node's last reading.
 */
export class StatsController {
  private readonly readings = new Map<string, Reading>();

  constructor(
    private readonly RED: NodeAPI,
    private readonly node: Node,
    private readonly config: StatsConfig,
    private readonly outlet: Outlet,
    private readonly t: (key: string, subs?: Record<string, string | number>) => string,
    private readonly now: () => number = Date.now,
  ) {}

  input(msg: NodeMessage, send: SendFunction, done: DoneFunction): void {
    const config = this.config;
    const ids = config.dedupNodes.length > 0 ? config.dedupNodes : countedNodeIds();
    const now = this.now();
    const withReasons = countingReasons();
    const nodes: NodeStats[] = [];
    const unknown: string[] = [];
    for (const id of ids) {
      const counts = nodeCounts(id, config.topRows);
      if (counts === undefined) {
        unknown.push(id);
        continue;
      }
      const { subject } = counts;
      const { stats, reading } = nodeStats(
        { id, name: subject.name, type: subject.type, flow: flowNameOf(this.RED, id), store: counts.store, running: counts.running, since: counts.since, totals: counts.totals, decisions: counts.decisions, top: counts.top },
        now,
        this.readings.get(id),
        withReasons,
      );
      this.readings.set(id, reading);
      nodes.push(stats);
    }
    if (unknown.length > 0) {
      this.node.status({ fill: 'red', shape: 'ring', text: this.t('status.unknown', { count: unknown.length }) });
      this.outlet.end(msg, done, new Error(this.t('errors.unknownNodes', { ids: unknown.join(', ') })));
      return;
    }
    msg.payload = { time: now, nodes };
    this.node.status({ fill: 'green', shape: 'dot', text: this.t('status.reported', { count: nodes.length }) });
    // A message that cannot be sent goes to Catch inside send(): either way it has left, and ends here.
    this.outlet.send(send, 0, msg);
    this.outlet.end(msg, done);
  }
}
