import { check } from "@tideward/time/internal";
import type { Span } from "@tideward/time";
import { flag } from "./flag";
import type { Arrivals, KeyTable, Traffic, TrafficContext } from "./traffic";

/** One recorded call: when it came (ms), from whom, and at what cost. */
export interface TraceRecord {
  /** A clock reading, in milliseconds. */
  readonly t: number;
  /** Who made it. @defaultValue "key-0" */
  readonly key?: string;
  /** Its cost, 0 or more. @defaultValue 1 */
  readonly cost?: number;
}

/** Options of {@link replay}. */
export interface ReplayOptions {
  /**
   * Use the recorded times as clock readings, as they are (they must not precede the run's
   * start). By default the trace is moved so its first call lands `at` ms after the start.
   * @defaultValue false
   */
  readonly absolute?: boolean;
  /** Where the first call lands, in milliseconds after the run's start, unless `absolute`. @defaultValue 0 */
  readonly at?: Span;
}

/**
 * Reads NDJSON: one JSON record a line (`{"t": 1700000000000, "key": "alice"}`), blank lines
 * skipped. A line that is not a record with a finite `t` is a `RangeError` naming the line.
 */
export function parseTrace(text: string): TraceRecord[] {
  if (typeof text !== "string") throw new TypeError(`parseTrace expects NDJSON text, got ${check.describe(text)}`);
  const out: TraceRecord[] = [];
  let line = 0;
  for (const raw of text.split("\n")) {
    line++;
    const s = raw.trim();
    if (s.length === 0) continue;
    let value: unknown;
    try {
      value = JSON.parse(s);
    } catch {
      throw new RangeError(`parseTrace line ${line} is not JSON: ${check.describe(s.slice(0, 80))}`);
    }
    out.push(record(value, `parseTrace line ${line}`));
  }
  return out;
}

function record(value: unknown, what: string): TraceRecord {
  if (value === null || typeof value !== "object" || Array.isArray(value))
    throw new RangeError(`${what} must be a record such as {"t": 0, "key": "a"}, got ${check.describe(value)}`);
  const r = value as Record<string, unknown>;
  const t = r.t;
  if (typeof t !== "number" || !Number.isFinite(t))
    throw new RangeError(`${what} t must be a finite number of milliseconds, got ${check.describe(t)}`);
  const key = r.key ?? "key-0";
  if (typeof key !== "string" || key.length === 0)
    throw new RangeError(`${what} key must be a non-empty string, got ${check.describe(key)}`);
  const cost = r.cost ?? 1;
  if (typeof cost !== "number" || !(cost >= 0) || cost === Infinity)
    throw new RangeError(`${what} cost must be a finite number, 0 or more, got ${check.describe(cost)}`);
  return { t, key, cost };
}

/**
 * A recorded trace played back: an array of records, or NDJSON text of them. Records out of
 * time order are put in order (a log's lines can be slightly shuffled); ties keep their order.
 * Keys are numbered in order of first appearance.
 *
 * @throws RangeError naming the record for a missing or non-finite time, an empty key or a bad cost
 */
export function replay(trace: readonly TraceRecord[] | string, options: ReplayOptions = {}): Traffic {
  const o = check.options(options, ["absolute", "at"], "traffic.replay");
  const records =
    typeof trace === "string"
      ? parseTrace(trace)
      : Array.isArray(trace)
        ? // Every index: a hole is a record of undefined, refused as such.
          Array.from(trace as readonly unknown[], (r, i) => record(r, `traffic.replay record ${i}`))
        : undefined;
  if (records === undefined)
    throw new TypeError(`traffic.replay expects an array of records or NDJSON text, got ${check.describe(trace)}`);
  const absolute = flag(o.absolute, "traffic.replay absolute");
  const at = check.nonNegative(check.or(o.at, 0), "traffic.replay at (ms)");
  const n = records.length;
  const order = Array.from({ length: n }, (_, i) => i).sort((a, b) => records[a].t - records[b].t || a - b);
  const times = Float64Array.from(order, (i) => records[i].t);
  const costs = Float64Array.from(order, (i) => records[i].cost ?? 1);
  const names: string[] = [];
  const index = new Map<string, number>();
  const keyOf = Int32Array.from(order, (i) => {
    const name = records[i].key ?? "key-0";
    let k = index.get(name);
    if (k === undefined) {
      k = names.length;
      index.set(name, k);
      names.push(name);
    }
    return k;
  });
  const keys: KeyTable = { count: Math.max(names.length, 1), name: (i) => names[i] ?? "key-0" };
  const first = n > 0 ? times[0] : 0;
  return Object.freeze({
    label: `replay(${n} calls, ${names.length} keys)`,
    keys,
    open(context: TrafficContext): Arrivals {
      if (absolute && n > 0 && first < context.start) {
        throw new RangeError(
          `traffic.replay with absolute times: the first record (${first} ms) precedes the run's start (${context.start} ms)`,
        );
      }
      const shift = absolute ? 0 : context.start + at - first;
      let i = -1;
      const arrivals = { key: 0, cost: 1, next: () => Infinity };
      arrivals.next = () => {
        if (++i >= n) return Infinity;
        const t = times[i] + shift;
        if (!(t < context.end)) {
          i = n;
          return Infinity;
        }
        arrivals.key = keyOf[i];
        arrivals.cost = costs[i];
        return t;
      };
      return arrivals;
    },
  });
}
