/**
 * Idempotency key v1: `<device_id>:<seq>:<h>`, where `h` is the first 16 hex
 * characters of SHA-256 over the canonical JSON of the reading's content
 * (its timestamp plus the measured fields). Byte-identical to the reference
 * Python design's `idempotency_key`, so both can share one seen-set.
 *
 * seq alone is not enough (it restarts after a battery swap) and the
 * timestamp alone is worse (coarse clocks give distinct readings the same
 * second): binding the content is what makes the key identify one reading.
 */
import * as crypto from 'crypto';
import { formatPythonIsoUtc } from '../parse/instant';
import { compareCodePoints, pythonFloatRepr, pythonJsonString } from '../parse/python-json';

export interface KeyedContent {
  deviceId: string;
  seq: number;
  /** The name the timestamp has in the canonical JSON, e.g. `ts`. */
  timeField: string;
  epochMicros: number;
  /** Measured fields by name, e.g. `{ fill_pct: 62.5 }`. */
  measures: Readonly<Record<string, number>>;
}

/**
 * The canonical JSON of one node's readings, laid out once: the names are
 * the node's configuration, so their order and quoting are worked out when
 * the node starts, and each reading only writes its values in between.
 * Written as pythonJsonDumps would write `{...measures, [timeField]: iso}`
 * (the timestamp wins over a measure of the same name); the key vectors in
 * the tests hold the two together.
 */
export class ContentLayout {
  private readonly names: string[];
  private readonly prefixes: string[];

  constructor(
    private readonly timeField: string,
    measureNames: readonly string[],
  ) {
    this.names = [...new Set([...measureNames, timeField])].sort(compareCodePoints);
    this.prefixes = this.names.map((name, i) => `${i === 0 ? '{' : ','}${pythonJsonString(name)}:`);
  }

  text(epochMicros: number, measures: Readonly<Record<string, number>>): string {
    let out = '';
    for (let i = 0; i < this.names.length; i++) {
      const name = this.names[i] as string;
      // formatPythonIsoUtc writes digits, '-', ':', '.', 'T' and '+' only: nothing to escape.
      const value = name === this.timeField ? `"${formatPythonIsoUtc(epochMicros)}"` : pythonFloatRepr(measures[name] as number);
      out += (this.prefixes[i] as string) + value;
    }
    return `${out}}`;
  }

  /** The key's hash part: the first 16 hex characters of SHA-256 over the text. */
  hash(epochMicros: number, measures: Readonly<Record<string, number>>): string {
    return sha256Hex(this.text(epochMicros, measures)).slice(0, 16);
  }
}

type OneShotHash = (algorithm: string, data: string, outputEncoding: 'hex') => string;
/**
 * crypto.hash (Node 20.12 and later) hashes a string in one call, with no
 * Hash object to build: measured at a third of createHash's time per
 * reading. Older Node 20 releases take createHash.
 */
const oneShot = (crypto as { hash?: OneShotHash }).hash;

export function sha256Hex(text: string): string {
  return oneShot !== undefined ? oneShot('sha256', text, 'hex') : crypto.createHash('sha256').update(text, 'utf8').digest('hex');
}

export function contentHash(content: KeyedContent): string {
  return new ContentLayout(content.timeField, Object.keys(content.measures)).hash(content.epochMicros, content.measures);
}

export function idempotencyKey(content: KeyedContent): string {
  return keyText(content.deviceId, content.seq, contentHash(content));
}

/** The key v1 from its parts: `<device_id>:<seq>:<hash>`. */
export function keyText(deviceId: string, seq: number, hash: string): string {
  return `${deviceId}:${seq}:${hash}`;
}

/** The device part of a v1 key; device ids may themselves contain colons. */
export function deviceOfKey(key: string): string {
  const hashColon = key.lastIndexOf(':');
  return key.slice(0, key.lastIndexOf(':', hashColon - 1));
}
