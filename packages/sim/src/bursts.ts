import { check } from "@tideward/time/internal";
import type { Span } from "@tideward/time";
import { DEFAULT_MAX_BYTES, formatBytes, formatCount, maxBytesOf } from "./memory";
import { STREAM_FIELDS, Stream, model, resolveStream } from "./traffic";
import type { KeyTable, StreamOptions, Traffic } from "./traffic";

/** Options of {@link bursts}. */
export interface BurstOptions extends Omit<StreamOptions, "at"> {
  /** Calls in each burst, a whole number from 1. */
  readonly size: number;
  /** Milliseconds between the calls of a burst, 0 or more. */
  readonly spacing: Span;
  /** Milliseconds from the start of one burst to the start of the next, above 0. */
  readonly every: Span;
  /** When the first burst begins, in milliseconds after the run's start. @defaultValue 0 */
  readonly at?: Span;
  /** How many bursts; unlimited until the run ends by default. */
  readonly count?: number;
}

/**
 * Bursts: `size` calls `spacing` ms apart, a burst every `every` ms. Call `i` of burst `k` lands
 * at exactly `at + k · every + i · spacing` ms after the start (each time computed from its
 * indices, so no spacing drifts).
 */
export function bursts(options: BurstOptions): Traffic {
  const o = check.options(options, ["size", "spacing", "every", "count", ...STREAM_FIELDS], "traffic.bursts");
  const size = check.integer(o.size, "traffic.bursts size", 1);
  const spacing = check.nonNegative(o.spacing, "traffic.bursts spacing (ms)");
  const every = check.positive(o.every, "traffic.bursts every (ms)");
  const count = o.count === undefined ? Infinity : check.integer(o.count, "traffic.bursts count", 0);
  const r = resolveStream(o, "traffic.bursts");
  return model(`bursts(${size} every ${every}ms)`, r.keys, (context) => {
    const origin = context.start + r.at;
    let k = 0;
    let i = 0;
    const gap = (): number => {
      if (++i === size) {
        i = 0;
        if (++k >= count) return Infinity;
      }
      return origin + k * every + i * spacing;
    };
    return new Stream(r, context, gap, (t) => (count > 0 ? t : Infinity));
  });
}

/** Options of {@link herd}. */
export interface HerdOptions extends Omit<StreamOptions, "until"> {
  /** How many clients call, a whole number from 1: one call each. */
  readonly clients: number;
  /** When they call, in milliseconds after the run's start. @defaultValue 0 */
  readonly at?: Span;
  /** Their calls are spread uniformly over this many milliseconds after `at`; 0 is all at once. @defaultValue 0 */
  readonly spread?: Span;
  /**
   * The most memory its call times may take, bytes (8 a client, drawn and sorted when a run
   * opens it): more clients than fit are refused when the herd is made. `Infinity` lifts the
   * ceiling. @defaultValue 536 870 912 (512 MiB, about 67 million clients)
   */
  readonly maxBytes?: number;
}

/**
 * Many clients calling at once: `clients` calls at `at` ms (spread over `spread` ms), each from a key of its own (`client-0` …) unless `keys` says otherwise.
 *
 * @throws RangeError when the clients' call times would take more than `maxBytes`, naming `clients`
 */
export function herd(options: HerdOptions): Traffic {
  const o = check.options(options, ["clients", "at", "spread", "keys", "cost", "maxBytes"], "traffic.herd");
  const clients = check.integer(o.clients, "traffic.herd clients", 1);
  const max = maxBytesOf(o.maxBytes, "traffic.herd maxBytes");
  if (clients * 8 > max)
    throw new RangeError(
      `traffic.herd clients ${formatCount(clients)} need about ${formatBytes(clients * 8)} for their call times (8 bytes a client), past traffic.herd maxBytes (${formatBytes(max)}${max === DEFAULT_MAX_BYTES ? ", the default" : ""}): lower clients, or raise maxBytes`,
    );
  if (clients > 2 ** 31 - 1)
    throw new RangeError(`traffic.herd clients must be at most 2 147 483 647 (one key each), got ${clients}`);
  const spread = check.nonNegative(check.or(o.spread, 0), "traffic.herd spread (ms)");
  const own = o.keys === undefined;
  const r = resolveStream(o, "traffic.herd");
  const keys: KeyTable = own ? { count: clients, name: (i) => `client-${i}` } : r.keys;
  return model(`herd(${clients} clients)`, keys, (context) => {
    const origin = context.start + r.at;
    const times = Float64Array.from({ length: clients }, () => origin + context.random() * spread).sort();
    let n = 0;
    const stream = new Stream(
      r,
      context,
      () => (++n < clients ? times[n] : Infinity),
      () => times[0],
    );
    if (!own) return stream;
    // Each client is its own key, numbered in the order they call.
    const arrivals = { key: -1, cost: 1, next: () => Infinity };
    arrivals.next = () => {
      const t = stream.next();
      if (t !== Infinity) arrivals.key++;
      arrivals.cost = stream.cost;
      return t;
    };
    return arrivals;
  });
}
