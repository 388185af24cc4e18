// One retry decision for every retry loop (`retry` here, the guard's, a user's): the backoff's
// delay against the server's hint, its cap, the deadline and the budget. Clock-free and
// dice-free: the loop hands it its draw and its clock.
import { check } from "@tideward/time/internal";
import type { Span } from "@tideward/time";
import type { Backoff } from "./backoff";
import type { GiveUp } from "./retry-error";

/** What a hint over `maxRetryAfter` does. */
export type OverMaxRetryAfter = "cap" | "give-up";

/** A {@link RetryBudget}, or anything with its `grant`. */
export interface RetryGrant {
  /** Spends a retry at `now` (ms): a receipt, or -1 when refused. */
  grant(now: number): number;
}

/** A retry loop's policy, read once (the README's "One retry decision" has each field). */
export interface RetryRule {
  /** The attempts and delays; `undefined`: none. */
  readonly backoff: Backoff | undefined;
  /** The longest wait a hint may ask for, ms. */
  readonly maxRetryAfter: Span;
  /** What a longer hint does. */
  readonly overMaxRetryAfter: OverMaxRetryAfter;
  /** Grants each retry, if given. */
  readonly budget: RetryGrant | undefined;
}

/** What a loop knows when an attempt has failed; times in ms. */
export interface FailedAttempt {
  /** Attempts made, the failed one included. */
  readonly made: number;
  /** The previous delay, NaN before the first. */
  readonly previous: Span;
  /** A draw in `[0, 1)`. */
  readonly draw: number;
  /** As {@link readHint} reads it. */
  readonly hint: Span;
  /** When the call must end; `Infinity` for never. */
  readonly end: number;
  /** The clock, or its reading: read only for a deadline or a budget. */
  readonly now: number | (() => number);
}

/** A retry after `wait` ms, or why not (`giveUp`); `receipt` is the budget's grant, to give back if unused. */
export interface RetryDecision {
  /** Why not; `undefined` for a retry. */
  readonly giveUp: GiveUp | undefined;
  /** The wait before the retry, ms. */
  readonly wait: Span;
  /** The backoff's own delay (ms): the next `previous`. */
  readonly delay: Span;
  /** The budget's receipt, -1 for none. */
  readonly receipt: number;
}

const stop = (giveUp: GiveUp): RetryDecision => Object.freeze({ giveUp, wait: 0, delay: 0, receipt: -1 });
/** The give-ups, one record each: a decision that ends the call allocates nothing. */
const GIVE_UP: Readonly<Record<GiveUp, RetryDecision>> = {
  exhausted: stop("exhausted"),
  retryAfter: stop("retryAfter"),
  deadline: stop("deadline"),
  budget: stop("budget"),
};

/**
 * Whether a retry follows a failed attempt, and after how long: the one decision `retry` and the
 * guard take, weighing the backoff's delay, the hint, its cap, the deadline and the budget.
 * @throws RangeError for a hint {@link readHint} would not answer; what the clock throws
 */
export function decideRetry(rule: RetryRule, failed: FailedAttempt): RetryDecision {
  const backoff = rule.backoff;
  const made = failed.made;
  if (backoff === undefined || !backoff.more(made)) return GIVE_UP.exhausted;
  const previous = failed.previous >= 0 ? failed.previous : backoff.base;
  const delay = backoff.delay(made, { random: failed.draw, previous }) ?? 0;
  let hint = failed.hint;
  if (!(hint >= 0)) throw new RangeError(`decideRetry hint must be a wait in ms (see readHint), got ${hint}`);
  if (hint > rule.maxRetryAfter || hint === Infinity) {
    // A hint of Infinity under a cap of Infinity: no wait would ever end.
    if (rule.overMaxRetryAfter !== "cap" || rule.maxRetryAfter === Infinity) return GIVE_UP.retryAfter;
    hint = rule.maxRetryAfter;
  }
  const wait = hint > delay ? hint : delay;
  const end = failed.end;
  const budget = rule.budget;
  let receipt = -1;
  if (end < Infinity || budget !== undefined) {
    const source = failed.now;
    const now = typeof source === "function" ? source() : source;
    // As a caller computes it (`now + wait`), to the float step near Date.now(); NaN never ends.
    if (end < Infinity && !(now + wait < end)) return GIVE_UP.deadline;
    if (budget !== undefined) {
      receipt = budget.grant(now);
      if (!(receipt >= 0)) return GIVE_UP.budget;
    }
  }
  return { giveUp: undefined, wait, delay, receipt };
}

/**
 * A server's hint in ms, as every retry loop reads it: 0 or less, `undefined` or `null` is no
 * wait. Anything else not a number throws naming `what` (a `RangeError` for NaN), with `cause`.
 */
export function readHint(value: unknown, what: string, cause?: unknown): Span {
  if (typeof value === "number" && !Number.isNaN(value)) return value > 0 ? value : 0;
  if (value === undefined || value === null) return 0;
  const why =
    value instanceof Date
      ? ": a Date is an instant; give the wait until it (date.getTime() - now)"
      : typeof value === "string"
        ? ": text is not read as a number; parse it into milliseconds first"
        : "";
  const got = typeof value === "number" ? "NaN" : `${typeof value} ${check.describe(value)}${why}`;
  const message = `${what} must be a number of milliseconds (or undefined for none), got ${got}`;
  throw typeof value === "number" ? new RangeError(message, { cause }) : new TypeError(message, { cause });
}

/** The default hint: what was thrown's `retryAfter`, as it is. */
export function retryAfterProperty(error: unknown): unknown {
  if ((typeof error !== "object" && typeof error !== "function") || error === null) return undefined;
  return (error as { retryAfter?: unknown }).retryAfter;
}
