// The hot-path argument checks every limiter shares. They run only when a fast comparison has
// already failed, so a valid call pays one comparison, and a bad one gets the message shape of
// `@tideward/time`'s `check` (the field, the value, what was expected).
import { check } from "@tideward/time/internal";

/**
 * Throws the `RangeError` for a clock reading that is not finite: NaN or ±Infinity is not an
 * instant, and answering it would be a silent wrong answer (a bucket refilled to the brim by
 * `Infinity`, a window whose stamps never age out).
 */
export function badNow(now: number, what: string): never {
  check.finite(now, what);
  throw new RangeError(`${what} must be a finite number of milliseconds, got ${now}`);
}

/** Throws the `RangeError` for a cost that is NaN or negative. */
export function badCost(n: number, what: string): never {
  check.nonNegative(n, what);
  throw new RangeError(`${what} must be 0 or more, got ${n}`);
}

/**
 * The share of a burst forgiven when comparing tokens: a billionth. Refills are sums of
 * products of floating-point numbers, so a bucket that mathematically holds exactly one token
 * may compute 0.9999999999999998 of one; without the slack it would refuse a token that is
 * there, and a take at `now + next(now)` could fail.
 */
export const SLACK = 1e-9;
