import { finite, nonNegative } from "./check";
import type { Span } from "./span";

/** Reads the time: an instant in milliseconds on some fixed scale. */
export type Clock = () => number;

/**
 * The system clock: monotonic (never steps back when the wall clock is adjusted) and on the
 * wall-clock scale, milliseconds since the Unix epoch with sub-millisecond fractions.
 *
 * @remarks It is `performance.timeOrigin + performance.now()`. Over days it can drift a little
 * from `Date.now()`, which is the price of never running backwards.
 */
export const systemClock: Clock = () => performance.timeOrigin + performance.now();

/**
 * A clock that moves only when told: for tests and simulations, where an hour of traffic is a loop.
 *
 * `now` is a bound function, so `clock.now` can be passed wherever a {@link Clock} is wanted.
 *
 * @example
 * const clock = new ManualClock(0);
 * clock.advance(1_500);
 * clock.now(); // 1500
 */
export class ManualClock {
  #t: number;

  /** @param start - the first reading, in milliseconds; 0 by default */
  constructor(start = 0) {
    this.#t = finite(start, "ManualClock start");
  }

  /** The current reading, in milliseconds. */
  readonly now: Clock = () => this.#t;

  /**
   * Moves the clock forward by `span` milliseconds, to `now + span` exactly as a caller computes
   * it in floating point (so a span under half a float step of the reading, some 0.00012 ms at
   * `Date.now()` scale, leaves it where it is).
   *
   * @returns the new reading, in milliseconds
   * @throws RangeError for a negative or non-finite span (this clock never runs backwards by
   *   accident), or one that would carry the reading past the largest finite number; the clock
   *   is left where it was
   */
  advance(span: Span): number {
    const s = nonNegative(span, "ManualClock.advance span");
    const t = this.#t;
    const next = t + s;
    if (next === Infinity)
      throw new RangeError(`ManualClock.advance span must keep the reading finite, got ${s} at ${t}`);
    this.#t = next;
    return next;
  }

  /** Sets the reading to `t` milliseconds, backwards included: the one way to make it step back. */
  set(t: number): number {
    this.#t = finite(t, "ManualClock.set time");
    return this.#t;
  }

  /**
   * A sleep that advances this clock instead of waiting, for code that takes an injectable sleep.
   * Rejects with the signal's reason if it is already aborted, and with advance's error for a
   * span it refuses.
   *
   * @param span - milliseconds to move forward
   */
  readonly sleep = (span: Span, signal?: AbortSignal): Promise<void> => {
    if (signal?.aborted) return Promise.reject(signal.reason as Error);
    // A sleep answers with a promise: a span advance refuses rejects it rather than throwing.
    return new Promise<void>((resolve) => {
      this.advance(span);
      resolve();
    });
  };
}
