// Argument checks shared by every tideward package, so that bad configuration
// fails at construction with one message shape: what, which value, what was expected. Each throws
// an OptionError (option-error.ts): the path and the value are data on the error as well.
import { argumentError, rangeError, typeError } from "./option-error";

export { argumentError, isOptionError, rangeError, reroot, typeError, within } from "./option-error";

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
 * `value`, or `fallback` when it is undefined: an option left out. Unlike `??`, a `null` stays
 * for the check that follows to refuse by name, rather than quietly meaning the default.
 */
export function or<T>(value: T | undefined, fallback: T): T {
  return value === undefined ? fallback : value;
}

/**
 * A finite number, or a `TypeError` (not a number) / `RangeError` (NaN, ±Infinity) naming `what`.
 *
 * @param value - the value to check
 * @param what - how the message names it, such as `"Bucket rate"`
 * @returns the value, typed as a number
 */
export function finite(value: unknown, what: string): number {
  if (typeof value !== "number") throw typeError(what, `must be a number, got ${typeof value} ${show(value)}`, value);
  if (!Number.isFinite(value)) throw rangeError(what, `must be a finite number, got ${show(value)}`, value);
  return value;
}

/**
 * A function, or a `TypeError` naming `what` and what was given instead.
 *
 * @param value - the value to check
 * @param what - how the message names it, such as `"retry fn"`
 * @returns the value, typed as a function
 */
export function fn<F extends (...args: never[]) => unknown>(value: unknown, what: string): F {
  if (typeof value !== "function")
    throw typeError(
      what,
      `must be a function, got ${value == null ? String(value) : `${typeof value} ${show(value)}`}`,
      value,
    );
  return value as F;
}

/** A finite number above zero, or a `RangeError`/`TypeError` naming `what` and the value. */
export function positive(value: unknown, what: string): number {
  const n = finite(value, what);
  if (n <= 0) throw rangeError(what, `must be above 0, got ${show(n)}`, n);
  return n;
}

/** A finite number at or above zero, or a `RangeError`/`TypeError` naming `what` and the value. */
export function nonNegative(value: unknown, what: string): number {
  const n = finite(value, what);
  if (n < 0) throw rangeError(what, `must be 0 or more, got ${show(n)}`, n);
  return n;
}

/** A finite number in `[min, max]`, or a `RangeError`/`TypeError` naming `what` and the value. */
export function between(value: unknown, min: number, max: number, what: string): number {
  const n = finite(value, what);
  if (n < min || n > max) throw rangeError(what, `must be between ${min} and ${max}, got ${show(n)}`, n);
  return n;
}

/** A safe integer at or above `min`, or a `RangeError`/`TypeError` naming `what` and the value. */
export function integer(value: unknown, what: string, min = Number.MIN_SAFE_INTEGER): number {
  const n = finite(value, what);
  if (!Number.isSafeInteger(n)) throw rangeError(what, `must be a whole number, got ${show(n)}`, n);
  if (n < min) throw rangeError(what, `must be ${min} or more, got ${show(n)}`, n);
  return n;
}

// Edit distance between two option names, for "did you mean": names are short, so the plain
// dynamic programme over one row is cheap enough at construction time.
function distance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    let diagonal = row[0];
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const above = row[j];
      row[j] = Math.min(above + 1, row[j - 1] + 1, diagonal + (a[i - 1] === b[j - 1] ? 0 : 1));
      diagonal = above;
    }
  }
  return row[b.length];
}

/**
 * The known name closest to `name` when it is near enough to be a slip (at most a third of its
 * letters off, and no more than three), or `undefined`. Case differences count as slips too.
 */
export function closest(name: string, known: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const candidate of known) {
    const d = Math.min(distance(name, candidate), distance(name.toLowerCase(), candidate.toLowerCase()) + 0.5);
    if (d < bestDistance) {
      best = candidate;
      bestDistance = d;
    }
  }
  return bestDistance <= Math.min(3, Math.max(1, Math.ceil(name.length / 3))) ? best : undefined;
}

/**
 * Reads an options argument once and returns a copy, so no getter can change a value between
 * the check and the use.
 *
 * `undefined` gives an empty record. Anything else that is not an object (`null`, a number, a
 * string, an array, a function) is a `TypeError` naming the argument. An own enumerable key that
 * is not in `known` is a `TypeError` naming it and the closest known name
 * (`Bucket has no option "brust"; did you mean "burst"?`). Each known field is read exactly once;
 * a field that holds `undefined` is left out of the copy, as if it had not been given.
 *
 * @param value - what the caller passed where options go
 * @param known - every option name the owner accepts
 * @param owner - how messages name the owner, such as `"Bucket"`
 * @param argument - how messages name the argument @defaultValue `"options"`
 * @returns a frozen copy holding only known fields that were given
 */
export function options<T extends object>(
  value: T | undefined,
  known: readonly (keyof T & string)[],
  owner: string,
  argument = "options",
): Readonly<Partial<T>> {
  if (value === undefined) return Object.freeze({});
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    const kind = value === null ? "null" : Array.isArray(value) ? "an array" : `${typeof value} ${show(value)}`;
    throw argumentError(owner, argument, `must be an object, got ${kind}`, value);
  }
  for (const key of Object.keys(value)) {
    if ((known as readonly string[]).includes(key)) continue;
    const near = closest(key, known);
    const hint =
      near === undefined
        ? `; its options are ${known.map((k) => JSON.stringify(k)).join(", ")}`
        : `; did you mean ${JSON.stringify(near)}?`;
    throw typeError(owner, `has no option ${JSON.stringify(key)}${hint}`, (value as Record<string, unknown>)[key]);
  }
  const copy: Partial<T> = {};
  for (const key of known) {
    const field = value[key];
    if (field !== undefined) copy[key] = field;
  }
  return Object.freeze(copy);
}

/**
 * Whether `value` is an object with a method named `method`: how a policy given as itself (a
 * `Breaker`, a `Bucket`, a store) is told from fields to build one from. Told by a method rather
 * than `instanceof`, which fails when two copies of a package end up in one bundle.
 */
export function has(value: unknown, method: string): boolean {
  return (
    typeof value === "object" && value !== null && typeof (value as Record<string, unknown>)[method] === "function"
  );
}

/** Whether `value` is a plain record of fields: an object, not `null`, not an array. */
export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
