import { check } from "@tideward/time/internal";
import type { Span } from "@tideward/time";

/**
 * The constants of a short, fair queue (CoDel with adaptive LIFO): a plain readonly record. Build
 * one by laying fields over the preset, `{ ...codel, capacity: 50 }`, or hand `new Queue` just
 * the fields that differ.
 */
export interface CoDel {
  /**
   * The sojourn the queue aims at, in milliseconds: once it is standing, a waiter that has waited
   * this long is dropped. Above 0, at most `interval`. @defaultValue 5
   */
  readonly target: Span;
  /**
   * In milliseconds: how long the queue's sojourn (how long its oldest waiter has waited) must
   * stay above `target` before the queue counts as standing, and the longest a waiter may wait
   * while it does not. @defaultValue 100
   */
  readonly interval: Span;
  /** The most waiters the queue holds at once: a whole number from 1 to 2^24. @defaultValue 1000 */
  readonly capacity: number;
  /** Whether a standing queue serves its newest waiter first (adaptive LIFO). @defaultValue true */
  readonly lifo: boolean;
}

/**
 * The preset: Meta's constants, a 5 ms target and a 100 ms interval, with adaptive LIFO, and at
 * most 1000 waiters.
 */
export const codel: CoDel = Object.freeze({ target: 5, interval: 100, capacity: 1_000, lifo: true });

/** The most waiters a queue may be allowed: some 2 GB of waiters at the most. */
export const MAX_WAITERS = 2 ** 24;

const KNOWN = ["target", "interval", "capacity", "lifo"] as const;

/**
 * Lays `policy` over the preset and checks every field, once.
 *
 * @throws TypeError when `policy` is not an object, names a field `CoDel` does not have (with the
 *   closest it does), or a field is not a number (a boolean for `lifo`); RangeError when a field
 *   is out of its range
 */
export function resolveCoDel(policy: Partial<CoDel> | undefined): CoDel {
  if (policy === undefined) return codel;
  const p = { ...codel, ...check.options(policy, KNOWN, "Queue", "policy") };
  const interval = check.positive(p.interval, "CoDel interval (ms)");
  const target = check.positive(p.target, "CoDel target (ms)");
  if (target > interval)
    throw new RangeError(`CoDel target (ms) must be at most the interval (${interval}), got ${check.describe(target)}`);
  const capacity = check.integer(p.capacity, "CoDel capacity", 1);
  if (capacity > MAX_WAITERS)
    throw new RangeError(`CoDel capacity must be at most ${MAX_WAITERS} waiters (2^24), got ${capacity}`);
  if (typeof p.lifo !== "boolean")
    throw new TypeError(`CoDel lifo must be true or false, got ${check.describe(p.lifo)}`);
  return Object.freeze({ target, interval, capacity, lifo: p.lifo });
}
