/**
 * What redis-server alone can serve of the sliding-window script: EVALSHA
 * calls sent as fast as the server answers them, over a few connections
 * with a fixed pipeline depth, the way redis-benchmark drives a server.
 * redis-benchmark itself cannot send the script's binary arguments (packed
 * doubles hold zero bytes, which a command line cannot carry), so this
 * child process writes the RESP commands itself on raw sockets: the
 * arguments are packed here with the store's own encoder (encodePings), a
 * window of `pipeline` commands goes out in one write, and the next window
 * when every reply of the last one is in. Replies are only counted, not
 * decoded, so that the client stays a small part of the cost.
 *
 * Traffic as redis-benchmark's lines had it: random assets out of 1,000 and
 * random times (whole seconds within 17 minutes), so that about half the
 * pings are late and most of the rest admitted; each call has a token of its
 * own, so that none is taken for a resend of an earlier one.
 */
import { randomBytes } from 'crypto';
import { connect, type Socket } from 'net';
import { performance } from 'perf_hooks';
import Redis from 'ioredis';
import type { Ping } from '../src/core/window/sliding-window';
import { PING_EPOCH_MS } from './data';
import { answerParent, redisCpuSeconds } from './runtime';

/* eslint-disable @typescript-eslint/no-require-imports -- the compiled code in nodes/, which is what Node-RED runs; types from src/ */
const { encodePings, encodeRule, windowCallKeys } = require('../nodes/stores/redis-window-store') as typeof import('../src/stores/redis-window-store');
/* eslint-enable @typescript-eslint/no-require-imports */

export interface EvalLoadJob {
  port: number;
  sha: string;
  pingsPerCall: number;
  pipeline: number;
  calls: number;
  connections: number;
}

export interface EvalLoadResult {
  pingsPerSecond: number;
  callsPerSecond: number;
  /** redis-server CPU (user + system) per ping, from INFO cpu. */
  redisCpuUsPerPing: number;
  errors: number;
  firstError?: string;
}

const PREFIX = 'dedup:';
const ASSETS = 1000;

function bulk(value: string | Buffer): Buffer[] {
  const data = typeof value === 'string' ? Buffer.from(value, 'utf8') : value;
  return [Buffer.from(`$${data.length}\r\n`, 'latin1'), data, Buffer.from('\r\n', 'latin1')];
}

/** The rule argument of the script: 60 s, 25 m, no heading or clock rule, 6 h TTL (packed by the store's own encoder). */
function ruleArgument(): Buffer {
  return encodeRule({ minSeconds: 60, minMetres: 25, ttlSeconds: 21_600 });
}

const RULE = ruleArgument();

/** One EVALSHA of `pings` random pings, as RESP. */
function command(sha: string, pings: number): Buffer {
  const list: Ping[] = [];
  for (let i = 0; i < pings; i++) {
    const asset = `rb-${Math.floor(Math.random() * ASSETS)}`;
    list.push({ assetId: asset, t: PING_EPOCH_MS + Math.floor(Math.random() * 1000) * 1000, lat: 52.520008, lon: 13.404954 });
  }
  const { keys, ids } = windowCallKeys(PREFIX, list);
  const call = Buffer.alloc(14);
  call.writeDoubleLE(Date.now(), 0);
  randomBytes(6).copy(call, 8);
  const args: (string | Buffer)[] = ['EVALSHA', sha, String(keys.length), ...keys, RULE, call, encodePings(list), ...ids];
  return Buffer.concat([Buffer.from(`*${args.length}\r\n`, 'latin1'), ...args.flatMap(bulk)]);
}

/**
 * Counts whole replies in a RESP stream: bulk strings (`$n`), errors (`-`)
 * and simple lines; the script answers with one bulk string per call.
 */
class ReplyCounter {
  private pending = Buffer.alloc(0);
  private skip = 0;
  replies = 0;
  errors = 0;
  firstError: string | undefined;

  feed(chunk: Buffer): void {
    let data = this.pending.length > 0 ? Buffer.concat([this.pending, chunk]) : chunk;
    let at = 0;
    for (;;) {
      if (this.skip > 0) {
        const take = Math.min(this.skip, data.length - at);
        at += take;
        this.skip -= take;
        if (this.skip > 0) break;
        this.replies++;
      }
      const end = data.indexOf('\r\n', at, 'latin1');
      if (end < 0) break;
      const line = data.toString('latin1', at, end);
      at = end + 2;
      if (line.startsWith('$')) {
        const length = Number(line.slice(1));
        if (length < 0) this.replies++;
        else this.skip = length + 2;
      } else {
        if (line.startsWith('-')) {
          this.errors++;
          this.firstError ??= line.slice(1);
        }
        this.replies++;
      }
    }
    data = data.subarray(at);
    this.pending = Buffer.from(data);
  }
}

/** A connection's pipeline windows, built before the clock starts: the client then only writes and counts. */
function windowsFor(sha: string, job: EvalLoadJob, calls: number): { data: Buffer; calls: number }[] {
  const windows: { data: Buffer; calls: number }[] = [];
  for (let sent = 0; sent < calls; ) {
    const n = Math.min(job.pipeline, calls - sent);
    const commands: Buffer[] = [];
    for (let i = 0; i < n; i++) commands.push(command(sha, job.pingsPerCall));
    windows.push({ data: Buffer.concat(commands), calls: n });
    sent += n;
  }
  return windows;
}

function connected(port: number): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port });
    socket.setNoDelay(true);
    socket.once('connect', () => resolve(socket));
    socket.once('error', reject);
  });
}

function runConnection(socket: Socket, windows: { data: Buffer; calls: number }[]): Promise<ReplyCounter> {
  return new Promise((resolve, reject) => {
    const counter = new ReplyCounter();
    let next = 0;
    let expected = 0;
    const sendWindow = (): void => {
      const window = windows[next++] as { data: Buffer; calls: number };
      expected += window.calls;
      socket.write(window.data);
    };
    socket.on('data', (chunk: Buffer) => {
      counter.feed(chunk);
      if (counter.replies < expected) return;
      if (next < windows.length) sendWindow();
      else {
        socket.end();
        resolve(counter);
      }
    });
    socket.on('error', reject);
    sendWindow();
  });
}

export async function evalLoad(job: EvalLoadJob): Promise<EvalLoadResult> {
  const admin = new Redis({ host: '127.0.0.1', port: job.port });
  try {
    const perConnection = Math.ceil(job.calls / job.connections);
    const work = Array.from({ length: job.connections }, () => windowsFor(job.sha, job, perConnection));
    const sockets = await Promise.all(work.map(() => connected(job.port)));
    const cpu0 = await redisCpuSeconds(admin);
    const t0 = performance.now();
    const counters = await Promise.all(sockets.map((socket, i) => runConnection(socket, work[i] as { data: Buffer; calls: number }[])));
    const seconds = (performance.now() - t0) / 1000;
    const cpu = (await redisCpuSeconds(admin)) - cpu0;
    const calls = perConnection * job.connections;
    const errors = counters.reduce((n, c) => n + c.errors, 0);
    const firstError = counters.find((c) => c.firstError !== undefined)?.firstError;
    return {
      pingsPerSecond: (calls * job.pingsPerCall) / seconds,
      callsPerSecond: calls / seconds,
      redisCpuUsPerPing: (cpu * 1e6) / (calls * job.pingsPerCall),
      errors,
      ...(firstError !== undefined ? { firstError } : {}),
    };
  } finally {
    admin.disconnect();
  }
}

if (require.main === module) answerParent(evalLoad(JSON.parse(process.argv[2] ?? '{}') as EvalLoadJob));
