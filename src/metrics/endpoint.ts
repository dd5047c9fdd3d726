import { register as defaultRegistry } from 'prom-client';
import { setMetricsCounting } from '../node-red/insight';
import { privateRegistry, setFlowNames, shareMetrics, type SharedRegistry } from './exporter';
import { errorMessage } from '../core/parse/errors';

/**
 * `GET <httpAdminRoot>/dedup/metrics`: the pack's metrics in the Prometheus
 * text format, behind the `dedup.read` permission (a Prometheus job scrapes
 * it with a Node-RED bearer token when adminAuth is on). Registered by the
 * dedup-sidebar plugin.
 *
 * Runtime settings (settings.js):
 * - `dedupMetrics: false` turns the metrics off: no counting, no endpoint.
 * - `dedupMetricsRegistry`: where else the metrics appear. By default,
 *   prom-client's default registry as this pack loads it (an exporter of
 *   the same userDir that shares the pack's prom-client serves them with
 *   its own); a Registry object (`require('prom-client').register` as the
 *   exporter loads it) names another; `false` keeps them in the pack's
 *   registry only.
 */

interface MetricsRequest {
  headers: Record<string, string | string[] | undefined>;
}

interface MetricsResponse {
  status(code: number): MetricsResponse;
  set(field: string, value: string): MetricsResponse;
  send(body: string): void;
}

type Handler = (req: MetricsRequest, res: MetricsResponse, next: (error?: unknown) => void) => void;

export interface MetricsAPI {
  httpAdmin: { get(path: string, ...handlers: Handler[]): void };
  auth: { needsPermission(permission: string): Handler };
  settings: Record<string, unknown>;
  nodes: { getNode(id: string): unknown };
  util: { getSetting?(node: unknown, name: string): unknown };
  log: { warn(message: string): void };
}

export const METRICS_PATH = '/dedup/metrics';

function isRegistry(value: unknown): value is SharedRegistry {
  return value !== null && typeof value === 'object' && typeof (value as SharedRegistry).getSingleMetric === 'function' && typeof (value as SharedRegistry).registerMetric === 'function';
}

export function registerMetricsEndpoint(RED: MetricsAPI): void {
  const enabled = RED.settings.dedupMetrics !== false;
  setMetricsCounting(enabled);
  if (!enabled) return;

  setFlowNames((id) => {
    const node = RED.nodes.getNode(id);
    if (node === null || node === undefined || RED.util.getSetting === undefined) return '';
    const name = RED.util.getSetting(node, 'NR_FLOW_NAME');
    return typeof name === 'string' ? name : '';
  });

  const shared = RED.settings.dedupMetricsRegistry;
  if (shared !== false) {
    const target = shared === undefined ? defaultRegistry : shared;
    if (isRegistry(target)) {
      const clashes = shareMetrics(target);
      if (clashes.length > 0) RED.log.warn(`dedup metrics: ${clashes.join(', ')} already registered in the shared Prometheus registry by something else; served at ${METRICS_PATH} only`);
    } else {
      RED.log.warn('dedup metrics: the dedupMetricsRegistry setting is not a prom-client Registry; the metrics are served at ' + METRICS_PATH + ' only');
    }
  }

  RED.httpAdmin.get(METRICS_PATH, RED.auth.needsPermission('dedup.read'), (_req, res) => {
    privateRegistry.metrics().then(
      (text) => {
        res.set('Content-Type', privateRegistry.contentType);
        res.send(text);
      },
      (error: unknown) => {
        res.status(500).set('Content-Type', 'text/plain; charset=utf-8');
        res.send(`# dedup metrics failed: ${errorMessage(error)}\n`);
      },
    );
  });
}
