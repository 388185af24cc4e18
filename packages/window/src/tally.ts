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

  /** Counts one call ending as `outcome`. */
  add(outcome: Outcome): void {
    this.total++;
    if (outcome === "success") this.success++;
    else if (outcome === "failure") this.failure++;
    else this.drop++;
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
 */
export class Total {
  /** The sum of the values added. */
  sum = 0;
  /** How many values were added. */
  count = 0;

  /** Adds one value. */
  add(value: number): void {
    this.sum += value;
    this.count++;
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
