/**
 * Sizing a deployment from one run's figures: how many messages a Node-RED
 * process and a Redis primary can decide, how many Node-RED instances one
 * primary and a Cluster of 3, 6 or 12 can serve, which side runs out first,
 * and the memory per asset and per key. Pure arithmetic on what bench/run.ts
 * measured; the assumptions are spelled out in docs/performance.md
 * (bench/performance-doc.ts), which prints these numbers.
 *
 * CPU per decision is the measure throughout: Node.js runs a flow on one
 * thread and redis-server runs commands on one thread, so each side's
 * capacity is about one core's worth of microseconds a second, divided by
 * what one decision costs it.
 */
import type { PacedLine } from './paced';
import { cpuPerUnit, pacedPhase, type RunData } from './figures';
import { markdownTable, median, micros, thousands } from './stats';

/** A fleet of 10,000 vehicles pinging every 5 s (issue 15): a quiet Node-RED instance. */
export const QUIET_RATE = 2_000;
/** The busiest steady rate the latency lines measure. */
export const BUSY_RATE = 50_000;
export const CLUSTER_SIZES = [3, 6, 12] as const;

export type SizingFigures = ReturnType<typeof sizingFigures>;


function steadyOf(data: RunData, line: PacedLine): { quiet: number; busy: number } {
  return {
    quiet: pacedPhase(data, line, QUIET_RATE)?.nodeCpuUsPerMsg ?? Number.NaN,
    busy: pacedPhase(data, line, BUSY_RATE)?.nodeCpuUsPerMsg ?? Number.NaN,
  };
}

/**
 * The figures the guide sizes from: Node-RED and redis-server CPU µs per
 * decision (flat out, at QUIET_RATE and BUSY_RATE, on the Cluster), and the
 * bytes per asset or key of each store.
 */
export function sizingFigures(data: RunData) {
  const quiet = pacedPhase(data, 'sw-redis', QUIET_RATE);
  const busy = pacedPhase(data, 'sw-redis', BUSY_RATE);
  // The Redis part's warm fleet on the Cluster, the working tree: its busiest paced rate.
  const clusterPhases = (data.redisCost.find((r) => r.line === 'sw-redis' && r.target === 'cluster' && r.build === 'new')?.phases ?? []).filter((p) => p.kind === 'paced' && p.case === 'warm');
  const clusterBusy = clusterPhases.length > 0 ? clusterPhases.reduce((a, b) => (b.rate > a.rate ? b : a)) : undefined;
  const cluster = data.horizontal.filter((h) => h.target === 'cluster');
  const largest = Math.max(...data.plan.fleet.sizes);
  const fleetAt = (store: 'memory' | 'redis'): number => data.fleet.find((f) => f.store === store && f.assets === largest)?.bytesPerAsset ?? Number.NaN;
  const server = (id: '6a' | '6b'): number => median((data.server.get(id) ?? []).map((r) => r.redisCpuUsPerPing));
  return {
    // Node-RED CPU µs per decision, flat out (the throughput lines).
    nodeUsMemory: cpuPerUnit(data.trials.get('sw-memory'), 'node'),
    nodeUsRedis: cpuPerUnit(data.trials.get('sw-redis'), 'node'),
    nodeUsCluster: median(cluster.filter((h) => h.processes === 1).map((h) => h.nodeCpuUsPerDecision)),
    nodeUsSensorMemory: cpuPerUnit(data.trials.get('sr-memory'), 'node'),
    nodeUsSensorRedis: cpuPerUnit(data.trials.get('sr-redis'), 'node'),
    // Node-RED CPU µs per message at the steady rates (the latency lines), idle time, the generator and routing included: the filter line is that floor.
    steady: {
      filter: steadyOf(data, 'filter'),
      'sw-memory': steadyOf(data, 'sw-memory'),
      'sw-redis': steadyOf(data, 'sw-redis'),
    },
    // redis-server CPU µs per decision: flat out, at the steady rates, on the Cluster (all primaries together), per call of 1 and of 500 pings.
    redisUsBurst: cpuPerUnit(data.trials.get('sw-redis'), 'redis'),
    redisUsQuiet: quiet?.redisCpuUsPerMsg ?? Number.NaN,
    redisUsBusy: busy?.redisCpuUsPerMsg ?? Number.NaN,
    pingsPerCallQuiet: quiet?.pingsPerCall ?? Number.NaN,
    pingsPerCallBusy: busy?.pingsPerCall ?? Number.NaN,
    redisUsCluster: median(cluster.map((h) => h.redisCpuUsPerDecision)),
    clusterUsQuiet: pacedPhase(data, 'sw-redis', QUIET_RATE, 'cluster')?.redisCpuUsPerMsg ?? Number.NaN,
    clusterUsBusy: clusterBusy?.redisCpuUsPerMsg ?? Number.NaN,
    clusterBusyRate: clusterBusy?.rate ?? Number.NaN,
    clusterPingsPerCallQuiet: pacedPhase(data, 'sw-redis', QUIET_RATE, 'cluster')?.pingsPerCall ?? Number.NaN,
    clusterPingsPerCallBusy: clusterBusy?.pingsPerCall ?? Number.NaN,
    redisUsOnePingCall: server('6a'),
    redisUsFullCall: server('6b'),
    redisUsSensor: cpuPerUnit(data.trials.get('sr-redis'), 'redis'),
    // Bytes per asset or key: the memory store alone (at 100,000), the whole Node-RED process (the fleet line, at fleetSize).
    storePerAsset: median(data.memory.window),
    memoryPerAsset: fleetAt('memory'),
    // Heap the editor sidebar's board of assets took at 100,000 (the fleet line minus the store alone).
    boardBytes: ((data.fleet.find((f) => f.store === 'memory' && f.assets === 100_000)?.bytesPerAsset ?? Number.NaN) - median(data.memory.window)) * 100_000,
    redisPerAsset: fleetAt('redis'),
    redisPerAssetFleetRules: median(data.redisMemory.map((m) => m.windowFleet)),
    memoryPerKey: median(data.memory.seen),
    redisPerKey: median(data.redisMemory.map((m) => m.seen)),
    fleetSize: largest,
  };
}

/** Decisions a second that one core's worth of CPU time pays for. */
export function perCore(us: number): number {
  return us > 0 ? 1e6 / us : Number.NaN;
}

export interface Deployment {
  label: string;
  primaries: number;
  /** Redis CPU µs per decision (all primaries together) with instances at QUIET_RATE and at BUSY_RATE. */
  quietUs: number;
  busyUs: number;
}

/**
 * Measured throughout: one instance at each steady rate, on one server and
 * on the Cluster (the latency lines), Redis CPU of every primary per
 * decision. On one server a call carries every ping of one event-loop turn,
 * so the cost per decision falls as an instance gets busier; on a Cluster a
 * call carries the pings of one hash slot, about one each at any rate, so
 * its busy figure is taken at the highest rate measured there (a 2-core
 * machine cannot feed a Cluster BUSY_RATE messages a second). With
 * many instances on one Redis, the server is busier than it was with the
 * one measured, and spends less per call on waking up: the figures are on
 * the safe side.
 */
export function deployments(f: SizingFigures): Deployment[] {
  return [
    { label: 'one Redis server (one primary)', primaries: 1, quietUs: f.redisUsQuiet, busyUs: f.redisUsBusy },
    ...CLUSTER_SIZES.map((p) => ({ label: `Redis Cluster, ${p} primaries`, primaries: p, quietUs: f.clusterUsQuiet, busyUs: f.clusterUsBusy })),
  ];
}

export interface Projection {
  deployment: Deployment;
  /** Decisions/s the primaries make together at one core each, with quiet and with busy instances. */
  quietCapacity: number;
  busyCapacity: number;
  /** Node-RED instances served, each at QUIET_RATE, or each at BUSY_RATE. */
  instancesQuiet: number;
  instancesBusy: number;
}

export function project(d: Deployment): Projection {
  const quietCapacity = d.primaries * perCore(d.quietUs);
  const busyCapacity = d.primaries * perCore(d.busyUs);
  return { deployment: d, quietCapacity, busyCapacity, instancesQuiet: quietCapacity / QUIET_RATE, instancesBusy: busyCapacity / BUSY_RATE };
}

export function count(n: number): string {
  if (!Number.isFinite(n)) return '–';
  return n < 10 ? n.toFixed(1) : thousands(n);
}

export function sizingTable(f: SizingFigures): string {
  return markdownTable(
    [
      'Redis', `Redis CPU µs/decision (instances at ${thousands(QUIET_RATE)} / ${thousands(BUSY_RATE)} msg/s)`, 'decisions/s at one core per primary',
      `Node-RED instances at ${thousands(QUIET_RATE)} msg/s`, `Node-RED instances at ${thousands(BUSY_RATE)} msg/s`,
    ],
    deployments(f).map((d) => {
      const p = project(d);
      return [
        d.label, `${micros(d.quietUs)} / ${micros(d.busyUs)}`, `${thousands(p.quietCapacity)} / ${thousands(p.busyCapacity)}`,
        count(p.instancesQuiet), count(p.instancesBusy),
      ];
    }),
  );
}
