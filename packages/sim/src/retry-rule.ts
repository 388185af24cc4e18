import { RetryBudget } from "@tideward/backoff";
import type { Backoff } from "@tideward/backoff";
import type { Random } from "@tideward/time";
import { check } from "@tideward/time/internal";
import type { Calls } from "./calls";
import type { RunSpec } from "./options";

/**
 * The client's rule for another attempt: its backoff, a count of attempts or a deadline, a retry
 * budget shared by every call, and whether refusals are retried. Draws its jitter from the
 * client's stream.
 */
export class RetryRule {
  readonly #backoff: Backoff | undefined;
  readonly #attempts: number;
  readonly #deadline: number;
  readonly #refusals: boolean;
  readonly #random: Random;
  /** The budget every call's retries (and hedges) draw on, if any. */
  readonly budget: RetryBudget | undefined;

  constructor(spec: RunSpec, random: Random) {
    this.#backoff = spec.backoff;
    this.#attempts = spec.attempts;
    this.#deadline = spec.deadline;
    this.#refusals = spec.retryRefused;
    this.#random = random;
    this.budget = spec.budget === undefined ? undefined : new RetryBudget(spec.budget, spec.start);
  }

  /**
   * How long call `c` waits before its next attempt, ms, its last one having failed (or been
   * refused) at `now`; -1 when it makes none: no retries, the attempts spent, the budget empty,
   * or no retry that could start before its deadline.
   */
  next(calls: Calls, c: number, now: number, refused: boolean): number {
    const made = calls.made[c];
    if (this.#backoff === undefined || (refused && !this.#refusals) || !(made < this.#attempts)) return -1;
    const until = calls.start[c] + this.#deadline;
    // With a deadline the wait is drawn first, to know whether a retry could start in time.
    const timed = until < Infinity;
    let delay = timed ? this.#wait(calls, c, made) : 0;
    if (delay < 0 || !(delay + now < until) || (this.budget !== undefined && !this.budget.tryRetry(now))) return -1;
    if (!timed) delay = this.#wait(calls, c, made);
    if (delay < 0) return -1;
    calls.prev[c] = delay;
    return delay;
  }

  /**
   * The backoff's wait before call `c`'s next attempt, `made` having been made, ms; -1 when it
   * answers `undefined` (no more retries). Anything but a finite wait, 0 or more, is refused: a
   * NaN would silently end every call, and Infinity leave it unfinished for ever.
   */
  #wait(calls: Calls, c: number, made: number): number {
    const backoff = this.#backoff as Backoff;
    const d: unknown = backoff.delay(made, {
      random: this.#random(),
      previous: made === 1 ? backoff.base : calls.prev[c],
    });
    if (d === undefined) return -1;
    if (!(typeof d === "number" && d >= 0 && d < Infinity))
      throw new RangeError(
        `delay(${made}) must answer a wait in ms (a finite number, 0 or more) or undefined, got ${check.describe(d)}`,
      );
    return d;
  }
}
