/**
 * Redis key names. Every key that one script call touches carries the same
 * hash tag, so the call lands in one Cluster slot.
 *
 * On one server the tag is the id: `{<asset id>}` or `{<device id>}` (the
 * documented names a Python worker shares). On a Cluster every key starts
 * with one of CLUSTER_BUCKETS bucket tags, chosen by the id, and then the
 * same `{<escaped id>}` as on one server (Redis hashes only the first tag):
 * `dedup:sw:{7gz}{veh-1}`. A script call can then carry every ping of a
 * bucket, not only those of one of 16,384 slots, so a turn's pings take at
 * most CLUSTER_BUCKETS calls (docs/redis.md, "Cluster: bucketed hash tags").
 *
 * Ids are written with `%`, `{` and `}` percent-encoded: an id such as
 * `}x` would otherwise close the tag early (or leave it empty, which makes
 * Redis hash the whole key) and scatter one device's keys over several
 * slots. The encoding is reversible and leaves every other character alone.
 */
import calculateSlot from 'cluster-key-slot';

export function escapeTagContent(id: string): string {
  return id.replace(/[%{}]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}

export const WINDOW_SEGMENT = 'sw:';
export const SEEN_SEGMENT = 'rc:';

/**
 * Buckets on a Cluster. 12 divides evenly over 2, 3, 4, 6 and 12 primaries;
 * each bucket is a 12th of the load (the most one slot carries). More
 * buckets make more, smaller calls: with 24, a turn of 20 pings at 20,000
 * msg/s made calls of 1.8 pings, and Node-RED spent 1.8x the CPU per
 * decision that one server costs it; with 12, calls of 2.7 and 1.45x
 * (bench/paced.ts; docs/redis.md, "Cluster: bucketed hash tags").
 */
export const CLUSTER_BUCKETS = 12;

/**
 * The bucket of an asset or device id: CRC16 (XMODEM, what Redis hashes
 * keys with) of the escaped id's UTF-8 bytes, its low 14 bits (the slot the
 * id would have as a tag of its own), modulo CLUSTER_BUCKETS. In Python:
 * `(binascii.crc_hqx(escaped.encode(), 0) & 0x3FFF) % 12`.
 */
export function bucketOfEscaped(escapedId: string): number {
  // The escaped id holds no braces, so the whole string is hashed.
  return calculateSlot(escapedId) % CLUSTER_BUCKETS;
}

/**
 * The slot of a bucket's tag: the buckets' slots lie evenly over the 16,384
 * (bucket b at the middle of the b-th 12th), so 2, 3, 4, 6 or 12 primaries
 * holding equal ranges of slots hold equal numbers of buckets.
 */
export function bucketSlot(bucket: number): number {
  return Math.floor(((2 * bucket + 1) * SLOT_COUNT) / (2 * CLUSTER_BUCKETS));
}

/** The hash tag of a bucket, `{<tag>}`: the shortest base-36 counting string that hashes to the bucket's slot. */
export function bucketTag(bucket: number): string {
  if (bucketTags === undefined) bucketTags = Array.from({ length: CLUSTER_BUCKETS }, (_, b) => `{${slotTag(bucketSlot(b))}}`);
  return bucketTags[bucket] as string;
}
let bucketTags: string[] | undefined;

/**
 * What every key of an id starts with after its segment: `{veh-1}` on one
 * server, `{<bucket tag>}{veh-1}` on a Cluster.
 */
export function idTag(id: string, cluster: boolean): string {
  const escaped = escapeTagContent(id);
  return cluster ? `${bucketTag(bucketOfEscaped(escaped))}{${escaped}}` : `{${escaped}}`;
}

/** The bucket of an id (on a Cluster: which call, and which reset epoch, its keys belong to). */
export function bucketOf(id: string): number {
  return bucketOfEscaped(escapeTagContent(id));
}

export function windowRecordKey(prefix: string, assetId: string, cluster = false): string {
  return `${prefix}${WINDOW_SEGMENT}${idTag(assetId, cluster)}`;
}

/**
 * The seen-set entry of one idempotency key. `group` is the key's prefix
 * that names its device (`bin-A17` of `bin-A17:41:76c7...`), or the whole
 * key: `<prefix>rc:{bin-A17}:41:76c73ee2946cc70e`.
 */
export function seenKey(prefix: string, group: string, key: string, cluster = false): string {
  return seenKeyOf(seenGroupHead(prefix, group, cluster), group, key);
}

/** What every seen key of a group starts with, `<prefix>rc:{bin-A17}`: worked out once per burst, not once per reading. */
export function seenGroupHead(prefix: string, group: string, cluster = false): string {
  return `${prefix}${SEEN_SEGMENT}${idTag(group, cluster)}`;
}

/** seenKey() from its group's head (seenGroupHead). */
export function seenKeyOf(head: string, group: string, key: string): string {
  return head + key.slice(group.length);
}

/** The epoch key of one group (device) of the seen-set, raised by a reset of that device. */
export function seenGroupEpochKey(prefix: string, group: string, cluster = false): string {
  return `${prefix}${SEEN_SEGMENT}${idTag(group, cluster)}:reset`;
}

/**
 * The epoch key of a slot, raised by a reset of everything: on one server
 * one key per segment; on a Cluster one per bucket, given as the bucket's
 * slot (bucketSlot), tagged with the bucket's tag.
 */
export function epochKey(prefix: string, segment: string, slot: number | undefined): string {
  return slot === undefined ? `${prefix}${segment}epoch` : `${prefix}${segment}epoch{${slotTag(slot)}}`;
}

export const SLOT_COUNT = 16_384;
let slotTags: string[] | undefined;

/**
 * A short tag that hashes to the given Cluster slot. Found once, by trying
 * counting strings until every slot has one (about 170,000 tries, tens of
 * milliseconds, and only for a Cluster).
 */
export function slotTag(slot: number): string {
  if (slotTags === undefined) {
    const tags = new Array<string>(SLOT_COUNT);
    let found = 0;
    for (let n = 0; found < SLOT_COUNT; n++) {
      const candidate = n.toString(36);
      const s = calculateSlot(candidate);
      if (tags[s] === undefined) {
        tags[s] = candidate;
        found++;
      }
    }
    slotTags = tags;
  }
  return slotTags[slot] as string;
}
