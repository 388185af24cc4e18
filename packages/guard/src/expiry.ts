import type { Timers } from "./timers";

/** What {@link Expiry} cuts off: anything with an instant that can be expired once. */
export interface Expiring {
  /** The instant it is cut off (ms). */
  readonly at: number;
  /** Whether it has ended already (then it is skipped). */
  readonly done: boolean;
  /** Its instant has come; `now` is the clock's reading. */
  expire(now: number): void;
}

/**
 * The instants at which a guard's flights are cut off, kept in order with one timer for the
 * earliest, instead of a timer per attempt (a `setTimeout` and its `clearTimeout` cost more than
 * a whole guarded call). With a fixed timeout the instants arrive in order, so an insertion is a
 * push, and back-to-back calls share one timer that fires once per timeout, not once per call.
 *
 * When no flight is waiting, the timer is left to run out but no longer holds the process open
 * (`unref`); when it fires with nothing waiting it is not set again. So an idle guard keeps no
 * timer that holds the process, and none at all once the last instant has passed.
 */
export class Expiry {
  readonly #timers: Timers;
  readonly #clock: () => number;
  #queue: Expiring[] = [];
  #head = 0;
  #live = 0;
  #timer: unknown = undefined;
  /** The instant the timer is set for, `Infinity` with no timer. */
  #armed = Infinity;

  constructor(timers: Timers, clock: () => number) {
    this.#timers = timers;
    this.#clock = clock;
  }

  /** Flights waiting to be cut off. */
  get size(): number {
    return this.#live;
  }

  /**
   * Adds `f`, to be cut off at its instant. Throws what the timers' `set` throws; `f` is then
   * queued all the same and must be ended (and {@link Expiry.remove}d) by its owner.
   */
  add(f: Expiring): void {
    const q = this.#queue;
    let i = q.length;
    q.push(f);
    while (i > this.#head && q[i - 1].at > f.at) {
      q[i] = q[i - 1];
      i--;
    }
    q[i] = f;
    if (this.#live++ === 0 && this.#timer !== undefined) this.#timers.ref?.(this.#timer);
    if (f.at < this.#armed) this.#arm(f.at, this.#clock());
  }

  /** A flight ended before its instant. */
  remove(): void {
    if (--this.#live > 0) return;
    // Nothing waits: every entry is done, and the timer must not hold the process.
    this.#queue = [];
    this.#head = 0;
    if (this.#timer !== undefined) this.#timers.unref?.(this.#timer);
  }

  #arm(at: number, now: number): void {
    if (this.#timer !== undefined) this.#timers.clear(this.#timer);
    this.#timer = undefined;
    this.#armed = Infinity;
    // Never early: a timer that fires before the instant (Node's may, by under a millisecond)
    // finds nothing due and sets itself again.
    this.#timer = this.#timers.set(this.#fire, at - now > 0 ? at - now : 0);
    this.#armed = at;
  }

  readonly #fire = (): void => {
    const armed = this.#armed;
    this.#timer = undefined;
    this.#armed = Infinity;
    let now: number;
    try {
      now = this.#clock();
    } catch {
      now = armed; // a clock that throws: the instant the timer was set for has come
    }
    const q = this.#queue;
    const due: Expiring[] = [];
    while (this.#head < q.length) {
      const f = q[this.#head];
      if (!f.done) {
        if (f.at > now) break;
        due.push(f);
      }
      this.#head++;
    }
    if (this.#head > 1_024 && this.#head * 2 > q.length) {
      this.#queue = q.slice(this.#head);
      this.#head = 0;
    }
    const next = this.#queue[this.#head];
    if (next !== undefined) {
      try {
        this.#arm(next.at, now);
      } catch {
        // Timers that cannot set: the next add arms again; what is due now still ends below.
      }
    }
    for (const f of due) f.expire(now);
  };
}
