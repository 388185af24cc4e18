// admit's line of requests waiting for a place under its concurrency limit: a `Queue` of
// @tideward/concurrency (CoDel with adaptive LIFO) driven by the clock, one timer and the places
// the limit stage gives back. A waiting request holds nothing: no ticket, no place, no quota. It is
// served when a place frees (the most important level first, its oldest or, while the queue
// stands, its newest), answered a refusal when the queue gives up on it, and taken out when its
// caller aborts. The queue is an instance the user built, so this package holds no copy of it.
import type { Priority, Queue, Waiter } from "@tideward/concurrency";
import type { Clock } from "@tideward/time";
import type { LimitStage } from "./stages/limit";
import type { Timers } from "./timers";
import type { Verdict } from "./verdict";

/** One request waiting: what it asked, and how to answer its caller. */
export interface Entry {
  readonly key: string;
  readonly cost: number;
  readonly priority: Priority | undefined;
  /** The limit's reason when it was refused at once (`"limit"` or `"reserved"`): its answer if it is given up on. */
  readonly reason: "limit" | "reserved";
  readonly resolve: (v: Verdict | Promise<Verdict>) => void;
  readonly reject: (e: unknown) => void;
  signal: AbortSignal | undefined;
  abort: (() => void) | undefined;
}

/** What the line answers with: a run through admission again, or the refusal it waited in vain for. */
export interface Answers {
  /** Admits `e` now that a place is free (every stage asked again; not put back in line). */
  run(e: Entry): Verdict | Promise<Verdict>;
  /** The refusal of a request the queue gave up on, or that found it full. */
  refused(e: Entry): Verdict;
}

export class Line {
  readonly queue: Queue<Entry>;
  readonly #stage: LimitStage;
  readonly #clock: Clock;
  readonly #timers: Timers;
  readonly #answers: Answers;
  #timer: unknown = undefined;
  /** When the timer fires (ms on the clock), `Infinity` when none is set. */
  #at = Infinity;
  #pumping = false;
  #again = false;

  constructor(queue: Queue<Entry>, stage: LimitStage, clock: Clock, timers: Timers, answers: Answers) {
    this.queue = queue;
    this.#stage = stage;
    this.#clock = clock;
    this.#timers = timers;
    this.#answers = answers;
    // A place given back (a request settled, or released for a later stage's refusal) may let one go.
    stage.freed = (now) => {
      if (queue.length > 0) this.#pump(now);
    };
  }

  /**
   * Puts a request the limit refused at `now` (ms) in line: its verdict once a place frees, or a
   * refusal when the queue gives up on it (full, or its wait ran out). Rejects with the signal's
   * reason when its caller aborts first, holding nothing.
   */
  wait(
    now: number,
    key: string,
    cost: number,
    priority: Priority | undefined,
    reason: "limit" | "reserved",
    signal: AbortSignal | undefined,
  ): Promise<Verdict> {
    return new Promise<Verdict>((resolve, reject) => {
      const e: Entry = { key, cost, priority, reason, resolve, reject, signal, abort: undefined };
      const waiter = this.queue.push(now, e, priority === undefined ? this.#stage.priority : priority);
      if (waiter === undefined) return resolve(this.#answers.refused(e));
      if (signal !== undefined) {
        e.abort = () => {
          // Its caller left: out of line, holding nothing; the timer follows the queue.
          if (!this.queue.remove(waiter)) return;
          e.abort = undefined;
          // The signal's own reason, as fetch and timers/promises reject with it.
          // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors -- whatever the caller aborted with
          reject(signal.reason);
          this.#pump(Number.NaN);
        };
        signal.addEventListener("abort", e.abort, { once: true });
      }
      this.#pump(now);
    });
  }

  /**
   * Hands back the waiters the queue gave up on, serves as many as the limit has places for, and
   * sets the one timer for the next give-up. Never throws: what an answer throws rejects its caller.
   */
  #pump(given: number): void {
    if (this.#pumping) {
      // A request served here gave its place back at once (a later check refused it): go round again.
      this.#again = true;
      return;
    }
    let now = given;
    if (!(typeof now === "number" && now - now === 0)) {
      try {
        now = this.#clock();
      } catch {
        return this.#arm(Number.NaN); // a clock that throws: the timer tries again
      }
    }
    this.#pumping = true;
    try {
      do {
        this.#again = false;
        const queue = this.queue;
        for (let w = queue.dropped(now); w !== undefined; w = queue.dropped(now)) this.#answer(w, false);
        const limiter = this.#stage.limiter;
        const fallback = this.#stage.priority;
        for (let w = queue.next(now); w !== undefined; w = queue.next(now)) {
          const p = w.value.priority;
          if (limiter.room(p === undefined ? fallback : p) <= 0) break;
          queue.remove(w, now);
          this.#answer(w, true);
        }
      } while (this.#again);
    } finally {
      this.#pumping = false;
    }
    this.#arm(now);
  }

  /** Answers a waiter taken out of the queue: served (`run`) or given up on. */
  #answer(w: Waiter<Entry>, served: boolean): void {
    const e = w.value;
    if (e.abort !== undefined) e.signal?.removeEventListener("abort", e.abort);
    e.abort = undefined;
    e.signal = undefined;
    try {
      e.resolve(served ? this.#answers.run(e) : this.#answers.refused(e));
    } catch (error) {
      e.reject(error);
    }
  }

  /** One timer, at the queue's next give-up; none while nobody waits. */
  #arm(now: number): void {
    const due = now === now ? this.queue.due(now) : this.#at;
    if (due === this.#at && this.#timer !== undefined) return;
    if (this.#timer !== undefined) this.#timers.clear(this.#timer);
    this.#timer = undefined;
    this.#at = Infinity;
    if (due === Infinity || this.queue.length === 0) return;
    this.#at = due;
    // At least a millisecond: a timer may fire a hair early, and the queue then says "not yet".
    this.#timer = this.#timers.set(
      () => {
        this.#timer = undefined;
        this.#at = Infinity;
        this.#pump(Number.NaN);
      },
      Math.max(1, due - now),
    );
    // The waiting requests' own sockets hold the process open; the timer need not.
    this.#timers.unref?.(this.#timer);
  }
}
