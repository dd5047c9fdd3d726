/** The dedup confirm node: Node-RED's entry point, wiring only (behaviour: node-red/confirm-controller). */
import type { Node, NodeAPI } from './node-red/api';
import { ConfirmController, type ConfirmDef } from './node-red/confirm-controller';
import { serveMetrics } from './node-red/metrics-endpoint';
import { editorSettings } from './node-red/editor-settings';

export = function registerDedupConfirm(RED: NodeAPI): void {
  serveMetrics(RED);
  function DedupConfirmNode(this: Node, def: ConfirmDef): void {
    RED.nodes.createNode(this, def);
    new ConfirmController(RED, this).start(def);
  }

  RED.nodes.registerType('dedup-confirm', DedupConfirmNode, { settings: editorSettings('dedup-confirm') });
};
