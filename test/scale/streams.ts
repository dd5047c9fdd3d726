/**
 * Deterministic telemetry streams for the scale tests, each message labelled
 * with the decision a single, correct deduplicator must make. The labels
 * come from how the stream is built, not from the code under test.
 *
 * Pings: per asset, in time order, a mix of
 *   - `elapsed`: 61 s after the previous ping, same place (admit);
 *   - `window`:  5 s later, same place, at most 5 in a row so that the
 *                heartbeat (60 s) is never reached (suppress);
 *   - `moved`:   5 s later, 40 m north (admit: distance is an OR);
 *   - `late`:    an exact copy of an earlier ping of the asset, i.e. a
 *                redelivery (suppress; the same (asset, t) must never be
 *                admitted twice).
 * Times only go forward apart from the exact copies, so any interleaving of
 * two workers that each keep the order reaches the same decisions as one.
 *
 * Bursts: per device, a reconnect burst every round: three new readings
 * sharing one coarse timestamp (distinct keys), the previous burst's last two
 * readings again (the replay), sometimes a reading twice in the same burst,
 * sometimes an unreadable one (fill 150 %), and for some devices a battery
 * swap that restarts seq with new content (new keys, not duplicates).
 */
export const BASE_SECONDS = 1_780_000_000;
const BASE_LAT = 52.52;
const BASE_LON = 13.405;
const METRES_PER_DEGREE_LAT = 111_195;

/** Small deterministic PRNG, so every run sends the same stream. */
export function lcg(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
}

export type PingKind = 'first' | 'elapsed' | 'window' | 'moved' | 'late';

export interface PingPayload {
  assetId: string;
  /** Epoch seconds. */
  ts: number;
  lat: number;
  lon: number;
}

export interface PingCase {
  msgid: string;
  payload: PingPayload;
  kind: PingKind;
  admit: boolean;
  /** `asset@ts`: what "admitted at most once" is counted by. */
  key: string;
}

/**
 * `assets` x `steps` pings, delivered in blocks: for each block of
 * `stepsPerVisit` steps, every asset's pings of that block in a row (so one
 * Redis call often carries several pings of one asset), then the next block.
 */
export function pingStream(options: { assets: number; steps: number; stepsPerVisit: number; seed: number; idPrefix?: string }): PingCase[] {
  const random = lcg(options.seed);
  const perAsset: PingCase[][] = [];
  for (let a = 0; a < options.assets; a++) {
    const assetId = `${options.idPrefix ?? 'veh-'}${a}`;
    const sent: PingPayload[] = [];
    const cases: PingCase[] = [];
    let ts = BASE_SECONDS + a;
    let lat = BASE_LAT + (a % 100) * 0.01;
    const lon = BASE_LON + Math.floor(a / 100) * 0.01;
    let windowsInRow = 0;
    for (let s = 0; s < options.steps; s++) {
      let kind: PingKind;
      let payload: PingPayload;
      const roll = random();
      if (s === 0) {
        kind = 'first';
        payload = { assetId, ts, lat, lon };
      } else if (roll < 0.12 && sent.length > 0) {
        kind = 'late';
        payload = { ...(sent[Math.floor(random() * sent.length)] as PingPayload) };
      } else if (roll < 0.42 && windowsInRow < 5) {
        kind = 'window';
        ts += 5;
        payload = { assetId, ts, lat, lon };
      } else if (roll < 0.6) {
        kind = 'moved';
        ts += 5;
        lat += 40 / METRES_PER_DEGREE_LAT;
        payload = { assetId, ts, lat, lon };
      } else {
        kind = 'elapsed';
        ts += 61;
        payload = { assetId, ts, lat, lon };
      }
      windowsInRow = kind === 'window' ? windowsInRow + 1 : kind === 'late' ? windowsInRow : 0;
      if (kind !== 'late') sent.push(payload);
      const admit = kind === 'first' || kind === 'elapsed' || kind === 'moved';
      cases.push({ msgid: '', payload, kind, admit, key: `${assetId}@${payload.ts}` });
    }
    perAsset.push(cases);
  }
  const ordered: PingCase[] = [];
  for (let block = 0; block < options.steps; block += options.stepsPerVisit) {
    for (const cases of perAsset) ordered.push(...cases.slice(block, block + options.stepsPerVisit));
  }
  ordered.forEach((c, i) => {
    c.msgid = `ping-${i}`;
  });
  return ordered;
}

export interface RawReading {
  device_id: string;
  seq: number;
  ts: string;
  fill_pct: number;
}

export interface BurstCase {
  msgid: string;
  payload: RawReading[];
  /** Readable readings in the burst, copies included. */
  valid: number;
  /** Unreadable readings (rejected, each reported to a Catch node). */
  bad: number;
}

/** The identity of a reading: equal identities must share one key, distinct ones must not. */
export function identityOf(r: RawReading): string {
  return `${r.device_id}|${r.seq}|${r.ts}|${r.fill_pct}`;
}

export function burstStream(options: { devices: number; rounds: number; seed: number; idPrefix?: string }): {
  bursts: BurstCase[];
  distinct: Set<string>;
  valid: number;
  bad: number;
} {
  const random = lcg(options.seed);
  const state = Array.from({ length: options.devices }, (_, d) => ({
    id: `${options.idPrefix ?? 'bin-'}${d}`,
    seq: 1000 + d,
    fill: 10 + (d % 50),
    previous: [] as RawReading[],
  }));
  const bursts: BurstCase[] = [];
  const distinct = new Set<string>();
  let valid = 0;
  let bad = 0;
  for (let round = 0; round < options.rounds; round++) {
    for (const [d, device] of state.entries()) {
      if (d % 10 === 0 && round === Math.floor(options.rounds / 2)) device.seq = 0; // battery swap
      const ts = new Date((BASE_SECONDS + round * 60) * 1000).toISOString().replace('.000Z', 'Z');
      const fresh: RawReading[] = [];
      for (let k = 0; k < 3; k++) {
        device.seq += 1;
        device.fill = device.fill >= 95 ? 5 : Math.round((device.fill + 0.5 + random() * 2) * 10) / 10;
        fresh.push({ device_id: device.id, seq: device.seq, ts, fill_pct: device.fill });
      }
      const payload: RawReading[] = [...device.previous.map((r) => ({ ...r })), ...fresh];
      if (random() < 0.15) payload.push({ ...(fresh[0] as RawReading) });
      let badHere = 0;
      if (random() < 0.08) {
        payload.push({ device_id: device.id, seq: device.seq + 1_000_000, ts, fill_pct: 150 });
        badHere = 1;
      }
      device.previous = fresh.slice(-2);
      for (const r of payload) if (r.fill_pct <= 100) distinct.add(identityOf(r));
      valid += payload.length - badHere;
      bad += badHere;
      bursts.push({ msgid: '', payload, valid: payload.length - badHere, bad: badHere });
    }
  }
  bursts.forEach((b, i) => {
    b.msgid = `burst-${i}`;
  });
  return { bursts, distinct, valid, bad };
}

/** Splits a list into consecutive chunks of `size`. */
export function chunked<T>(items: readonly T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}
