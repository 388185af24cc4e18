import { check } from "@tideward/time/internal";
import type { Span } from "@tideward/time";
import { badNow } from "./args";
import type { RateLimit } from "./rate-limit";

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
 * **Time.** `now` is the caller's clock in milliseconds. A clock that steps backwards is treated
 * as standing still at the latest reading `take` has seen (an event is stamped there, never in
 * the past). A `now` that is NaN or infinite is a `RangeError`.
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
   * @param quota - events allowed in any window-long stretch: a whole number, one or more
   * @param window - the length of that stretch in milliseconds, above zero and finite
   * @throws RangeError when `quota` is not a whole number of one or more, or `window` is zero,
   *   negative, NaN or infinite
   */
  constructor(quota: number, window: Span) {
    this.quota = check.integer(quota, "Sliding quota", 1);
    this.window = check.positive(window, "Sliding window (ms)");
    this.#ring = new Float64Array(this.quota).fill(-Infinity);
  }

  /**
   * Whether an event at `now` is within the quota, counting it if it is.
   *
   * @param now - the caller's clock reading, in milliseconds
   * @throws RangeError when `now` is NaN or infinite
   */
  take(now: number): boolean {
    if (!Number.isFinite(now)) badNow(now, "Sliding.take now");
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
   * @throws RangeError when `now` is NaN or infinite
   */
  peek(now: number): boolean {
    if (!Number.isFinite(now)) badNow(now, "Sliding.peek now");
    return (now < this.#last ? this.#last : now) - this.#ring[this.#head] >= this.window;
  }

  /**
   * How many more events the window would admit at `now`, from 0 to the quota.
   *
   * @param now - the caller's clock reading, in milliseconds
   * @throws RangeError when `now` is NaN or infinite
   */
  left(now: number): number {
    if (!Number.isFinite(now)) badNow(now, "Sliding.left now");
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
   * @throws RangeError when `now` is NaN or infinite
   */
  next(now: number): number {
    if (!Number.isFinite(now)) badNow(now, "Sliding.next now");
    const oldest = this.#ring[this.#head];
    // The same comparison as `take`, so the two never disagree over a rounding.
    if ((now < this.#last ? this.#last : now) - oldest >= this.window) return 0;
    return oldest + this.window - now;
  }

  /**
   * What an HTTP `RateLimit` header needs at `now`: the quota as the limit, {@link Sliding.left}
   * as remaining, and the milliseconds until the newest event falls out (the window empty
   * again) as reset.
   *
   * @param now - the caller's clock reading, in milliseconds
   * @throws RangeError when `now` is NaN or infinite
   */
  rateLimit(now: number): RateLimit {
    const remaining = this.left(now);
    // The window is empty again once the newest stamp falls out.
    return { limit: this.quota, remaining, reset: remaining === this.quota ? 0 : this.#last + this.window - now };
  }
}
