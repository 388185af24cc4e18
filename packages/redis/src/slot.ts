// Redis Cluster slots: CRC16 (XMODEM) of the key's hash tag, modulo 16384, as the cluster
// specification defines it. Used to refuse a charge set whose keys cannot share a slot before
// anything is sent, and to split batches by slot on a cluster.

const TABLE = (() => {
  const table = new Uint16Array(256);
  for (let i = 0; i < 256; i++) {
    let crc = i << 8;
    for (let j = 0; j < 8; j++) crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
    table[i] = crc;
  }
  return table;
})();

const encoder = new TextEncoder();

/** CRC16/XMODEM of a string's UTF-8 bytes. */
export function crc16(text: string): number {
  let crc = 0;
  let ascii = true;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c > 0x7f) {
      ascii = false;
      break;
    }
    crc = ((crc << 8) & 0xffff) ^ TABLE[((crc >> 8) ^ c) & 0xff];
  }
  if (ascii) return crc;
  crc = 0;
  for (const b of encoder.encode(text)) crc = ((crc << 8) & 0xffff) ^ TABLE[((crc >> 8) ^ b) & 0xff];
  return crc;
}

/**
 * The cluster slot of a Redis key: only the part between the first `{` and the next `}` is
 * hashed when that part is not empty (a hash tag), else the whole key.
 */
export function slotOf(key: string): number {
  const open = key.indexOf("{");
  if (open >= 0) {
    const close = key.indexOf("}", open + 1);
    if (close > open + 1) return crc16(key.slice(open + 1, close)) & 16383;
  }
  return crc16(key) & 16383;
}
