// Reading the client's entry from the header trusted proxies write, `X-Forwarded-For` or
// RFC 7239's `Forwarded`, from its end: only the entries the trusted proxies appended are read,
// so nothing a client writes before them (100 000 entries, an unclosed quote) changes how they
// read or what reading them costs.

/** The header trusted proxies write the client's address into: `X-Forwarded-For`, or RFC 7239's `Forwarded`. */
export type ProxyHeader = "x-forwarded-for" | "forwarded";

const COMMA = 0x2c;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const SEMICOLON = 0x3b;
const EQUALS = 0x3d;

function space(c: number): boolean {
  return c === 0x20 || c === 0x09;
}

/** A token character (RFC 9110 §5.6.2): letters, digits and ``!#$%&'*+-.^_`|~``. */
function token(c: number): boolean {
  const lower = c | 0x20;
  if ((lower >= 0x61 && lower <= 0x7a) || (c >= 0x30 && c <= 0x39)) return true;
  return "!#$%&'*+-.^_`|~".includes(String.fromCharCode(c));
}

/** The element {@link back} last found: `line.slice(at, till)`, trimmed. */
export const element = { at: 0, till: 0 };

/**
 * Walks `line` from its end over its comma-separated elements — commas inside quoted strings
 * do not count where `quoted` — skipping empty ones, until the `n`th from the right (1 = the
 * last). Each character is read at most twice (a run of backslashes again, before a quote), and
 * nothing left of the element found is read: the work is the length of the trusted entries,
 * however much the client wrote before them, and nothing is allocated.
 *
 * @returns how many elements it passed: `n` when found, fewer when the line has fewer (then
 * {@link element} bounds the leftmost, when there was one), or -1 when a quoted string does not open
 */
export function back(line: string, n: number, quoted: boolean): number {
  let count = 0;
  let end = line.length;
  let inside = false;
  for (let i = line.length - 1; i >= -1; i--) {
    const c = i < 0 ? COMMA : line.charCodeAt(i);
    if (inside) {
      if (i < 0) return -1;
      if (c === QUOTE) {
        let j = i - 1;
        while (j >= 0 && line.charCodeAt(j) === BACKSLASH) j--;
        // An even run of backslashes before it escapes nothing: the string opens here.
        if ((i - 1 - j) % 2 === 0) inside = false;
      }
      continue;
    }
    if (c === QUOTE && quoted) {
      inside = true;
      continue;
    }
    if (c !== COMMA) continue;
    let s = i + 1;
    let e = end;
    while (s < e && space(line.charCodeAt(s))) s++;
    while (e > s && space(line.charCodeAt(e - 1))) e--;
    end = i;
    if (e === s) continue;
    count++;
    element.at = s;
    element.till = e;
    if (count === n) return count;
  }
  return count;
}

/** The entry {@link entry} last found: `text.slice(from, to)`, a node as the proxy wrote it. */
export const found = { text: "", from: 0, to: 0 };

/**
 * Finds the `for` parameter of the `Forwarded` element `text[start, end)` (RFC 7239 §4:
 * `name=value` pairs joined by `;`, a value a token or a quoted string). A parameter named
 * twice, a pair without `=`, or a quoted string that does not close make the element malformed.
 *
 * @returns whether the element is well formed and has a `for`
 */
function forOf(text: string, start: number, end: number): boolean {
  let seen = false;
  let i = start;
  while (i < end) {
    while (i < end && space(text.charCodeAt(i))) i++;
    if (i < end && text.charCodeAt(i) === SEMICOLON) {
      i++; // an empty pair
      continue;
    }
    if (i === end) break;
    const name = i;
    while (i < end && token(text.charCodeAt(i))) i++;
    if (i === end || text.charCodeAt(i) !== EQUALS || i === name) return false;
    const isFor =
      i - name === 3 &&
      (text.charCodeAt(name) | 0x20) === 0x66 &&
      (text.charCodeAt(name + 1) | 0x20) === 0x6f &&
      (text.charCodeAt(name + 2) | 0x20) === 0x72;
    i++;
    let vText = text;
    let vFrom = i;
    let vTo: number;
    if (i < end && text.charCodeAt(i) === QUOTE) {
      let escaped = false;
      i++;
      vFrom = i;
      while (i < end && text.charCodeAt(i) !== QUOTE) {
        if (text.charCodeAt(i) === BACKSLASH) {
          escaped = true;
          i++;
        }
        i++;
      }
      if (i >= end) return false;
      vTo = i;
      i++;
      if (escaped && isFor) {
        vText = text.slice(vFrom, vTo).replace(/\\(.)/g, "$1");
        vFrom = 0;
        vTo = vText.length;
      }
    } else {
      while (i < end && text.charCodeAt(i) !== SEMICOLON && !space(text.charCodeAt(i))) i++;
      vTo = i;
    }
    if (isFor) {
      if (seen) return false;
      seen = true;
      found.text = vText;
      found.from = vFrom;
      found.to = vTo;
    }
    while (i < end && space(text.charCodeAt(i))) i++;
    if (i < end && text.charCodeAt(i) !== SEMICOLON) return false;
    i++;
  }
  return seen;
}

/**
 * Finds, in the header's lines, the entry `hops` places from the right of `[...entries, socket]`
 * — the node the outermost trusted proxy saw — or the leftmost when there are fewer, and leaves
 * it in {@link found}.
 *
 * @returns whether there is such an entry and it is well formed (else the socket stands)
 */
export function entry(field: string | readonly string[], hops: number, header: ProxyHeader): boolean {
  const quoted = header === "forwarded";
  let need = hops;
  let line = "";
  let any = false;
  if (typeof field === "string") {
    const n = back(field, need, quoted);
    if (n < 0) return false;
    if (n > 0) {
      line = field;
      any = true;
    }
  } else {
    // Lines from the last: the nearest proxy's are at the end.
    for (let k = field.length - 1; k >= 0 && need > 0; k--) {
      const text = field[k];
      if (typeof text !== "string") return false;
      const n = back(text, need, quoted);
      if (n < 0) return false;
      if (n > 0) {
        line = text;
        any = true;
        need -= n;
      }
    }
  }
  if (!any) return false;
  if (quoted) return forOf(line, element.at, element.till);
  found.text = line;
  found.from = element.at;
  found.to = element.till;
  return true;
}
