import { check, read } from "@tideward/time/internal";
import type { RestoreOptions, Span } from "@tideward/time";
import { Window, checkReading, layAt, layWindow, readWindow, saveWindow } from "@tideward/window";

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

/** The retry budget's snapshot format's version. */
const VERSION = 1;

/** One bucket of a retry budget's window, as a snapshot holds it: its first attempts and retries. */
export type SavedCounts = readonly [attempts: number, retries: number];

/**
 * What a retry budget knows, as plain JSON-safe data: what `RetryBudget.snapshot()` returns and
 * `RetryBudget.restore()` takes. Every instant is relative to `clock`, so it restores onto a
 * clock of any origin; `JSON.parse(JSON.stringify(s))` restores to the same state.
 */
export interface RetryBudgetSnapshot {
  /** The format's version: a restore refuses any other. */
  readonly version: 1;
  /** What took the snapshot: a restore refuses another kind's. */
  readonly kind: "retry-budget";
  /** The latest clock reading the budget had been given, in milliseconds on its own clock. */
  readonly clock: number;
  /** How many buckets the window has (the policy's `buckets`): a budget restores only its own. */
  readonly size: number;
  /** How far back the window reaches, in milliseconds: a budget restores only its own. */
  readonly window: number;
  /** How far `clock` was into the newest bucket, in milliseconds: 0 or more, under one bucket. */
  readonly into: number;
  /**
   * The live buckets, oldest first, the last the one `clock` fell in, each as `[attempts,
   * retries]`: whole numbers. Empty ones older than every other are left out.
   */
  readonly buckets: readonly SavedCounts[];
}

const FIELDS = ["size", "window", "into", "buckets"] as const;

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
 * standing still, and so is a reading that is NaN, infinite or not a number at all. Counting and
 * spending allocate nothing after construction, and nothing throws once constructed but a
 * `restore` refusing what it was handed.
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
  // Both replaced by a restore.
  #window: Window<Counts>;
  // The window's buckets, by place: where a receipt's bucket is found.
  #counts: Counts[] = [];
  readonly #reserve: number;
  // Running sums over the live buckets, taken back out as buckets are cleared.
  #attempts = 0;
  #retries = 0;
  // The latest clock reading given (ms), what a snapshot is taken at; an earlier or nonsensical
  // one stands still at it. A number from the start, so writing a fraction allocates nothing.
  #latest = 0;
  readonly #evict = (b: Counts): void => {
    this.#attempts -= b.attempts;
    this.#retries -= b.retries;
  };

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
    this.#latest = check.finite(now, "RetryBudget now");
    this.#window = new Window(() => new Counts(counts, buckets), {
      size: buckets,
      window,
      now,
      evict: this.#evict,
    });
  }

  /**
   * Counts one first attempt (not a retry) at `now`: what earns retries. Count it once it is
   * made: a call refused before it reached the backend earns nothing.
   * @param now - the caller's clock reading, in milliseconds
   */
  recordAttempt(now: number): void {
    this.#window.slot(this.#tick(now)).attempts++;
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
    const bucket = this.#window.slot(this.#tick(now));
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
    this.#window.slot(this.#tick(now)); // clears what has aged out; counts nothing
    const left = Math.floor(this.#allowance() - this.#retries + SLACK);
    return left > 0 ? left : 0;
  }

  /** Forgets every attempt and retry, as if just built. */
  clear(): void {
    this.#window.clear();
  }

  /**
   * What the budget knows, as plain JSON-safe data: its window's live buckets of first attempts
   * and retries, relative to the latest clock reading it was given.
   *
   * @example
   * const before = new RetryBudget({ ratio: 0.5, minPerSecond: 0 }, 1_700_000_000_000);
   * before.recordAttempt(1_700_000_000_000);
   * before.recordAttempt(1_700_000_000_000);
   * const saved = JSON.stringify(before.snapshot());
   * const after = new RetryBudget({ ratio: 0.5, minPerSecond: 0 }); // another process, its clock near 0
   * after.restore(JSON.parse(saved), 0);
   * after.available(0); // 1 — one retry per two first attempts, as before
   */
  snapshot(): RetryBudgetSnapshot {
    const clock = this.#latest;
    const saved = saveWindow(
      this.#window,
      clock,
      (b): SavedCounts => [b.attempts, b.retries],
      (b) => b.attempts === 0 && b.retries === 0,
    );
    const { buckets: size, window } = this.policy;
    return { version: VERSION, kind: "retry-budget", clock, size, window, into: saved.into, buckets: saved.buckets };
  }

  /**
   * Takes on what a snapshot (another process's, read back from storage) knew, checked as
   * untrusted input and refused whole when any of it is wrong. Its window is laid onto this
   * budget's clock, the snapshot's `clock` becoming `now` (or `now − age`, when `options` say how
   * long ago it was taken, so what aged out since is gone).
   *
   * The counts are taken as they are: a snapshot of more retries than this policy allows
   * refuses retries until they age out. Receipts {@link RetryBudget.grant} answered before the
   * restore name nothing after it. The policy is this budget's own; a snapshot of another
   * `buckets` or `window` is refused.
   *
   * @param snapshot - what {@link RetryBudget.snapshot} returned, possibly through JSON
   * @param now - the restoring clock's reading, in milliseconds
   * @param options - how long ago the snapshot was taken (`age`), or that its clock is this one
   *   (`sameClock`, for `Date.now()` on every machine); left out, it was taken just now
   * @throws SnapshotError naming the first bad field (a version or kind other than a retry
   *   budget's, a missing or extra field, a window of another shape, a count that is not whole),
   *   leaving the budget as it was; TypeError or RangeError for a `now` or `options` that are
   *   not valid, naming them
   */
  restore(snapshot: unknown, now: number, options?: RestoreOptions): void {
    const r = read.restoring(now, options, "RetryBudget.restore");
    const { buckets: size, window } = this.policy;
    checkReading(now, size, window, "RetryBudget.restore");
    const s = readSnapshot(snapshot, size, window);
    const saved = s.buckets;
    const counts: Counts[] = [];
    // Its evictions while it is laid are of buckets still empty: they take nothing from the sums.
    const win = layWindow(
      () => new Counts(counts, size),
      { size, window, now: layAt(now, read.ageOf(r, now, s.clock), size, window), evict: this.#evict },
      s.into,
      saved.length,
      (b, i) => {
        b.attempts = saved[i][0];
        b.retries = saved[i][1];
      },
    );
    // New receipts start past every old one, so a grant from before the restore names nothing.
    let last = 0;
    for (const c of this.#counts) if (c.id > last) last = c.id;
    const base = last - (last % size) + size;
    for (const c of counts) c.id = base + c.id <= Number.MAX_SAFE_INTEGER ? base + c.id : c.id % size;
    let attempts = 0;
    let retries = 0;
    for (const [a, b] of saved) {
      attempts += a;
      retries += b;
    }
    this.#counts = counts;
    this.#window = win;
    this.#attempts = attempts;
    this.#retries = retries;
    this.#latest = now;
    win.slot(now); // what aged out between the snapshot and `now` leaves the sums
  }

  #tick(now: number): number {
    // A reading that is not a number (a Symbol, a BigInt, a string) stands still, like NaN.
    if (typeof now === "number" && now > this.#latest && now < Infinity) this.#latest = now;
    return now;
  }

  #allowance(): number {
    return this.policy.ratio * this.#attempts + this.#reserve;
  }
}

/**
 * Reads an untrusted snapshot for a budget of `size` buckets over `window` ms, checking every
 * field: the version and kind, the window's shape (its own), whole counts whose sums a number
 * holds exactly.
 *
 * @throws SnapshotError naming the first bad field
 */
function readSnapshot(
  value: unknown,
  size: number,
  window: number,
): { clock: number; into: number; buckets: SavedCounts[] } {
  return read.guarded(() => {
    const root = read.root(value, "retry-budget", VERSION, FIELDS);
    let attempts = 0;
    let retries = 0;
    const saved = readWindow(root, size, window, "retry budget", (raw, path): SavedCounts => {
      const b = read.list(raw, path, 2, 2);
      const a = read.whole(b[0], `${path}[0]`, 0, Number.MAX_SAFE_INTEGER);
      const r = read.whole(b[1], `${path}[1]`, 0, Number.MAX_SAFE_INTEGER);
      attempts += a;
      retries += r;
      if (!(attempts <= Number.MAX_SAFE_INTEGER && retries <= Number.MAX_SAFE_INTEGER))
        read.fail(path, `takes the counts past ${Number.MAX_SAFE_INTEGER}, more than a number counts exactly`);
      return [a, r];
    });
    return { clock: root.clock, into: saved.into, buckets: saved.buckets };
  });
}
