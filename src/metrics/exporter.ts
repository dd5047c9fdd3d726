import { Counter, Gauge, Registry, type Metric } from 'prom-client';
import { CONFIRM_OUTCOMES, SENSOR_DUPLICATE, SENSOR_IN_FLIGHT, SENSOR_SLOTS, WINDOW_SLOTS } from '../telemetry/decision-slots';
import { FAILURE_CAUSES } from '../telemetry/failure-causes';
import { confirmRecords, decidingRecords, type DecidingTelemetry } from '../telemetry/records';
import { SensorTelemetry } from '../telemetry/sensor-telemetry';
import type { StoreInfo } from '../telemetry/subjects';
import { redisCallItems, redisCallSeconds } from './redis-calls';

/**
 * The pack's Prometheus metrics, made from the nodes' telemetry records
 * (src/telemetry: plain numbers, written once per decision) when a
 * registry is scraped: each metric's collect() sets its series from them.
 * Nothing here runs per message.
 *
 * Labels name nodes, never assets or devices: `node` (the node's name, or
 * its id when it has none), `node_id`, `flow` (its flow tab's name) and
 * `store` (memory or redis); plus the fixed words of `decision`, `reason`,
 * `outcome` and `cause`. A few hundred series for a large flow at most.
 *
 * The metrics live in a private registry (served at dedup/metrics) and are
 * also registered in a shared one when the runtime has it (see
 * node-red/metrics-endpoint): both read the same objects.
 */

/** How a scrape finds a node's flow name: the runtime's NR_FLOW_NAME of the node, if it still runs. */
export type FlowNameOf = (nodeId: string) => string;

let flowNameOf: FlowNameOf = () => '';

export function setFlowNames(lookup: FlowNameOf): void {
  flowNameOf = lookup;
}

interface NodeLabels {
  node: string;
  node_id: string;
  flow: string;
}

function labelsOf(id: string, name: string, flows: Map<string, string>): NodeLabels {
  let flow = flows.get(id);
  if (flow === undefined) {
    try {
      flow = flowNameOf(id);
    } catch {
      // A node torn down mid-scrape: it is named without its flow this once.
      flow = '';
    }
    flows.set(id, flow);
  }
  return { node: name === '' ? id : name, node_id: id, flow };
}

/** The nodes of one scrape, with their labels worked out once for every metric. */
interface ScrapeNode {
  labels: NodeLabels;
  record: DecidingTelemetry;
  /** The store's info, asked once per scrape (a sensor store's pending keys are counted by a walk). */
  info: StoreInfo;
}

let scrape: ScrapeNode[] | undefined;

/**
 * The dedup nodes as this scrape sees them, running or closed but not yet
 * forgotten (a redeploy must not make a series vanish): the metrics'
 * collect() calls of one scrape (prom-client awaits them one after the
 * other, in one turn of the event loop) share one walk, forgotten at the
 * end of that turn, so the next scrape sees the nodes started since,
 * however soon it comes.
 */
function scrapeNodes(): ScrapeNode[] {
  if (scrape !== undefined) return scrape;
  const flows = new Map<string, string>();
  const nodes = [...decidingRecords()].map((record) => ({ labels: labelsOf(record.subject.id, record.subject.name, flows), record, info: record.storeInfo() }));
  scrape = nodes;
  setImmediate(() => {
    scrape = undefined;
  });
  return nodes;
}

const NODE_LABELS = ['node', 'node_id', 'flow'] as const;

const messages = new Counter({
  name: 'dedup_messages_total',
  help: 'Decisions of the dedup nodes: pings (sliding window) or readings (sensor reconnect), by decision (admitted, suppressed) and reason as in msg.dedup.reason.',
  labelNames: [...NODE_LABELS, 'type', 'store', 'decision', 'reason'],
  registers: [],
  collect() {
    this.reset();
    for (const { labels, record, info } of scrapeNodes()) {
      const slots = record instanceof SensorTelemetry ? SENSOR_SLOTS : WINDOW_SLOTS;
      const store = info.kind;
      for (let slot = 0; slot < slots.length; slot++) {
        const { reason, admit } = slots[slot] as { reason: string; admit: boolean };
        this.inc({ ...labels, type: record.subject.type, store, decision: admit ? 'admitted' : 'suppressed', reason }, record.decisions[slot] as number);
      }
    }
  },
});

const rejected = new Counter({
  name: 'dedup_rejected_total',
  help: 'Messages (sliding window) or readings (sensor reconnect) a dedup node could not decide: unreadable, or the store failed and the node hands failures to Catch.',
  labelNames: [...NODE_LABELS, 'type'],
  registers: [],
  collect() {
    this.reset();
    for (const { labels, record } of scrapeNodes()) this.inc({ ...labels, type: record.subject.type }, record.rejected);
  },
});

const readings = new Counter({
  name: 'dedup_sensor_readings_total',
  help: 'Readings of the sensor reconnect dedup nodes by outcome: unique, duplicate, in-flight, rejected, lease-expired (admitted over a pending claim whose lease ran out).',
  labelNames: [...NODE_LABELS, 'store', 'outcome'],
  registers: [],
  collect() {
    this.reset();
    for (const { labels, info, record } of scrapeNodes()) {
      if (!(record instanceof SensorTelemetry)) continue;
      const store = info.kind;
      const d = record.decisions;
      const unique = (d[0] as number) + (d[1] as number) + (d[2] as number);
      this.inc({ ...labels, store, outcome: 'unique' }, unique);
      this.inc({ ...labels, store, outcome: 'duplicate' }, d[SENSOR_DUPLICATE] as number);
      this.inc({ ...labels, store, outcome: 'in-flight' }, d[SENSOR_IN_FLIGHT] as number);
      this.inc({ ...labels, store, outcome: 'rejected' }, record.rejected);
      this.inc({ ...labels, store, outcome: 'lease-expired' }, record.leaseExpired);
    }
  },
});

const confirmKeys = new Counter({
  name: 'dedup_confirm_keys_total',
  help: 'Keys settled by the dedup confirm nodes: confirmed or released in time, late (after the lease ran out), unmatched (kept by a newer claim, or not held).',
  labelNames: [...NODE_LABELS, 'outcome'],
  registers: [],
  collect() {
    this.reset();
    const flows = new Map<string, string>();
    for (const c of confirmRecords()) {
      const labels = labelsOf(c.subject.id, c.subject.name, flows);
      for (let i = 0; i < CONFIRM_OUTCOMES.length; i++) this.inc({ ...labels, outcome: CONFIRM_OUTCOMES[i] }, c.keys[i] as number);
    }
  },
});

const confirmFailures = new Counter({
  name: 'dedup_confirm_failed_total',
  help: 'Messages the dedup confirm nodes handed to Catch (no claim on the message, unknown node, unmatched keys, store failure).',
  labelNames: [...NODE_LABELS],
  registers: [],
  collect() {
    this.reset();
    const flows = new Map<string, string>();
    for (const c of confirmRecords()) this.inc(labelsOf(c.subject.id, c.subject.name, flows), c.failed);
  },
});

const storeFailures = new Counter({
  name: 'dedup_store_failures_total',
  help: 'Requests a dedup node\'s store failed, by cause: timeout (Redis did not answer in time), unreachable (no working connection), script (Redis answered with an error), other.',
  labelNames: [...NODE_LABELS, 'type', 'cause'],
  registers: [],
  collect() {
    this.reset();
    for (const { labels, record } of scrapeNodes()) {
      for (let i = 0; i < FAILURE_CAUSES.length; i++) this.inc({ ...labels, type: record.subject.type, cause: FAILURE_CAUSES[i] }, record.failures[i] as number);
    }
    const flows = new Map<string, string>();
    for (const c of confirmRecords()) {
      const labels = labelsOf(c.subject.id, c.subject.name, flows);
      for (let i = 0; i < FAILURE_CAUSES.length; i++) this.inc({ ...labels, type: 'dedup-confirm', cause: FAILURE_CAUSES[i] }, c.failures[i] as number);
    }
  },
});

/** A gauge of the running nodes' store info, set at scrape time; `read` answers undefined for a node it does not apply to. */
function storeGauge(name: string, help: string, read: (info: StoreInfo, now: number) => number | undefined): Gauge {
  return new Gauge({
    name,
    help,
    labelNames: [...NODE_LABELS, 'type', 'store'],
    registers: [],
    collect() {
      this.reset();
      const now = Date.now();
      for (const { labels, record, info } of scrapeNodes()) {
        if (!record.running) continue;
        const value = read(info, now);
        if (value !== undefined) this.set({ ...labels, type: record.subject.type, store: info.kind }, value);
      }
    },
  });
}

const entries = storeGauge('dedup_store_entries', 'Assets (sliding window) or keys (sensor) a memory store holds now.', (info) => info.entries);
const maxEntries = storeGauge('dedup_store_max_entries', 'The most entries a memory store keeps (Max assets, Max keys).', (info) => info.maxEntries);
const pendingKeys = storeGauge('dedup_pending_keys', 'Keys a sensor node\'s memory store holds pending a confirm (Confirm delivery on), their lease still running.', (info) => info.pendingKeys);
const savedBytes = storeGauge('dedup_saved_state_bytes', 'Bytes of a memory store\'s saved state in the user directory (snapshot and journal), when saving is on.', (info) => info.savedBytes);
const lastSaveAge = storeGauge('dedup_last_save_age_seconds', 'Seconds since a memory store\'s state was last saved, when saving is on and a save has succeeded.', (info, now) =>
  info.lastSave === undefined ? undefined : Math.max(0, (now - info.lastSave) / 1000),
);
const redisUp = storeGauge('dedup_redis_connected', '1 while a Redis-backed node\'s connection is ready, else 0.', (info) => (info.kind === 'redis' ? (info.connection === 'ready' ? 1 : 0) : undefined));

/** Every metric of the pack, in the order of the exposition. */
export const METRICS: readonly Metric[] = [messages, rejected, readings, confirmKeys, confirmFailures, storeFailures, entries, maxEntries, pendingKeys, savedBytes, lastSaveAge, redisUp, redisCallSeconds, redisCallItems];

/** The registry served at dedup/metrics. */
export const privateRegistry = new Registry();
for (const metric of METRICS) privateRegistry.registerMetric(metric);

/** The part of a prom-client Registry that sharing needs (a registry of another prom-client copy will do). */
export interface SharedRegistry {
  getSingleMetric(name: string): unknown;
  registerMetric(metric: Metric): void;
}

/**
 * Registers the pack's metrics in `registry` too, so that an exporter
 * serving it shows them. A name some other metric already holds there is
 * left alone; the names kept out are returned.
 */
export function shareMetrics(registry: SharedRegistry): string[] {
  const clashes: string[] = [];
  for (const metric of METRICS) {
    const name = (metric as unknown as { name: string }).name;
    const present = registry.getSingleMetric(name);
    if (present === metric) continue;
    if (present !== undefined) {
      clashes.push(name);
      continue;
    }
    registry.registerMetric(metric);
  }
  return clashes;
}

/** Takes the pack's metrics out of a registry it shared them with. */
export function unshareMetrics(registry: { getSingleMetric(name: string): unknown; removeSingleMetric(name: string): void }): void {
  for (const metric of METRICS) {
    const name = (metric as unknown as { name: string }).name;
    if (registry.getSingleMetric(name) === metric) registry.removeSingleMetric(name);
  }
}
