import assert from 'node:assert/strict';
import calculateSlot from 'cluster-key-slot';
import {
  escapeGlob,
  escapeTagContent,
  seenKey,
  seenPattern,
  windowPattern,
  windowRecordKey,
} from '../../src/redis/key-names';
import { redisKeySlot } from '../support/redis-slot';

/** What Redis Cluster hashes: the text between the first `{` and the next `}`, if not empty. */
function hashTagOf(key: string): string | undefined {
  const open = key.indexOf('{');
  if (open < 0) return undefined;
  const close = key.indexOf('}', open + 1);
  if (close < 0 || close === open + 1) return undefined;
  return key.slice(open + 1, close);
}

/** A minimal Redis glob matcher (`*`, `?`, `\` escapes) for checking patterns. */
function globMatches(pattern: string, text: string): boolean {
  let regex = '^';
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i] as string;
    if (c === '\\' && i + 1 < pattern.length) regex += (pattern[++i] as string).replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    else if (c === '*') regex += '.*';
    else if (c === '?') regex += '.';
    else regex += c.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  }
  return new RegExp(`${regex}$`, 's').test(text);
}

const AWKWARD_IDS = ['bin-A17', '{bin}', '}x', 'x{', '{}', '%7B', 'a%b', 'x}{y', 'site:7:{bin}:3', 'dev*?[x]\\', 'ünïcødé'];

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

  it('puts the whole id in the hash tag, whatever characters it has', () => {
    for (const id of AWKWARD_IDS) {
      assert.equal(hashTagOf(windowRecordKey('dedup:', id)), escapeTagContent(id), id);
      assert.equal(hashTagOf(seenKey('dedup:', id, 41, '76c73ee2946cc70e')), escapeTagContent(id), id);
    }
  });

  it('computes slots as Redis does (spec example: 123456789 -> 0x31C3; tags)', () => {
    assert.equal(redisKeySlot('123456789'), 0x31c3);
    assert.equal(redisKeySlot('{user1000}.following'), redisKeySlot('user1000'));
    assert.equal(redisKeySlot('foo{bar}{zap}'), redisKeySlot('bar'));
    assert.notEqual(redisKeySlot('foo{}{bar}'), redisKeySlot('bar'), 'an empty tag means the whole key');
    assert.equal(redisKeySlot('foo{{bar}}zap'), redisKeySlot('{bar'));
  });

  it('keeps every key of one device in one cluster slot, and the window record in the same one', () => {
    for (const slotOf of [redisKeySlot, calculateSlot]) {
      for (const id of AWKWARD_IDS) {
        const slot = slotOf(windowRecordKey('p:', id));
        assert.equal(slot, slotOf(escapeTagContent(id)), id);
        for (let seq = 0; seq < 50; seq++) {
          assert.equal(slotOf(seenKey('p:', id, seq, `${seq}abc`)), slot, `${id} seq ${seq}`);
        }
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

  it('builds keys with the prefix and a segment per store', () => {
    assert.equal(windowRecordKey('dedup:', 'veh-1'), 'dedup:sw:{veh-1}');
    assert.equal(seenKey('dedup:', 'bin-A17', 41, '76c73ee2946cc70e'), 'dedup:rc:{bin-A17}:41:76c73ee2946cc70e');
    assert.equal(windowRecordKey('', 'a'), 'sw:{a}');
  });

  it('escapes glob metacharacters for SCAN MATCH', () => {
    assert.equal(escapeGlob('a*b?c[d]e\\f'), 'a\\*b\\?c\\[d\\]e\\\\f');
  });

  it('matches one device exactly, including ids with glob characters and colons', () => {
    const ids = ['dev*?[x]\\', 'dev', 'devX', 'site:7', 'site', '{bin}', 'bin', '%7B', '{'];
    for (const id of ids) {
      const pattern = seenPattern('p*:', id);
      for (const other of ids) {
        const key = seenKey('p*:', other, 3, 'h');
        assert.equal(globMatches(pattern, key), other === id, `pattern for ${id} vs key of ${other}`);
      }
      assert.equal(globMatches(seenPattern('p*:'), seenKey('p*:', id, 3, 'h')), true);
      assert.equal(globMatches(seenPattern('p*:'), seenKey('px:', id, 3, 'h')), false, 'the prefix is literal');
      assert.equal(globMatches(windowPattern('p*:'), windowRecordKey('p*:', id)), true);
      assert.equal(globMatches(windowPattern('p*:'), seenKey('p*:', id, 3, 'h')), false);
      assert.equal(globMatches(windowPattern('p*:', id), windowRecordKey('p*:', id)), true);
    }
  });
});
