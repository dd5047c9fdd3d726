import { errorMessage } from './core/parse/errors';
import type { AdminRequest, AdminResponse, NodeAPI } from './node-red/api';
import { publishInsight } from './insight/sidebar-push';
import { insightDetails, insightSummaries, keyGaps, runningSubject, windowSample } from './insight/sidebar-view';
import { DEFAULT_DEADBANDS } from './tune/grid';
import { DEFAULT_METRES, DEFAULT_SECONDS, MAX_VALUES, nodeRule, parseList, withCurrent } from './tune/grid-spec';
import type { WhatIfJob } from './tune/jobs';
import { runWhatIfJob } from './tune/threads';
import { ttlWhatIf } from './tune/ttl-what-if';
import { MAX_UPLOAD_BYTES, MAX_UPLOAD_PINGS, readUpload, UPLOAD_IDLE_MS } from './tune/upload';
import type { WhatIfRequest } from './tune/what-if';
import { textOf } from './core/parse/fields';
import { ROLE_OPTIONS, type ColumnChoice, type Role } from './tune/file-columns';
import type { FileLayout } from './tune/ping-file';
import { DEFAULT_TIME_ZONE, timeZoneName } from './tune/time-zone';
import { SENSOR_TYPE, WINDOW_TYPE, type WindowNodeSettings } from './telemetry/subjects';

/**
 * The dedup sidebar's runtime half (a Node-RED plugin, package.json
 * `node-red.plugins`; the editor half is nodes/dedup-sidebar.html). It
 * pushes every running dedup node's rates to the editor over RED.comms and
 * answers the sidebar's questions on the admin API:
 *
 *   GET  dedup-sidebar/nodes                  every node, as pushed    (dedup.read)
 *   GET  dedup-sidebar/nodes/:id              one node with its lists  (dedup.read)
 *   POST dedup-sidebar/nodes/:id/what-if      the grid over its sample (dedup.write)
 *   POST dedup-sidebar/nodes/:id/what-if/file the grid over an upload  (dedup.write;
 *        ?asset=&time=&lat=&lon=&heading=&accuracy=&value=&valid=&satellites=&hdop=
 *        name its columns, ?tz= the zone of its zone-less times)
 *
 * A what-if's lists are `seconds` and `metres` (Heartbeat × Movement), or
 * for a node in value mode `seconds` and `deadbands` (Heartbeat ×
 * Deadband), in the body or the query.
 *   POST dedup-sidebar/nodes/:id/ttl-what-if  the sensor TTL what-if   (dedup.write)
 *
 * The metrics endpoint (dedup/metrics) is the nodes' own, not this
 * plugin's: see node-red/metrics-endpoint.
 *
 * The what-if is work (seconds, for a large upload) and reads files, so it
 * needs write permission and runs in a thread of its own, one at a time.
 * Data comes from the nodes' telemetry records, read by insight/sidebar-view.
 *
 * Every request is bounded before any work is done for it, so that no admin
 * client can stall the flows (the runtime's one thread) or take its memory:
 * a JSON body of at most MAX_JSON_BODY_BYTES, lists of at most
 * MAX_LIST_ITEMS items as sent (counted before they are read), an upload of
 * at most MAX_UPLOAD_BYTES and MAX_UPLOAD_PINGS, read in a thread with a
 * heap limit, and ended when it sends nothing for the idle time
 * (settings.js `dedupSidebarUploadIdleSeconds`, 30 by default). The
 * limits are listed in docs/sidebar-and-tuning.md.
 */

const PLUGIN_ID = 'dedup-sidebar';
const COMMS_TOPIC = 'telemetry-dedup/insight';
const BASE = '/dedup-sidebar/nodes';
const PUSH_EVERY_MS = 2000;
/** A what-if request's JSON body: two short lists need some hundred bytes. */
const MAX_JSON_BODY_BYTES = 16 * 1024;
/**
 * Items of a list as sent, duplicates included: counted before any item is
 * read, so that a list of 160,000 values is refused at once rather than read
 * (the lists hold at most MAX_VALUES values once each is kept once).
 */
const MAX_LIST_ITEMS = 5 * MAX_VALUES;

/** The one what-if running in this runtime, if any. */
let busy = false;

export = function registerDedupSidebar(RED: NodeAPI): void {
  RED.plugins.registerPlugin(PLUGIN_ID, { type: 'dedup-sidebar' });
  publishInsight((nodes, time) => RED.comms.publish(COMMS_TOPIC, { time, nodes }, true), PUSH_EVERY_MS);

  const read = RED.auth.needsPermission('dedup.read');
  const write = RED.auth.needsPermission('dedup.write');

  /** An error the editor words from its catalog (`code`), with the runtime's wording beside it. */
  const fail = (res: AdminResponse, status: number, code: string, substitutions: Record<string, string | number> = {}): void => {
    res.status(status).json({ error: { code, ...substitutions, message: RED._(`dedup-sidebar.errors.${code}`, substitutions) } });
  };

  RED.httpAdmin.get(BASE, read, (_req, res) => {
    // The upload limit too, so that the editor refuses a large file before sending it.
    // The grid's default lists and the upload limit, as this runtime has them: the sidebar keeps no copy.
    res.json({
      time: Date.now(),
      nodes: insightSummaries(),
      maxUploadBytes: MAX_UPLOAD_BYTES,
      grid: { seconds: DEFAULT_SECONDS.join(','), metres: DEFAULT_METRES.join(','), deadbands: DEFAULT_DEADBANDS.join(',') },
    });
  });

  RED.httpAdmin.get(`${BASE}/:id`, read, (req, res) => {
    const details = insightDetails(req.params.id as string);
    if (details === undefined) fail(res, 404, 'noNode', { id: req.params.id as string });
    else res.json(details);
  });

  /** The grid lists of a request (body or query), defaulted, with the node's own setting added; in value mode Deadband instead of Movement. */
  const gridOf = (source: Record<string, unknown>, settings: Readonly<WindowNodeSettings>, res: AdminResponse): WhatIfJob['request']['spec'] | undefined => {
    const valueMode = settings.mode === 'value';
    const lists: (readonly number[])[] = [];
    const asked: ReadonlyArray<readonly [string, readonly number[]]> = [['seconds', DEFAULT_SECONDS], valueMode ? ['deadbands', DEFAULT_DEADBANDS] : ['metres', DEFAULT_METRES]];
    for (const [name, fallback] of asked) {
      const given = source[name];
      if (given === undefined || given === '') {
        lists.push(fallback);
        continue;
      }
      const items = Array.isArray(given) ? given.length : typeof given === 'string' ? commas(given) + 1 : 1;
      if (items > MAX_LIST_ITEMS) {
        fail(res, 400, 'list.tooMany', { list: name, value: items, max: MAX_VALUES });
        return undefined;
      }
      const parsed = parseList(Array.isArray(given) ? given : textOf(given));
      if (!parsed.ok) {
        fail(res, 400, `list.${parsed.problem}`, { list: name, value: parsed.value, max: MAX_VALUES });
        return undefined;
      }
      lists.push(parsed.values);
    }
    const [seconds = DEFAULT_SECONDS, second = []] = lists;
    if (valueMode) return withCurrent({ seconds, metres: [], deadbands: second }, settings.minSeconds, undefined, settings.deadband);
    return withCurrent({ seconds, metres: second }, settings.minSeconds, settings.minMetres);
  };

  /**
   * Whether a parsed JSON body is small enough; answers 413 when not.
   * Node-RED parsed it already (up to its apiMaxLength, 5 MB by default),
   * but nothing here reads one of more than MAX_JSON_BODY_BYTES.
   */
  const smallBody = (req: AdminRequest, res: AdminResponse): boolean => {
    const declared = Number(req.headers['content-length']);
    if (!(declared > MAX_JSON_BODY_BYTES)) return true;
    fail(res, 413, 'bodyTooLarge', { limit: MAX_JSON_BODY_BYTES / 1024, size: (declared / 1024).toFixed(0) });
    return false;
  };

  /** How long an upload may send nothing: settings.js `dedupSidebarUploadIdleSeconds`, when a positive number. */
  const idleMs = (): number => {
    const seconds = RED.settings.dedupSidebarUploadIdleSeconds;
    return typeof seconds === 'number' && seconds > 0 ? seconds * 1000 : UPLOAD_IDLE_MS;
  };

  /** Runs a what-if job, one at a time, and answers with its result. */
  const answer = async (res: AdminResponse, job: WhatIfJob, extra: Record<string, unknown>): Promise<void> => {
    busy = true;
    try {
      const reply = await runWhatIfJob(job);
      if (reply.kind === 'error') {
        fail(res, reply.code === 'failed' ? 500 : reply.code === 'memory' || reply.code === 'tooManyPings' ? 413 : 400, `file.${reply.code}`, { ...reply.details, detail: reply.message });
        return;
      }
      res.json({ ...extra, read: reply.read ?? null, result: reply.result });
    } catch (error) {
      fail(res, 500, 'failed', { detail: errorMessage(error) });
    } finally {
      busy = false;
    }
  };

  /** The running sliding-window node of the request, or an answer saying why there is none. */
  const windowNode = (req: AdminRequest, res: AdminResponse): Readonly<WindowNodeSettings> | undefined => {
    if (req._body === true && !smallBody(req, res)) return undefined;
    const subject = runningSubject(req.params.id as string);
    if (subject === undefined) fail(res, 404, 'noNode', { id: req.params.id as string });
    else if (subject.type !== WINDOW_TYPE) fail(res, 409, 'notWindow', { id: subject.id });
    else if (busy) fail(res, 429, 'busy');
    else return subject.settings;
    return undefined;
  };

  RED.httpAdmin.post(`${BASE}/:id/what-if`, write, (req, res) => {
    const settings = windowNode(req, res);
    if (settings === undefined) return;
    const sample = windowSample(req.params.id as string);
    if (sample === undefined || sample.columns.size === 0) {
      fail(res, 409, 'noSample');
      return;
    }
    const body = req.body !== null && typeof req.body === 'object' ? (req.body as Record<string, unknown>) : {};
    const spec = gridOf(body, settings, res);
    if (spec === undefined) return;
    void answer(res, { kind: 'what-if', input: { columns: sample.columns }, fields: {}, request: requestOf(spec, settings) }, { source: 'sample', current: currentOf(settings) });
  });

  RED.httpAdmin.post(`${BASE}/:id/what-if/file`, write, (req, res) => {
    const settings = windowNode(req, res);
    if (settings === undefined) return;
    if (req._body === true) {
      // A JSON or form body was parsed (and bounded) by Node-RED already: not a file.
      fail(res, 415, 'uploadType');
      return;
    }
    const spec = gridOf(req.query, settings, res);
    if (spec === undefined) return;
    const layout = layoutOf(req.query);
    if (typeof layout === 'string') {
      fail(res, 400, 'timeZone', { value: layout });
      return;
    }
    busy = true;
    readUpload(req, MAX_UPLOAD_BYTES, idleMs()).then(
      (upload) => {
        if (upload.ok) {
          const fields = { heading: settings.minHeadingDegrees !== undefined, accuracy: settings.accuracyProperty !== '' };
          const name = typeof req.query.name === 'string' ? req.query.name.slice(0, 200) : '';
          const input = { text: upload.bytes, maxPings: MAX_UPLOAD_PINGS };
          void answer(res, { kind: 'what-if', input, fields, layout, request: requestOf(spec, settings) }, { source: 'file', name, current: currentOf(settings) });
          return;
        }
        busy = false;
        if (upload.reason === 'tooLarge') {
          fail(res, 413, 'tooLarge', { limit: MAX_UPLOAD_BYTES / 1024 / 1024, size: (upload.bytes / 1024 / 1024).toFixed(1) });
          return;
        }
        // The client stopped sending: answer, and close the connection rather than wait for the rest.
        res.set('Connection', 'close');
        fail(res, 408, 'idle', { seconds: upload.idleMs / 1000, bytes: upload.bytes });
        req.socket.end();
      },
      (error: unknown) => {
        busy = false;
        fail(res, 400, 'uploadFailed', { detail: errorMessage(error) });
      },
    );
  });

  RED.httpAdmin.post(`${BASE}/:id/ttl-what-if`, write, (req, res) => {
    if (req._body === true && !smallBody(req, res)) return;
    const subject = runningSubject(req.params.id as string);
    if (subject === undefined) {
      fail(res, 404, 'noNode', { id: req.params.id as string });
      return;
    }
    const gaps = subject.type === SENSOR_TYPE ? keyGaps(subject.id) : undefined;
    if (gaps === undefined) {
      fail(res, 409, 'notSensor', { id: subject.id });
      return;
    }
    const current = gaps.settings.ttlSeconds;
    res.json({ current, stats: gaps.stats, replays: gaps.gaps.length, points: ttlWhatIf(gaps.gaps, current) });
  });
};

/**
 * An upload's columns (the picker's choice; blank or absent: recognised by
 * name) and the zone of its times without one; the zone as given when the
 * runtime knows no such zone.
 */
function layoutOf(query: Record<string, unknown>): FileLayout | string {
  const columns: ColumnChoice = {};
  for (const [role, option] of Object.entries(ROLE_OPTIONS) as [Role, string][]) {
    const name = query[option];
    if (typeof name === 'string' && name.trim() !== '') columns[role] = name.slice(0, 200);
  }
  const tz = typeof query.tz === 'string' && query.tz.trim() !== '' ? query.tz.slice(0, 100) : DEFAULT_TIME_ZONE;
  const timeZone = timeZoneName(tz);
  return timeZone === undefined ? tz : { columns, timeZone };
}

/** The node's own rule around the requested grid; the jitter is measured under the node's Heartbeat. */
function requestOf(spec: WhatIfRequest['spec'], settings: Readonly<WindowNodeSettings>): WhatIfRequest {
  return { spec, rule: nodeRule(settings), heartbeatSeconds: settings.minSeconds };
}

/** The node's own setting, for the chart to mark: Heartbeat and Movement, or in value mode Heartbeat and Deadband. */
function currentOf(settings: Readonly<WindowNodeSettings>): { minSeconds: number; minMetres: number } | { minSeconds: number; deadband: number } {
  if (settings.mode === 'value') return { minSeconds: settings.minSeconds, deadband: settings.deadband ?? 0 };
  return { minSeconds: settings.minSeconds, minMetres: settings.minMetres };
}

/** Commas in a string, counted without splitting it (a few ms for the largest body Node-RED lets through). */
function commas(text: string): number {
  let count = 0;
  for (let at = text.indexOf(','); at !== -1; at = text.indexOf(',', at + 1)) count++;
  return count;
}
