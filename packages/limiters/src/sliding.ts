import { check } from "@tideward/time/internal";
import type { Span } from "@tideward/time";
import { badNow, positional, span } from "./args";
import { slidingFallenOut as fallenOut } from "./formulas";
import { MAX_INSTANT, until } from "./grid";
import type { RateLimit } from "./rate-limit";

/** The largest quota a {@link Sliding} takes: 2^24 stamps, 128 MiB of ring. */
export const MAX_SLIDING_QUOTA = 2 ** 24;

/**
 * An exact sliding window: at most `quota` events in any `window`-long stretch.
 *
 * Where a bucket smooths, a window counts. A quota of "a thousand a day" is a window, not a
 * rate: answering it with a bucket would let a client spend the whole day in the first minute.
 *
 * **Exact.** The stamps of the last `quota` admitted events are kept, so the count is exact
 * rather than the estimate a two-counter scheme gives. An event at `now` is admitted when fewer
 * than `quota` admitted events have a stamp `s` with `now − s < window`, that is, in the
 * half-open stretch `(now − window, now]`: a stamp exactly `window` old has fallen out. So no
 * half-open stretch `[a, a + window)` ever holds more than `quota` admitted events, and an event
 * is refused only when admitting it would break that.
 *
 * **Cost.** The stamps live in a fixed ring of `quota` slots (a `Float64Array`, 8 bytes a slot,
 * allocated once): `take` compares against the oldest stamp and overwrites it, so its cost does
 * not depend on the quota; `left` is a binary search over the ring.
 *
 * **Time.** `now` is the caller's clock in milliseconds, within ±2^45. A clock that steps
 * backwards is treated as standing still at the latest reading `take` has seen (an event is
 * stamped there, never in the past). Ages are differences of two readings, exact on the float
 * grid, so the window is honoured to the clock's own step at any scale; `next(now)` is 0 exactly
 * when `take(now)` would pass, and a take at `now + next(now)` passes.
 *
 * @example
 * const win = new Sliding(2, 1_000); // two events in any one-second stretch
 * win.take(0);    // true
 * win.take(10);   // true
 * win.take(500);  // false
 * win.next(500);  // 500 — the event at 0 falls out at 1 000
 */
export class Sliding {
  /** Events admitted in any window-long stretch. */
  readonly quota: number;
  /** The length of that stretch, in milliseconds. */
  readonly window: Span;

  // Admitted stamps, oldest at `head`, in the order admitted (so non-decreasing). Slots never
  // written hold -Infinity, which is older than any window and so always free.
  readonly #ring: Float64Array;
  #head = 0;
  // The newest stamp. Earlier readings stand still here. A refused reading need not move it:
  // a refusal at M means nothing had fallen out by M, so every answer at M equals the answer
  // at the newest stamp (tests pin this against a clock that truly stands still).
  #last = -Infinity;

  /**
   * An empty window.
   *
   * @param quota - events allowed in any window-long stretch: a whole number from 1 to
   *   {@link MAX_SLIDING_QUOTA} (each is 8 bytes of ring)
   * @param window - the length of that stretch in milliseconds, from 2^-4 to 2^44
   * @throws RangeError when `quota` is not a whole number from 1 to 2^24, or `window` is NaN,
   *   infinite or outside 2^-4 to 2^44 ms; TypeError when one is not a number
   */
  constructor(quota: number, window: Span) {
    positional(quota, "Sliding", "quota", "window", []);
    this.quota = check.integer(quota, "Sliding quota", 1);
    if (this.quota > MAX_SLIDING_QUOTA)
      throw new RangeError(
        `Sliding quota must be at most ${MAX_SLIDING_QUOTA} (2^24 stamps, 128 MiB), got ${this.quota}`,
      );
    this.window = span(window, "Sliding window (ms)");
    this.#ring = new Float64Array(this.quota).fill(-Infinity);
  }

  /**
   * Whether an event at `now` is within the quota, counting it if it is.
   *
   * @param now - the caller's clock reading, in milliseconds
   * @throws RangeError or TypeError when `now` is not a reading within ±2^45 ms
   */
  take(now: number): boolean {
    if (typeof now !== "number" || !(now <= MAX_INSTANT && now >= -MAX_INSTANT)) badNow(now, "Sliding.take now");
    if (now < this.#last) now = this.#last;
    const ring = this.#ring;
    const head = this.#head;
    if (now - ring[head] < this.window) return false;
    ring[head] = now;
    this.#last = now;
    this.#head = head + 1 === ring.length ? 0 : head + 1;
    return true;
  }

  /**
   * What {@link Sliding.take} would answer at `now`, without counting anything.
   *
   * @param now - the caller's clock reading, in milliseconds
   * @throws RangeError or TypeError when `now` is not a reading within ±2^45 ms
   */
  peek(now: number): boolean {
    if (typeof now !== "number" || !(now <= MAX_INSTANT && now >= -MAX_INSTANT)) badNow(now, "Sliding.peek now");
    return (now < this.#last ? this.#last : now) - this.#ring[this.#head] >= this.window;
  }

  /**
   * How many more events the window would admit at `now`, from 0 to the quota.
   *
   * @param now - the caller's clock reading, in milliseconds
   * @throws RangeError or TypeError when `now` is not a reading within ±2^45 ms
   */
  left(now: number): number {
    if (typeof now !== "number" || !(now <= MAX_INSTANT && now >= -MAX_INSTANT)) badNow(now, "Sliding.left now");
    if (now < this.#last) now = this.#last;
    // The stamps, read oldest first, are non-decreasing, so "has fallen out" holds for a prefix
    // of them; its length is how many slots are free.
    const ring = this.#ring;
    const size = ring.length;
    let lo = 0;
    let hi = size;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const i = this.#head + mid;
      if (now - ring[i < size ? i : i - size] >= this.window) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /**
   * How long until the window has room, in milliseconds: zero when it has room now, otherwise
   * the wait until its oldest event falls out. A take at `now + next(now)` succeeds if nothing
   * else is admitted in between.
   *
   * @param now - the caller's clock reading, in milliseconds
   * @throws RangeError or TypeError when `now` is not a reading within ±2^45 ms
   */
  next(now: number): number {
    if (typeof now !== "number" || !(now <= MAX_INSTANT && now >= -MAX_INSTANT)) badNow(now, "Sliding.next now");
    const from = now < this.#last ? this.#last : now;
    // The same comparison as `take`, so the two never disagree over a rounding.
    return until(now, from, fallenOut(this.#ring[this.#head], this.window, from));
  }

  /**
   * What an HTTP `RateLimit` header needs at `now`: the quota as the limit, {@link Sliding.left}
   * as remaining, and the milliseconds until the newest event falls out (the window empty
   * again) as reset.
   *
   * @param now - the caller's clock reading, in milliseconds
   * @throws RangeError or TypeError when `now` is not a reading within ±2^45 ms
   */
  rateLimit(now: number): RateLimit {
    const remaining = this.left(now);
    if (remaining === this.quota) return { limit: this.quota, remaining, reset: 0 };
    // The window is empty again once the newest stamp falls out.
    const from = now < this.#last ? this.#last : now;
    return { limit: this.quota, remaining, reset: until(now, from, fallenOut(this.#last, this.window, from)) };
  }
}
