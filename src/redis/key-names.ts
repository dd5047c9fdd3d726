/**
 * Redis key names. Every key that one script call touches carries the same
 * hash tag, or none on one server, so the call lands in one Cluster slot.
 *
 * Records and seen entries are fields of hashes, one per bucket of ids
 * (windowBucketKey, seenBucketKey): on one server `<prefix>sw:#<n>`, one of
 * HASH_BUCKETS chosen by a hash of the id (hashBucketOf). On a Cluster every
 * key starts with one of CLUSTER_BUCKETS bucket tags, chosen by the asset
 * or device id, so that a script call can carry every ping of a Cluster
 * bucket, not only those of one of 16,384 slots, and a turn's pings take at
 * most CLUSTER_BUCKETS calls (docs/redis.md, "Cluster: bucketed hash tags");
 * within it, one of HASH_BUCKETS_PER_TAG hashes: `dedup:sw:{7gz}#<n>`.
 *
 * Earlier builds kept a string key per asset and per reading,
 * `{<asset id>}` or `{<device id>}` a hash tag (windowRecordKey, seenKey):
 * those are still read while a flow moves to the buckets (redis/wire
 * LAYOUT_MARK), and the device epoch keys keep that shape. Ids are written
 * there with `%`, `{` and `}` percent-encoded: an id such as `}x` would
 * otherwise close the tag early (or leave it empty, which makes Redis hash
 * the whole key) and scatter one device's keys over several slots. The
 * encoding is reversible and leaves every other character alone.
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

/**
 * Hashes per store on one server. Each holds its ids' records as fields; a
 * hash keeps Redis' compact listpack encoding while it holds at most
 * hash-max-listpack-entries (128 by default) fields. A prime near 24,576:
 * a million ids make about 41 per bucket, and 2.4 million 98 (the fullest
 * few of 24,571 reach 128; beyond about 2.5 million, raise the setting:
 * docs/redis.md, "Sizing Redis"). Fewer, fuller buckets spread each
 * bucket's own cost (its key, its expiry, its allocation's slack) over more
 * entries: 24,571 cost 1 to 2 B less per entry at a million than 32,749.
 */
export const HASH_BUCKETS = 24_571;
/** Hashes per store under each Cluster bucket's tag: about the same number over the twelve (12 x 2,039 = 24,468), a prime. */
export const HASH_BUCKETS_PER_TAG = 2_039;

/**
 * FNV-1a, 32 bits, of a string's UTF-8 bytes: which hash of its store holds
 * an id's record, or a reading's entry. In Python:
 * `h = 0x811c9dc5; for b in s.encode(): h = ((h ^ b) * 0x01000193) & 0xffffffff`.
 */
export function fnv1a(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c >= 0x80) return fnv1aBytes(Buffer.from(text, 'utf8'));
    h = Math.imul(h ^ c, 0x01000193);
  }
  return h >>> 0;
}

function fnv1aBytes(bytes: Buffer): number {
  let h = 0x811c9dc5;
  for (const b of bytes) h = Math.imul(h ^ b, 0x01000193);
  return h >>> 0;
}

/** The bucket (hash) of an id among its store's: HASH_BUCKETS on one server, HASH_BUCKETS_PER_TAG under its Cluster bucket's tag. */
export function hashBucketOf(id: string, cluster: boolean): number {
  return fnv1a(id) % (cluster ? HASH_BUCKETS_PER_TAG : HASH_BUCKETS);
}

/** The names of a store's buckets, made once each: `<prefix><segment>#<n>`, or on a Cluster `<prefix><segment>{<tag>}#<n>`. */
export class BucketNames {
  private readonly names: (string | undefined)[];

  constructor(
    private readonly prefix: string,
    private readonly segment: string,
    private readonly cluster: boolean,
  ) {
    this.names = new Array<string | undefined>(cluster ? CLUSTER_BUCKETS * HASH_BUCKETS_PER_TAG : HASH_BUCKETS);
  }

  /**
   * The bucket of `hashed` (an asset id, an idempotency key); on a Cluster,
   * under the tag of Cluster bucket `tag` (bucketOf the asset or device id;
   * ignored on one server).
   */
  of(hashed: string, tag: number): string {
    const bucket = hashBucketOf(hashed, this.cluster);
    if (!this.cluster) tag = 0;
    const at = tag * HASH_BUCKETS_PER_TAG + bucket;
    let name = this.names[at];
    if (name === undefined) {
      name = `${this.prefix}${this.segment}${this.cluster ? bucketTag(tag) : ''}#${bucket}`;
      this.names[at] = name;
    }
    return name;
  }
}

/** The hash holding an asset's window record (its field: the asset id). */
export function windowBucketKey(prefix: string, assetId: string, cluster = false): string {
  return `${prefix}${WINDOW_SEGMENT}${cluster ? bucketTag(bucketOf(assetId)) : ''}#${hashBucketOf(assetId, cluster)}`;
}

/** The hash holding a reading's seen entry (its field: the idempotency key `key`, of the group `group`). */
export function seenBucketKey(prefix: string, group: string, key: string, cluster = false): string {
  return `${prefix}${SEEN_SEGMENT}${cluster ? bucketTag(bucketOf(group)) : ''}#${hashBucketOf(key, cluster)}`;
}

/**
 * The layout mark of a slot (redis/wire LAYOUT_MARK), shared by both stores:
 * `<prefix>layout` on one server, one per Cluster bucket tagged with its
 * bucket's tag, as the epoch keys are.
 */
export function layoutMarkKey(prefix: string, slot: number | undefined): string {
  return slot === undefined ? `${prefix}layout` : `${prefix}layout{${slotTag(slot)}}`;
}

/** The key earlier builds kept an asset's window record in (read while a flow moves to the buckets). */
export function windowRecordKey(prefix: string, assetId: string, cluster = false): string {
  return `${prefix}${WINDOW_SEGMENT}${idTag(assetId, cluster)}`;
}

/**
 * The key earlier builds kept the seen-set entry of one idempotency key in
 * (read while a flow moves to the buckets). `group` is the key's prefix
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
