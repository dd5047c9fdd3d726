/** The sliding-window dedup node: Node-RED's entry point, wiring only (behaviour: node-red/sliding-window-controller). */
import type { Node, NodeAPI } from './node-red/api';
import { MAX_ENTRIES } from './core/defaults';
import { serveMetrics } from './node-red/metrics-endpoint';
import { editorSettings } from './node-red/editor-settings';
import { SlidingWindowController } from './node-red/sliding-window-controller';
import type { SlidingWindowDef } from './node-red/sliding-window-config';

export = function registerSlidingWindowDedup(RED: NodeAPI): void {
  serveMetrics(RED);
  function SlidingWindowDedupNode(this: Node, def: SlidingWindowDef): void {
    RED.nodes.createNode(this, def);
    new SlidingWindowController(RED, this).start(def);
  }

  RED.nodes.registerType('sliding-window-dedup', SlidingWindowDedupNode, {
    settings: editorSettings('sliding-window-dedup', {
      slidingWindowDedupMaxAssets: { value: MAX_ENTRIES, exportable: true },
    }),
  });
};
