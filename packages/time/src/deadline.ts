import { finite } from "./check";
import type { Span } from "./span";

/**
 * A time budget measured from the instant it started.
 *
 * A budget of zero or less (or `Infinity`) never expires: that is how most servers spell
 * "no timeout", and a configuration that leaves the timeout unset should not time everything
 * out at once.
 *
 * @example
 * const clock = new ManualClock(0);
 * const d = Deadline.start(2_000, clock.now());
 * clock.advance(500);
 * if (d.expired(clock.now())) throw new Error("too late");
 * d.remaining(clock.now()); // 1500 (milliseconds; undefined with no budget)
 */
export class Deadline {
  /**
   * @param started - the clock reading it started at, in milliseconds
   * @param budget - how long it lasts, in milliseconds; zero or less never expires
   */
  private constructor(
    readonly started: number,
    readonly budget: Span,
  ) {}

  /**
   * A deadline of `budget` milliseconds starting at `now`.
   * @throws RangeError when `budget` is NaN or `now` is not finite
   */
  static start(budget: Span, now: number): Deadline {
    if (typeof budget !== "number" || Number.isNaN(budget)) {
      throw new RangeError(`Deadline budget must be a number of milliseconds (0 or less for none), got ${String(budget)}`);
    }
    return new Deadline(finite(now, "Deadline start time"), budget);
  }

  /** Whether this deadline has a finite budget that can run out. */
  get bounded(): boolean {
    return this.budget > 0 && this.budget !== Infinity;
  }

  /** The instant it expires, in milliseconds; `Infinity` when there is no budget. */
  get end(): number {
    return this.bounded ? this.started + this.budget : Infinity;
  }

  /** Whether the budget is spent at `now` (milliseconds). Never true without a budget. */
  expired(now: number): boolean {
    return now >= this.end;
  }

  /**
   * What is left of the budget at `now`, in milliseconds, never negative;
   * `undefined` when there is no budget, which has no finite remainder.
   */
  remaining(now: number): Span | undefined {
    if (!this.bounded) return undefined;
    const left = this.started + this.budget - now;
    // A clock that stepped back before the start does not grow the budget.
    return left <= 0 ? 0 : left > this.budget ? this.budget : left;
  }
}
