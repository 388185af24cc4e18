import { parseDictionary, parseList } from "./structured";

/** The few header reads the client needs: `Headers` fits, and so does anything with `get`. */
export interface HeaderSource {
  get(name: string): string | null;
}

const DELTA = /^\s*(\d+)\s*$/;

/**
 * The wait a `Retry-After` field asks for, in milliseconds: `delay-seconds` (`"120"`) or an
 * HTTP date (`"Wed, 21 Oct 2015 07:28:00 GMT"`, or the two obsolete forms), or `undefined` when
 * it is absent or malformed.
 *
 * A date is measured from the response's own `Date` field when it has a valid one (so the two
 * clocks' skew cancels out), else from `now`. A date in the past asks for no wait (0).
 *
 * @param value - the field's value
 * @param now - the client's clock, in milliseconds since the Unix epoch
 * @param date - the response's `Date` field, if any
 */
export function parseRetryAfter(
  value: string | null | undefined,
  now: number,
  date?: string | null,
): number | undefined {
  if (value === null || value === undefined) return undefined;
  const delta = DELTA.exec(value);
  if (delta !== null) return Number(delta[1]) * 1_000;
  // An HTTP date names a day of the week; a bare number of another shape is not one.
  if (!/[A-Za-z]{3}/.test(value)) return undefined;
  const at = Date.parse(value);
  if (!Number.isFinite(at)) return undefined;
  const sent = date === null || date === undefined ? Number.NaN : Date.parse(date);
  const from = Number.isFinite(sent) ? sent : now;
  return at > from ? at - from : 0;
}

/** A `delay-seconds` value in milliseconds, or `undefined`. */
function delaySeconds(value: string | null): number | undefined {
  const delta = value === null ? null : DELTA.exec(value);
  return delta === null ? undefined : Number(delta[1]) * 1_000;
}

/**
 * The wait the `RateLimit` field asks for, in milliseconds: the longest `t` of the service
 * limits whose remaining `r` is 0, in the List form of draft-ietf-httpapi-ratelimit-headers
 * (`"default";r=0;t=30`, drafts 08 on), or the Dictionary form of draft 07
 * (`limit=100, remaining=0, reset=30`). `undefined` when no limit is spent, or the field is
 * absent or malformed (which the draft says to ignore).
 */
export function parseRateLimit(value: string | null | undefined): number | undefined {
  if (value === null || value === undefined) return undefined;
  const list = parseList(value);
  if (list !== undefined) {
    let wait: number | undefined;
    for (const m of list) {
      const r = m.params.get("r");
      const t = m.params.get("t");
      if (r === 0 && typeof t === "number" && Number.isInteger(t) && t >= 0) {
        const ms = t * 1_000;
        if (wait === undefined || ms > wait) wait = ms;
      }
    }
    if (wait !== undefined) return wait;
  }
  const dict = parseDictionary(value);
  if (dict !== undefined) {
    const remaining = dict.get("remaining")?.value;
    const reset = dict.get("reset")?.value;
    if (remaining === 0 && typeof reset === "number" && Number.isInteger(reset) && reset >= 0) return reset * 1_000;
  }
  return undefined;
}

/**
 * The wait `X-RateLimit-Reset` asks for, in milliseconds. Services disagree on its unit: a
 * number of seconds from now (most), Unix seconds (GitHub), or Unix milliseconds. A value past
 * 10^12 is read as Unix milliseconds, past 10^9 (2001) as Unix seconds, else as seconds from now.
 *
 * @param now - the client's clock, in milliseconds since the Unix epoch
 */
export function parseResetField(value: string | null | undefined, now: number): number | undefined {
  if (value === null || value === undefined) return undefined;
  const m = /^\s*(\d+(?:\.\d+)?)\s*$/.exec(value);
  if (m === null) return undefined;
  const n = Number(m[1]);
  if (n > 1e12) return n > now ? n - now : 0;
  if (n > 1e9) return n * 1_000 > now ? n * 1_000 - now : 0;
  return n * 1_000;
}

/**
 * What a 429 or 503 response asks a client to wait before trying again, in milliseconds, or
 * `undefined` when it does not say: `Retry-After` first (the draft gives it precedence), then
 * `RateLimit`, then draft 06's `RateLimit-Reset`, then `X-RateLimit-Reset`.
 *
 * @param headers - the response's header fields
 * @param now - the client's clock, in milliseconds since the Unix epoch
 */
export function waitHint(headers: HeaderSource, now: number): number | undefined {
  return (
    parseRetryAfter(headers.get("retry-after"), now, headers.get("date")) ??
    parseRateLimit(headers.get("ratelimit")) ??
    delaySeconds(headers.get("ratelimit-reset")) ??
    parseResetField(headers.get("x-ratelimit-reset"), now)
  );
}
