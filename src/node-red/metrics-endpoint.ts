import { register as defaultRegistry } from 'prom-client';
import { errorMessage } from '../core/parse/errors';
import { privateRegistry, setFlowNames, shareMetrics, type SharedRegistry } from '../metrics/exporter';
import { countReasons } from '../telemetry/decision-slots';
import type { NodeAPI } from './api';

/**
 * `GET <httpAdminRoot>/dedup/metrics`: the pack's metrics in the Prometheus
 * text format, behind the `dedup.read` permission (a Prometheus job scrapes
 * it with a Node-RED bearer token when adminAuth is on). Served by the
 * nodes' own modules (nodeConstructor, and the stats node's entry, ask
 * for it as Node-RED loads them), so it is there whether or not the dedup
 * sidebar plugin is; served once per admin app however many modules ask.
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
export const METRICS_PATH = '/dedup/metrics';

/** The admin apps the endpoint is served on already (the test helper makes one per flow it loads). */
const served = new WeakSet<object>();

function isRegistry(value: unknown): value is SharedRegistry {
  return value !== null && typeof value === 'object' && typeof (value as SharedRegistry).getSingleMetric === 'function' && typeof (value as SharedRegistry).registerMetric === 'function';
}

/** The flow (tab) name of a running node, as the metrics' `flow` label has it; '' when not known. */
export function flowNameOf(RED: NodeAPI, id: string): string {
  try {
    const node = RED.nodes.getNode(id);
    if (node === null || node === undefined || RED.util.getSetting === undefined) return '';
    const name = RED.util.getSetting(node, 'NR_FLOW_NAME');
    return typeof name === 'string' ? name : '';
  } catch {
    // A node torn down while it is read: named without its flow this once.
    return '';
  }
}

export function serveMetrics(RED: NodeAPI): void {
  if (served.has(RED.httpAdmin)) return;
  served.add(RED.httpAdmin);
  const enabled = RED.settings.dedupMetrics !== false;
  countReasons(enabled);
  if (!enabled) return;

  setFlowNames((id) => flowNameOf(RED, id));

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
