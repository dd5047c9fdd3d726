/** The sliding-window dedup node: Node-RED's entry point, wiring only (behaviour: node-red/sliding-window-controller). */
import { MAX_ENTRIES } from './core/defaults';
import type { NodeAPI } from './node-red/api';
import { editorSettings } from './node-red/editor-settings';
import { nodeConstructor, type NodeKind } from './node-red/node-lifecycle';
import { readSlidingWindowConfig, type SlidingWindowConfig } from './node-red/sliding-window-config';
import { SlidingWindowController } from './node-red/sliding-window-controller';
import { memoryStore, redisStore, type OwnStore } from './node-red/store-binding';
import { windowCodec } from './persist/codecs';
import { MemoryWindowStore } from './stores/memory-window-store';
import { RedisWindowStore } from './stores/redis-window-store';
import type { WindowStore } from './stores/types';

const SLIDING_WINDOW: NodeKind<SlidingWindowConfig, OwnStore<WindowStore>> = {
  type: 'sliding-window-dedup',
  read: readSlidingWindowConfig,
  warnings: (config) => config.warnings,
  store: (config) =>
    config.store === 'memory'
      ? memoryStore({ make: () => new MemoryWindowStore(config.settings), reuse: (store) => store.reconfigure(config.settings), codec: windowCodec, persistSeconds: config.persistSeconds })
      : redisStore(config.redis, (client, options) => new RedisWindowStore(client, config.settings, options)),
  controller: (parts) => new SlidingWindowController(parts),
};

export = function registerSlidingWindowDedup(RED: NodeAPI): void {
  RED.nodes.registerType('sliding-window-dedup', nodeConstructor(RED, SLIDING_WINDOW), {
    settings: editorSettings('sliding-window-dedup', { slidingWindowDedupMaxAssets: { value: MAX_ENTRIES, exportable: true } }),
  });
};
