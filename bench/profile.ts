/**
 * Where Node-RED's main thread spends a message, from a CPU profile of one
 * timed throughput trial per line (bench/worker.ts with BENCH_PROFILE_DIR):
 * the core filter node, the sliding-window node with the memory store and
 * with Redis. The profile's samples are put into a few places by the file
 * their function is in, and each place's time is divided by the trial's
 * messages: µs per message, side by side, so the Redis store's cost over the
 * memory store's reads as where it goes.
 *
 * A profiled trial runs slower than an unprofiled one (the sampler takes its
 * share), so these trials are not among the throughput figures; the split,
 * not the total, is what they are for.
 */
import { readFileSync } from 'fs';
import { markdownTable } from './stats';

/** The places, in the order the table shows them. */
export const PLACES = ['this pack', 'ioredis', 'Node-RED runtime', 'Node.js (timers, streams, buffers, native)', 'garbage collection', 'harness (source, counter)', 'idle (waiting for Redis or I/O)'] as const;
export type Place = (typeof PLACES)[number];

export interface ProfileSummary {
  line: string;
  units: number;
  /** Main-thread µs per message, by place. */
  usPerUnit: Record<Place, number>;
}

interface CpuProfile {
  nodes: { id: number; callFrame: { functionName: string; url: string } }[];
  samples: number[];
  timeDeltas: number[];
}

function placeOf(functionName: string, url: string): Place {
  if (functionName === '(garbage collector)') return 'garbage collection';
  if (functionName === '(idle)') return 'idle (waiting for Redis or I/O)';
  if (/\/node_modules\/(ioredis|redis-parser|denque|cluster-key-slot|standard-as-callback)\//.test(url)) return 'ioredis';
  if (/\/node_modules\/@?node-red/.test(url)) return 'Node-RED runtime';
  if (/\/bench\/|bench-source|bench-counter/.test(url)) return 'harness (source, counter)';
  if (/\/nodes\//.test(url) && !url.includes('node_modules')) return 'this pack';
  return 'Node.js (timers, streams, buffers, native)';
}

export function summarizeProfile(file: string, line: string, units: number): ProfileSummary {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
  const places = new Map<number, Place>(profile.nodes.map((n) => [n.id, placeOf(n.callFrame.functionName, n.callFrame.url)]));
  const usPerUnit = Object.fromEntries(PLACES.map((p) => [p, 0])) as Record<Place, number>;
  profile.samples.forEach((id, i) => {
    const place = places.get(id);
    if (place !== undefined) usPerUnit[place] += (profile.timeDeltas[i] ?? 0) / units;
  });
  return { line, units, usPerUnit };
}

export function profileTable(rows: readonly ProfileSummary[]): string {
  const f = (x: number): string => x.toFixed(2);
  const byLine = (line: string): ProfileSummary | undefined => rows.find((r) => r.line === line);
  const redis = byLine('sw-redis');
  const memory = byLine('sw-memory');
  const header = ['where', ...rows.map((r) => `${r.line}, µs/msg`), ...(redis && memory ? ['Redis store over memory store'] : [])];
  const total = (r: ProfileSummary): number => PLACES.reduce((sum, p) => sum + r.usPerUnit[p], 0);
  const body = PLACES.map((p) => [p, ...rows.map((r) => f(r.usPerUnit[p])), ...(redis && memory ? [`${redis.usPerUnit[p] - memory.usPerUnit[p] >= 0 ? '+' : ''}${f(redis.usPerUnit[p] - memory.usPerUnit[p])}`] : [])]);
  body.push(['all of the main thread', ...rows.map((r) => f(total(r))), ...(redis && memory ? [`+${f(total(redis) - total(memory))}`] : [])]);
  return markdownTable(header, body);
}
