import { check, read } from "@tideward/time/internal";
import type { RestoreOptions } from "@tideward/time";
import { Tally, Window, checkReading, layAt, saveWindow } from "@tideward/window";
import { Permit } from "./permit";
import type { Settle } from "./permit";
import { Flight } from "./flight";
import { VERSION, laySnapshot, readSnapshot } from "./snapshot";
import type { BreakerSnapshot, SavedTally } from "./snapshot";
import { passesNeeded, resolveSre } from "./sre";
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
 * Nothing throws once it is built, but a `restore` refusing what it was handed. `now` is
 * milliseconds on the caller's clock; the breaker acts at the latest `now` it has been given, so
 * a clock that steps back, NaN, ±Infinity or a reading that is not a number stands still. `roll`
 * is a draw in [0, 1): NaN, below 0 or not a number counts as 0 (a broken random source fails
 * closed), 1 or more is never refused.
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
  /** Passes a half-open trial needs to close the breaker, and failures it survives. */
  readonly #need: number = 1;
  readonly #spare: number = 0;
  /** How many probes may be in flight at once (Infinity when nothing bounds them), and for how long (ms). */
  readonly #inFlight: number = Infinity;
  readonly #hold: number = 0;
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
  /** While a restore lays a window: its evictions are of empty buckets and count for nothing. */
  #laying = false;
  /** The half-open trial under way: its passes (kept out of the window) and failures. */
  #passes = 0;
  #fails = 0;
  /** Probes let through under a bound on those in flight, and how many still hold a place. */
  #flights: Flight[] | undefined = undefined;
  #flying = 0;
  /** The earliest instant a probe in flight stops holding its place (ms). */
  #freeAt = Infinity;
  /** What a probe in flight calls when it settles; made with the first such probe. */
  #land: ((f: Flight) => void) | undefined = undefined;

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
    this.#halfOpen = p.halfOpen !== false;
    if (typeof p.halfOpen === "object") {
      const h = p.halfOpen as Required<typeof p.halfOpen>;
      this.#need = passesNeeded(h);
      this.#spare = h.probes - this.#need;
      this.#inFlight = h.inFlight;
      this.#hold = h.hold;
    }
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
          if (this.#withSuccess === 0 && this.#halfOpen && this.#total > 0) {
            // A success into a window of calls and none: a pass of the half-open trial, which
            // closes the breaker (clears the window) once it has the passes it needs; until then
            // the pass stays out of the window, so the breaker stays half-open.
            if (++this.#passes < this.#need) return;
            head = this.#clear();
          } else this.#passes = this.#fails = 0;
          this.#withSuccess++;
        }
        head.total++;
        head.success++;
        this.#total++;
        this.#accepts++;
      },
      fail: (at) => {
        const head = this.#advance(at);
        // A trial that fails more than it can spare has failed, and one whose window has
        // forgotten every call is over: the next success starts another.
        if (this.#passes > 0 && (this.#total === 0 || ++this.#fails > this.#spare)) this.#passes = this.#fails = 0;
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
    if (excess > 0) {
      if (this.#latest - this.#last < this.#probe) {
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
      } else if (this.#inFlight < Infinity && this.#accepts === 0 && this.#halfOpen) return this.#probeOut(head);
    }
    this.#last = this.#latest;
    return new Permit(this.#settle);
  }

  /**
   * What the breaker knows, as plain JSON-safe data: its window's live buckets, how long since it
   * last let a call through and a half-open trial under way, every instant relative to the latest
   * clock reading it acted at. Probes in flight are left out: they belong to this process.
   *
   * @example
   * const before = new Breaker(client, 1_700_000_000_000); // Date.now() in one process
   * for (let i = 0; i < 8; i++) before.allow(1_700_000_000_010, 0.5)?.fail(1_700_000_000_020);
   * const saved = JSON.stringify(before.snapshot());
   * const after = new Breaker(client, 5); // another process, its clock near 0
   * after.restore(JSON.parse(saved), 5);
   * after.ratio(5); // 1 — half-open, as the other was
   */
  snapshot(): BreakerSnapshot {
    const latest = this.#latest;
    const saved = saveWindow(
      this.#win,
      latest,
      (b): SavedTally => [b.success, b.failure, b.drop],
      (b) => b.total === 0,
    );
    return {
      version: VERSION,
      kind: "breaker",
      clock: latest,
      size: this.#size,
      window: this.policy.window,
      into: saved.into,
      buckets: saved.buckets,
      idle: latest - this.#last,
      trial: { passes: this.#passes, failures: this.#fails },
    };
  }

  /**
   * Takes on what a snapshot (another process's, read back from storage) knew, checked as
   * untrusted input and refused whole when any of it is wrong. Its window is laid onto this
   * breaker's clock, the snapshot's `clock` becoming `now` (or `now − age`, when `options` say how
   * long ago it was taken, so what aged out since is gone), and the breaker acts at `now`.
   *
   * A warm start, not a shared breaker: the breaker goes on from there on its own calls. Probes
   * in flight here stay in flight. The policy is this breaker's own; a snapshot of another
   * `size` or `window` is refused.
   *
   * @param snapshot - what {@link Breaker.snapshot} returned, possibly through JSON
   * @param now - the restoring clock's reading, in milliseconds
   * @param options - how long ago the snapshot was taken (`age`), or that its clock is this one
   *   (`sameClock`, for `Date.now()` on every machine); left out, it was taken just now
   * @throws SnapshotError naming the first bad field (a version or kind other than a breaker's,
   *   a missing or extra field, a window of another shape, a count that is not whole, a trial
   *   this policy cannot be in), leaving the breaker as it was; TypeError or RangeError for a
   *   `now` or `options` that are not valid, naming them
   */
  restore(snapshot: unknown, now: number, options?: RestoreOptions): void {
    const r = read.restoring(now, options, "Breaker.restore");
    const { size, window } = this.policy;
    checkReading(now, size, window, "Breaker.restore");
    const s = readSnapshot(snapshot, this.policy, this.#need, this.#spare);
    const age = read.ageOf(r, now, s.clock);
    const anchor = layAt(now, age, size, window);
    this.#laying = true;
    let laid;
    try {
      laid = laySnapshot(s.window, size, window, anchor, (b) => this.#evict(b));
    } finally {
      this.#laying = false;
    }
    const win = laid.win;
    this.#win = win;
    this.#head = laid.head;
    this.#next = win.headEnd;
    this.#total = laid.total;
    this.#accepts = laid.accepts;
    this.#withSuccess = laid.withSuccess;
    this.#withFailure = laid.withFailure;
    this.#failing = laid.failing;
    this.#working = laid.working;
    this.#swept = -1;
    this.#latest = anchor;
    this.#last = now - (age + s.idle);
    this.#passes = s.passes;
    this.#fails = s.failures;
    this.#advance(now);
  }

  /**
   * Lets a probe through under the bound on probes in flight, or refuses the call (a drop) while
   * that many are out: those that settled, or have been out for `hold` ms, no longer count.
   */
  #probeOut(head: Tally): Permit | undefined {
    const latest = this.#latest;
    // Full until the first of those out has been out for a window: refused at one comparison.
    if (this.#flying >= this.#inFlight && latest < this.#freeAt) return this.#drop(head);
    this.#sweep();
    if (this.#flying >= this.#inFlight) return this.#drop(head);
    const flight = new Flight(this.#settle, latest, (this.#land ??= (f) => this.#landed(f)));
    (this.#flights ??= []).push(flight);
    this.#flying++;
    const free = latest + this.#hold;
    if (free < this.#freeAt) this.#freeAt = free;
    this.#last = latest;
    return new Permit(flight);
  }

  /** A probe in flight settled or has been out for `hold` ms: it no longer holds a place. */
  #landed(f: Flight): void {
    if (f.out) {
      f.out = false;
      this.#flying--;
    }
  }

  /** Lets go of the probes that settled or have been out for `hold` ms, and finds the next to expire. */
  #sweep(): void {
    const latest = this.#latest;
    const hold = this.#hold;
    let freeAt = Infinity;
    this.#flights = this.#flights?.filter((f) => {
      if (f.out && latest - f.at >= hold) this.#landed(f);
      if (!f.out) return false;
      if (f.at + hold < freeAt) freeAt = f.at + hold;
      return true;
    });
    this.#freeAt = freeAt;
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
    this.#passes = this.#fails = 0;
    return this.#head;
  }

  /** Takes a bucket the window is about to clear back out of the sums and the runs. */
  #evict(b: Tally): void {
    if (this.#laying) return;
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
