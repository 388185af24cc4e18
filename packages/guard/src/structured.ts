// The part of RFC 8941 (Structured Field Values for HTTP) the RateLimit fields use: parsing a
// List or a Dictionary of Items with Parameters, and writing Strings and Integers. Parsing is
// strict, as the RFC asks: any error and the whole field is ignored (undefined), never half-read.

/** A bare item: Integer or Decimal (number), String or Token (string), Byte Sequence, Boolean. */
export type BareItem = number | string | boolean | Uint8Array | Token;

/** A Token, told apart from a String. */
export class Token {
  constructor(readonly name: string) {}
}

/** An Item or an Inner List, with its Parameters in the order written. */
export interface Member {
  readonly value: BareItem | readonly Member[];
  readonly params: ReadonlyMap<string, BareItem>;
}

class Reader {
  i = 0;
  constructor(readonly s: string) {}
  get done(): boolean {
    return this.i >= this.s.length;
  }
  peek(): string {
    return this.s[this.i] ?? "";
  }
  spaces(): void {
    while (this.s[this.i] === " ") this.i++;
  }
  ows(): void {
    while (this.s[this.i] === " " || this.s[this.i] === "\t") this.i++;
  }
}

const fail = (): never => {
  throw new SyntaxError("malformed structured field");
};

function isDigit(c: string): boolean {
  return c >= "0" && c <= "9";
}

function isLcAlpha(c: string): boolean {
  return c >= "a" && c <= "z";
}

function isAlpha(c: string): boolean {
  return isLcAlpha(c) || (c >= "A" && c <= "Z");
}

// tchar of RFC 9110, plus ":" and "/" which Tokens may also hold.
const TCHAR = /^[!#$%&'*+\-.^_`|~0-9A-Za-z:/]$/;

function key(r: Reader): string {
  const c = r.peek();
  if (!(isLcAlpha(c) || c === "*")) fail();
  let out = "";
  while (!r.done && /^[a-z0-9_\-.*]$/.test(r.peek())) out += r.s[r.i++];
  return out;
}

function number(r: Reader): number {
  let sign = 1;
  if (r.peek() === "-") {
    sign = -1;
    r.i++;
  }
  if (!isDigit(r.peek())) fail();
  let text = "";
  let decimal = false;
  while (!r.done) {
    const c = r.peek();
    if (isDigit(c)) text += c;
    else if (c === "." && !decimal) {
      if (text.length > 12) fail();
      decimal = true;
      text += c;
    } else break;
    r.i++;
    if (!decimal && text.length > 15) fail();
    if (decimal && text.length > 16) fail();
  }
  if (decimal) {
    if (text.endsWith(".") || text.length - text.indexOf(".") - 1 > 3) fail();
    return sign * Number(text);
  }
  return sign * Number(text);
}

function string(r: Reader): string {
  r.i++; // the opening quote
  let out = "";
  for (;;) {
    if (r.done) fail();
    const c = r.s[r.i++];
    if (c === "\\") {
      const next = r.s[r.i++];
      if (next !== '"' && next !== "\\") fail();
      out += next;
    } else if (c === '"') return out;
    else {
      const code = c.charCodeAt(0);
      if (code < 0x20 || code > 0x7e) fail();
      out += c;
    }
  }
}

function token(r: Reader): Token {
  let out = r.s[r.i++];
  while (!r.done && TCHAR.test(r.peek())) out += r.s[r.i++];
  return new Token(out);
}

function bytes(r: Reader): Uint8Array {
  r.i++;
  const end = r.s.indexOf(":", r.i);
  if (end < 0) fail();
  const b64 = r.s.slice(r.i, end);
  if (!/^[A-Za-z0-9+/]*=*$/.test(b64)) fail();
  r.i = end + 1;
  const bin = atob(b64);
  return Uint8Array.from(bin, (ch) => ch.charCodeAt(0));
}

function bare(r: Reader): BareItem {
  const c = r.peek();
  if (c === "-" || isDigit(c)) return number(r);
  if (c === '"') return string(r);
  if (c === ":") return bytes(r);
  if (c === "?") {
    r.i++;
    const v = r.s[r.i++];
    if (v === "1") return true;
    if (v === "0") return false;
    return fail();
  }
  if (isAlpha(c) || c === "*") return token(r);
  return fail();
}

function params(r: Reader): Map<string, BareItem> {
  const out = new Map<string, BareItem>();
  while (r.peek() === ";") {
    r.i++;
    r.spaces();
    const k = key(r);
    let v: BareItem = true;
    if (r.peek() === "=") {
      r.i++;
      v = bare(r);
    }
    out.set(k, v);
  }
  return out;
}

function member(r: Reader): Member {
  if (r.peek() === "(") {
    r.i++;
    const inner: Member[] = [];
    for (;;) {
      r.spaces();
      if (r.peek() === ")") {
        r.i++;
        return { value: inner, params: params(r) };
      }
      const value = bare(r);
      inner.push({ value, params: params(r) });
      const c = r.peek();
      if (c !== " " && c !== ")") fail();
    }
  }
  const value = bare(r);
  return { value, params: params(r) };
}

function commaSeparated<T>(text: string, one: (r: Reader) => T): T[] | undefined {
  const r = new Reader(text);
  const out: T[] = [];
  try {
    r.spaces();
    if (r.done) return out;
    for (;;) {
      out.push(one(r));
      r.ows();
      if (r.done) return out;
      if (r.s[r.i++] !== ",") fail();
      r.ows();
      if (r.done) fail(); // a trailing comma
    }
  } catch {
    return undefined;
  }
}

/**
 * Parses a List field (`"burst";r=50;t=30, "daily";r=0;t=3600`), or `undefined` when it is
 * malformed anywhere. Several field lines are one list: join them with ", " before parsing
 * (`Headers.get` does).
 */
export function parseList(text: string): Member[] | undefined {
  return commaSeparated(text, member);
}

/** Parses a Dictionary field (`limit=100, remaining=0, reset=30`), or `undefined` when malformed. */
export function parseDictionary(text: string): Map<string, Member> | undefined {
  const entries = commaSeparated(text, (r) => {
    const k = key(r);
    if (r.peek() === "=") {
      r.i++;
      return [k, member(r)] as const;
    }
    return [k, { value: true, params: params(r) }] as const;
  });
  return entries === undefined ? undefined : new Map(entries);
}

/** Whether `s` can be written as a String: printable ASCII only (0x20–0x7E). */
export function isSfString(s: string): boolean {
  return /^[\x20-\x7e]*$/.test(s);
}

/** `s` as a String: quoted, with `"` and `\` escaped. The caller has checked {@link isSfString}. */
export function sfString(s: string): string {
  return `"${s.replace(/[\\"]/g, (c) => `\\${c}`)}"`;
}

/** The most an Integer may be (15 digits). */
export const SF_MAX_INTEGER = 999_999_999_999_999;

/** `n` as an Integer: a whole number from 0, held to the largest an Integer may be. */
export function sfInteger(n: number): string {
  const whole = n > 0 ? Math.floor(n) : 0;
  return String(whole > SF_MAX_INTEGER ? SF_MAX_INTEGER : whole);
}
