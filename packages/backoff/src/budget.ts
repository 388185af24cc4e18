import { check } from "@tideward/time/internal";
import type { Span } from "@tideward/time";
import { Window } from "@tideward/window";

/**
 * The numbers of a retry budget, as a plain record; the preset {@link budget} fills what is left out.
 *
 * Over the last `window` milliseconds, retries may number up to `ratio` × first attempts plus
 * `minPerSecond` × the window in seconds. These are Finagle's and Linkerd's `percentCanRetry`,
 * `minRetriesPerSec` and `ttl`, with their defaults.
 */
export interface Budget {
  /** Retries allowed per first attempt in the window, 0 or more (0.2: one retry per five calls). @defaultValue 0.2 */
  readonly ratio: number;
  /**
   * Retries per second allowed whatever the traffic, 0 or more: so a client making few calls can
   * still retry. The window holds `minPerSecond × window / 1000` of them. @defaultValue 10
   */
  readonly minPerSecond: number;
  /** How far back first attempts and retries are counted, in milliseconds; above 0. @defaultValue 10 000 */
  readonly window: Span;
  /** How many buckets the window is kept in; more is smoother, fewer is cheaper. A whole number, 1 or more. @defaultValue 10 */
  readonly buckets: number;
}

/** The preset: a fifth of first attempts may be retried, on top of ten retries a second, over ten seconds in ten buckets. */
export const budget: Budget = Object.freeze({ ratio: 0.2, minPerSecond: 10, window: 10_000, buckets: 10 });

const KNOWN = ["ratio", "minPerSecond", "window", "buckets"] as const;

/** First attempts and retries counted in one bucket of a {@link RetryBudget}'s window. */
class Counts {
  attempts = 0;
  retries = 0;
  /**
   * The receipt of a retry counted here: the bucket's place, plus `step` (the bucket count) for
   * each time it has been cleared, so one for a bucket since cleared names nothing.
   */
  id: number;
  readonly #step: number;
  /** An empty bucket, added at the end of `all` (its place); `step` is the bucket count. */
  constructor(all: Counts[], step: number) {
    this.id = all.push(this) - 1;
    this.#step = step;
  }
  reset(): void {
    this.attempts = 0;
    this.retries = 0;
    // Back to the place before the ids lose exactness (after some 2^53 / step clearings).
    const next = this.id + this.#step;
    this.id = next > Number.MAX_SAFE_INTEGER ? this.id % this.#step : next;
  }
}

// Counts are whole and `ratio × attempts` is one rounding away from exact: a ratio of 0.57 over
// 100 calls should allow 57 retries, not 56 because 0.57 × 100 is 56.99999999999999.
const SLACK = 1e-9;

/**
 * A retry budget: retries are allowed while they stay under a ratio of the first attempts seen
 * over a rolling window, plus a small floor per second. Share one among every call to a
 * backend, so that during an outage retries stop multiplying the load on it: with the preset,
 * a failing backend sees at most 1.2× the calls it would without retries, not 3×.
 *
 * Clock-free: every method takes `now` in milliseconds. A clock that steps back is treated as
 * standing still, and so is a reading that is NaN, infinite or not a number at all. Nothing
 * allocates after construction, and nothing throws once constructed.
 *
 * @example
 * const spend = new RetryBudget({ ratio: 0.5, minPerSecond: 0 });
 * spend.recordAttempt(0);
 * spend.recordAttempt(0);
 * spend.tryRetry(0); // true: one retry per two first attempts
 * spend.tryRetry(0); // false
 */
export class RetryBudget {
  /** The policy in force, validated. */
  readonly policy: Budget;
  readonly #window: Window<Counts>;
  // The window's buckets, by place: where a receipt's bucket is found.
  readonly #counts: Counts[] = [];
  readonly #reserve: number;
  // Running sums over the live buckets, taken back out as buckets are cleared.
  #attempts = 0;
  #retries = 0;

  /**
   * An empty budget: `policy` laid over the preset {@link budget}, validated once.
   *
   * The policy is read once, into a copy, before anything is checked.
   *
   * @param now - the clock reading the window opens at, in milliseconds; 0 by default
   * @throws TypeError for a policy that is not an object or names a field there is not (with
   *   the closest there is), or a field that is not a number; RangeError naming the field, the
   *   value and the bound for NaN, a negative ratio or floor, a window of 0 or less or under
   *   0.01 ms a bucket, or a bucket count under 1, not whole or over 1 000 000
   */
  constructor(policy?: Partial<Budget>, now = 0) {
    const given = check.options(policy, KNOWN, "RetryBudget", "policy");
    const ratio = check.nonNegative(check.or(given.ratio, budget.ratio), "RetryBudget ratio");
    const minPerSecond = check.nonNegative(
      check.or(given.minPerSecond, budget.minPerSecond),
      "RetryBudget minPerSecond",
    );
    const window = check.positive(check.or(given.window, budget.window), "RetryBudget window (ms)");
    const buckets = check.integer(check.or(given.buckets, budget.buckets), "RetryBudget buckets", 1);
    if (buckets > Window.maxSize)
      throw check.rangeError("RetryBudget buckets", `must be at most ${Window.maxSize}, got ${buckets}`, buckets);
    const least = Window.shortest(buckets);
    if (!(window >= least)) {
      throw check.rangeError(
        "RetryBudget window (ms)",
        `must be at least ${least} for ${buckets} ${buckets === 1 ? "bucket" : "buckets"} (${Window.minWidth} ms a bucket), got ${window}`,
        window,
      );
    }
    this.policy = Object.freeze({ ratio, minPerSecond, window, buckets });
    this.#reserve = (minPerSecond * window) / 1_000;
    const counts = this.#counts;
    this.#window = new Window(() => new Counts(counts, buckets), {
      size: buckets,
      window,
      now: check.finite(now, "RetryBudget now"),
      evict: (b) => {
        this.#attempts -= b.attempts;
        this.#retries -= b.retries;
      },
    });
  }

  /**
   * Counts one first attempt (not a retry) at `now`: what earns retries. Count it once it is
   * made: a call refused before it reached the backend earns nothing.
   * @param now - the caller's clock reading, in milliseconds
   */
  recordAttempt(now: number): void {
    this.#window.slot(now).attempts++;
    this.#attempts++;
  }

  /**
   * Whether a retry may go ahead at `now`, spending it from the budget if so. A refusal spends nothing.
   * @param now - the caller's clock reading, in milliseconds
   */
  tryRetry(now: number): boolean {
    return this.grant(now) >= 0;
  }

  /**
   * Spends a retry at `now` as `tryRetry` does, answering a receipt to give it back with, or -1.
   * @param now - the caller's clock reading, in milliseconds
   * @returns a whole number 0 or more (no unit), or -1 when refused
   */
  grant(now: number): number {
    const bucket = this.#window.slot(now);
    if (this.#retries + 1 > this.#allowance() + SLACK) return -1;
    bucket.retries++;
    this.#retries++;
    return bucket.id;
  }

  /**
   * Gives back a retry {@link RetryBudget.grant} spent that was not made, as if it had been refused.
   *
   * Does nothing once the bucket that counted it has aged out or been cleared, or for what is not
   * a receipt (-1 included). Give each grant back once, to the budget that made it.
   * @param receipt - what `grant` answered (a whole number, no unit)
   */
  giveBack(receipt: number): void {
    // Only a number can name a bucket; anything else (undefined, a string, an object) names none.
    const bucket = typeof receipt === "number" ? this.#counts[receipt % this.policy.buckets] : undefined;
    if (bucket === undefined || bucket.id !== receipt || bucket.retries === 0) return;
    bucket.retries--;
    this.#retries--;
  }

  /**
   * How many retries could go ahead at `now` (a whole number, 0 or more), without spending any:
   * for a dashboard, or a log line saying why a retry was refused.
   * @param now - the caller's clock reading, in milliseconds
   */
  available(now: number): number {
    this.#window.slot(now); // clears what has aged out; counts nothing
    const left = Math.floor(this.#allowance() - this.#retries + SLACK);
    return left > 0 ? left : 0;
  }

  /** Forgets every attempt and retry, as if just built. */
  clear(): void {
    this.#window.clear();
  }

  #allowance(): number {
    return this.policy.ratio * this.#attempts + this.#reserve;
  }
}
