/**
 * The traffic the benchmark feeds through each node: deterministic, so every
 * line and every round decides exactly the same messages, and shaped like a
 * fleet rather than like a loop counter.
 *
 * Vehicle pings: `assets` vehicles report every 10 s, round-robin. Even
 * vehicles are parked (a metre of GPS jitter), odd ones drive (~130 m per
 * ping); every 25th ping of a vehicle is a redelivery of the one before.
 * With the defaults (60 s, 25 m) about 58 % are admitted: movers always,
 * parked vehicles once a minute, redeliveries never. Coordinates carry six
 * decimals, as trackers send them. `seq` changes on every message: it is the
 * property the core filter node watches, so that it forwards everything.
 *
 * Sensor bursts: `devices` bin sensors, round-robin. Burst r of a device
 * holds seq r*40 .. r*40+49, so its first 10 readings repeat the last 10 of
 * the previous burst, byte for byte: the reconnect replay the node removes.
 */

export interface PingPayload {
  assetId: string;
  ts: number;
  lat: number;
  lon: number;
  /** The fix's quality, as trackers report it: read only by the lines with the fleet rules on (bench/flows.ts). */
  accuracy: number;
  valid: 'A' | 'V';
  sats: number;
  hdop: number;
  seq: number;
}

export interface PingMessage {
  topic: string;
  payload: PingPayload;
}

export interface Reading {
  device_id: string;
  seq: number;
  ts: string;
  fill_pct: number;
}

export interface BurstMessage {
  topic: string;
  payload: Reading[];
}

/** 2026-06-01T00:00:00Z: pings are epoch milliseconds, as most trackers send. */
export const PING_EPOCH_MS = Date.UTC(2026, 5, 1);
const PING_INTERVAL_MS = 10_000;
const REDELIVERY_EVERY = 25;

const round6 = (x: number): number => Math.round(x * 1e6) / 1e6;

/** Ping number i of the fleet's round-robin sequence (see above), as a fresh message. */
export function pingMessage(i: number, assets: number, idPrefix: string): PingMessage {
  const a = i % assets;
  const k = Math.floor(i / assets);
  // A redelivery repeats the previous ping of the vehicle exactly.
  const step = k % REDELIVERY_EVERY === REDELIVERY_EVERY - 1 ? k - 1 : k;
  const assetId = `${idPrefix}${String(a).padStart(6, '0')}`;
  const lat0 = 40 + (a % 97) * 0.1;
  const lon0 = -3 + (a % 89) * 0.1;
  const moving = a % 2 === 1;
  const lat = moving ? lat0 + step * 0.0012 : lat0 + ((step * 7919) % 17) * 0.000001;
  const lon = moving ? lon0 : lon0 + ((step * 104_729) % 13) * 0.000001;
  return {
    topic: assetId,
    payload: {
      assetId,
      ts: PING_EPOCH_MS + step * PING_INTERVAL_MS + (a % 7) * 13,
      lat: round6(lat),
      lon: round6(lon),
      accuracy: 5,
      valid: 'A',
      // One fix in 50 of each vehicle too poor for the fleet rules' Max HDOP, so that they take their reason now and then.
      sats: 9,
      hdop: (a + step) % 50 === 17 ? 3.5 : 1.1,
      seq: i,
    },
  };
}

/** Pings from..from+count-1 of the sequence. */
export function pingMessages(count: number, assets: number, idPrefix: string, from = 0): PingMessage[] {
  const out = new Array<PingMessage>(count);
  for (let i = 0; i < count; i++) out[i] = pingMessage(from + i, assets, idPrefix);
  return out;
}

export const READINGS_PER_BURST = 50;
const NEW_PER_BURST = 40;
const READING_EPOCH_MS = Date.UTC(2026, 6, 16, 9);
const READING_INTERVAL_MS = 300_000;

export function reading(deviceId: string, d: number, seq: number): Reading {
  // Whole seconds, so the ISO text is the `...Z` form sensors send.
  const ts = new Date(READING_EPOCH_MS + seq * READING_INTERVAL_MS + (d % 60) * 1000).toISOString().replace('.000Z', 'Z');
  // Fill levels in half percents: 71 and 62.5 both occur (71 hashes as 71.0).
  const fill = ((d * 31 + seq * 7) % 201) / 2;
  return { device_id: deviceId, seq, ts, fill_pct: fill };
}

export function burstMessages(bursts: number, devices: number, idPrefix: string): BurstMessage[] {
  const out = new Array<BurstMessage>(bursts);
  for (let b = 0; b < bursts; b++) {
    const d = b % devices;
    const r = Math.floor(b / devices);
    const deviceId = `${idPrefix}${String(d).padStart(5, '0')}`;
    const payload = new Array<Reading>(READINGS_PER_BURST);
    for (let j = 0; j < READINGS_PER_BURST; j++) payload[j] = reading(deviceId, d, r * NEW_PER_BURST + j);
    out[b] = { topic: deviceId, payload };
  }
  return out;
}

/** Readings whose (device, seq) has not occurred before in the list: the ones a dedup node admits. */
export function uniqueReadings(messages: readonly BurstMessage[]): number {
  const seen = new Set<string>();
  for (const m of messages) for (const r of m.payload) seen.add(`${r.device_id}:${r.seq}`);
  return seen.size;
}

/**
 * A reading as a LoRaWAN network server forwards it (The Things Stack's
 * uplink shape): the fields the node keys on sit at different depths, which
 * is what the nested-path line measures (the sensor node reading
 * `end_device_ids.dev_eui`, `uplink_message.f_cnt`, `received_at` and
 * `uplink_message.decoded_payload.fill_pct`). Same devices, sequence numbers,
 * times and fill levels as reading(), so the same readings are replays.
 */
export interface NestedReading {
  end_device_ids: { device_id: string; dev_eui: string };
  received_at: string;
  uplink_message: { f_port: number; f_cnt: number; decoded_payload: { fill_pct: number } };
}

export interface NestedBurstMessage {
  topic: string;
  payload: NestedReading[];
}

export function nestedReading(idPrefix: string, d: number, seq: number): NestedReading {
  const deviceId = `${idPrefix}${String(d).padStart(5, '0')}`;
  const flat = reading(deviceId, d, seq);
  return {
    // The prefix keeps warm-up devices apart from the timed run's, as for the flat readings.
    end_device_ids: { device_id: deviceId, dev_eui: `${idPrefix}70B3D57E${d.toString(16).toUpperCase().padStart(8, '0')}` },
    received_at: flat.ts,
    uplink_message: { f_port: 1, f_cnt: seq, decoded_payload: { fill_pct: flat.fill_pct } },
  };
}

/** The same bursts in the nested shape. */
export function nestedBursts(flat: readonly BurstMessage[], devices: number, idPrefix: string): NestedBurstMessage[] {
  return flat.map((m, b) => ({
    topic: m.topic,
    payload: m.payload.map((r) => nestedReading(idPrefix, b % devices, r.seq)),
  }));
}
