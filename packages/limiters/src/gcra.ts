import { check } from "@tideward/time/internal";
import type { Span } from "@tideward/time";
import { SLACK, badCost, badNow } from "./args";
import type { RateLimit } from "./rate-limit";

/** Options of a {@link Gcra}. */
export interface GcraOptions {
  /**
   * How many requests of cost one pass back to back after a quiet spell: the capacity of the
   * equivalent token bucket. A fraction is kept; anything under one is raised to one.
   * @defaultValue the rate, raised to one if it is under one
   */
  readonly burst?: number;
}

/**
 * The generic cell rate algorithm: a rate limit kept as one number, the theoretical arrival
 * time (TAT) — the instant the flow would be fully caught up if it sent nothing more.
 *
 * **Definitions.** With `rate` requests a second, the emission interval is
 * `T = 1000 / rate` milliseconds, and the tolerance is `τ = (burst − 1) · T`. A request of cost
 * `n` at `now` is admitted when `max(TAT, now) + n·T − now ≤ burst · T` (for `n = 1`, the
 * textbook `now ≥ TAT − τ`), and then `TAT = max(TAT, now) + n·T`. A billionth of `burst · T`
 * is forgiven, as a bucket forgives a billionth of its burst.
 *
 * **Same answers as a bucket.** Reading `tokens = burst − max(0, TAT − now) / T`, this is a
 * {@link Bucket} of the same rate and burst, exactly, for any costs, while the clock does not
 * step backwards: the same requests pass. What differs is what it stores (one number instead of
 * two, which is what a store such as Redis wants) and how it is usually configured: with a
 * small burst (one, say) it is smooth, spacing requests `T` apart, where a bucket sized for
 * a human-facing API is bursty.
 *
 * **Where it differs.** (1) A clock that steps backwards is read as the earlier instant it
 * claims to be, since the state remembers no latest reading: that leaves fewer tokens, never
 * more, so it mints nothing but may refuse what a bucket (which stands still) admits.
 * (2) TAT is an absolute instant, so its arithmetic resolves about `|now| · 2⁻⁵²` ms (a quarter
 * of a microsecond on a Unix-epoch clock) where a bucket's token count resolves far finer; a
 * request landing exactly on a boundary can go either way by that much.
 *
 * A `now` that is NaN or infinite is a `RangeError`.
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

  // How far TAT may run ahead of `now` after an admission (burst · T), and the forgiven slack.
  readonly #ahead: number;
  readonly #slack: number;
  #tat = -Infinity;

  /**
   * A flow that has sent nothing (its whole burst available).
   *
   * @param rate - requests of cost one per second, above zero and finite
   * @throws RangeError when `rate` or `burst` is zero, negative, NaN or infinite
   */
  constructor(rate: number, options: GcraOptions = {}) {
    this.rate = check.positive(rate, "Gcra rate (per second)");
    const burst = options.burst === undefined ? rate : check.positive(options.burst, "Gcra burst");
    this.burst = burst < 1 ? 1 : burst;
    this.interval = 1_000 / rate;
    this.#ahead = this.burst * this.interval;
    this.#slack = this.#ahead * SLACK;
  }

  /**
   * The theoretical arrival time: the one number the state is, in milliseconds on the caller's
   * clock; `-Infinity` before the first admitted request.
   */
  get tat(): number {
    return this.#tat;
  }

  /**
   * Whether a request of cost `n` conforms at `now`, recording it if it does.
   *
   * @param now - the caller's clock reading, in milliseconds
   * @param n - the cost, 0 or more, fractions allowed; one by default. A cost above the burst
   *   never conforms and is refused (see {@link Gcra.next}).
   * @throws RangeError when `n` is negative or NaN, or `now` is NaN or infinite
   */
  take(now: number, n = 1): boolean {
    if (!(n >= 0)) badCost(n, "Gcra.take n");
    if (!Number.isFinite(now)) badNow(now, "Gcra.take now");
    const tat = (this.#tat > now ? this.#tat : now) + n * this.interval;
    if (tat - now > this.#ahead + this.#slack || n > this.burst) return false;
    this.#tat = tat;
    return true;
  }

  /**
   * What {@link Gcra.take} would answer at `now`, without recording anything.
   *
   * @param now - the caller's clock reading, in milliseconds
   * @param n - the cost, as for `take`
   * @throws RangeError as `take` does
   */
  peek(now: number, n = 1): boolean {
    if (!(n >= 0)) badCost(n, "Gcra.peek n");
    if (!Number.isFinite(now)) badNow(now, "Gcra.peek now");
    const tat = (this.#tat > now ? this.#tat : now) + n * this.interval;
    return tat - now <= this.#ahead + this.#slack && n <= this.burst;
  }

  /**
   * How long until a request of cost `n` would conform, in milliseconds: zero when it does now.
   * A take at `now + next(now, n)` succeeds if nothing else is recorded in between.
   *
   * @param now - the caller's clock reading, in milliseconds
   * @param n - the cost, as for `take`
   * @returns the wait in milliseconds; `Infinity` when `n` is above the burst, which no wait
   *   can meet
   * @throws RangeError when `n` is negative or NaN, or `now` is NaN or infinite
   */
  next(now: number, n = 1): number {
    if (!(n >= 0)) badCost(n, "Gcra.next n");
    if (!Number.isFinite(now)) badNow(now, "Gcra.next now");
    if (n > this.burst) return Infinity;
    const tat = this.#tat > now ? this.#tat : now;
    if (tat + n * this.interval - now <= this.#ahead + this.#slack) return 0;
    // Conforms once now ≥ TAT + n·T − burst·T; TAT does not move while waiting.
    return tat + (n - this.burst) * this.interval - now;
  }

  /**
   * How many requests of cost one would conform at `now`, back to back: the whole tokens of
   * the equivalent bucket, `⌊burst − max(0, TAT − now) / T⌋`, from 0 to the burst.
   *
   * @param now - the caller's clock reading, in milliseconds
   * @throws RangeError when `now` is NaN or infinite
   */
  remaining(now: number): number {
    if (!Number.isFinite(now)) badNow(now, "Gcra.remaining now");
    const behind = this.#tat > now ? this.#tat - now : 0;
    const whole = Math.floor(this.burst - (behind - this.#slack) / this.interval);
    return whole < 0 ? 0 : whole > this.burst ? Math.floor(this.burst) : whole;
  }

  /**
   * What an HTTP `RateLimit` header needs at `now`: the burst (rounded down) as the limit,
   * {@link Gcra.remaining} as remaining, and the milliseconds until TAT (when the flow is fully
   * caught up) as reset.
   *
   * @param now - the caller's clock reading, in milliseconds
   * @throws RangeError when `now` is NaN or infinite
   */
  rateLimit(now: number): RateLimit {
    const remaining = this.remaining(now);
    return { limit: Math.floor(this.burst), remaining, reset: this.#tat > now ? this.#tat - now : 0 };
  }
}
