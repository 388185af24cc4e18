import { check } from "@tideward/time/internal";
import type { Span } from "@tideward/time";

/** A bucket a {@link Window} can hold: anything that can be cleared back to empty in place. */
export interface Resettable {
  /** Clears the bucket back to its empty state, without allocating. */
  reset(): void;
}

/** Options of a {@link Window}. */
export interface WindowOptions<B> {
  /** How many buckets; a fraction is rounded down and anything under one is raised to one. */
  readonly size: number;
  /** How much time the buckets together cover, in milliseconds. */
  readonly window: Span;
  /** The clock reading the first bucket opens at, in milliseconds. @defaultValue 0 */
  readonly now?: number;
  /**
   * Called with a bucket just before it is cleared because time moved past it: where a reader
   * that keeps running sums takes the bucket's contribution back out.
   */
  readonly evict?: (bucket: B) => void;
}

/** Options of {@link Window.each}. */
export interface EachOptions {
  /**
   * Whether to visit the bucket `now` falls in. It has seen only part of its time, so a reading
   * that takes the busiest or the fastest bucket should leave it out. @defaultValue true
   */
  readonly current?: boolean;
}

/** The narrowest bucket: a nanosecond, the finest resolution a clock reading in ms carries. */
const NARROWEST: Span = 1e-6;

/**
 * A rolling window: `size` buckets that together cover the last `window` milliseconds, the
 * oldest dropping off as time moves on.
 *
 * The bucket type is the caller's: a breaker keeps a {@link Tally} per bucket, a shedder a
 * {@link Total}. Buckets are made once and cleared in place, so time moving on allocates nothing.
 *
 * Time never moves on its own: every call carries the `now` it happens at. Writing at a later
 * `now` ({@link Window.slot}) clears the buckets the gap swept past; reading at a later `now`
 * ({@link Window.each}) skips them without clearing, so a window nobody writes to still ages
 * out, and two reads at the same `now` agree. A clock that steps backwards is treated as
 * standing still: writes land in the current bucket, never in a cleared or a past one. So is a
 * reading that makes no sense: NaN, Infinity, or one more than 2^53 buckets past the origin.
 *
 * @example
 * const win = new Window(() => new Tally(), { size: 10, window: 1_000 });
 * win.slot(250).add("success");
 * win.slot(700).add("failure");
 * let total = 0;
 * win.each(900, (t) => (total += t.total));
 * total; // 2
 */
export class Window<B extends Resettable> {
  /** How many buckets the window has. */
  readonly size: number;
  /** How much time one bucket covers, in milliseconds. */
  readonly width: Span;
  /** The clock reading bucket number zero opened at, in milliseconds. */
  readonly origin: number;

  readonly #buckets: B[];
  readonly #evict: ((bucket: B) => void) | undefined;
  // The absolute number of the newest bucket written: bucket i opens at origin + i·width and
  // lives in slot i mod size. Counting whole buckets keeps the head on bucket boundaries.
  #head = 0;

  /**
   * An empty window of `size` buckets spanning `window` milliseconds, its first bucket opening at `now`.
   *
   * @param make - makes one empty bucket; called `size` times, here and never again
   * @throws RangeError when `size` or `window` is NaN, infinite or negative, or `now` is not finite
   */
  constructor(make: () => B, options: WindowOptions<B>) {
    const size = check.finite(options.size, "Window size");
    if (size < 0) throw new RangeError(`Window size must be 0 or more (under one is raised to one), got ${size}`);
    const window = check.nonNegative(options.window, "Window window (ms)");
    this.size = Math.max(1, Math.floor(size));
    this.width = Math.max(window / this.size, NARROWEST);
    this.origin = check.finite(options.now ?? 0, "Window now");
    this.#evict = options.evict;
    this.#buckets = Array.from({ length: this.size }, make);
  }

  /** The absolute number of the bucket `now` falls in; never before the newest written. */
  #index(now: number): number {
    const i = Math.floor((now - this.origin) / this.width);
    // `!(i > head)` also holds for NaN: a reading that makes no sense stands still. So does one
    // past 2^53 buckets (Infinity, or a nanosecond-wide bucket on an epoch clock): there `i + 1`
    // rounds back to `i`, and stepping through the buckets would never end.
    return i > this.#head && i <= Number.MAX_SAFE_INTEGER ? i : this.#head;
  }

  /**
   * The bucket `now` falls in, for the caller to add to. The buckets the gap since the last
   * write swept past are cleared first (at most `size` of them, however long the gap).
   *
   * @param now - the caller's clock reading, in milliseconds
   */
  slot(now: number): B {
    const index = this.#index(now);
    const gap = index - this.#head;
    if (gap > 0) {
      const size = this.size;
      const buckets = this.#buckets;
      const sweep = gap < size ? gap : size;
      for (let i = index - sweep + 1; i <= index; i++) {
        const b = buckets[i % size];
        this.#evict?.(b);
        b.reset();
      }
      this.#head = index;
    }
    return this.#buckets[this.#head % this.size];
  }

  /**
   * Visits the buckets still inside the window at `now`, oldest first, without clearing any.
   *
   * @param now - the caller's clock reading, in milliseconds
   * @param f - called once per live bucket with the bucket and the instant it opened (ms)
   */
  each(now: number, f: (bucket: B, start: number) => void, options?: EachOptions): void {
    const index = this.#index(now);
    const size = this.size;
    // Live: the last `size` bucket numbers up to `index`, of which only those up to the head
    // were ever written; the ones after the head were swept past and read as empty.
    const from = index - size + 1;
    const to = options?.current === false ? Math.min(index - 1, this.#head) : this.#head;
    const buckets = this.#buckets;
    for (let i = from < 0 ? 0 : from; i <= to; i++) f(buckets[i % size], this.origin + i * this.width);
  }

  /** Clears every bucket, as if the window had just opened at its last written bucket. */
  clear(): void {
    for (const b of this.#buckets) {
      this.#evict?.(b);
      b.reset();
    }
  }
}
