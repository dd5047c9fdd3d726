/**
 * Redis key names. Every key that one script call touches carries the same
 * hash tag, so the call lands in one Cluster slot: `{<asset id>}` or
 * `{<device id>}`, and for the epoch keys of a slot a tag chosen to hash to
 * that slot.
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

export function windowRecordKey(prefix: string, assetId: string): string {
  return `${prefix}${WINDOW_SEGMENT}{${escapeTagContent(assetId)}}`;
}

/**
 * The seen-set entry of one idempotency key. `group` is the key's prefix
 * that names its device (`bin-A17` of `bin-A17:41:76c7...`), or the whole
 * key: `<prefix>rc:{bin-A17}:41:76c73ee2946cc70e`.
 */
export function seenKey(prefix: string, group: string, key: string): string {
  return seenKeyOf(seenGroupHead(prefix, group), group, key);
}

/** What every seen key of a group starts with, `<prefix>rc:{bin-A17}`: worked out once per burst, not once per reading. */
export function seenGroupHead(prefix: string, group: string): string {
  return `${prefix}${SEEN_SEGMENT}{${escapeTagContent(group)}}`;
}

/** seenKey() from its group's head (seenGroupHead). */
export function seenKeyOf(head: string, group: string, key: string): string {
  return head + key.slice(group.length);
}

/** The epoch key of one group (device) of the seen-set, raised by a reset of that device. */
export function seenGroupEpochKey(prefix: string, group: string): string {
  return `${prefix}${SEEN_SEGMENT}{${escapeTagContent(group)}}:reset`;
}

/**
 * The epoch key of a slot, raised by a reset of everything: on one server
 * one key per segment; on a Cluster one per slot, tagged to hash to it.
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
