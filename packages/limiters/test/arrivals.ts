// Random arrival sequences for the property tests: clock readings in milliseconds, with the
// clumps (several calls at one instant), short gaps and long quiet spells real traffic has.
import fc from "fast-check";

/** One arrival: the clock reading (ms) and the call's cost. */
export interface Arrival {
  readonly t: number;
  readonly n: number;
}

/** Options of {@link arrivals}. */
export interface ArrivalOptions {
  /** Costs drawn from [0, costs] (fractions included); with 1, every cost is one. */
  readonly costs?: number;
  /** Let the clock step backwards as well as forwards (never below zero). */
  readonly shuffled?: boolean;
  /** Whole milliseconds only, so sums and differences of readings are exact. */
  readonly whole?: boolean;
  /** The longest gap, in ms. @defaultValue 2 000 */
  readonly gap?: number;
  /** The most arrivals. @defaultValue 120 */
  readonly max?: number;
  /** The first reading's clock, added to every `t` (a real clock's magnitude). @defaultValue 0 */
  readonly origin?: number;
}

/**
 * Arrival sequences, in clock order unless `shuffled`. With an `origin`, the readings are
 * `origin + t` as a real clock would give them: the sum rounded onto the clock's float grid.
 */
export function arrivals(options: ArrivalOptions = {}): fc.Arbitrary<Arrival[]> {
  const { costs = 1, shuffled = false, whole = false, gap = 2_000, max = 120, origin = 0 } = options;
  const low = shuffled ? -gap / 4 : 0;
  const step = whole
    ? fc.oneof(
        fc.constant(0),
        fc.integer({ min: Math.ceil(low / 10), max: 50 }),
        fc.integer({ min: Math.ceil(low), max: gap }),
      )
    : fc.oneof(
        fc.constant(0),
        fc.double({ min: low / 10, max: 50, noNaN: true }),
        fc.double({ min: low, max: gap, noNaN: true }),
      );
  const cost = costs === 1 ? fc.constant(1) : fc.oneof(fc.constant(1), fc.double({ min: 0, max: costs, noNaN: true }));
  return fc.array(fc.record({ gap: step, n: cost }), { maxLength: max, size: "max" }).map((steps) => {
    let t = 0;
    return steps.map(({ gap: g, n }) => {
      t = Math.max(0, t + g);
      return { t: origin + t, n };
    });
  });
}

/** The running maximum of a sequence of clock readings: what a clock that stands still reads. */
export function runningMax(ts: readonly number[]): number[] {
  let m = -Infinity;
  return ts.map((t) => (m = Math.max(m, t)));
}

/**
 * {@link arrivals} starting at a reading drawn from `origin` (see `scales.ts`); with `whole`, the
 * origin is rounded to a whole millisecond too (as `Date.now()` is), so sums stay exact.
 */
export function arrivalsAt(origin: fc.Arbitrary<number>, options: ArrivalOptions = {}): fc.Arbitrary<Arrival[]> {
  return origin.chain((o) => arrivals({ ...options, origin: options.whole === true ? Math.round(o) : o }));
}
