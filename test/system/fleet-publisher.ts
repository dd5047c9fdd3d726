/**
 * The field side of the system test, through one MQTT.js client: bin
 * sensors that keep every reading since their last replay in a buffer and
 * replay the whole buffer when told (as a gateway does after it reconnects),
 * and vehicles that ping at fleet rates, some parked, some driving in a
 * straight line. Both send copies: a bin sends some readings twice, and
 * sends its previous reading again with the next one (it missed the
 * acknowledgement); a vehicle sends some pings twice (a QoS 1 resend).
 *
 * Everything made is recorded with the window it belongs to: a window runs
 * from one replay to the next, so every reading is replayed exactly once,
 * after the fault of its window.
 */
import mqtt, { type MqttClient } from 'mqtt';

export interface Reading {
  device_id: string;
  seq: number;
  ts: string;
  fill_pct: number;
}

export interface MadeReading {
  reading: Reading;
  window: number;
  /** When its first copy was handed to the client (ms since epoch). */
  at: number;
}

export interface MadePing {
  assetId: string;
  ts: string;
  t: number;
  lat: number;
  lon: number;
  window: number;
}

export interface FleetSettings {
  bins: number;
  vehicles: number;
  binPeriodMs: number;
  vehiclePeriodMs: number;
  /** Share of readings sent twice at once, and of readings sent again with the next. */
  binCopyShare: number;
  /** Share of pings sent twice. */
  pingCopyShare: number;
}

const TICK_MS = 100;
const METRES_PER_DEGREE = 111_320;

/** A deterministic generator, so that a failing run can be told apart from a different run. */
function random(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

interface Bin {
  id: string;
  seq: number;
  buffer: Reading[];
  last: Reading | undefined;
}

interface Vehicle {
  id: string;
  lat: number;
  lon: number;
  /** metres per second north and east; zero for a parked vehicle */
  north: number;
  east: number;
  lastT: number;
}

export class FleetPublisher {
  readonly readings: MadeReading[] = [];
  readonly pings: MadePing[] = [];
  /** Messages handed to the client per window (every copy, every replay burst counted once per reading). */
  readonly readingCopies: number[] = [];
  readonly pingCopies: number[] = [];
  window = 0;
  published = 0;
  acknowledged = 0;
  failed = 0;
  private readonly rand = random(21);
  private readonly bins: Bin[] = [];
  private readonly vehicles: Vehicle[] = [];
  private timer: NodeJS.Timeout | undefined;
  private tick = 0;
  private readonly pending = new Set<Promise<void>>();

  private constructor(
    private readonly client: MqttClient,
    private readonly settings: FleetSettings,
  ) {
    for (let i = 0; i < settings.bins; i++) this.bins.push({ id: `bin-${String(i).padStart(4, '0')}`, seq: 1000 + i, buffer: [], last: undefined });
    for (let i = 0; i < settings.vehicles; i++) {
      const driving = this.rand() < 0.6;
      const speed = driving ? 8 + this.rand() * 7 : 0;
      const heading = this.rand() * 2 * Math.PI;
      this.vehicles.push({
        id: `veh-${String(i).padStart(4, '0')}`,
        lat: 52 + this.rand() * 0.5,
        lon: 4.5 + this.rand() * 0.5,
        north: speed * Math.cos(heading),
        east: speed * Math.sin(heading),
        lastT: 0,
      });
    }
  }

  static async open(url: string, settings: FleetSettings): Promise<FleetPublisher> {
    // A persistent session: QoS 1 messages not yet acknowledged when the
    // broker goes away are sent again when it is back.
    const client = await mqtt.connectAsync(url, { clientId: 'dedup-system-publisher', clean: false, reconnectPeriod: 250, keepalive: 10 });
    client.on('error', () => undefined);
    return new FleetPublisher(client, settings);
  }

  private publish(topic: string, payload: unknown): void {
    this.published++;
    const sent = this.client
      .publishAsync(topic, JSON.stringify(payload), { qos: 1 })
      .then(() => {
        this.acknowledged++;
      })
      .catch(() => {
        this.failed++;
      });
    this.pending.add(sent);
    void sent.finally(() => this.pending.delete(sent));
  }

  private count(list: number[], n = 1): void {
    list[this.window] = (list[this.window] ?? 0) + n;
  }

  start(): void {
    this.timer = setInterval(() => this.step(), TICK_MS);
  }

  /** Stops making readings and pings (what was handed to the client still goes out). */
  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }

  private step(): void {
    const now = Date.now();
    const tick = this.tick++;
    const binSlots = Math.max(1, Math.round(this.settings.binPeriodMs / TICK_MS));
    for (let i = tick % binSlots; i < this.bins.length; i += binSlots) this.makeReading(this.bins[i] as Bin, now);
    const vehicleSlots = Math.max(1, Math.round(this.settings.vehiclePeriodMs / TICK_MS));
    for (let i = tick % vehicleSlots; i < this.vehicles.length; i += vehicleSlots) this.makePing(this.vehicles[i] as Vehicle, now);
  }

  private makeReading(bin: Bin, now: number): void {
    bin.seq++;
    const reading: Reading = {
      device_id: bin.id,
      seq: bin.seq,
      // Whole seconds: a bin makes one reading per period.
      ts: new Date(Math.floor(now / 1000) * 1000).toISOString(),
      fill_pct: ((bin.seq * 7) % 100) + 0.5,
    };
    this.readings.push({ reading, window: this.window, at: now });
    const topic = `bins/${bin.id}`;
    if (bin.last !== undefined && this.rand() < this.settings.binCopyShare) {
      this.publish(topic, bin.last);
      this.count(this.readingCopies);
    }
    this.publish(topic, reading);
    this.count(this.readingCopies);
    if (this.rand() < this.settings.binCopyShare) {
      this.publish(topic, reading);
      this.count(this.readingCopies);
    }
    bin.last = reading;
    bin.buffer.push(reading);
  }

  private makePing(vehicle: Vehicle, now: number): void {
    // A ping's time is its own and later than the one before, even when two
    // ticks fall into one millisecond.
    const t = Math.max(now, vehicle.lastT + 1);
    const dt = vehicle.lastT === 0 ? 0 : (t - vehicle.lastT) / 1000;
    vehicle.lastT = t;
    vehicle.lat += (vehicle.north * dt) / METRES_PER_DEGREE;
    vehicle.lon += (vehicle.east * dt) / (METRES_PER_DEGREE * Math.cos((vehicle.lat * Math.PI) / 180));
    const ping = { assetId: vehicle.id, ts: new Date(t).toISOString(), lat: Number(vehicle.lat.toFixed(7)), lon: Number(vehicle.lon.toFixed(7)) };
    this.pings.push({ ...ping, t, window: this.window });
    const topic = `fleet/${vehicle.id}`;
    this.publish(topic, ping);
    this.count(this.pingCopies);
    if (this.rand() < this.settings.pingCopyShare) {
      this.publish(topic, ping);
      this.count(this.pingCopies);
    }
  }

  /** Every bin sends its buffer (the readings made since its last replay) as one burst, and starts a new one. */
  replay(): number {
    let copies = 0;
    for (const bin of this.bins) {
      if (bin.buffer.length === 0) continue;
      this.publish(`bins/${bin.id}`, bin.buffer);
      copies += bin.buffer.length;
      bin.buffer = [];
    }
    this.count(this.readingCopies, copies);
    this.window++;
    return copies;
  }

  /** Waits until every message handed over is acknowledged by the broker (or failed). */
  async flushed(timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (this.pending.size > 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100));
  }

  async close(): Promise<void> {
    this.stop();
    await this.client.endAsync(true).catch(() => undefined);
  }
}
