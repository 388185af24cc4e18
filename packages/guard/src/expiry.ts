import type { Timers } from "./timers";

/** What {@link Expiry} cuts off: anything with an instant that can be expired once. */
export interface Expiring {
  /** The instant it is cut off (ms). */
  readonly at: number;
  /** Whether it has ended already (then it is skipped). */
  readonly done: boolean;
  /** Its instant has come; `now` is the clock's reading. */
  expire(now: number): void;
  /** @internal Where {@link Expiry} holds it, -1 when it does not. */
  slot: number;
}

// What a removed entry's place holds, so the queue keeps nothing of an ended flight.
const GONE: Expiring = { at: -Infinity, done: true, expire: () => undefined, slot: -1 };

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

  /** @internal For tests: places the queue holds, ended ones included. */
  get held(): number {
    return this.#queue.length - this.#head;
  }

  /**
   * Adds `f`, to be cut off at its instant. Throws what the timers' `set` throws; `f` is then
   * queued all the same and must be ended (and {@link Expiry.remove}d) by its owner.
   */
  add(f: Expiring): void {
    const q = this.#queue;
    let i = q.length;
    q.push(f);
    // Past emptied places too: they hold no instant.
    while (i > this.#head && (q[i - 1].at > f.at || q[i - 1] === GONE)) {
      (q[i] = q[i - 1]).slot = i;
      i--;
    }
    q[i] = f;
    f.slot = i;
    if (this.#live++ === 0 && this.#timer !== undefined) this.#timers.ref?.(this.#timer);
    if (f.at < this.#armed) this.#arm(f.at, this.#clock());
  }

  /** `f` ended before its instant: its place is emptied, and the queue compacted once mostly empty. */
  remove(f: Expiring): void {
    const q = this.#queue;
    if (f.slot >= 0) q[f.slot] = GONE;
    f.slot = -1;
    if (--this.#live > 0) {
      if (q.length - this.#head > 2 * this.#live + 64) this.#compact();
      return;
    }
    // Nothing waits: every entry is done, and the timer must not hold the process.
    this.#queue = [];
    this.#head = 0;
    if (this.#timer !== undefined) this.#timers.unref?.(this.#timer);
  }

  #compact(): void {
    const q: Expiring[] = [];
    for (let i = this.#head; i < this.#queue.length; i++) {
      const f = this.#queue[i];
      if (f === GONE) continue;
      f.slot = q.length;
      q.push(f);
    }
    this.#queue = q;
    this.#head = 0;
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
      f.slot = -1;
      q[this.#head++] = GONE;
    }
    if (this.#head > 1_024 && this.#head * 2 > q.length) this.#compact();
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
