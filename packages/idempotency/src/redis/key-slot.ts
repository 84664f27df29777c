/** How many hash slots a Redis Cluster divides its keys into. */
export const CLUSTER_SLOTS = 16384;

/** CRC16-CCITT (XMODEM) by byte, as Redis Cluster hashes a key to its slot. */
const TABLE = Array.from({ length: 256 }, (_, byte) => {
  let crc = byte << 8;
  for (let bit = 0; bit < 8; bit += 1) crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
  return crc;
});

/**
 * The Redis Cluster hash slot of `key` (what `CLUSTER KEYSLOT` answers),
 * computed here so the store can pick keys for a node without asking:
 * CRC16 of the hash tag (the text between the first `{` and the next `}`,
 * when not empty), else of the whole key, modulo 16384.
 */
export function keySlot(key: string): number {
  const bytes = Buffer.from(key, 'utf8');
  const open = bytes.indexOf('{');
  const close = open === -1 ? -1 : bytes.indexOf('}', open + 1);
  const hashed = close > open + 1 ? bytes.subarray(open + 1, close) : bytes;
  let crc = 0;
  for (const byte of hashed) crc = ((crc << 8) & 0xffff) ^ (TABLE[((crc >> 8) ^ byte) & 0xff] as number);
  return crc % CLUSTER_SLOTS;
}
