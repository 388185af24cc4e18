// The argument checks every limiter shares. The hot-path ones run only when a fast comparison has
// already failed, so a valid call pays one comparison, and a bad one gets the message shape of
// `@tideward/time`'s `check` (the field, the value, what was expected).
import { check } from "@tideward/time/internal";
import { MAX_INSTANT, MAX_SPAN, MIN_SPAN } from "./grid";

/**
 * The error for a clock reading that is not an instant the limiters keep their promises at: a
 * `TypeError` for anything but a number, a `RangeError` for NaN, ±Infinity or a reading beyond
 * ±{@link MAX_INSTANT} ms (answering any of them would be a silent wrong answer: a bucket refilled
 * to the brim by `Infinity`, a window too short for the clock's own step).
 *
 * @param now - what the caller passed as the clock reading
 * @param what - how the message names it, such as `"Bucket.take now"`
 */
export function badInstant(now: unknown, what: string): TypeError | RangeError {
  if (typeof now !== "number")
    return new TypeError(`${what} must be a number of milliseconds, got ${typeof now} ${check.describe(now)}`);
  if (!Number.isFinite(now))
    return new RangeError(`${what} must be a finite number of milliseconds, got ${check.describe(now)}`);
  return new RangeError(
    `${what} must be within ±${MAX_INSTANT} ms (±2^45, about 1 115 years either side of 1970), got ${check.describe(now)}`,
  );
}

/** Throws {@link badInstant}'s error. */
export function badNow(now: unknown, what: string): never {
  throw badInstant(now, what);
}

/** Throws the `TypeError` for a cost that is not a number, or the `RangeError` for NaN or a negative one. */
export function badCost(n: unknown, what: string): never {
  if (typeof n !== "number") throw new TypeError(`${what} must be a number, got ${typeof n} ${check.describe(n)}`);
  throw new RangeError(`${what} must be 0 or more, got ${check.describe(n)}`);
}

/**
 * Why `ms` (a number above 0) cannot be a period or window, or `undefined` when it can: below
 * {@link MIN_SPAN} the clock's own step near {@link MAX_INSTANT} is a large share of it, above
 * {@link MAX_SPAN} the sums with a clock reading lose it.
 *
 * @returns the end of a message, to follow the field's name
 */
export function spanProblem(ms: number): string | undefined {
  if (ms < MIN_SPAN)
    return `must be at least ${MIN_SPAN} ms (2^-4; a shorter span is too close to a clock reading's own step), got ${check.describe(ms)}`;
  if (ms > MAX_SPAN) return `must be at most ${MAX_SPAN} ms (2^44, about 557 years), got ${check.describe(ms)}`;
  return undefined;
}

/** A period or window in milliseconds: finite, above 0 and within the span bounds, or an error naming `what`. */
export function span(value: unknown, what: string): number {
  const ms = check.positive(value, what);
  const problem = spanProblem(ms);
  if (problem !== undefined) throw check.rangeError(what, problem, ms);
  return ms;
}

/** A clock reading given at construction, or the error naming `what`. */
export function instant(value: unknown, what: string): number {
  if (typeof value !== "number" || !(value <= MAX_INSTANT && value >= -MAX_INSTANT)) throw badInstant(value, what);
  return value;
}

/**
 * A rate's refill bound: `amount` units at `rate` a second must come back within
 * {@link MAX_SPAN} ms, or the waits this limiter answers would leave the clock's range.
 *
 * @throws RangeError naming `what` (the rate), the value and the least rate allowed
 */
export function refillBound(rate: number, amount: number, what: string, unit: string): void {
  if ((amount * 1_000) / rate <= MAX_SPAN) return;
  const least = (amount * 1_000) / MAX_SPAN;
  throw check.rangeError(
    what,
    `must be at least ${least} for a ${unit} of ${amount} (it must refill within ${MAX_SPAN} ms, 2^44), got ${check.describe(rate)}`,
    rate,
  );
}

/** The largest burst or quota a limiter takes: 2^53 − 1, below which whole counts are exact. */
export const MAX_COUNT = Number.MAX_SAFE_INTEGER;

/**
 * The error for a limiter's options given where its first number goes, as other libraries take
 * them (`new Bucket({ rate: 5, burst: 5 })`): it says the order and writes the call the caller
 * meant, from the fields it was given. Nothing when `value` is not an object.
 *
 * @param value - what was passed first
 * @param name - the class, such as `"Bucket"`
 * @param first - the field the first argument is, such as `"rate"`
 * @param second - the second argument's fields, in order, or `undefined` when the second is an options object
 * @param options - the fields of its options object
 */
export function positional(
  value: unknown,
  name: string,
  first: string,
  second: string | undefined,
  options: readonly string[],
): void {
  if (typeof value !== "object" || value === null) return;
  const fields = value as Record<string, unknown>;
  const shown = (k: string, fallback: string): string => (typeof fields[k] === "number" ? String(fields[k]) : fallback);
  const rest = options.filter((k) => fields[k] !== undefined).map((k) => `${k}: ${check.describe(fields[k])}`);
  const args = [shown(first, first)];
  if (second !== undefined) args.push(shown(second, second));
  if (rest.length > 0) args.push(`{ ${rest.join(", ")} }`);
  const order =
    second === undefined ? `the ${first} first and its options second` : `the ${first} first and the ${second} second`;
  throw new TypeError(
    `${name} takes ${order}: new ${name}(${args.join(", ")}), got ${Array.isArray(value) ? "an array" : "an object"} as the ${first}`,
  );
}
