/**
 * Redis key names: every key one script call touches shares one hash tag
 * (one Cluster slot), ids cannot break out of their tag, and the epoch keys
 * that make a reset O(1) never collide with a record.
 */
import assert from 'node:assert/strict';
import calculateSlot from 'cluster-key-slot';
import {
  epochKey,
  escapeTagContent,
  SEEN_SEGMENT,
  seenGroupEpochKey,
  seenKey,
  SLOT_COUNT,
  slotTag,
  WINDOW_SEGMENT,
  windowRecordKey,
} from '../../../src/redis/key-names';
import { redisKeySlot } from '../../support/redis-slot';

/** What Redis Cluster hashes: the text between the first `{` and the next `}`, if not empty. */
function hashTagOf(key: string): string | undefined {
  const open = key.indexOf('{');
  if (open < 0) return undefined;
  const close = key.indexOf('}', open + 1);
  if (close < 0 || close === open + 1) return undefined;
  return key.slice(open + 1, close);
}

const AWKWARD_IDS = ['bin-A17', '{bin}', '}x', 'x{', '{}', '%7B', 'a%b', 'x}{y', 'site:7:{bin}:3', 'dev*?[x]\\', 'ünïcødé'];

/** A v1 key of a device: `<device>:<seq>:<hash>`. */
const v1 = (device: string, seq: number): string => `${device}:${seq}:76c73ee2946cc70e`;

describe('redis/key-names', () => {
  it('escapes only %, { and }', () => {
    assert.equal(escapeTagContent('bin-A17:x'), 'bin-A17:x');
    assert.equal(escapeTagContent('{a}%'), '%7Ba%7D%25');
  });

  it('keeps the escaping one-to-one, so two ids never share a key', () => {
    const seen = new Map<string, string>();
    for (const id of [...AWKWARD_IDS, '%7D', '%25', '%', '{', '}']) {
      const escaped = escapeTagContent(id);
      assert.equal(seen.get(escaped), undefined, `${id} and ${seen.get(escaped)} both escape to ${escaped}`);
      seen.set(escaped, id);
      // Reversible: every % in the output starts an escape, so URI decoding undoes it.
      assert.equal(decodeURIComponent(escaped), id);
    }
  });

  it('builds keys with the prefix and a segment per store', () => {
    assert.equal(WINDOW_SEGMENT, 'sw:');
    assert.equal(SEEN_SEGMENT, 'rc:');
    assert.equal(windowRecordKey('dedup:', 'veh-1'), 'dedup:sw:{veh-1}');
    assert.equal(windowRecordKey('', 'a'), 'sw:{a}');
    assert.equal(seenKey('dedup:', 'bin-A17', 'bin-A17:41:76c73ee2946cc70e'), 'dedup:rc:{bin-A17}:41:76c73ee2946cc70e');
    assert.equal(seenKey('dedup:', 'msg-0042', 'msg-0042'), 'dedup:rc:{msg-0042}', 'key mode property: the key is its own group');
    assert.equal(seenGroupEpochKey('dedup:', 'bin-A17'), 'dedup:rc:{bin-A17}:reset');
    assert.equal(epochKey('dedup:', WINDOW_SEGMENT, undefined), 'dedup:sw:epoch');
    assert.equal(epochKey('dedup:', SEEN_SEGMENT, undefined), 'dedup:rc:epoch');
  });

  it('puts the whole id in the hash tag, whatever characters it has', () => {
    for (const id of AWKWARD_IDS) {
      assert.equal(hashTagOf(windowRecordKey('dedup:', id)), escapeTagContent(id), id);
      assert.equal(hashTagOf(seenKey('dedup:', id, v1(id, 41))), escapeTagContent(id), id);
      assert.equal(hashTagOf(seenGroupEpochKey('dedup:', id)), escapeTagContent(id), id);
    }
  });

  it('computes slots as Redis does (spec example: 123456789 -> 0x31C3; tags)', () => {
    assert.equal(redisKeySlot('123456789'), 0x31c3);
    assert.equal(redisKeySlot('{user1000}.following'), redisKeySlot('user1000'));
    assert.equal(redisKeySlot('foo{bar}{zap}'), redisKeySlot('bar'));
    assert.notEqual(redisKeySlot('foo{}{bar}'), redisKeySlot('bar'), 'an empty tag means the whole key');
    assert.equal(redisKeySlot('foo{{bar}}zap'), redisKeySlot('{bar'));
  });

  it('keeps every key of one device, its reset epoch and the record of the same id in one cluster slot', () => {
    for (const slotOf of [redisKeySlot, calculateSlot]) {
      for (const id of AWKWARD_IDS) {
        const slot = slotOf(windowRecordKey('p:', id));
        assert.equal(slot, slotOf(escapeTagContent(id)), id);
        assert.equal(slotOf(seenGroupEpochKey('p:', id)), slot, `${id} epoch`);
        for (let seq = 0; seq < 50; seq++) assert.equal(slotOf(seenKey('p:', id, v1(id, seq))), slot, `${id} seq ${seq}`);
      }
    }
  });

  it('would scatter a device over slots without the escaping (the case the escaping exists for)', () => {
    // Unescaped, the key of id "}x" has an empty tag, so Redis hashes the
    // whole key, and each reading of the device lands in its own slot: a
    // multi-key script call for one burst would fail with CROSSSLOT.
    const slots = new Set<number>();
    for (let seq = 0; seq < 50; seq++) slots.add(redisKeySlot(`p:rc:{}x}:${seq}:h`));
    assert.ok(slots.size > 1);
  });

  it('spreads different devices over different slots', () => {
    const slots = new Set<number>();
    for (let i = 0; i < 200; i++) slots.add(calculateSlot(windowRecordKey('p:', `veh-${i}`)));
    assert.ok(slots.size > 150, `only ${slots.size} slots for 200 assets`);
  });

  it('finds a tag for every Cluster slot, so a reset of everything can raise one epoch per slot', () => {
    for (let slot = 0; slot < SLOT_COUNT; slot++) assert.equal(calculateSlot(slotTag(slot)), slot, `slot ${slot}`);
    for (const slot of [0, 1, 5461, 10_922, 16_383]) {
      const key = epochKey('p:', WINDOW_SEGMENT, slot);
      assert.equal(redisKeySlot(key), slot, key);
      assert.equal(calculateSlot(key), slot, key);
      assert.equal(calculateSlot(epochKey('p:', SEEN_SEGMENT, slot)), slot);
    }
  });

  it('never names a record with an epoch key’s name', () => {
    const epochs = new Set<string>([epochKey('p:', WINDOW_SEGMENT, undefined), epochKey('p:', SEEN_SEGMENT, undefined)]);
    for (let slot = 0; slot < 64; slot++) {
      epochs.add(epochKey('p:', WINDOW_SEGMENT, slot));
      epochs.add(epochKey('p:', SEEN_SEGMENT, slot));
    }
    const ids = [...AWKWARD_IDS, 'epoch', 'reset', ':reset', 'x:reset', 'epoch{0}', ''];
    for (const id of ids) epochs.add(seenGroupEpochKey('p:', id));
    for (const id of ids) {
      assert.equal(epochs.has(windowRecordKey('p:', id)), false, `window record of ${JSON.stringify(id)}`);
      assert.equal(epochs.has(seenKey('p:', id, id)), false, `property key ${JSON.stringify(id)}`);
      for (let seq = 0; seq < 3; seq++) assert.equal(epochs.has(seenKey('p:', id, v1(id, seq))), false, `v1 key of ${JSON.stringify(id)}`);
    }
  });
});
