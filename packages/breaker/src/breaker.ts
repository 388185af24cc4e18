import { check } from "@tideward/time/internal";
import { Tally, Window } from "@tideward/window";
import { Permit } from "./permit";
import type { Settle } from "./permit";
import { resolveSre } from "./sre";
import type { Sre } from "./sre";

/** Empties a bucket in place: one function for every clear, so closing allocates nothing. */
const reset = (b: Tally): void => b.reset();

/**
 * A circuit breaker that refuses a fraction of calls rather than all of them: Google SRE's
 * adaptive client-side throttling, as go-zero's `googlebreaker` does it. It keeps a rolling window
 * of outcomes and refuses each call with a probability that grows with the failures in it, so a
 * struggling backend keeps receiving what it can still serve. The formula, the runs and how it
 * recovers after an outage are in the package README ("How it decides").
 *
 * Nothing throws once it is built. `now` is milliseconds on the caller's clock; the breaker acts
 * at the latest `now` it has been given, so a clock that steps back, NaN, ±Infinity or a reading
 * that is not a number stands still. `roll` is a draw in [0, 1): NaN, below 0 or not a number
 * counts as 0 (a broken random source fails closed), 1 or more is never refused.
 *
 * @example
 * const breaker = new Breaker();           // the sre preset
 * const call = () => fetch("data:,ok");    // the call to protect
 * const permit = breaker.allow(Date.now(), Math.random());
 * if (permit === undefined) throw new Error("refused");
 * try { await call(); permit.pass(Date.now()); } catch (e) { permit.fail(Date.now()); throw e; }
 * breaker.ratio(Date.now()); // 0 — nothing is refused while calls succeed
 */
export class Breaker {
  /** The policy in force: the preset with the constructor's fields laid over it, checked. */
  readonly policy: Sre;

  // The policy's numbers start as numbers too, not undeclared (undefined): a field that once
  // held undefined is read as any value, and a value computed from it (the decayed k, the drop)
  // is then boxed, 16 bytes a throttled call; read as numbers, they stay in registers.
  readonly #k: number = 0;
  readonly #floor: number = 0;
  readonly #protection: number = 0;
  readonly #probe: number = 0;
  readonly #size: number = 0;
  readonly #halfOpen: boolean = false;
  #win: Window<Tally>;
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
   *   closest it does), a number field is not a number or `halfOpen` is not a boolean;
   *   RangeError naming the field, the value and the bound: `k` under `floor`, a `floor` of 0 or
   *   less, a negative `protection`, a `probe` of 0 or less (or `Infinity` with `halfOpen` on: it
   *   would never close), a `size` that is not a whole number
   *   from 1 to 1 000 000, a `window` under 0.01 ms a bucket, any NaN, a non-finite `now` or
   *   one so large that a bucket is narrower than its float step
   */
  constructor(policy?: Partial<Sre>, now = 0) {
    const p = resolveSre(policy);
    this.policy = p;
    this.#k = p.k;
    this.#floor = p.floor;
    this.#protection = p.protection;
    this.#probe = p.probe;
    this.#size = p.size;
    this.#halfOpen = p.halfOpen === true;
    this.#latest = this.#last = check.finite(now, "Breaker now");
    // Where a float step of the clock is wider than a bucket, the first reading would sweep a
    // bucket before the breaker has a head (a microsecond clock near 1.7e15 and 0.01 ms buckets).
    const width = p.window / p.size;
    if (!(now + width > now))
      throw new RangeError(
        `Breaker now (ms) ${now} is too coarse a reading for buckets of ${width} ms (window ÷ size): the bucket rounds away there; widen the window or read the clock in milliseconds`,
      );
    this.#win = this.#open(now);
    this.#head = this.#win.slot(now);
    this.#next = this.#win.headEnd;
    this.#settle = {
      pass: (at) => {
        let head = this.#advance(at);
        // Only the first success of a bucket can find the window without one: the common pass
        // (the head already holds a success) pays for nothing here.
        if (head.success === 0) {
          if (this.#withSuccess === 0 && this.#halfOpen && this.#total > 0) head = this.#clear();
          this.#withSuccess++;
        }
        head.total++;
        head.success++;
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
   * @param roll - a draw in [0, 1); the call is refused when it falls under the drop fraction. Or
   *   a source of such draws (`Math.random`, a seeded generator), called only when the throttle is
   *   on and a draw decides: a healthy breaker draws nothing.
   * @throws what the source throws, with nothing recorded
   */
  allow(now: number, roll: number | (() => number)): Permit | undefined {
    const head = this.#advance(now);
    const total = this.#total;
    const failing = head.success > 0 ? 0 : head.failure > 0 ? this.#failing + 1 : this.#failing;
    // With no failing run, w is k itself (k ≥ floor); the healthy case ends at the sign of the
    // numerator (total + 1 > 0), so it pays for neither the decay nor a division.
    const w = failing === 0 ? this.#k : this.#weight(failing);
    const excess = total - this.#protection - w * this.#accepts;
    if (excess > 0 && this.#latest - this.#last < this.#probe) {
      // Half-open (throttling with no success in the window): only the probe goes through.
      if (this.#halfOpen && this.#accepts === 0) return this.#drop(head);
      const size = this.#size;
      const working = head.failure > 0 ? 0 : head.success > 0 ? this.#working + 1 : this.#working;
      const drop = (excess / (total + 1)) * ((size - working) / size);
      // A drop of 0 (a window of successes scaling it away) refuses nothing, whatever the draw.
      const r = drop > 0 && typeof roll === "function" ? roll() : roll;
      // `r >= 0` is false for NaN: it counts as 0, like a roll below 0, and so does a roll that
      // is not a number at all (never compared, so a Symbol cannot throw here).
      if ((typeof r === "number" && r >= 0 ? r : 0) < drop) return this.#drop(head);
    }
    this.#last = this.#latest;
    return new Permit(this.#settle);
  }

  /**
   * The fraction of calls the breaker would refuse at `now`, in [0, 1]: zero while the window is
   * healthy, one while it is half-open (see {@link Sre.halfOpen}). The probe is left out, as this
   * is the standing throttle a dashboard or an alert wants.
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
    // Over two windows past the head, nothing is live: 0, also where the window cannot count.
    if (typeof now === "number" && now - this.#next > 2 * this.policy.window && now < Infinity) return 0;
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
    if (!(drop > 0)) return 0;
    // Half-open refuses everything but the probe, which the ratio leaves out.
    return this.#halfOpen && accepts === 0 ? 1 : drop * ((size - working) / size);
  }

  /** An empty window whose first bucket opens at `now`. */
  #open(now: number): Window<Tally> {
    return new Window(() => new Tally(), {
      size: this.#size,
      window: this.policy.window,
      now,
      evict: (b) => this.#evict(b),
    });
  }

  /** Records a refusal in `head` (it counts as traffic) and answers it. */
  #drop(head: Tally): undefined {
    head.total++;
    head.drop++;
    this.#total++;
    return undefined;
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
    let win = this.#win;
    let head = win.slot(now);
    if (!(win.headEnd > now)) {
      // A reading the window cannot place: 2^53 buckets past its origin (1e19 ms at 250 ms a
      // bucket), or where a float step outgrows a bucket. Past a whole window, it forgets all:
      // open one afresh at `now`, so later readings move it again. (Its buckets are new: a reading
      // this far out is no hot path.)
      this.#total = this.#accepts = this.#withSuccess = this.#withFailure = this.#failing = this.#working = 0;
      head = (win = this.#win = this.#open(now)).slot(now);
    }
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

  /**
   * Closes a half-open breaker: forgets every outcome in the window, emptying each bucket in place
   * and zeroing the sums and the runs, as if the window had just opened at the head. Returns the head.
   */
  #clear(): Tally {
    this.#win.each(this.#latest, reset);
    this.#total = this.#accepts = this.#withSuccess = this.#withFailure = this.#failing = this.#working = 0;
    return this.#head;
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
