/** The sensor reconnect dedup node: Node-RED's entry point, wiring only (behaviour: node-red/sensor-controller). */
import type { Node, NodeAPI } from './node-red/api';
import { MAX_ENTRIES } from './core/defaults';
import { serveMetrics } from './node-red/metrics-endpoint';
import { editorSettings, SENSOR_PRESETS } from './node-red/editor-settings';
import { SensorController } from './node-red/sensor-controller';
import type { SensorDef } from './node-red/sensor-config';

export = function registerSensorReconnectDedup(RED: NodeAPI): void {
  serveMetrics(RED);
  function SensorReconnectDedupNode(this: Node, def: SensorDef): void {
    RED.nodes.createNode(this, def);
    new SensorController(RED, this).start(def);
  }

  RED.nodes.registerType('sensor-reconnect-dedup', SensorReconnectDedupNode, {
    settings: editorSettings('sensor-reconnect-dedup', {
      sensorReconnectDedupMaxKeys: { value: MAX_ENTRIES, exportable: true },
      sensorReconnectDedupPresets: { value: SENSOR_PRESETS, exportable: true },
    }),
  });
};
