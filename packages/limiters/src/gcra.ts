import { check } from "@tideward/time/internal";
import type { Span } from "@tideward/time";
import { MAX_COUNT, badCost, badNow, positional, refillBound } from "./args";
import { gcraCharge, gcraFits, gcraLead, gcraReady, gcraRest, gcraWhole, slackOf } from "./formulas";
import { MAX_INSTANT, until } from "./grid";
import type { RateLimit } from "./rate-limit";

/** Options of a {@link Gcra}. */
export interface GcraOptions {
  /**
   * How many requests of cost one pass back to back after a quiet spell: the capacity of the
   * equivalent token bucket. A fraction is kept; anything under one is raised to one. At most
   * 2^53 − 1.
   * @defaultValue the rate, raised to one if it is under one
   */
  readonly burst?: number;
}

const OPTIONS: readonly (keyof GcraOptions)[] = ["burst"];

/**
 * The generic cell rate algorithm: a rate limit kept as the theoretical arrival time (TAT) — the
 * instant the flow would be fully caught up if it sent nothing more.
 *
 * **Definitions.** With `rate` requests a second, the emission interval is
 * `T = 1000 / rate` milliseconds, and the tolerance is `τ = (burst − 1) · T`. A request of cost
 * `n` at `now` is admitted when `max(TAT, now) + n·T − now ≤ burst · T` (for `n = 1`, the
 * textbook `now ≥ TAT − τ`), and then `TAT = max(TAT, now) + n·T`. A billionth of `burst · T`
 * (at most 2^-10 of `T`) is forgiven, as a bucket forgives a billionth of its burst.
 *
 * **Same answers as a bucket.** Reading `tokens = burst − max(0, TAT − now) / T`, this is a
 * {@link Bucket} of the same rate and burst while the clock does not step backwards: the same
 * requests pass, within the two limiters' roundings. How it is usually configured differs: with a
 * small burst (one, say) it is smooth, spacing requests `T` apart, where a bucket sized for a
 * human-facing API is bursty.
 *
 * **Precision.** TAT is kept as the instant of the latest admission and how far ahead of it the
 * flow then was, not as one absolute instant: near `Date.now()` an absolute instant rounds to
 * 2^-12 ms, which would drop or add a request of a burst. So from rest exactly `⌊burst⌋` requests
 * of cost one pass back to back at any clock reading, and any rate is honoured (a fast rate's
 * interval need not be a whole number of clock steps).
 *
 * **Where it differs from a bucket.** A clock that steps backwards is read as the earlier instant
 * it claims to be: that leaves fewer tokens, never more, so it mints nothing but may refuse what a
 * bucket (which stands still) admits.
 *
 * A `now` that is not a reading within ±2^45 ms is a `RangeError` (a `TypeError` when it is not a
 * number).
 *
 * @example
 * const flow = new Gcra(10, { burst: 2 }); // 10 a second, two back to back
 * flow.take(0);       // true
 * flow.take(0);       // true
 * flow.take(0);       // false
 * flow.next(0);       // 100 — one emission interval
 */
export class Gcra {
  /** Requests of cost one per second. */
  readonly rate: number;
  /** Requests of cost one that pass back to back after a quiet spell (at least one). */
  readonly burst: number;
  /** The emission interval `T = 1000 / rate`, in milliseconds per request of cost one. */
  readonly interval: Span;

  // burst · T, and how far TAT may run ahead of `now` after an admission: that plus the slack.
  readonly #tau: number;
  readonly #reach: number;
  readonly #slack: number;
  // TAT = #at + #ahead: the instant of the latest admission (-Infinity before the first) and how
  // far ahead of it the flow then was, in ms. Numbers from the start, so V8 stores them in place.
  #at = -Infinity;
  #ahead = 0;

  /**
   * A flow that has sent nothing (its whole burst available).
   *
   * @param rate - requests of cost one per second, above zero and finite, and enough to refill
   *   the burst within 2^44 ms
   * @param options - read once; an unknown option is a `TypeError` naming the closest known one
   * @throws RangeError when `rate` or `burst` is zero, negative, NaN or infinite, `burst` is above
   *   2^53 − 1, or the burst would take longer than 2^44 ms to refill (`new Gcra(1e-306)`);
   *   TypeError when one is not a number or `options` is not an object
   */
  constructor(rate: number, options?: GcraOptions) {
    positional(rate, "Gcra", "rate", undefined, OPTIONS);
    const given = check.options(options, OPTIONS, "Gcra");
    this.rate = check.positive(rate, "Gcra rate (per second)");
    const burst = given.burst === undefined ? rate : check.positive(given.burst, "Gcra burst");
    if (burst > MAX_COUNT)
      throw check.rangeError(
        "Gcra burst",
        `${given.burst === undefined ? ", which is the rate when left out, " : ""}must be at most ${MAX_COUNT} (2^53 − 1), got ${burst}`,
        burst,
      );
    this.burst = burst < 1 ? 1 : burst;
    refillBound(this.rate, this.burst, "Gcra rate (per second)", "burst");
    this.interval = 1_000 / rate;
    this.#tau = this.burst * this.interval;
    this.#slack = slackOf(this.burst) * this.interval;
    this.#reach = this.#tau + this.#slack;
  }

  /**
   * The theoretical arrival time, in milliseconds on the caller's clock; `-Infinity` before the
   * first admitted request. (The sum of the two numbers the state keeps, so near `Date.now()` it
   * is rounded to the clock's step.)
   */
  get tat(): number {
    return this.#at + this.#ahead;
  }

  /**
   * Whether a request of cost `n` conforms at `now`, recording it if it does.
   *
   * @param now - the caller's clock reading, in milliseconds
   * @param n - the cost, 0 or more, fractions allowed; one by default. A cost above the burst
   *   never conforms and is refused (see {@link Gcra.next}).
   * @throws RangeError when `n` is negative or NaN, or `now` is not a reading within ±2^45 ms;
   *   TypeError when either is not a number (nothing changes)
   */
  take(now: number, n = 1): boolean {
    if (typeof n !== "number" || !(n >= 0)) badCost(n, "Gcra.take n");
    if (typeof now !== "number" || !(now <= MAX_INSTANT && now >= -MAX_INSTANT)) badNow(now, "Gcra.take now");
    const at = this.#at;
    const lead = gcraLead(at, this.#ahead, now);
    if (n > this.burst || !gcraFits(lead, n, this.interval, this.#reach)) return false;
    if (now >= at) {
      this.#at = now;
      this.#ahead = gcraCharge(lead, n * this.interval);
    } else {
      // Read as the earlier instant it claims: TAT (after `at`, so after `now`) moves on by n·T.
      this.#ahead = gcraCharge(this.#ahead, n * this.interval);
    }
    return true;
  }

  /**
   * What {@link Gcra.take} would answer at `now`, without recording anything.
   *
   * @param now - the caller's clock reading, in milliseconds
   * @param n - the cost, as for `take`
   * @throws as `take` does
   */
  peek(now: number, n = 1): boolean {
    if (typeof n !== "number" || !(n >= 0)) badCost(n, "Gcra.peek n");
    if (typeof now !== "number" || !(now <= MAX_INSTANT && now >= -MAX_INSTANT)) badNow(now, "Gcra.peek now");
    return n <= this.burst && gcraFits(gcraLead(this.#at, this.#ahead, now), n, this.interval, this.#reach);
  }

  /**
   * How long until a request of cost `n` would conform, in milliseconds: zero exactly when it
   * does now. A take at `now + next(now, n)` succeeds if nothing else is recorded in between.
   *
   * @param now - the caller's clock reading, in milliseconds
   * @param n - the cost, as for `take`
   * @returns the wait in milliseconds; `Infinity` when `n` is above the burst, which no wait
   *   can meet
   * @throws as `take` does
   */
  next(now: number, n = 1): number {
    if (typeof n !== "number" || !(n >= 0)) badCost(n, "Gcra.next n");
    if (typeof now !== "number" || !(now <= MAX_INSTANT && now >= -MAX_INSTANT)) badNow(now, "Gcra.next now");
    if (n > this.burst) return Infinity;
    return until(now, now, gcraReady(this.#at, this.#ahead, now, n, this.interval, this.#tau, this.#reach));
  }

  /**
   * How many requests of cost one would conform at `now`, back to back: the whole tokens of
   * the equivalent bucket, `⌊burst − max(0, TAT − now) / T⌋`, from 0 to the burst.
   *
   * @param now - the caller's clock reading, in milliseconds
   * @throws RangeError or TypeError when `now` is not a reading within ±2^45 ms
   */
  remaining(now: number): number {
    if (typeof now !== "number" || !(now <= MAX_INSTANT && now >= -MAX_INSTANT)) badNow(now, "Gcra.remaining now");
    return gcraWhole(gcraLead(this.#at, this.#ahead, now), this.interval, this.burst, this.#slack);
  }

  /**
   * What an HTTP `RateLimit` header needs at `now`: the burst (rounded down) as the limit,
   * {@link Gcra.remaining} as remaining, and the milliseconds until TAT (when the flow is fully
   * caught up) as reset.
   *
   * @param now - the caller's clock reading, in milliseconds
   * @throws RangeError or TypeError when `now` is not a reading within ±2^45 ms
   */
  rateLimit(now: number): RateLimit {
    const remaining = this.remaining(now);
    return { limit: Math.floor(this.burst), remaining, reset: until(now, now, gcraRest(this.#at, this.#ahead, now)) };
  }
}
