import { Cluster } from 'ioredis';
import type { RedisClient } from './scripts';

/**
 * Deletes every key matching a SCAN pattern, on each primary of a Cluster.
 * Used only by msg.reset, so it favours being gentle (SCAN, UNLINK) over
 * being fast. Keys of a Cluster primary may lie in different slots, so they
 * are unlinked one per command, in a pipeline.
 */
export async function deleteMatching(client: RedisClient, pattern: string): Promise<number> {
  const servers = client instanceof Cluster ? client.nodes('master') : [client];
  let deleted = 0;
  for (const server of servers) {
    const stream = server.scanStream({ match: pattern, count: 1000 });
    for await (const batch of stream) {
      const keys = batch as string[];
      if (keys.length === 0) continue;
      const pipeline = server.pipeline();
      for (const key of keys) pipeline.unlink(key);
      const results = (await pipeline.exec()) ?? [];
      for (const [error, count] of results) {
        if (error) throw error;
        deleted += Number(count);
      }
    }
  }
  return deleted;
}
