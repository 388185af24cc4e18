// What every limit algorithm shares: the bounds of a limit, checked once at construction; the two
// hooks the limiter's snapshot uses to read and adopt an algorithm's learned state; and the key of
// the step a limiter takes on each sample.
import { check } from "@tideward/time/internal";

/**
 * The largest limit any algorithm accepts: 2^24 places. Far past any real server's
 * concurrency, and small enough that a share of it is exact to well under a place.
 */
export const MAX_LIMIT = 2 ** 24;

/** @internal The key under which an algorithm hands its learned state to a snapshot. */
export const STATE: unique symbol = Symbol("tideward.concurrency.state");
/** @internal The key under which an algorithm takes learned state back from a snapshot (already checked). */
export const ADOPT: unique symbol = Symbol("tideward.concurrency.adopt");
/**
 * @internal The key of an algorithm's step as its limiter takes it: one sample whose round trip
 * is a number (NaN when unknown), whose count is a number and whose drop is a boolean, answering
 * the limit after it.
 */
export const STEP: unique symbol = Symbol("tideward.concurrency.step");

/** A limit's bounds and starting point, checked: whole places, `1 ≤ min ≤ initial ≤ max ≤ 2^24`. */
export interface Bounds {
  readonly initial: number;
  readonly min: number;
  readonly max: number;
}

/**
 * Checks the bounds an algorithm's policy gives.
 *
 * @throws TypeError when one is not a number; RangeError when one is not a whole number, `min`
 *   is under 1, `max` is over 2^24 or under `min`, or `initial` is outside `[min, max]`
 */
export function bounds(p: Bounds, owner: string): Bounds {
  const min = check.integer(p.min, `${owner} min`, 1);
  const max = check.integer(p.max, `${owner} max`, 1);
  if (max > MAX_LIMIT) throw new RangeError(`${owner} max must be at most ${MAX_LIMIT} (2^24), got ${max}`);
  if (max < min) throw new RangeError(`${owner} max must be at least min (${min}), got ${max}`);
  const initial = check.integer(p.initial, `${owner} initial`, 1);
  if (initial < min || initial > max)
    throw new RangeError(`${owner} initial must be from min (${min}) to max (${max}), got ${initial}`);
  return { initial, min, max };
}

/** `x` held to `[min, max]`. */
export function clamp(x: number, min: number, max: number): number {
  return x < min ? min : x > max ? max : x;
}

/**
 * `floor(log10(n))` of the whole part of `n`, but at least 1: the step Vegas grows and shrinks
 * by (Netflix's `Log10RootIntFunction`). Counted by comparisons, so 1000 is exactly 3 (a
 * floating `log10` can land a hair under a power of ten).
 */
export function log10Step(n: number): number {
  let digits = 0;
  for (let power = 10; n >= power; power *= 10) digits++;
  return digits < 1 ? 1 : digits;
}

/**
 * A round-trip time a sample can use: a number of milliseconds at or above 0, or NaN for one
 * that is unknown (a finish time that was not a number, or before the start).
 */
export function rttOf(value: number): number {
  return typeof value === "number" && value >= 0 && value < Infinity ? value : Number.NaN;
}
