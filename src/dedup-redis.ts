import { SharedConnection } from './redis/shared-connection';
import type { Node, NodeAPI } from './node-red/api';
import { upgradeConfig } from './node-red/migrations';
import { settingsFromDef, type DedupRedisCredentials, type DedupRedisDef, type RedisConfigNode } from './node-red/redis-config-node';

/** Longest the config node waits on close for its users to finish. */
const CLOSE_LIMIT_MS = 12_000;

export = function registerDedupRedis(RED: NodeAPI): void {
  function DedupRedisNode(this: Node<DedupRedisCredentials> & Partial<RedisConfigNode>, def: DedupRedisDef): void {
    RED.nodes.createNode(this, def);
    const node = this;
    try {
      def = upgradeConfig('dedup-redis', def, (version, supported) => node.warn(RED._('dedup-redis.warnings.newerConfig', { version, supported })));
      const settings = settingsFromDef(def, node.credentials ?? {});
      if (settings.mode === 'cluster' && /[{}]/.test(settings.keyPrefix)) {
        // It works, but every key shares the prefix's hash tag: one slot, one primary.
        node.warn(RED._('dedup-redis.warnings.clusterPrefix', { prefix: settings.keyPrefix }));
      }
      node.connection = new SharedConnection(settings);
    } catch (error) {
      // Users find no connection and report it on their own status and messages.
      node.error(RED._('dedup-redis.errors.badConfig', { error: error instanceof Error ? error.message : String(error) }));
      return;
    }
    const connection = node.connection;
    node.on('close', (_removed, done) => {
      connection.closeWhenIdle(CLOSE_LIMIT_MS).finally(done);
    });
  }

  RED.nodes.registerType('dedup-redis', DedupRedisNode, {
    credentials: {
      username: { type: 'text' },
      password: { type: 'password' },
      sentinelPassword: { type: 'password' },
    },
  });
};
