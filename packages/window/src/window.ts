import { check } from "@tideward/time/internal";
import type { Span } from "@tideward/time";

/** A bucket a {@link Window} can hold: anything that can be cleared back to empty in place. */
export interface Resettable {
  /** Clears the bucket back to its empty state, without allocating. */
  reset(): void;
}

/** Options of a {@link Window}. */
export interface WindowOptions<B> {
  /**
   * How many buckets; a fraction is rounded down and anything under one is raised to one. At
   * most {@link Window.maxSize}.
   */
  readonly size: number;
  /**
   * How much time the buckets together cover, in milliseconds: at least
   * {@link Window.minWidth} for each bucket.
   */
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

const KNOWN = ["size", "window", "now", "evict"] as const;
/** Buckets a millisecond at most: the narrowest bucket is 1 / PER_MS ms. */
const PER_MS = 100;

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
 * reading that makes no sense: NaN, Infinity, not a number at all, or one more than 2^53 buckets
 * past the origin (with buckets of at least {@link Window.minWidth}, some 2 800 years).
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
  /**
   * The most buckets a window may have: a million, some 40 MB of small buckets. Past it the
   * buckets alone could exhaust memory, which aborts the process instead of throwing.
   */
  static readonly maxSize = 1_000_000;
  /**
   * The narrowest bucket, in milliseconds: 0.01 ms. Buckets are counted from the origin, in
   * whole numbers up to 2^53, so at this width a window works for 2^53 × 0.01 ms (some 2 800
   * years) past its origin, whatever the clock: `Date.now()` from an origin of 0 included.
   */
  static readonly minWidth: Span = 1 / PER_MS;

  /**
   * The shortest window, in milliseconds, that `size` buckets may cover: `size` ×
   * {@link Window.minWidth}, as the constructor checks it.
   */
  static shortest(size: number): Span {
    return size / PER_MS;
  }

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
  /** Where bucket `#head + 1` opens (ms): origin + (head + 1)·width. */
  #end = 0;
  /** The bucket `#head` lives in. */
  #current: B;

  /**
   * An empty window of `size` buckets spanning `window` milliseconds, its first bucket opening at `now`.
   *
   * The options are read once, into a copy, before anything is checked.
   *
   * @param make - makes one empty bucket; called `size` times, here and never again
   * @throws TypeError when `make` or `evict` is not a function, `make` returns what has no
   *   `reset()`, `options` is not an object or names an option a window does not have, or a
   *   field is not a number (`null` included); RangeError when `size`
   *   or `window` is NaN, infinite or negative, `size` is over {@link Window.maxSize}, a bucket
   *   would be narrower than {@link Window.minWidth}, or `now` is not finite
   */
  constructor(make: () => B, options: WindowOptions<B>) {
    check.fn(make, "Window make");
    if (options === undefined) throw new TypeError("Window options must be an object, got undefined");
    const o = check.options(options, KNOWN, "Window");
    if (o.size === undefined) throw new TypeError("Window size is required: a number of buckets");
    if (o.window === undefined) throw new TypeError("Window window is required: the milliseconds the buckets cover");
    const given = check.finite(o.size, "Window size");
    if (given < 0) throw new RangeError(`Window size must be 0 or more (under one is raised to one), got ${given}`);
    const size = Math.max(1, Math.floor(given));
    if (size > Window.maxSize)
      throw new RangeError(`Window size must be at most ${Window.maxSize} buckets, got ${given}`);
    const window = check.nonNegative(o.window, "Window window (ms)");
    const least = Window.shortest(size);
    if (!(window >= least))
      throw new RangeError(
        `Window window (ms) must be at least ${least} for ${size} ${size === 1 ? "bucket" : "buckets"} (${Window.minWidth} ms a bucket), got ${window}`,
      );
    const evict = o.evict;
    if (evict !== undefined) check.fn(evict, "Window evict");
    this.size = size;
    this.width = window / size;
    this.origin = check.finite(check.or(o.now, 0), "Window now");
    this.#evict = evict;
    this.#buckets = Array.from({ length: size }, () => {
      const b = make();
      if (typeof (b as Partial<Resettable> | null | undefined)?.reset !== "function")
        throw new TypeError(`Window make must return a bucket with a reset() method, got ${check.describe(b)}`);
      return b;
    });
    this.#current = this.#buckets[0];
    this.#end = this.origin + this.width;
  }

  /**
   * The clock reading (ms) at which the newest written bucket ends and the next opens: a write
   * before it lands in that bucket, one at or after it moves the window on.
   */
  get headEnd(): number {
    return this.#end;
  }

  /** The absolute number of the bucket `now` falls in; never before the newest written. */
  #index(now: number): number {
    // Before the head's end (a clock that stepped back included) is the head. A reading that is
    // not a number at all (a Symbol, a BigInt, a string) stands still too, rather than throwing
    // or being coerced.
    if (typeof now !== "number" || now < this.#end) return this.#head;
    const origin = this.origin;
    const width = this.width;
    let i = Math.floor((now - origin) / width);
    // NaN, Infinity and a reading past 2^53 buckets stand still: there `i + 1` rounds back to
    // `i`, and stepping through the buckets would never end.
    if (!(i <= Number.MAX_SAFE_INTEGER)) return this.#head;
    // Bucket i opens at origin + i·width as the doubles compute it, and those boundaries decide,
    // not the division, which can land one off near them: so the start `each` reports for a
    // bucket is a reading that falls in it, and every reading falls in the last bucket opened.
    if (origin + i * width > now) i--;
    else if (origin + (i + 1) * width <= now) i++;
    return i > this.#head ? i : this.#head;
  }

  /**
   * The bucket `now` falls in, for the caller to add to. The buckets the gap since the last
   * write swept past are cleared first (at most `size` of them, however long the gap).
   *
   * @param now - the caller's clock reading, in milliseconds
   */
  slot(now: number): B {
    // Nearly every write lands in the head: one comparison, no division.
    if (typeof now === "number" && now < this.#end) return this.#current;
    return this.#move(now);
  }

  #move(now: number): B {
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
      this.#end = this.origin + (index + 1) * this.width;
      this.#current = buckets[index % size];
    }
    return this.#current;
  }

  /**
   * Visits the buckets still inside the window at `now`, oldest first, without clearing any.
   *
   * @param now - the caller's clock reading, in milliseconds
   * @param f - called once per live bucket with the bucket and the instant it opened (ms)
   * @throws TypeError when `f` is not a function, or `options` is not an object, names an option
   *   there is not or has a `current` that is not a boolean
   */
  each(now: number, f: (bucket: B, start: number) => void, options?: EachOptions): void {
    check.fn(f, "Window.each f");
    // Checked whole only when `current` is not a boolean: the shedder passes one on a hot path.
    if (options !== undefined && typeof (options as { current?: unknown } | null)?.current !== "boolean") {
      const current = check.options(options, ["current"], "Window.each").current;
      if (current !== undefined && typeof current !== "boolean")
        throw new TypeError(`Window.each current must be true or false, got ${check.describe(current)}`);
    }
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
