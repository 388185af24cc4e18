// Retries as one module, as each stage is one: the options they own (declared once, here), read
// once with errors naming the path the user typed, into the rule every retry of the guard is
// decided by (`decideRetry` in `@tideward/backoff`, which `retry()` takes too).
//
// Not a stage: a stage admits or refuses one attempt before it runs and hears how it ended, where
// retrying decides, after an attempt has ended, whether another follows and after how long. It
// spans attempts (the previous delay, the call's deadline, a grant held across the wait), never
// refuses an attempt, and holds nothing an attempt could settle or release. What of it admits is
// the retry budget, which is a stage (`budget.ts`); this module is the rest, read as a stage's
// options are.
import { Backoff, retryAfterProperty } from "@tideward/backoff";
import type { BackoffPolicy, OverMaxRetryAfter } from "@tideward/backoff";
import type { Span } from "@tideward/time";
import { check } from "@tideward/time/internal";

/** The guard's retry options. @typeParam R - what the guarded function returns */
export interface RetryOption<R = unknown> {
  /**
   * Retries: a backoff schedule, or fields laid over the preset `backoff` (three attempts in all).
   * Left out, each call makes one attempt (plus its hedges). @defaultValue no retries
   */
  readonly retry?: Backoff | Partial<BackoffPolicy>;
  /**
   * Whether an answered attempt is worth another, asked for every attempt that threw or returned
   * (not for refusals, cancellations or a passed deadline), within the retry policy, the budget
   * and the deadline. @defaultValue exactly the attempts `isFailure` calls failures
   */
  readonly retryOn?: (error: unknown, result: R | undefined) => boolean;
  /**
   * The server's "come back in" hint in milliseconds, for an attempt about to be retried: the
   * wait is the longer of it and the backoff's delay. One that is not a number of ms (text, a
   * `Date`, NaN) ends the call with an error naming it, as in `retry`.
   * @defaultValue the error's `retryAfter` property
   */
  readonly retryAfter?: (error: unknown, result: R | undefined) => number | undefined;
  /** The longest hint the guard will wait for, in milliseconds. @defaultValue 60 000 */
  readonly maxRetryAfter?: Span;
  /**
   * What a hint above `maxRetryAfter` does: `"cap"` waits `maxRetryAfter` (ky's way), `"give-up"`
   * answers with that attempt's outcome at once (got's way). @defaultValue "give-up"
   */
  readonly overMaxRetryAfter?: OverMaxRetryAfter;
}

/** The retry options read once, with every default in place (the budget is its stage's). */
export interface RetryPolicy<R> {
  /** The attempts and delays; `undefined`: one attempt. */
  readonly backoff: Backoff | undefined;
  /** Attempts a call may make in all, hedges aside (1 without `retry`). */
  readonly attempts: number;
  readonly retryOn: ((error: unknown, result: R | undefined) => boolean) | undefined;
  readonly retryAfter: (error: unknown, result: R | undefined) => unknown;
  /** How a hint that is not a number of ms is named: `"guard retryAfter's answer"`, `"guard: the error's retryAfter"`. */
  readonly hintName: string;
  readonly maxRetryAfter: number;
  readonly overMaxRetryAfter: OverMaxRetryAfter;
}

/** The options this module owns, in the order they are read. */
const OPTIONS = [
  "retry",
  "retryOn",
  "retryAfter",
  "maxRetryAfter",
  "overMaxRetryAfter",
] as const satisfies readonly (keyof RetryOption)[];

/**
 * Retries as a guard reads them: the options they own, and how they are read from the holder's
 * whole options record `o` (read once), each error naming `owner` and the option.
 */
export const retry = {
  options: OPTIONS,
  parse<R>(o: Readonly<Record<string, unknown>>, owner: string): RetryPolicy<R> {
    let backoff: Backoff | undefined;
    if (check.has(o.retry, "delay")) backoff = o.retry as Backoff;
    else if (o.retry !== undefined) {
      if (!check.isObject(o.retry))
        throw check.typeError(
          `${owner} retry`,
          `must be a Backoff or backoff fields, got ${check.describe(o.retry)}`,
          o.retry,
        );
      const fields = o.retry as Partial<BackoffPolicy>;
      backoff = check.within(`${owner} retry`, ["Backoff"], () => new Backoff(fields));
    }
    const over = o.overMaxRetryAfter ?? "give-up";
    if (over !== "cap" && over !== "give-up")
      throw check.typeError(
        `${owner} overMaxRetryAfter`,
        `must be "cap" or "give-up", got ${check.describe(over)}`,
        over,
      );
    const retryOn =
      o.retryOn === undefined
        ? undefined
        : check.fn<(error: unknown, result: R | undefined) => boolean>(o.retryOn, `${owner} retryOn`);
    const retryAfter =
      o.retryAfter === undefined
        ? undefined
        : check.fn<(error: unknown, result: R | undefined) => unknown>(o.retryAfter, `${owner} retryAfter`);
    return {
      backoff,
      attempts: backoff?.attempts ?? 1,
      retryOn,
      retryAfter: retryAfter ?? retryAfterProperty,
      hintName: retryAfter === undefined ? `${owner}: the error's retryAfter` : `${owner} retryAfter's answer`,
      maxRetryAfter:
        o.maxRetryAfter === undefined ? 60_000 : check.nonNegative(o.maxRetryAfter, `${owner} maxRetryAfter (ms)`),
      overMaxRetryAfter: over,
    };
  },
};
