import { Histogram } from 'prom-client';

/**
 * The Redis script calls of every dedup store in this runtime: how long
 * each took from sending to its answer (what a Redis-backed decision waits
 * for), and how many pings or keys it carried (redis/tick-batcher gathers a
 * turn's requests into one call). Observed once per call, not per message,
 * so prom-client's own histograms are cheap enough here. Registered on the
 * exporter's registries by metrics/exporter.
 */
export const redisCallSeconds = new Histogram({
  name: 'dedup_redis_call_seconds',
  help: 'Time from sending a dedup script call to Redis until its answer (the decision time of a Redis store), in seconds.',
  buckets: [0.0002, 0.0005, 0.001, 0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
  registers: [],
});

export const redisCallItems = new Histogram({
  name: 'dedup_redis_call_items',
  help: 'Pings (sliding window) or keys (sensor, confirm) carried by one dedup script call to Redis.',
  buckets: [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000],
  registers: [],
});

/** A script call answered: `items` requests in `ms` milliseconds. */
export function observeRedisCall(items: number, ms: number): void {
  redisCallSeconds.observe(ms / 1000);
  redisCallItems.observe(items);
}
