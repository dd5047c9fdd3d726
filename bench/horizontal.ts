/**
 * Horizontal (issue 15, line 3): one or more Node-RED processes sharing one
 * fleet through one Redis, a server or a Cluster. Each process
 * (bench/worker.ts, coordinated) takes every n-th message of the same ping
 * sequence, as consumers of a shared subscription would, so the same
 * assets are decided from every process at once. They warm up, report
 * ready, and are started together; the aggregate rate is all their messages
 * over the time from the first start to the last finish. Redis CPU is read
 * here from INFO cpu of every primary, from just before `go` to the last
 * finish, and divided by the decisions made.
 */
import type Redis from 'ioredis';
import { startChild } from './children';
import type { RedisTarget } from './flows';
import { redisCpuSecondsOf } from './runtime';
import type { TrialJob, TrialResult } from './worker';

export interface HorizontalResult {
  processes: number;
  target: 'server' | 'cluster';
  primaries: number;
  decisionsPerSecond: number;
  /** redis-server CPU of every primary together, per decision. */
  redisCpuUsPerDecision: number;
  /** The Node-RED processes' CPU together, per decision. */
  nodeCpuUsPerDecision: number;
  perProcess: number[];
  tally: Record<string, number>;
}

export interface HorizontalSetup {
  redis: RedisTarget;
  /** One admin client per primary: flushed before the run, their CPU read around it. */
  admins: readonly Redis[];
  units: number;
  assets: number;
  warmups: number;
  warmupUnits: number;
}

export async function runHorizontal(setup: HorizontalSetup, processes: number): Promise<HorizontalResult> {
  let readyCount = 0;
  let allReady: () => void = () => undefined;
  const ready = new Promise<void>((resolve) => {
    allReady = resolve;
  });
  const children = Array.from({ length: processes }, (_, index) => {
    const job: TrialJob = {
      line: 'sw-redis',
      redis: setup.redis,
      units: setup.units,
      assets: setup.assets,
      devices: 1000,
      warmups: setup.warmups,
      warmupUnits: setup.warmupUnits,
      share: { index, of: processes },
      coordinated: true,
    };
    return startChild<TrialResult>('worker.ts', job, (signal) => {
      if ((signal as { type?: string }).type === 'ready' && ++readyCount === processes) allReady();
    });
  });
  try {
    // A worker that fails while warming up answers early: stop waiting for the others then.
    const early = Promise.all(children.map((c) => c.answer)).then(() => {
      throw new Error('the workers answered before they were started');
    });
    early.catch(() => undefined);
    await Promise.race([ready, early]);
    await Promise.all(setup.admins.map((a) => a.flushall()));
    const cpu0 = await redisCpuSecondsOf(setup.admins);
    for (const child of children) child.process.send({ type: 'go' });
    const results = await Promise.all(children.map((c) => c.answer));
    const cpu = (await redisCpuSecondsOf(setup.admins)) - cpu0;
    const units = results.reduce((s, r) => s + r.units, 0);
    const seconds = (Math.max(...results.map((r) => r.endedAt)) - Math.min(...results.map((r) => r.startedAt))) / 1000;
    const tally: Record<string, number> = {};
    for (const r of results) for (const [k, n] of Object.entries(r.tally)) tally[k] = (tally[k] ?? 0) + n;
    return {
      processes,
      target: setup.redis.mode === 'cluster' ? 'cluster' : 'server',
      primaries: setup.admins.length,
      decisionsPerSecond: units / seconds,
      redisCpuUsPerDecision: (cpu * 1e6) / units,
      nodeCpuUsPerDecision: (results.reduce((s, r) => s + r.nodeCpuMs, 0) * 1000) / units,
      perProcess: results.map((r) => r.perSecond),
      tally,
    };
  } finally {
    for (const child of children) if (child.process.exitCode === null) child.process.kill('SIGKILL');
  }
}
