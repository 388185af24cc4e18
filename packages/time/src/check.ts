// Argument checks shared by every tideward package, so that bad configuration
// fails at construction with one message shape: what, which value, what was expected.

function show(value: unknown): string {
  if (typeof value === "string") return JSON.stringify(value);
  if (typeof value === "number" && Object.is(value, -0)) return "-0";
  if (typeof value === "bigint") return `${value}n`;
  if (value === null || typeof value !== "object") return String(value);
  return Object.prototype.toString.call(value);
}

/** Renders a value for an error message: strings quoted, everything else as `String` would. */
export function describe(value: unknown): string {
  return show(value);
}

/**
 * A finite number, or a `TypeError` (not a number) / `RangeError` (NaN, ±Infinity) naming `what`.
 *
 * @param value - the value to check
 * @param what - how the message names it, such as `"Bucket rate"`
 * @returns the value, typed as a number
 */
export function finite(value: unknown, what: string): number {
  if (typeof value !== "number") throw new TypeError(`${what} must be a number, got ${typeof value} ${show(value)}`);
  if (!Number.isFinite(value)) throw new RangeError(`${what} must be a finite number, got ${show(value)}`);
  return value;
}

/** A finite number above zero, or a `RangeError`/`TypeError` naming `what` and the value. */
export function positive(value: unknown, what: string): number {
  const n = finite(value, what);
  if (n <= 0) throw new RangeError(`${what} must be above 0, got ${show(n)}`);
  return n;
}

/** A finite number at or above zero, or a `RangeError`/`TypeError` naming `what` and the value. */
export function nonNegative(value: unknown, what: string): number {
  const n = finite(value, what);
  if (n < 0) throw new RangeError(`${what} must be 0 or more, got ${show(n)}`);
  return n;
}

/** A finite number in `[min, max]`, or a `RangeError`/`TypeError` naming `what` and the value. */
export function between(value: unknown, min: number, max: number, what: string): number {
  const n = finite(value, what);
  if (n < min || n > max) throw new RangeError(`${what} must be between ${min} and ${max}, got ${show(n)}`);
  return n;
}

/** A safe integer at or above `min`, or a `RangeError`/`TypeError` naming `what` and the value. */
export function integer(value: unknown, what: string, min = Number.MIN_SAFE_INTEGER): number {
  const n = finite(value, what);
  if (!Number.isSafeInteger(n)) throw new RangeError(`${what} must be a whole number, got ${show(n)}`);
  if (n < min) throw new RangeError(`${what} must be ${min} or more, got ${show(n)}`);
  return n;
}
