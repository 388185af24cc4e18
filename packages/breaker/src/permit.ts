import { REPORT_TO, isSettled, settle } from "@tideward/time/internal";
import type { Settleable } from "@tideward/time/internal";

/**
 * Where a {@link Permit} reports how its call went: the breaker that issued it.
 * @internal
 */
export interface Settle {
  /** Records a success at `now` (ms). */
  pass(now: number): void;
  /** Records a failure at `now` (ms). */
  fail(now: number): void;
}

/**
 * A call the {@link Breaker} let through. Exactly one of {@link Permit.pass} and
 * {@link Permit.fail} settles it; until then the window holds no record of how the call went.
 *
 * A permit settles once: the first `pass` or `fail` counts and every later one is ignored, so a
 * `finally` that settles again, or a retry wrapper that reports twice, cannot count a call twice.
 * A permit never settled is simply never counted (it was not a refusal either).
 */
export class Permit implements Settleable<Settle> {
  /** @internal Where the permit reports; cleared when it settles. */
  [REPORT_TO]: Settle | undefined;

  /** @internal Permits come from {@link Breaker.allow}; there is no reason to make one. */
  constructor(to: Settle) {
    this[REPORT_TO] = to;
  }

  /** Whether `pass` or `fail` has been called. */
  get settled(): boolean {
    return isSettled(this);
  }

  /**
   * The call succeeded.
   *
   * @param now - the clock reading the call finished at, in milliseconds
   */
  pass(now: number): void {
    settle(this)?.pass(now);
  }

  /**
   * The call failed.
   *
   * @param now - the clock reading the call finished at, in milliseconds
   */
  fail(now: number): void {
    settle(this)?.fail(now);
  }
}
