import { describe, finite } from "./check";
import { until } from "./grid";
import type { Span } from "./span";

/**
 * A time budget measured from the instant it started.
 *
 * A budget of zero or less (or `Infinity`) never expires: that is how most servers spell
 * "no timeout", and a configuration that leaves the timeout unset should not time everything
 * out at once.
 *
 * A reading that is not a number, or is NaN, is a broken clock: a bounded deadline counts it as
 * expired, with nothing remaining, so that a clock that cannot tell the time never lets work run
 * on unbounded. A reading before the start (a clock that stepped back) leaves the whole budget.
 *
 * @example
 * const clock = new ManualClock(0);
 * const d = Deadline.start(2_000, clock.now());
 * clock.advance(500);
 * if (d.expired(clock.now())) throw new Error("too late");
 * d.remaining(clock.now()); // 1500 (milliseconds; undefined with no budget)
 */
export class Deadline {
  // The instant it expires, computed once: `started + budget` rounded onto the clock's float
  // grid, so that `expired` and `remaining` agree to the last bit.
  readonly #end: number;

  /**
   * @param started - the clock reading it started at, in milliseconds
   * @param budget - how long it lasts, in milliseconds; zero or less never expires
   */
  private constructor(
    readonly started: number,
    readonly budget: Span,
  ) {
    this.#end = budget > 0 ? started + budget : Infinity;
  }

  /**
   * A deadline of `budget` milliseconds starting at `now`.
   * @throws TypeError when `budget` or `now` is not a number; RangeError when `budget` is NaN or
   *   `now` is not finite
   */
  static start(budget: Span, now: number): Deadline {
    if (typeof budget !== "number") {
      throw new TypeError(
        `Deadline budget must be a number of milliseconds (0 or less for none), got ${typeof budget} ${describe(budget)}`,
      );
    }
    if (Number.isNaN(budget))
      throw new RangeError("Deadline budget must be a number of milliseconds (0 or less for none), got NaN");
    return new Deadline(finite(now, "Deadline start time"), budget);
  }

  /** Whether this deadline has a finite end it can reach. */
  get bounded(): boolean {
    return this.#end < Infinity;
  }

  /**
   * The instant it expires, in milliseconds: `started + budget` as the clock's numbers round it;
   * `Infinity` when there is no budget (or the sum passes the largest number).
   */
  get end(): number {
    return this.#end;
  }

  /**
   * Whether the budget is spent at `now` (milliseconds): `now >= end`. Never true without a
   * budget; always true with one when `now` is NaN or not a number.
   */
  expired(now: number): boolean {
    const end = this.#end;
    return end < Infinity && !(typeof now === "number" && now < end);
  }

  /**
   * What is left of the budget at `now`, in milliseconds, in `[0, budget]`; `undefined` when
   * there is no budget, which has no finite remainder. 0 exactly when {@link Deadline.expired}.
   */
  remaining(now: number): Span | undefined {
    const end = this.#end;
    if (end === Infinity) return undefined;
    // NaN reads as nothing left; a clock that stepped back before the start does not grow the
    // budget. The wait is what the caller adds to `now` to reach the end in floating point: `end −
    // now` alone can fall a float step short of it (a reading below zero or far below the end).
    const left = typeof now === "number" ? until(now, now, end) : 0;
    return left < this.budget ? left : this.budget;
  }
}
