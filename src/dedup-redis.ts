/** The dedup-redis config node: Node-RED's entry point. It owns one shared connection (redis/shared-connection), or the reason its settings cannot make one. */
import { SharedConnection } from './redis/shared-connection';
import type { Node, NodeAPI } from './node-red/api';
import { CONFIG_WAIT_MS } from './node-red/close-times';
import { errorMessage } from './core/parse/errors';
import { upgradeConfig } from './node-red/migrations';
import { labelOf, settingsFromDef, type DedupRedisCredentials, type DedupRedisDef, type RedisConfigNode } from './node-red/redis-config-node';
import { editorSettings } from './node-red/editor-settings';

export = function registerDedupRedis(RED: NodeAPI): void {
  function DedupRedisNode(this: Node<DedupRedisCredentials> & Partial<RedisConfigNode>, def: DedupRedisDef): void {
    RED.nodes.createNode(this, def);
    this.label = labelOf(def);
    try {
      def = upgradeConfig('dedup-redis', def, (version, supported) => this.warn(RED._('dedup-redis.warnings.newerConfig', { version, supported })));
      const settings = settingsFromDef(def, this.credentials ?? {});
      this.connection = new SharedConnection(settings, (answer) => RED._('dedup-redis.errors.noScripting', { answer }));
      if (settings.mode === 'cluster' && /[{}]/.test(settings.keyPrefix)) {
        // It works, but every key shares the prefix's hash tag: one slot, one primary.
        this.warn(RED._('dedup-redis.warnings.clusterPrefix', { prefix: settings.keyPrefix }));
      }
    } catch (error) {
      // Users report it on their own status and messages, naming this node.
      this.problem = errorMessage(error);
      this.error(RED._('dedup-redis.errors.badConfig', { error: this.problem }));
      return;
    }
    const connection = this.connection;
    this.on('close', (_removed, done) => {
      connection.closeWhenIdle(CONFIG_WAIT_MS).then(
        () => done(),
        // It does not reject (a quit that fails falls back to disconnect),
        // but if it ever did, the close must still finish and say why.
        (error: unknown) => {
          this.error(errorMessage(error));
          done();
        },
      );
    });
  }

  RED.nodes.registerType('dedup-redis', DedupRedisNode, {
    credentials: {
      username: { type: 'text' },
      password: { type: 'password' },
      sentinelPassword: { type: 'password' },
    },
    settings: editorSettings('dedup-redis'),
  });
};
