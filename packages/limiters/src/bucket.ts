import { check } from "@tideward/time/internal";
import { SLACK, badCost, badNow } from "./args";
import type { RateLimit } from "./rate-limit";

/** Options of a {@link Bucket}. */
export interface BucketOptions {
  /**
   * The most tokens the bucket ever holds, and what it holds at the start; a fraction is kept,
   * anything under one is raised to one (a smaller bucket could never pass a request of cost one).
   * @defaultValue the rate, raised to one if it is under one
   */
  readonly burst?: number;
  /** The clock reading the bucket starts at, in milliseconds. @defaultValue 0 */
  readonly now?: number;
}

/**
 * A token bucket: `rate` tokens accrue per second up to `burst`, and each request takes `n`.
 *
 * It is the limiter that allows a burst after a quiet period, which is what a limit on a
 * human-facing API wants: nobody should be refused for two requests in the same second after
 * an hour of none. It starts full.
 *
 * **Tokens are real numbers.** They accrue continuously (`rate / 1000` per millisecond, so
 * 20 a second is 0.02 a millisecond) and are never rounded; a cost `n` may be fractional too.
 * A take of `n` succeeds when the bucket holds at least `n` tokens, give or take a billionth of
 * the burst (floating-point rounding of a refill must not refuse a token that is mathematically
 * there), and leaves `tokens − n`, which that slack can make a hair below zero; the debt is
 * kept, never rounded away, so over any stretch a bucket admits at most
 * `burst + rate · elapsed / 1000` tokens' worth (plus that billionth of the burst, once).
 *
 * **Time.** Every call takes `now`, the caller's clock in milliseconds. A clock that steps
 * backwards is treated as standing still (no tokens are minted, none are taken back); a huge
 * gap just fills the bucket. A `now` that is NaN or infinite is a `RangeError`.
 *
 * @example
 * const bucket = new Bucket(20); // 20 tokens a second, a burst of 20, full at 0 ms
 * bucket.take(0);     // true
 * bucket.next(0, 20); // 50 — ms until 20 tokens are back in the bucket
 */
export class Bucket {
  /** Tokens accrued per second. */
  readonly rate: number;
  /** The most tokens the bucket ever holds (at least one). */
  readonly burst: number;

  readonly #perMs: number;
  readonly #slack: number;
  // Both start as numbers, not undeclared (undefined): V8 then keeps a fraction written here in
  // place, where a field that began as undefined boxes every new value (16 bytes a take).
  #tokens = 0;
  // The latest clock reading seen: tokens are settled up to here, and earlier readings stand still.
  #at = 0;

  /**
   * A full bucket.
   *
   * @param rate - tokens accrued per second, above zero and finite
   * @throws RangeError when `rate` is zero, negative, NaN or infinite, when `burst` is zero,
   *   negative, NaN or infinite, or when `now` is not finite (TypeError when not a number)
   */
  constructor(rate: number, options: BucketOptions = {}) {
    this.rate = check.positive(rate, "Bucket rate (tokens per second)");
    const burst = options.burst === undefined ? rate : check.positive(options.burst, "Bucket burst (tokens)");
    this.burst = burst < 1 ? 1 : burst;
    this.#perMs = rate / 1_000;
    this.#slack = this.burst * SLACK;
    this.#tokens = this.burst;
    this.#at = check.finite(options.now ?? 0, "Bucket now");
  }

  /** The tokens held at `now` without settling: the latest reading when `now` is earlier. */
  #settled(now: number): number {
    if (!(now > this.#at)) return this.#tokens;
    const tokens = this.#tokens + (now - this.#at) * this.#perMs;
    return tokens > this.burst ? this.burst : tokens;
  }

  /**
   * Whether `n` tokens are available at `now`, taking them if they are.
   *
   * @param now - the caller's clock reading, in milliseconds
   * @param n - the call's cost in tokens, 0 or more, fractions allowed; one by default. A cost
   *   above the burst can never be met and is refused (see {@link Bucket.next}).
   * @throws RangeError when `n` is negative or NaN, or `now` is NaN or infinite
   */
  take(now: number, n = 1): boolean {
    if (!(n >= 0)) badCost(n, "Bucket.take n");
    if (!Number.isFinite(now)) badNow(now, "Bucket.take now");
    let tokens = this.#tokens;
    const at = this.#at;
    if (now > at) {
      tokens += (now - at) * this.#perMs;
      if (tokens > this.burst) tokens = this.burst;
      this.#at = now;
    }
    if (tokens + this.#slack < n || n > this.burst) {
      this.#tokens = tokens;
      return false;
    }
    this.#tokens = tokens - n;
    return true;
  }

  /**
   * What {@link Bucket.take} would answer at `now`, without taking anything.
   *
   * @param now - the caller's clock reading, in milliseconds
   * @param n - the cost in tokens, as for `take`
   * @throws RangeError as `take` does
   */
  peek(now: number, n = 1): boolean {
    if (!(n >= 0)) badCost(n, "Bucket.peek n");
    if (!Number.isFinite(now)) badNow(now, "Bucket.peek now");
    return n <= this.burst && this.#settled(now) + this.#slack >= n;
  }

  /**
   * How long until `n` tokens are available, in milliseconds, without taking them: zero when
   * they are available now. This is what a caller sleeps rather than spinning, and what a
   * `Retry-After` header is computed from. A take at `now + next(now, n)` succeeds if nothing
   * else takes in between.
   *
   * @param now - the caller's clock reading, in milliseconds
   * @param n - the cost in tokens, as for `take`
   * @returns the wait in milliseconds; `Infinity` when `n` is above the burst, which no wait
   *   can meet
   * @throws RangeError when `n` is negative or NaN, or `now` is NaN or infinite
   */
  next(now: number, n = 1): number {
    if (!(n >= 0)) badCost(n, "Bucket.next n");
    if (!Number.isFinite(now)) badNow(now, "Bucket.next now");
    if (n > this.burst) return Infinity;
    // A reading before the latest stands still there, so the tokens arrive counting from it.
    const from = now > this.#at ? now : this.#at;
    const tokens = this.#settled(from);
    if (tokens + this.#slack >= n) return 0;
    return from + (n - tokens) / this.#perMs - now;
  }

  /**
   * How many tokens the bucket holds at `now`, fractions included, from 0 to the burst: for a
   * caller that reports its own headroom.
   *
   * @param now - the caller's clock reading, in milliseconds
   * @throws RangeError when `now` is NaN or infinite
   */
  tokens(now: number): number {
    if (!Number.isFinite(now)) badNow(now, "Bucket.tokens now");
    const tokens = this.#settled(now);
    return tokens > 0 ? tokens : 0;
  }

  /**
   * What an HTTP `RateLimit` header needs at `now`: the burst (rounded down) as the limit, the
   * whole tokens held as remaining, and the milliseconds until the bucket is full again as reset.
   *
   * @param now - the caller's clock reading, in milliseconds
   * @throws RangeError when `now` is NaN or infinite
   */
  rateLimit(now: number): RateLimit {
    if (!Number.isFinite(now)) badNow(now, "Bucket.rateLimit now");
    const from = now > this.#at ? now : this.#at;
    const tokens = this.#settled(from);
    const limit = Math.floor(this.burst);
    const whole = Math.floor(tokens + this.#slack);
    const remaining = whole < 0 ? 0 : whole > limit ? limit : whole;
    const missing = this.burst - tokens;
    return { limit, remaining, reset: missing > this.#slack ? from + missing / this.#perMs - now : 0 };
  }
}
