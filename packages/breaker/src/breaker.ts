import { check } from "@tideward/time";
import { Tally, Window } from "@tideward/window";
import { Permit } from "./permit";
import type { Settle } from "./permit";
import { resolveSre } from "./sre";
import type { Sre } from "./sre";

/**
 * A circuit breaker that refuses a fraction of calls rather than all of them: Google SRE's
 * adaptive client-side throttling, as go-zero's `googlebreaker` does it.
 *
 * There is no open, half-open and closed. The breaker keeps a rolling window of outcomes and
 * refuses each new call with a probability that grows with the failures in it, so a struggling
 * backend keeps receiving as much as it can still serve instead of being cut off and then flooded
 * when it recovers. With `accepts` successes out of `total` calls in the window (refusals count in
 * `total`), `failing` the run of all-failure buckets at its head and `working` the run of
 * all-success ones:
 *
 * ```text
 * w     = max(k − (k − floor) · failing / size, floor)
 * drop  = (total − protection − w · accepts) / (total + 1)
 * drop ×= (size − working) / size
 * ```
 *
 * A drop at or below zero lets everything through: the whole healthy case. Otherwise, when nothing
 * has been let through for `probe` milliseconds, the call goes through as a probe; otherwise it is
 * refused when its roll falls under the (scaled) drop, and the refusal is recorded as a drop, so a
 * breaker that is refusing never reads back as idle.
 *
 * **Runs.** Walking the window oldest to newest, current bucket included: a bucket with any
 * failure resets `working`, one with any success resets `failing`; a bucket with only successes
 * extends `working`, one with only failures extends `failing`; an empty or drop-only bucket does
 * neither (so a mixed bucket resets both).
 *
 * **Recovery.** Refusals need a bucket in the window in which a call failed or none succeeded, so
 * they stop about one window after the last such bucket. Early in a recovery, buckets holding
 * only refusals are likely (the probe passes one call per `probe`), so with the preset the last
 * refusal can come up to a quarter window later than one window after recovery; a `probe` no
 * longer than a bucket avoids that, at the cost of probing a dead backend that often.
 *
 * **Cost.** `allow` and a settle cost the same at 40 buckets as at 4 000: the breaker keeps running
 * sums and the runs, taking each bucket back out as the window sweeps past it, and allocates
 * nothing but the {@link Permit}.
 *
 * **Odd input on the hot path** (nothing here throws once constructed):
 * - `now` is milliseconds on the caller's clock. The breaker acts at the latest `now` it has been
 *   given: a clock that steps back, NaN, ±Infinity and a reading that is not a number at all
 *   are treated as time standing still.
 * - `roll` is a draw in [0, 1) compared with the drop fraction. A roll below 0 counts as 0 and so
 *   do NaN and anything that is not a number: a broken random source fails closed (refused
 *   whenever anything is refused, probes still pass), never open and silent. A roll of 1 or more
 *   is never refused, as the fraction is always under 1. No roll is stored, so none can poison
 *   the window.
 *
 * @example
 * const breaker = new Breaker();           // the sre preset
 * const permit = breaker.allow(now, Math.random());
 * if (permit === undefined) throw new Error("refused");
 * try { await call(); permit.pass(Date.now()); } catch (e) { permit.fail(Date.now()); throw e; }
 */
export class Breaker {
  /** The policy in force: the preset with the constructor's fields laid over it, checked. */
  readonly policy: Sre;

  readonly #k: number;
  readonly #floor: number;
  readonly #protection: number;
  readonly #probe: number;
  readonly #size: number;
  readonly #win: Window<Tally>;
  readonly #settle: Settle;

  // Number fields written on the hot path start as numbers (not undeclared, which is undefined):
  // V8 then stores a fraction in place instead of boxing every new reading.
  /** The latest clock reading seen by `allow` or a settle (ms): the instant the breaker acts at. */
  #latest = 0;
  /** When a call was last let through (ms), for the probe. */
  #last = 0;
  /** Where the head bucket ends (ms): a later reading before it stays in the head. */
  #next = 0;
  /** The bucket the latest reading falls in: where every write goes. */
  #head: Tally;
  // Running sums over every live bucket, the head included.
  #total = 0;
  #accepts = 0;
  /** Live buckets holding any success / any failure, the head included. */
  #withSuccess = 0;
  #withFailure = 0;
  /** The runs over the live buckets before the head; the head's own part is added on reading. */
  #failing = 0;
  #working = 0;
  /** Buckets evicted by the `slot` call in progress, or -1 outside one. */
  #swept = -1;

  /**
   * A breaker with an empty window opening at `now`.
   *
   * @param policy - the fields to change from the {@link sre} preset, read once into a copy
   * @param now - the clock reading the window opens at, in milliseconds
   * @throws TypeError when `policy` is not an object, names a field `Sre` does not have (with the
   *   closest it does) or a field is not a number; RangeError naming the field, the value and
   *   the bound: `k` under `floor`, a `floor` of 0 or less, a negative `protection`, a `probe` of
   *   0 or less, a `size` that is not a whole number from 1 to 1 000 000, a `window` under 0.01 ms
   *   a bucket, any NaN or a non-finite `now`
   */
  constructor(policy?: Partial<Sre>, now = 0) {
    const p = resolveSre(policy);
    this.policy = p;
    this.#k = p.k;
    this.#floor = p.floor;
    this.#protection = p.protection;
    this.#probe = p.probe;
    this.#size = p.size;
    this.#latest = this.#last = check.finite(now, "Breaker now");
    this.#win = new Window(() => new Tally(), { size: p.size, window: p.window, now, evict: (b) => this.#evict(b) });
    this.#head = this.#win.slot(now);
    this.#next = this.#win.headEnd;
    this.#settle = {
      pass: (at) => {
        const head = this.#advance(at);
        head.total++;
        if (head.success++ === 0) this.#withSuccess++;
        this.#total++;
        this.#accepts++;
      },
      fail: (at) => {
        const head = this.#advance(at);
        head.total++;
        if (head.failure++ === 0) this.#withFailure++;
        this.#total++;
      },
    };
  }

  /**
   * Asks to make one call at `now`: a {@link Permit} to settle when the call has finished, or
   * `undefined` when the call is refused (and recorded as a drop).
   *
   * @param now - the caller's clock reading, in milliseconds
   * @param roll - a draw in [0, 1); the call is refused when it falls under the drop fraction
   */
  allow(now: number, roll: number): Permit | undefined {
    const head = this.#advance(now);
    const total = this.#total;
    const failing = head.success > 0 ? 0 : head.failure > 0 ? this.#failing + 1 : this.#failing;
    // With no failing run, w is k itself (k ≥ floor); the healthy case ends at the sign of the
    // numerator (total + 1 > 0), so it pays for neither the decay nor a division.
    const w = failing === 0 ? this.#k : this.#weight(failing);
    const excess = total - this.#protection - w * this.#accepts;
    if (excess > 0 && this.#latest - this.#last < this.#probe) {
      const size = this.#size;
      const working = head.failure > 0 ? 0 : head.success > 0 ? this.#working + 1 : this.#working;
      const drop = (excess / (total + 1)) * ((size - working) / size);
      // `roll >= 0` is false for NaN: it counts as 0, like a roll below 0, and so does a roll
      // that is not a number at all (never compared, so a Symbol cannot throw here).
      if ((typeof roll === "number" && roll >= 0 ? roll : 0) < drop) {
        head.total++;
        head.drop++;
        this.#total++;
        return undefined;
      }
    }
    this.#last = this.#latest;
    return new Permit(this.#settle);
  }

  /**
   * The fraction of calls the breaker would refuse at `now`, in [0, 1]: zero while the window is
   * healthy. The probe is left out, as this is the standing throttle a dashboard or an alert wants.
   *
   * Reading changes nothing. At or before the latest `now` the breaker has acted at, it costs the
   * same as `allow`; at a later `now` it walks the window once (O(size)) to skip what has aged out.
   *
   * @param now - the caller's clock reading, in milliseconds
   */
  ratio(now: number): number {
    const size = this.#size;
    let total: number;
    let accepts: number;
    let failing: number;
    let working: number;
    if (typeof now === "number" && now > this.#latest && now < Infinity) {
      total = accepts = failing = working = 0;
      this.#win.each(now, (b) => {
        total += b.total;
        accepts += b.success;
        if (b.success > 0) failing = 0;
        else if (b.failure > 0) failing++;
        if (b.failure > 0) working = 0;
        else if (b.success > 0) working++;
      });
    } else {
      const head = this.#head;
      total = this.#total;
      accepts = this.#accepts;
      failing = head.success > 0 ? 0 : head.failure > 0 ? this.#failing + 1 : this.#failing;
      working = head.failure > 0 ? 0 : head.success > 0 ? this.#working + 1 : this.#working;
    }
    const drop = (total - this.#protection - this.#weight(failing) * accepts) / (total + 1);
    return drop > 0 ? drop * ((size - working) / size) : 0;
  }

  /** The weight of an accept with a run of `failing` all-failure buckets at the head. */
  #weight(failing: number): number {
    const k = this.#k;
    return Math.max(k - ((k - this.#floor) * failing) / this.#size, this.#floor);
  }

  /** Moves the breaker to `now` if that is later than where it stands; returns the head bucket. */
  #advance(now: number): Tally {
    // A reading that is not a number (a Symbol, a BigInt, a string) stands still, like NaN.
    if (typeof now === "number" && now > this.#latest && now < Infinity) {
      this.#latest = now;
      // Nearly every call lands in the head bucket and ends here, at one comparison; the rest is
      // a method of its own so that this part stays small enough for V8 to inline into callers.
      if (!(now < this.#next)) this.#move(now);
    }
    return this.#head;
  }

  /**
   * Moves the window to the bucket `now` falls in (the window's boundaries decide, exactly), and
   * the head with it.
   */
  #move(now: number): void {
    const win = this.#win;
    const head = win.slot(now);
    // Past 2^53 buckets the window stands still (see Window), and its head's end with it: every
    // later reading comes back here and stands still too.
    this.#next = win.headEnd;
    if (this.#swept >= 0) {
      // Every live bucket was swept: start from nothing rather than trust the order of eviction.
      if (this.#swept >= this.#size) {
        this.#total = this.#accepts = this.#withSuccess = this.#withFailure = this.#failing = this.#working = 0;
      }
      this.#swept = -1;
    }
    this.#head = head;
  }

  /** Takes a bucket the window is about to clear back out of the sums and the runs. */
  #evict(b: Tally): void {
    if (this.#swept < 0) {
      // The first bucket of a sweep: the old head is about to stop being the head, so its part
      // joins the runs kept for the buckets before the head.
      const head = this.#head;
      if (head.success > 0) this.#failing = 0;
      else if (head.failure > 0) this.#failing++;
      if (head.failure > 0) this.#working = 0;
      else if (head.success > 0) this.#working++;
      this.#swept = 0;
    }
    this.#swept++;
    this.#total -= b.total;
    this.#accepts -= b.success;
    if (b.success > 0) this.#withSuccess--;
    if (b.failure > 0) this.#withFailure--;
    // `b` is the oldest live bucket. It is part of a run only if the run reaches back through the
    // whole window, that is if no bucket after it breaks the run. (For `failing` no decision can
    // tell: it only weighs while a success is in the window, and then it counts from the newest
    // one. The count is kept exact all the same, so that it reads true when inspected.)
    if (b.failure === 0) {
      if (b.success > 0 && this.#withFailure === 0) this.#working--;
    } else if (b.success === 0 && this.#withSuccess === 0) this.#failing--;
  }
}
