/**
 * Debian's prometheus binary for the metrics tests: a config file the test
 * writes, a temporary storage directory, a free loopback port. Killed and
 * its directory removed by stop(), or when the test process exits.
 */
import { spawn, type ChildProcess } from 'child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'fs';
import { tmpdir } from 'os';
import { join } from 'path';
import { freePort, HOST } from '../support/redis-server';

export const PROMETHEUS_BIN = '/usr/bin/prometheus';
const READY_TIMEOUT_MS = 30_000;

export interface ScrapeJob {
  name: string;
  target: string;
  metricsPath: string;
  bearer?: string;
}

/** One sample of an instant query: its labels and value. */
export interface Sample {
  metric: Record<string, string>;
  value: number;
}

export interface PrometheusServer {
  readonly url: string;
  log(): string;
  /** An instant query through the HTTP API (/api/v1/query); throws on a query error. */
  query(promql: string): Promise<Sample[]>;
  stop(): Promise<void>;
}

const delay = (ms: number): Promise<void> => new Promise((done) => setTimeout(done, ms));

function configOf(job: ScrapeJob): string {
  // YAML is a superset of JSON: the config is written as JSON, nothing to escape by hand.
  return JSON.stringify({
    global: { scrape_interval: '1s', scrape_timeout: '900ms', evaluation_interval: '1s' },
    scrape_configs: [
      {
        job_name: job.name,
        metrics_path: job.metricsPath,
        scrape_interval: '1s',
        scrape_timeout: '900ms',
        ...(job.bearer !== undefined ? { authorization: { type: 'Bearer', credentials: job.bearer } } : {}),
        static_configs: [{ targets: [job.target] }],
      },
    ],
  });
}

export async function startPrometheus(job: ScrapeJob): Promise<PrometheusServer> {
  const dir = mkdtempSync(join(tmpdir(), 'dedup-prometheus-'));
  const config = join(dir, 'prometheus.yml');
  writeFileSync(config, configOf(job));
  const port = await freePort();
  const url = `http://${HOST}:${port}`;
  const child: ChildProcess = spawn(
    PROMETHEUS_BIN,
    [`--config.file=${config}`, `--storage.tsdb.path=${join(dir, 'data')}`, `--web.listen-address=${HOST}:${port}`, '--log.level=warn'],
    { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let output = '';
  const keep = (chunk: Buffer): void => {
    output = (output + chunk.toString('utf8')).slice(-20_000);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  const exited = new Promise<void>((done) => child.once('exit', () => done()));
  const onExit = (): void => {
    child.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  };
  process.once('exit', onExit);

  async function stop(): Promise<void> {
    process.removeListener('exit', onExit);
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
      await exited;
      clearTimeout(timer);
    }
    rmSync(dir, { recursive: true, force: true });
  }

  const started = Date.now();
  for (;;) {
    if (child.exitCode !== null) {
      await stop();
      throw new Error(`prometheus exited with ${child.exitCode}:\n${output}`);
    }
    const ready = await fetch(`${url}/-/ready`).then(
      (r) => r.ok,
      () => false,
    );
    if (ready) break;
    if (Date.now() - started > READY_TIMEOUT_MS) {
      await stop();
      throw new Error(`prometheus not ready within ${READY_TIMEOUT_MS} ms:\n${output}`);
    }
    await delay(200);
  }

  async function query(promql: string): Promise<Sample[]> {
    const response = await fetch(`${url}/api/v1/query?${new URLSearchParams({ query: promql }).toString()}`);
    const body = (await response.json()) as { status: string; error?: string; data?: { resultType: string; result: { metric: Record<string, string>; value: [number, string] }[] } };
    if (body.status !== 'success' || body.data === undefined) throw new Error(`query ${promql}: ${body.error ?? response.status}`);
    if (body.data.resultType !== 'vector') throw new Error(`query ${promql}: a ${body.data.resultType}, not an instant vector`);
    return body.data.result.map((r) => ({ metric: r.metric, value: Number(r.value[1]) }));
  }

  return { url, log: () => output, query, stop };
}
