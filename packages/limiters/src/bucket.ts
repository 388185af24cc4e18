import { check } from "@tideward/time/internal";
import { MAX_COUNT, badCost, badNow, instant, positional, refillBound } from "./args";
import { bucketFits, bucketFull, bucketLevel, bucketReady, bucketWhole, slackOf } from "./formulas";
import { MAX_INSTANT, until } from "./grid";
import type { RateLimit } from "./rate-limit";

/** Options of a {@link Bucket}. */
export interface BucketOptions {
  /**
   * The most tokens the bucket ever holds, and what it holds at the start; a fraction is kept,
   * anything under one is raised to one (a smaller bucket could never pass a request of cost one).
   * At most 2^53 − 1.
   * @defaultValue the rate, raised to one if it is under one
   */
  readonly burst?: number;
  /** The clock reading the bucket starts at, in milliseconds. @defaultValue 0 */
  readonly now?: number;
}

const OPTIONS: readonly (keyof BucketOptions)[] = ["burst", "now"];

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
 * the burst (at most 2^-10 of a token), and leaves `tokens − n`, which that slack can make a hair
 * below zero; the debt is kept, so over any stretch a bucket admits at most
 * `burst + rate · elapsed / 1000` tokens' worth (plus that slack, once). From rest exactly
 * `⌊burst⌋` calls of cost one pass back to back, at any clock reading.
 *
 * **Time.** Every call takes `now`, the caller's clock in milliseconds, within ±2^45. A clock that
 * steps backwards is treated as standing still (no tokens are minted, none are taken back); a
 * huge gap just fills the bucket. `next(now)` is 0 exactly when `take(now)` would pass, and a
 * take at `now + next(now)` (added as the caller adds it) passes.
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
  // All start as numbers, not undeclared (undefined): V8 then keeps a fraction written here in
  // place, where a field that began as undefined boxes every new value (16 bytes a take).
  // The tokens held at instant #at: both move only when a take passes, so a refusal never
  // re-rounds the state and a wait computed before it still holds after it.
  #tokens = 0;
  #at = 0;
  // The latest clock reading seen: earlier readings stand still here.
  #latest = 0;

  /**
   * A full bucket.
   *
   * @param rate - tokens accrued per second, above zero and finite, and enough to refill the
   *   burst within 2^44 ms
   * @param options - read once; an unknown option is a `TypeError` naming the closest known one
   * @throws RangeError when `rate` or `burst` is zero, negative, NaN or infinite, `burst` is above
   *   2^53 − 1, the burst would take longer than 2^44 ms to refill, or `now` is not a finite
   *   reading within ±2^45 ms; TypeError when one is not a number or `options` is not an object
   */
  constructor(rate: number, options?: BucketOptions) {
    positional(rate, "Bucket", "rate", undefined, OPTIONS);
    const given = check.options(options, OPTIONS, "Bucket");
    this.rate = check.positive(rate, "Bucket rate (tokens per second)");
    const burst = given.burst === undefined ? rate : check.positive(given.burst, "Bucket burst (tokens)");
    if (burst > MAX_COUNT)
      throw check.rangeError(
        "Bucket burst (tokens)",
        `${given.burst === undefined ? ", which is the rate when left out, " : ""}must be at most ${MAX_COUNT} (2^53 − 1), got ${burst}`,
        burst,
      );
    this.burst = burst < 1 ? 1 : burst;
    refillBound(this.rate, this.burst, "Bucket rate (tokens per second)", "burst");
    this.#perMs = rate / 1_000;
    this.#slack = slackOf(this.burst);
    this.#tokens = this.burst;
    this.#at = this.#latest = given.now === undefined ? 0 : instant(given.now, "Bucket now");
  }

  /**
   * Whether `n` tokens are available at `now`, taking them if they are.
   *
   * @param now - the caller's clock reading, in milliseconds
   * @param n - the call's cost in tokens, 0 or more, fractions allowed; one by default. A cost
   *   above the burst can never be met and is refused (see {@link Bucket.next}).
   * @throws RangeError when `n` is negative or NaN, or `now` is not a reading within ±2^45 ms;
   *   TypeError when either is not a number (nothing changes)
   */
  take(now: number, n = 1): boolean {
    if (typeof n !== "number" || !(n >= 0)) badCost(n, "Bucket.take n");
    if (typeof now !== "number" || !(now <= MAX_INSTANT && now >= -MAX_INSTANT)) badNow(now, "Bucket.take now");
    if (now > this.#latest) this.#latest = now;
    else now = this.#latest;
    const tokens = bucketLevel(this.#tokens, this.#at, now, this.#perMs, this.burst);
    if (!bucketFits(tokens, n, this.burst, this.#slack)) return false;
    this.#tokens = tokens - n;
    this.#at = now;
    return true;
  }

  /**
   * What {@link Bucket.take} would answer at `now`, without taking anything.
   *
   * @param now - the caller's clock reading, in milliseconds
   * @param n - the cost in tokens, as for `take`
   * @throws as `take` does
   */
  peek(now: number, n = 1): boolean {
    if (typeof n !== "number" || !(n >= 0)) badCost(n, "Bucket.peek n");
    if (typeof now !== "number" || !(now <= MAX_INSTANT && now >= -MAX_INSTANT)) badNow(now, "Bucket.peek now");
    const t = now > this.#latest ? now : this.#latest;
    return bucketFits(bucketLevel(this.#tokens, this.#at, t, this.#perMs, this.burst), n, this.burst, this.#slack);
  }

  /**
   * How long until `n` tokens are available, in milliseconds, without taking them: zero exactly
   * when they are available now. This is what a caller sleeps rather than spinning, and what a
   * `Retry-After` header is computed from. A take at `now + next(now, n)` succeeds if nothing
   * else takes in between, and a loop that advances its clock by `next` ends.
   *
   * @param now - the caller's clock reading, in milliseconds
   * @param n - the cost in tokens, as for `take`
   * @returns the wait in milliseconds; `Infinity` when `n` is above the burst, which no wait
   *   can meet
   * @throws as `take` does
   */
  next(now: number, n = 1): number {
    if (typeof n !== "number" || !(n >= 0)) badCost(n, "Bucket.next n");
    if (typeof now !== "number" || !(now <= MAX_INSTANT && now >= -MAX_INSTANT)) badNow(now, "Bucket.next now");
    // A reading before the latest stands still there, so the tokens arrive counting from it.
    const from = now > this.#latest ? now : this.#latest;
    return until(now, from, bucketReady(this.#tokens, this.#at, from, n, this.#perMs, this.burst, this.#slack));
  }

  /**
   * How many tokens the bucket holds at `now`, fractions included, from 0 to the burst: for a
   * caller that reports its own headroom.
   *
   * @param now - the caller's clock reading, in milliseconds
   * @throws RangeError or TypeError when `now` is not a reading within ±2^45 ms
   */
  tokens(now: number): number {
    if (typeof now !== "number" || !(now <= MAX_INSTANT && now >= -MAX_INSTANT)) badNow(now, "Bucket.tokens now");
    const tokens = bucketLevel(
      this.#tokens,
      this.#at,
      now > this.#latest ? now : this.#latest,
      this.#perMs,
      this.burst,
    );
    return tokens > 0 ? tokens : 0;
  }

  /**
   * What an HTTP `RateLimit` header needs at `now`: the burst (rounded down) as the limit, the
   * whole tokens held as remaining, and the milliseconds until the bucket is full again as reset.
   *
   * @param now - the caller's clock reading, in milliseconds
   * @throws RangeError or TypeError when `now` is not a reading within ±2^45 ms
   */
  rateLimit(now: number): RateLimit {
    if (typeof now !== "number" || !(now <= MAX_INSTANT && now >= -MAX_INSTANT)) badNow(now, "Bucket.rateLimit now");
    const from = now > this.#latest ? now : this.#latest;
    const tokens = bucketLevel(this.#tokens, this.#at, from, this.#perMs, this.burst);
    const reset = until(now, from, bucketFull(this.#tokens, this.#at, from, this.#perMs, this.burst, this.#slack));
    return { limit: Math.floor(this.burst), remaining: bucketWhole(tokens, this.burst, this.#slack), reset };
  }
}
