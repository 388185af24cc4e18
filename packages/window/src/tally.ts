import { check } from "@tideward/time/internal";

/**
 * How a call ended, as a breaker records it. A `"drop"` is a call refused before it ran:
 * traffic, but neither a success nor a failure of whatever is downstream.
 */
export type Outcome = "success" | "failure" | "drop";

/**
 * Outcomes counted in one bucket of a {@link Window}.
 *
 * `total` counts every call including the dropped ones, so a bucket being throttled still
 * reads as busy rather than idle.
 */
export class Tally {
  /** Every call counted, drops included. */
  total = 0;
  /** Calls that succeeded. */
  success = 0;
  /** Calls that failed. */
  failure = 0;
  /** Calls refused before they ran. */
  drop = 0;

  /**
   * Counts one call ending as `outcome`.
   * @throws TypeError for anything but `"success"`, `"failure"` or `"drop"`, counting nothing:
   *   a misspelt outcome must not pass for a drop
   */
  add(outcome: Outcome): void {
    if (outcome === "success") this.success++;
    else if (outcome === "failure") this.failure++;
    else if (outcome === "drop") this.drop++;
    else
      throw new TypeError(
        `Tally.add outcome must be "success", "failure" or "drop", got ${typeof outcome} ${check.describe(outcome)}`,
      );
    this.total++;
  }

  /** Clears every count to zero. */
  reset(): void {
    this.total = 0;
    this.success = 0;
    this.failure = 0;
    this.drop = 0;
  }
}

/**
 * A sum and how many values went into it, which is a mean once `count` is positive: what a
 * shedder keeps per bucket of passes and of response times.
 *
 * Only finite numbers are added: a NaN or an infinite value is skipped (it would poison the sum
 * for as long as the bucket lives), and a value that is not a number is a `TypeError`.
 */
export class Total {
  /** The sum of the values added. */
  sum = 0;
  /** How many values were added. */
  count = 0;

  /**
   * Adds one value. A NaN or infinite one is skipped, counted in neither the sum nor the count,
   * and so is one that would carry the sum past the largest number.
   * @throws TypeError when `value` is not a number (a string would be concatenated), adding nothing
   */
  add(value: number): void {
    if (typeof value !== "number")
      throw new TypeError(`Total.add value must be a number, got ${typeof value} ${check.describe(value)}`);
    // `x - x` is 0 for every finite number and NaN for NaN and ±Infinity: a NaN or infinite
    // value, or one that would carry the sum past the largest number, is skipped.
    const sum = this.sum + value;
    if (sum - sum === 0) {
      this.sum = sum;
      this.count++;
    }
  }

  /** The mean of the values added; `undefined` while there are none. */
  get mean(): number | undefined {
    return this.count > 0 ? this.sum / this.count : undefined;
  }

  /** Clears the sum and the count to zero. */
  reset(): void {
    this.sum = 0;
    this.count = 0;
  }
}
