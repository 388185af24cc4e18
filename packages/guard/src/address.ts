// Reading an IP address from the text a socket or a proxy hands over, and the key a client is
// counted under: an IPv4 address whole, an IPv6 address by its prefix (a client usually holds a
// whole /64 and can take a fresh address for every request), an IPv4-mapped IPv6 address as the
// IPv4 address it is. Every textual form of one address reads to the same eight groups, so it
// gives one key: compressed or not, in either case, with leading zeros in a group, with its last
// 32 bits written as a dotted quad, in brackets, with a port or a zone.

/** The address last read: eight 16-bit groups, an IPv4 address as its mapped form `::ffff:a.b.c.d`. */
const groups = new Uint16Array(8);

/** What {@link readNode} found: nothing usable, an IPv4 address as written, or an IPv6 address. */
const NONE = 0;
const V4 = 4;
const V6 = 6;
type Kind = typeof NONE | typeof V4 | typeof V6;

/** Where the dotted quad {@link readNode} last read as `V4` ends (a port may follow). */
let v4End = 0;

/** The longest address text read, zone and port included: anything longer is no address. */
const MAX_TEXT = 128;

const COLON = 0x3a;
const DOT = 0x2e;
const PERCENT = 0x25;
const OPEN = 0x5b; // [
const CLOSE = 0x5d; // ]
const UNDERSCORE = 0x5f;

function digit(c: number): number {
  return c >= 0x30 && c <= 0x39 ? c - 0x30 : -1;
}

function hex(c: number): number {
  if (c >= 0x30 && c <= 0x39) return c - 0x30;
  const lower = c | 0x20;
  return lower >= 0x61 && lower <= 0x66 ? lower - 0x61 + 10 : -1;
}

/** A zone's or an obfuscated port's characters: letters, digits, `.`, `_`, `~`, `-`. */
function plain(c: number): boolean {
  const lower = c | 0x20;
  return (lower >= 0x61 && lower <= 0x7a) || digit(c) >= 0 || c === DOT || c === UNDERSCORE || c === 0x7e || c === 0x2d;
}

/**
 * Reads `text[from, to)` as a dotted quad into the last two groups: four decimal parts of 0 to
 * 255, none with a leading zero (`010` is octal to some readers and decimal to others, so it is
 * no address here), nothing else.
 */
function readV4(text: string, from: number, to: number, at: number): boolean {
  let i = from;
  let value = 0;
  for (let part = 0; part < 4; part++) {
    if (part > 0) {
      if (i >= to || text.charCodeAt(i) !== DOT) return false;
      i++;
    }
    const start = i;
    let n = 0;
    while (i < to) {
      const d = digit(text.charCodeAt(i));
      if (d < 0) break;
      n = n * 10 + d;
      i++;
      if (i - start > 3) return false;
    }
    if (i === start || n > 255 || (i - start > 1 && text.charCodeAt(start) === 0x30)) return false;
    value = value * 256 + n;
  }
  if (i !== to) return false;
  groups[at] = value >>> 16;
  groups[at + 1] = value & 0xffff;
  return true;
}

/**
 * Reads `text[from, to)` as an IPv6 address (RFC 4291 §2.2: groups of one to four hex digits,
 * one `::` for a run of zero groups, the last 32 bits as a dotted quad if written so) into
 * {@link groups}; a zone (`%eth0`) is read and dropped.
 */
function readV6(text: string, from: number, to: number): boolean {
  let end = to;
  for (let i = from; i < to; i++) {
    if (text.charCodeAt(i) !== PERCENT) continue;
    if (i + 1 === to) return false;
    for (let j = i + 1; j < to; j++) if (!plain(text.charCodeAt(j))) return false;
    end = i;
    break;
  }
  let i = from;
  let n = 0;
  let gap = -1;
  if (end - i >= 2 && text.charCodeAt(i) === COLON && text.charCodeAt(i + 1) === COLON) {
    gap = 0;
    i += 2;
  }
  while (i < end) {
    const start = i;
    let value = 0;
    while (i < end) {
      const h = hex(text.charCodeAt(i));
      if (h < 0) break;
      value = value * 16 + h;
      i++;
    }
    if (i < end && text.charCodeAt(i) === DOT) {
      // The last 32 bits as a dotted quad: it ends the address.
      if (n > 6 || !readV4(text, start, end, n)) return false;
      n += 2;
      break;
    }
    if (i === start || i - start > 4 || n === 8) return false;
    groups[n++] = value;
    if (i === end) break;
    if (text.charCodeAt(i) !== COLON) return false;
    i++;
    if (i < end && text.charCodeAt(i) === COLON) {
      if (gap >= 0) return false;
      gap = n;
      i++;
    } else if (i === end) return false; // a single trailing colon
  }
  if (gap < 0) return n === 8;
  if (n > 7) return false;
  // The run `::` stands for: the groups after it move to the end, zeros in between.
  const tail = n - gap;
  for (let k = 0; k < tail; k++) groups[7 - k] = groups[n - 1 - k];
  for (let k = gap; k < 8 - tail; k++) groups[k] = 0;
  return true;
}

/** A port after an address: 1 to 5 digits up to 65535, or an obfuscated one (`_` and plain characters, RFC 7239 §6.3). */
function port(text: string, from: number, to: number): boolean {
  if (from >= to) return false;
  if (text.charCodeAt(from) === UNDERSCORE) {
    if (to - from < 2) return false;
    for (let i = from + 1; i < to; i++) if (!plain(text.charCodeAt(i))) return false;
    return true;
  }
  if (to - from > 5) return false;
  let n = 0;
  for (let i = from; i < to; i++) {
    const d = digit(text.charCodeAt(i));
    if (d < 0) return false;
    n = n * 10 + d;
  }
  return n <= 65_535;
}

/**
 * Reads one node as a socket, `X-Forwarded-For` or `Forwarded` names it: `a.b.c.d`,
 * `a.b.c.d:port`, an IPv6 address bare (with a zone or not), or in brackets with a port or
 * without. Anything else — `unknown`, an obfuscated identifier (`_hidden`), a host name, an
 * IPv4 address in brackets, a form some reader would take for another address — is `NONE`.
 */
function readNode(text: string, from: number, to: number): Kind {
  if (to - from > MAX_TEXT || to <= from) return NONE;
  if (text.charCodeAt(from) === OPEN) {
    let close = -1;
    for (let i = from + 1; i < to; i++)
      if (text.charCodeAt(i) === CLOSE) {
        close = i;
        break;
      }
    if (close < 0) return NONE;
    if (close + 1 < to && (text.charCodeAt(close + 1) !== COLON || !port(text, close + 2, to))) return NONE;
    return readV6(text, from + 1, close) ? V6 : NONE;
  }
  let colons = 0;
  let colon = -1;
  for (let i = from; i < to; i++)
    if (text.charCodeAt(i) === COLON) {
      colons++;
      colon = i;
    }
  if (colons === 0) {
    if (!readV4(text, from, to, 6)) return NONE;
    v4End = to;
  } else if (colons === 1) {
    if (!readV4(text, from, colon, 6) || !port(text, colon + 1, to)) return NONE;
    v4End = colon;
  } else return readV6(text, from, to) ? V6 : NONE;
  for (let k = 0; k < 5; k++) groups[k] = 0;
  groups[5] = 0xffff;
  return V4;
}

/** Whether {@link groups} hold an IPv4-mapped address, `::ffff:0:0/96`. */
function mapped(): boolean {
  return (
    groups[0] === 0 && groups[1] === 0 && groups[2] === 0 && groups[3] === 0 && groups[4] === 0 && groups[5] === 0xffff
  );
}

function dotted(): string {
  return `${groups[6] >>> 8}.${groups[6] & 0xff}.${groups[7] >>> 8}.${groups[7] & 0xff}`;
}

/**
 * {@link groups} with all but their first `prefix` bits cleared, written as RFC 5952 writes an
 * address: lower case, no leading zeros, the longest run of two or more zero groups (the first
 * of equal runs) as `::`.
 */
function written(prefix: number): string {
  for (let k = 0; k < 8; k++) {
    const keep = prefix - 16 * k;
    if (keep <= 0) groups[k] = 0;
    else if (keep < 16) groups[k] &= (0xffff << (16 - keep)) & 0xffff;
  }
  let best = -1;
  let bestLength = 1;
  for (let k = 0; k < 8;) {
    if (groups[k] !== 0) {
      k++;
      continue;
    }
    let j = k;
    while (j < 8 && groups[j] === 0) j++;
    if (j - k > bestLength) {
      best = k;
      bestLength = j - k;
    }
    k = j;
  }
  let out = "";
  for (let k = 0; k < 8; k++) {
    if (k === best) {
      out += "::";
      k += bestLength - 1;
      continue;
    }
    if (out.length > 0 && !out.endsWith(":")) out += ":";
    out += groups[k].toString(16);
  }
  return out;
}

/**
 * The key `text[from, to)` counts under, or `undefined` when it is no address: an IPv4 address
 * (or an IPv4-mapped IPv6 one) as `a.b.c.d`, an IPv6 address as its first `prefix` bits,
 * `2001:db8:1:2::/64`.
 */
export function keyOf(text: string, from: number, to: number, prefix: number): string | undefined {
  const kind = readNode(text, from, to);
  if (kind === NONE) return undefined;
  if (mapped()) {
    // A dotted quad read is already in the one form `dotted` writes (no leading zeros): spared
    // building it again.
    if (kind === V4) return from === 0 && v4End === text.length ? text : text.slice(from, v4End);
    return dotted();
  }
  return `${written(prefix)}/${prefix}`;
}

/** The address `text[from, to)` names, in its one written form (`a.b.c.d`, or RFC 5952's for IPv6), or `undefined`. */
export function addressOf(text: string, from: number, to: number): string | undefined {
  const kind = readNode(text, from, to);
  if (kind === NONE) return undefined;
  return mapped() ? dotted() : written(128);
}
