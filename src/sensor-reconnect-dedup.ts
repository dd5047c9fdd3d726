/** The sensor reconnect dedup node: Node-RED's entry point, wiring only (behaviour: node-red/sensor-controller). */
import { MAX_ENTRIES } from './core/defaults';
import type { NodeAPI } from './node-red/api';
import { editorSettings, SENSOR_PRESETS } from './node-red/editor-settings';
import { nodeConstructor, type NodeKind } from './node-red/node-lifecycle';
import { readSensorConfig, type SensorConfig } from './node-red/sensor-config';
import { SensorController } from './node-red/sensor-controller';
import { memoryStore, redisStore, type OwnStore } from './node-red/store-binding';
import { seenCodec } from './persist/codecs';
import { MemorySeenStore } from './stores/memory-seen-store';
import { RedisSeenStore } from './stores/redis-seen-store';
import type { SeenStore } from './stores/types';

const SENSOR_RECONNECT: NodeKind<SensorConfig, OwnStore<SeenStore>> = {
  type: 'sensor-reconnect-dedup',
  read: readSensorConfig,
  store: (config) =>
    config.store === 'memory'
      ? memoryStore({ make: () => new MemorySeenStore(config.seen), reuse: (store) => store.reconfigure(config.seen), codec: seenCodec, persistSeconds: config.persistSeconds })
      : redisStore(config.redis, (client, options) => new RedisSeenStore(client, config.seen, options)),
  controller: (parts) => new SensorController(parts),
};

export = function registerSensorReconnectDedup(RED: NodeAPI): void {
  RED.nodes.registerType('sensor-reconnect-dedup', nodeConstructor(RED, SENSOR_RECONNECT), {
    settings: editorSettings('sensor-reconnect-dedup', {
      sensorReconnectDedupMaxKeys: { value: MAX_ENTRIES, exportable: true },
      sensorReconnectDedupPresets: { value: SENSOR_PRESETS, exportable: true },
    }),
  });
};
