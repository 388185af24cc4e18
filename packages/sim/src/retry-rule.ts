import { RetryBudget } from "@tideward/backoff";
import type { Backoff } from "@tideward/backoff";
import type { Random } from "@tideward/time";
import { check } from "@tideward/time/internal";
import type { Calls } from "./calls";
import { formatCount, own } from "./memory";
import { MAX_ATTEMPTS } from "./options";
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
  readonly #start: number;
  /** The budget every call's retries (and hedges) draw on, if any. */
  readonly budget: RetryBudget | undefined;

  constructor(spec: RunSpec, random: Random) {
    this.#backoff = spec.backoff;
    this.#attempts = spec.attempts;
    this.#deadline = spec.deadline;
    this.#refusals = spec.retryRefused;
    this.#random = random;
    this.#start = spec.start;
    this.budget = spec.budget === undefined ? undefined : new RetryBudget(spec.budget, spec.start);
  }

  /**
   * How long call `c` waits before its next attempt, ms, its last one (sent at `sent`) having
   * failed (or been refused) at `now`; -1 when it makes none: no retries, the attempts spent, the
   * budget empty, or no retry that could start before its deadline.
   *
   * @throws RangeError when the call has retried {@link MAX_ATTEMPTS} times in a row at one
   *   instant: every attempt answered at once and every wait too short to move the clock, so
   *   simulated time would never advance
   */
  next(calls: Calls, c: number, now: number, refused: boolean, sent: number): number {
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
    // A wait that leaves the clock where it is, after an attempt answered the instant it was
    // sent, is one more attempt at this instant: with a wait of 0 and no deadline to reach, a
    // call failing at once would retry for ever while simulated time stands still.
    if (now + delay !== now) calls.same[c] = 0;
    // The first of a row: the last attempt took time, or it was the call's first (the row's count is another call's).
    else if (sent !== now || made === 1) calls.same[c] = 1;
    else if (++calls.same[c] >= MAX_ATTEMPTS) throw stuck(now - this.#start, delay);
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

/** The error for a call that kept retrying at one instant `at` (ms after the start), `delay` ms a wait. */
function stuck(at: number, delay: number): RangeError {
  return own(
    new RangeError(
      `simulate client retry: a call retried ${formatCount(MAX_ATTEMPTS)} times in a row at one instant (${at} ms after the start), each attempt answered the moment it was sent and each client retry backoff wait (${delay} ms) too short to move the clock: simulated time does not advance. Give the backoff a wait the clock resolves, or the answer a time to take (a backend latency, a network leg, a client timeout; a refusal is retried at once only with client retry refusals)`,
    ),
  );
}
