/**
 * Redis Cluster's key-to-slot rule, written from the description in the
 * Redis Cluster specification (CRC16-XMODEM of the hash tag, or of the whole
 * key when there is no tag or the tag is empty, modulo 16384).
 *
 * The tests check key names with this AND with the cluster-key-slot package
 * that ioredis routes with, because the two disagree on keys with an empty
 * tag followed by another `}` (e.g. `{}x}`: Redis hashes the whole key,
 * cluster-key-slot hashes `x`). The product's keys never contain such a tag.
 */

function crc16Xmodem(bytes: Uint8Array): number {
  let crc = 0;
  for (const byte of bytes) {
    crc ^= byte << 8;
    for (let bit = 0; bit < 8; bit++) {
      crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
    }
  }
  return crc;
}

export function redisKeySlot(key: string): number {
  const bytes = Buffer.from(key, 'utf8');
  const open = bytes.indexOf(0x7b);
  if (open >= 0) {
    const close = bytes.indexOf(0x7d, open + 1);
    if (close > open + 1) return crc16Xmodem(bytes.subarray(open + 1, close)) & 0x3fff;
  }
  return crc16Xmodem(bytes) & 0x3fff;
}
