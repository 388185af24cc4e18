import { check } from "@tideward/time/internal";
import type { Span } from "@tideward/time";
import { MAX_COUNT, badNow, positional, span } from "./args";
import { windowCount, windowEnd, windowFits } from "./formulas";
import { MAX_INSTANT, until } from "./grid";
import type { RateLimit } from "./rate-limit";

/**
 * Where a {@link Period} stands after an event: under the quota, exactly on it, or past it.
 *
 * The event that hits the quota is still admitted. It is told apart because it is the last
 * one, which is when a caller would warn that the next will be refused. Only `"over"` refuses.
 */
export type PeriodAnswer = "under" | "hit" | "over";

/** Options of a {@link Period}. */
export interface PeriodOptions {
  /**
   * Open periods on multiples of the period on the caller's clock (so with a Unix clock a daily
   * quota resets at midnight UTC), rather than on the first event after the last period closed.
   * @defaultValue false
   */
  readonly align?: boolean;
}

const OPTIONS: readonly (keyof PeriodOptions)[] = ["align"];

/**
 * A fixed window counter: at most `quota` events per period, the count starting again when a
 * period ends.
 *
 * Cheaper than {@link Sliding}, which keeps every stamp, and coarser: a client can spend one
 * quota at the end of a period and another at the start of the next, so forty events can pass
 * in a second that allows twenty. That is the trade a fixed window makes.
 *
 * **Periods.** A period is the half-open stretch `[start, start + period)`. Without `align` it
 * opens on the first event after the last period closed (`start` is that event's `now`); with
 * `align` it is the multiple of `period` that `now` falls in (`start = ⌊now / period⌋ · period`).
 * Only admitted events (`"under"` and `"hit"`) are counted; an `"over"` changes nothing.
 *
 * **Time.** `now` is the caller's clock in milliseconds, within ±2^45. A clock that steps
 * backwards into or before the open period counts in the open period: no earlier period is ever
 * reopened, and a period only closes when a reading reaches its end. A period's end is `now +
 * period` (or the rounded multiple) on the float grid, so its length is honoured to half a clock
 * step: 2^-13 ms near `Date.now()` today.
 *
 * @example
 * const hour = new Period(100, 3_600_000, { align: true }); // 100 an hour, on the hour
 * hour.take(5_000);  // "under"
 * hour.left(5_000);  // 99
 * hour.next(5_000);  // 0 — the next event would be admitted now
 */
export class Period {
  /** Events admitted per period. */
  readonly quota: number;
  /** How long a period is, in milliseconds. */
  readonly period: Span;
  /** Whether periods open on multiples of `period` on the caller's clock. */
  readonly align: boolean;

  // The end of the open period (exclusive); -Infinity while none has opened, so any reading
  // opens one. Admitted events in it, never above the quota.
  #end = -Infinity;
  #count = 0;

  /**
   * A counter no event has touched.
   *
   * @param quota - events allowed per period: a whole number, one or more (at most 2^53 − 1)
   * @param period - how long a period is in milliseconds, from 2^-4 to 2^44
   * @param options - read once; an unknown option is a `TypeError` naming the closest known one
   * @throws RangeError when `quota` is not a whole number from 1 to 2^53 − 1, or `period` is
   *   NaN, infinite, or outside 2^-4 to 2^44 ms; TypeError when one is not a number, `align` not a
   *   boolean or `options` not an object
   */
  constructor(quota: number, period: Span, options?: PeriodOptions) {
    positional(quota, "Period", "quota", "period", OPTIONS);
    const given = check.options(options, OPTIONS, "Period");
    this.quota = check.integer(quota, "Period quota", 1);
    if (this.quota > MAX_COUNT)
      throw new RangeError(`Period quota must be at most ${MAX_COUNT} (2^53 − 1), got ${this.quota}`);
    this.period = span(period, "Period period (ms)");
    const align = given.align ?? false;
    if (typeof align !== "boolean")
      throw new TypeError(`Period align must be a boolean, got ${typeof align} ${check.describe(align)}`);
    this.align = align;
  }

  /**
   * Counts one event at `now` (if admitted) and says where the quota stands: `"under"` and
   * `"hit"` are admitted, `"over"` is refused and not counted.
   *
   * @param now - the caller's clock reading, in milliseconds
   * @throws RangeError or TypeError when `now` is not a reading within ±2^45 ms
   */
  take(now: number): PeriodAnswer {
    if (typeof now !== "number" || !(now <= MAX_INSTANT && now >= -MAX_INSTANT)) badNow(now, "Period.take now");
    let count = this.#count;
    // The open period's count, as windowCount reads it: none once the period has ended, when
    // this event opens the next.
    if (now >= this.#end) {
      this.#end = windowEnd(now, this.period, this.align);
      count = 0;
    } else if (!windowFits(count, 1, this.quota)) return "over";
    this.#count = ++count;
    return count === this.quota ? "hit" : "under";
  }

  /**
   * What {@link Period.take} would answer at `now`, without counting anything.
   *
   * @param now - the caller's clock reading, in milliseconds
   * @throws RangeError or TypeError when `now` is not a reading within ±2^45 ms
   */
  peek(now: number): PeriodAnswer {
    if (typeof now !== "number" || !(now <= MAX_INSTANT && now >= -MAX_INSTANT)) badNow(now, "Period.peek now");
    const count = windowCount(this.#count, this.#end, now) + 1;
    return count < this.quota ? "under" : count === this.quota ? "hit" : "over";
  }

  /**
   * How many more events the period would admit at `now`: the whole quota when no period is
   * open at `now` (the next event would open one).
   *
   * @param now - the caller's clock reading, in milliseconds
   * @throws RangeError or TypeError when `now` is not a reading within ±2^45 ms
   */
  left(now: number): number {
    if (typeof now !== "number" || !(now <= MAX_INSTANT && now >= -MAX_INSTANT)) badNow(now, "Period.left now");
    return this.quota - windowCount(this.#count, this.#end, now);
  }

  /**
   * How long until an event would be admitted, in milliseconds: zero while the quota has room
   * (or no period is open), otherwise the wait until the open period ends.
   *
   * This is the same question every limiter's `next` answers (what a `Retry-After` is computed
   * from). How long until the period ends whatever the count is {@link Period.rateLimit}'s
   * `reset`.
   *
   * @param now - the caller's clock reading, in milliseconds
   * @throws RangeError or TypeError when `now` is not a reading within ±2^45 ms
   */
  next(now: number): number {
    if (typeof now !== "number" || !(now <= MAX_INSTANT && now >= -MAX_INSTANT)) badNow(now, "Period.next now");
    return windowFits(windowCount(this.#count, this.#end, now), 1, this.quota) ? 0 : until(now, now, this.#end);
  }

  /**
   * What an HTTP `RateLimit` header needs at `now`: the quota as the limit, {@link Period.left}
   * as remaining, and the milliseconds until the open period ends as reset (0 when none is open,
   * the quota being whole already).
   *
   * @param now - the caller's clock reading, in milliseconds
   * @throws RangeError or TypeError when `now` is not a reading within ±2^45 ms
   */
  rateLimit(now: number): RateLimit {
    const remaining = this.left(now);
    return { limit: this.quota, remaining, reset: until(now, now, this.#end) };
  }
}
