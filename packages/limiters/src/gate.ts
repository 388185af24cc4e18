import { check } from "@tideward/time/internal";
import { MAX_COUNT } from "./args";
import type { RateLimit } from "./rate-limit";

/**
 * A count with a ceiling: the concurrency limit a server puts on itself.
 *
 * Unlike a rate, this does not depend on time at all, and it never reads a clock: it is how
 * many things are happening at once. A server past its limit answers rather than queues,
 * which is what keeps a queue from becoming the outage.
 *
 * A limit of zero or less (or `Infinity`) means no ceiling: a configuration that leaves the
 * limit unset should not refuse everything. `leave` more often than `enter` never makes `held`
 * negative; the extra leaves are ignored.
 *
 * @example
 * const gate = new Gate(2);
 * gate.enter(); // true
 * gate.enter(); // true
 * gate.enter(); // false — two inside already
 * gate.leave();
 * gate.held;    // 1
 */
export class Gate {
  /** How many may be inside at once, as given; zero or less (or `Infinity`) means no ceiling. */
  readonly limit: number;

  readonly #ceiling: number;
  #held = 0;

  /**
   * A gate nothing has entered.
   *
   * @param limit - how many calls may be inside at once: a whole number up to 2^53 − 1 (zero
   *   or less for no ceiling), or `Infinity`
   * @throws RangeError when `limit` is NaN, -Infinity, a fraction or above 2^53 − 1 (TypeError
   *   when not a number)
   */
  constructor(limit: number) {
    if (limit !== Infinity) {
      check.finite(limit, "Gate limit");
      if (!Number.isInteger(limit))
        throw check.rangeError("Gate limit", `must be a whole number, got ${check.describe(limit)}`, limit);
      // Past 2^53 counting one by one stops being exact; Infinity is how to say "no ceiling".
      if (limit > MAX_COUNT)
        throw check.rangeError(
          "Gate limit",
          `must be at most ${MAX_COUNT} (2^53 − 1; Infinity for no ceiling), got ${check.describe(limit)}`,
          limit,
        );
    }
    this.limit = limit;
    this.#ceiling = limit > 0 ? limit : Infinity;
  }

  /** How many are inside: entered and not yet left, never negative. */
  get held(): number {
    return this.#held;
  }

  /** Whether there is room, taking it if there is. Every `true` needs one {@link Gate.leave}. */
  enter(): boolean {
    if (this.#held >= this.#ceiling) return false;
    this.#held++;
    return true;
  }

  /** What {@link Gate.enter} would answer, without taking room. */
  peek(): boolean {
    return this.#held < this.#ceiling;
  }

  /** Gives one place back. With nobody inside it does nothing, so `held` never goes negative. */
  leave(): void {
    if (this.#held > 0) this.#held--;
  }

  /**
   * What an HTTP `RateLimit` header needs: the limit, the places left, and a reset of 0 (a gate
   * frees a place when a call leaves, not at a time). Without a ceiling both `limit` and
   * `remaining` are `Infinity`, and there is no header to send.
   *
   * @param _now - ignored (a gate never reads a clock); accepted so every limiter answers
   *   `rateLimit(now)` alike
   */
  rateLimit(_now?: number): RateLimit {
    return { limit: this.#ceiling, remaining: this.#ceiling - this.#held, reset: 0 };
  }
}
