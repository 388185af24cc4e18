import { check } from "@tideward/time/internal";
import { byName } from "../by-name";
import type { TraceRecord } from "../replay";

/** Which part of a log line names the caller. */
export type KeyField = "ip" | "user" | "path" | (string & {});

// Looked up by the text of a log line, so no prototype.
const MONTHS: Readonly<Record<string, number>> = Object.assign(byName<number>(), {
  jan: 0,
  feb: 1,
  mar: 2,
  apr: 3,
  may: 4,
  jun: 5,
  jul: 6,
  aug: 7,
  sep: 8,
  oct: 9,
  nov: 10,
  dec: 11,
});

// host ident user [10/Oct/2000:13:55:36 -0700] "GET /path HTTP/1.0" status bytes …
const CLF =
  /^(\S+) (\S+) (\S+) \[(\d{1,2})\/(\w{3})\/(\d{4}):(\d{2}):(\d{2}):(\d{2})(?:\.(\d+))? ([+-])(\d{2}):?(\d{2})\] "(?:\S+ )?(\S*)[^"]*"/;

/**
 * A timestamp as milliseconds since the epoch: a number (or digits) of Unix seconds when its
 * magnitude is below 10^11 (before the year 5138), of Unix milliseconds from 10^11 (after
 * 1973-03-03), or ISO 8601 text with a zone. Always an absolute time: unlike `traffic.replay`,
 * whose `t` is milliseconds after the run's start, a `t` of 100 here is 1970-01-01T00:01:40Z.
 */
export function parseTime(value: unknown): number | undefined {
  if (typeof value === "number")
    return Number.isFinite(value) ? (Math.abs(value) < 1e11 ? value * 1_000 : value) : undefined;
  if (typeof value !== "string") return undefined;
  if (/^-?\d+(\.\d+)?$/.test(value)) return parseTime(Number(value));
  // Only ISO 8601 with a zone (Z or ±hh:mm): anything else would be read in the machine's zone.
  if (!/^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})$/i.test(value)) return undefined;
  const t = Date.parse(value.replace(" ", "T"));
  return Number.isFinite(t) ? t : undefined;
}

/**
 * Reads one line of an access log into a record: `undefined` for a blank line, an error message
 * for one that cannot be read. Three shapes, told apart line by line:
 *
 * - NDJSON: `{"t": 1723456789012, "key": "alice"}`; the time from `t`, `time`, `timestamp` or
 *   `ts`, read by {@link parseTime} (absolute: Unix seconds below 10^11, Unix ms from it, or ISO 8601), the key from the field `key` names
 *   (`"key"` by default, then `ip`).
 * - Common or combined log format (Apache, nginx): the key is the client address (`ip`), the
 *   user (`user`) or the request path (`path`).
 * - Plain text: `<time> <key>`, whitespace apart.
 *
 * @throws TypeError when `line` is not text or `key` is not a field name
 */
export function parseLogLine(line: string, key: KeyField = "ip"): TraceRecord | string | undefined {
  if (typeof line !== "string") throw new TypeError(`parseLogLine line must be text, got ${check.describe(line)}`);
  if (!(typeof key === "string" && key.length > 0))
    throw new TypeError(
      `parseLogLine key must be a field name such as "ip", "user" or "path", got ${check.describe(key)}`,
    );
  const s = line.trim();
  if (s.length === 0 || s.startsWith("#")) return undefined;
  if (s.startsWith("{")) {
    let o: Record<string, unknown>;
    try {
      o = JSON.parse(s) as Record<string, unknown>;
    } catch {
      return "not valid JSON";
    }
    const t = parseTime(o.t ?? o.time ?? o.timestamp ?? o.ts);
    if (t === undefined) return 'no readable time (fields "t", "time", "timestamp" or "ts")';
    const field = key === "ip" ? (o.key === undefined ? "ip" : "key") : key;
    const k = o[field];
    const text = typeof k === "string" ? k : typeof k === "number" ? String(k) : "";
    if (text.length === 0) return `no key (a string or a number) in field ${JSON.stringify(field)}`;
    const cost = typeof o.cost === "number" && o.cost >= 0 ? o.cost : 1;
    return { t, key: text, cost };
  }
  const m = CLF.exec(s);
  if (m !== null) {
    const month = MONTHS[m[5].toLowerCase()];
    if (month === undefined) return `unknown month ${JSON.stringify(m[5])}`;
    const fraction = m[10] === undefined ? 0 : Number(`0.${m[10]}`) * 1_000;
    const offset = (m[11] === "-" ? -1 : 1) * (Number(m[12]) * 60 + Number(m[13])) * 60_000;
    const t = Date.UTC(Number(m[6]), month, Number(m[4]), Number(m[7]), Number(m[8]), Number(m[9])) + fraction - offset;
    const k = key === "user" ? m[3] : key === "path" ? m[14].split("?")[0] : m[1];
    return { t, key: k };
  }
  const parts = s.split(/\s+/);
  if (parts.length >= 2) {
    const t = parseTime(parts[0]);
    if (t !== undefined) return { t, key: parts[1] };
  }
  return "neither NDJSON, a common or combined log line, nor <time> <key>";
}
