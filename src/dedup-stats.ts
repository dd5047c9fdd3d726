/** The dedup stats node: Node-RED's entry point, wiring only (behaviour: node-red/stats-controller). */
import type { Node, NodeAPI } from './node-red/api';
import { serveMetrics } from './node-red/metrics-endpoint';
import { editorSettings } from './node-red/editor-settings';
import { startStatsNode, type StatsDef } from './node-red/stats-controller';

export = function registerDedupStats(RED: NodeAPI): void {
  serveMetrics(RED);
  function DedupStatsNode(this: Node, def: StatsDef): void {
    RED.nodes.createNode(this, def);
    startStatsNode(RED, this, def);
  }

  RED.nodes.registerType('dedup-stats', DedupStatsNode, { settings: editorSettings('dedup-stats') });
};
