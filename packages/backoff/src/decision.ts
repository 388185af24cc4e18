// One retry decision, for every retry loop: `retry` here, the guard's, and any a user writes.
// After an attempt has failed it weighs the backoff's delay against the server's hint, the hint's
// cap (and what happens over it), the deadline and the retry budget, in that order, and answers
// whether a retry follows and how long to wait first. Clock-free and dice-free: the loop hands it
// its draw and its clock.
import { check } from "@tideward/time/internal";
import type { Span } from "@tideward/time";
import type { Backoff } from "./backoff";
import type { GiveUp } from "./retry-error";

/**
 * What a server's hint longer than `maxRetryAfter` does: `"give-up"` ends the call there (got's
 * way), `"cap"` waits `maxRetryAfter` instead (ky's way).
 */
export type OverMaxRetryAfter = "cap" | "give-up";

/** Where retries are granted from: a {@link RetryBudget}, or anything with its `grant`. */
export interface RetryGrant {
  /** Spends a retry at `now` (ms): a receipt (0 or more) to give it back with, or -1 when refused. */
  grant(now: number): number;
}

/**
 * A loop's retry policy, read once: what {@link decideRetry} weighs every failed attempt against.
 * `retry`'s options and the guard's resolve to one.
 */
export interface RetryRule {
  /** The schedule: how many attempts in all, and the delay before each retry. `undefined`: no retries. */
  readonly backoff: Backoff | undefined;
  /** The longest wait a server's hint may ask for, in milliseconds; 0 or more, `Infinity` for any finite one. */
  readonly maxRetryAfter: Span;
  /** What a hint over `maxRetryAfter` (or a hint of `Infinity`) does. */
  readonly overMaxRetryAfter: OverMaxRetryAfter;
  /** The budget every retry must be granted by; `undefined` for none. */
  readonly budget: RetryGrant | undefined;
}

/** What a loop knows when an attempt has failed and another is worth making. */
export interface FailedAttempt {
  /** Attempts made so far, the failed one included (the first being 1): its retry is retry `made`. */
  readonly made: number;
  /** The backoff's delay before the previous retry (ms), NaN before the first: a decorrelated jitter grows from it. */
  readonly previous: Span;
  /** A draw in `[0, 1)` for the jitter. */
  readonly draw: number;
  /** The server's hint in milliseconds, as {@link readHint} reads it: 0 for none, `Infinity` for never. */
  readonly hint: Span;
  /** The instant the call must end by (ms, on the loop's clock); `Infinity` for no deadline. */
  readonly end: number;
  /**
   * The clock's reading (ms), or the clock itself: read once, and only when a deadline or a
   * budget needs it, after the hint has been weighed. A reading that is NaN gives up at a deadline.
   */
  readonly now: number | (() => number);
}

/** What {@link decideRetry} decided. */
export interface RetryDecision {
  /** Why no retry follows, or `undefined` when one does. */
  readonly giveUp: GiveUp | undefined;
  /** How long to wait before the retry, in milliseconds: the delay, or the hint when it is longer. 0 on a give-up. */
  readonly wait: Span;
  /** The backoff's own delay for this retry (ms): the `previous` of the next decision. 0 on a give-up. */
  readonly delay: Span;
  /**
   * The budget's receipt for this retry, -1 with no budget or on a give-up. A retry granted and
   * then not made (the caller gave up during the wait, a listener threw) gives it back with
   * `budget.giveBack(receipt)`.
   */
  readonly receipt: number;
}

/** The give-ups, one record each: a decision that ends the call allocates nothing. */
const GIVE_UP: Readonly<Record<GiveUp, RetryDecision>> = {
  exhausted: Object.freeze({ giveUp: "exhausted", wait: 0, delay: 0, receipt: -1 }),
  retryAfter: Object.freeze({ giveUp: "retryAfter", wait: 0, delay: 0, receipt: -1 }),
  deadline: Object.freeze({ giveUp: "deadline", wait: 0, delay: 0, receipt: -1 }),
  budget: Object.freeze({ giveUp: "budget", wait: 0, delay: 0, receipt: -1 }),
};

/**
 * Whether a retry follows a failed attempt, and how long to wait before it. In this order:
 *
 * 1. the backoff allows no more attempts (or there is none) — gives up, `"exhausted"`;
 * 2. the wait is the backoff's delay for retry `made`, or the hint when it is longer;
 * 3. a hint over `maxRetryAfter`, or of `Infinity`, gives up (`"retryAfter"`) or, with
 *    `overMaxRetryAfter: "cap"`, is held to `maxRetryAfter` (a hint of `Infinity` under a cap of
 *    `Infinity` gives up: no wait would ever end);
 * 4. a wait that would not end before `end` gives up, `"deadline"`, without sleeping for nothing;
 * 5. the budget refuses the retry — gives up, `"budget"`; granted, its receipt is in the answer.
 *
 * The clock is read at step 4, only with a deadline or a budget. Nothing else has an effect: the
 * budget's grant is the one thing spent, and only on a retry.
 *
 * @example
 * const rule = { backoff: new Backoff({ jitter: Jitter.rigid }), maxRetryAfter: 60_000, overMaxRetryAfter: "give-up", budget: undefined } as const;
 * decideRetry(rule, { made: 1, previous: Number.NaN, draw: 0.5, hint: 0, end: Infinity, now: 0 }).wait; // 100
 * decideRetry(rule, { made: 1, previous: Number.NaN, draw: 0.5, hint: 250, end: Infinity, now: 0 }).wait; // 250
 * decideRetry(rule, { made: 1, previous: Number.NaN, draw: 0.5, hint: 250, end: 200, now: 0 }).giveUp; // "deadline"
 * @param rule - the loop's policy, read once
 * @param failed - the attempt that failed, and what the loop knows of the call
 * @throws RangeError for a hint that is not one {@link readHint} answers (NaN, negative); what
 *   the clock throws
 */
export function decideRetry(rule: RetryRule, failed: FailedAttempt): RetryDecision {
  const backoff = rule.backoff;
  const made = failed.made;
  if (backoff === undefined || !backoff.more(made)) return GIVE_UP.exhausted;
  const previous = failed.previous >= 0 ? failed.previous : backoff.base;
  const delay = backoff.delay(made, { random: failed.draw, previous }) ?? 0;
  let hint = failed.hint;
  if (!(hint >= 0))
    throw new RangeError(
      `decideRetry hint must be a wait in milliseconds (readHint reads one), got ${check.describe(hint)}`,
    );
  if (hint > rule.maxRetryAfter || hint === Infinity) {
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
    // Computed as a caller would (`now + wait`): on a clock near Date.now() a wait is made only
    // if it ends before the deadline, to the float step. NaN never does.
    if (end < Infinity && !(now + wait < end)) return GIVE_UP.deadline;
    if (budget !== undefined) {
      receipt = budget.grant(now);
      if (!(receipt >= 0)) return GIVE_UP.budget;
    }
  }
  return { giveUp: undefined, wait, delay, receipt };
}

/**
 * Reads a server's hint, as every retry loop takes it, in milliseconds: a number of 0 or less
 * (a moment already past) is no wait, `Infinity` is "never", and `undefined` or `null` is no
 * hint (0). Anything else is the caller's mistake, and is thrown rather than quietly ignored.
 *
 * @param value - what the hint's source answered: the error's `retryAfter`, or a `retryAfter` callback's answer
 * @param what - how the message names the source, such as `"guard retryAfter's answer"`
 * @param cause - the error the hint came with, kept as the thrown error's `cause`
 * @returns the wait asked for, in milliseconds: 0 or more, `Infinity` included
 * @throws TypeError for what is not a number (text, a `Date`, a BigInt, a boolean, an object);
 *   RangeError for NaN, each naming `what` and the value
 */
export function readHint(value: unknown, what: string, cause?: unknown): Span {
  if (typeof value === "number") {
    if (value > 0) return value;
    if (value <= 0) return 0;
    throw new RangeError(`${what} must be a number of milliseconds (or undefined for none), got NaN`, { cause });
  }
  if (value === undefined || value === null) return 0;
  const why =
    value instanceof Date
      ? ": a Date is an instant; give the wait until it (date.getTime() - now)"
      : typeof value === "string"
        ? ": text is not read as a number; parse it into milliseconds first"
        : "";
  throw new TypeError(
    `${what} must be a number of milliseconds (or undefined for none), got ${typeof value} ${check.describe(value)}${why}`,
    { cause },
  );
}

/**
 * The default source of a hint: the `retryAfter` property of what an attempt threw, in
 * milliseconds (tideward's own refusals carry one), as it is; `undefined` for a thrown value that
 * is not an object. {@link readHint} reads what it answers.
 */
export function retryAfterProperty(error: unknown): unknown {
  if ((typeof error !== "object" && typeof error !== "function") || error === null) return undefined;
  return (error as { retryAfter?: unknown }).retryAfter;
}
