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

/** Bursts under way at once past which {@link bursts} is refused: as many calls as a run holds at once. */
const MAX_UNDER_WAY = 4_194_304;

/**
 * Bursts: `size` calls `spacing` ms apart, a burst every `every` ms. Call `i` of burst `k` lands
 * at exactly `at + k · every + i · spacing` ms after the start (each time computed from its
 * indices, so no spacing drifts). Bursts longer than `every` overlap, and their calls come in
 * time order (of two at one instant, the earlier burst's first).
 *
 * @throws RangeError when the bursts would overlap so far that more than 4 194 304 are under way
 *   at once, naming `size`, `spacing` and `every`
 */
export function bursts(options: BurstOptions): Traffic {
  const o = check.options(options, ["size", "spacing", "every", "count", ...STREAM_FIELDS], "traffic.bursts");
  const size = check.integer(o.size, "traffic.bursts size", 1);
  const spacing = check.nonNegative(o.spacing, "traffic.bursts spacing (ms)");
  const every = check.positive(o.every, "traffic.bursts every (ms)");
  const count = o.count === undefined ? Infinity : check.integer(o.count, "traffic.bursts count", 0);
  // The most under way at once: those begun within one burst's length, and a spare for rounding.
  const overlap = Math.min(count, Math.floor(((size - 1) * spacing) / every) + 2);
  if (!(overlap <= MAX_UNDER_WAY))
    throw new RangeError(
      `traffic.bursts size ${formatCount(size)} × spacing ${spacing} ms lasts ${(size - 1) * spacing} ms, with a burst every ${every} ms: more than ${formatCount(MAX_UNDER_WAY)} bursts would be under way at once; lower size or spacing, or raise every`,
    );
  const r = resolveStream(o, "traffic.bursts");
  return model(`bursts(${size} every ${every}ms)`, r.keys, (context) => {
    const order = new BurstOrder(context.start + r.at, size, spacing, every, count);
    return new Stream(
      r,
      context,
      () => order.take(),
      () => order.take(),
    );
  });
}

/**
 * The calls of overlapping bursts in time order: each burst under way in a heap by its next
 * call's time (ties to the earlier burst), and the next burst to begin beside it. Without
 * overlap the heap holds one burst, and the order is burst by burst.
 */
class BurstOrder {
  readonly #origin: number;
  readonly #size: number;
  readonly #spacing: number;
  readonly #every: number;
  readonly #count: number;
  // The heap: each burst's index, its next call's index and that call's time (ms).
  readonly #k: number[] = [];
  readonly #i: number[] = [];
  readonly #t: number[] = [];
  // The next burst to begin.
  #begin = 0;

  constructor(origin: number, size: number, spacing: number, every: number, count: number) {
    this.#origin = origin;
    this.#size = size;
    this.#spacing = spacing;
    this.#every = every;
    this.#count = count;
  }

  #at(k: number, i: number): number {
    return this.#origin + k * this.#every + i * this.#spacing;
  }

  /** The next call's time, ms, or `Infinity` after the last. */
  take(): number {
    const begin = this.#begin;
    const next = begin < this.#count ? this.#at(begin, 0) : Infinity;
    // A burst under way goes first at a tie: it began earlier.
    if (this.#k.length > 0 && this.#t[0] <= next) {
      const t = this.#t[0];
      const k = this.#k[0];
      const i = this.#i[0] + 1;
      if (i < this.#size) this.#replaceTop(k, i, this.#at(k, i));
      else this.#popTop();
      return t;
    }
    if (next === Infinity) return Infinity;
    this.#begin++;
    if (this.#size > 1) this.#push(begin, 1, this.#at(begin, 1));
    return next;
  }

  #before(a: number, b: number): boolean {
    return this.#t[a] < this.#t[b] || (this.#t[a] === this.#t[b] && this.#k[a] < this.#k[b]);
  }

  #swap(a: number, b: number): void {
    for (const h of [this.#k, this.#i, this.#t]) [h[a], h[b]] = [h[b], h[a]];
  }

  #push(k: number, i: number, t: number): void {
    let n = this.#k.length;
    this.#k.push(k);
    this.#i.push(i);
    this.#t.push(t);
    while (n > 0) {
      const p = (n - 1) >> 1;
      if (!this.#before(n, p)) break;
      this.#swap(n, p);
      n = p;
    }
  }

  #replaceTop(k: number, i: number, t: number): void {
    this.#k[0] = k;
    this.#i[0] = i;
    this.#t[0] = t;
    this.#down();
  }

  #popTop(): void {
    const last = this.#k.length - 1;
    this.#swap(0, last);
    this.#k.pop();
    this.#i.pop();
    this.#t.pop();
    this.#down();
  }

  #down(): void {
    const n = this.#k.length;
    let j = 0;
    for (;;) {
      const l = 2 * j + 1;
      if (l >= n) return;
      const c = l + 1 < n && this.#before(l + 1, l) ? l + 1 : l;
      if (!this.#before(c, j)) return;
      this.#swap(c, j);
      j = c;
    }
  }
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
