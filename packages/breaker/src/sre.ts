import { check } from "@tideward/time/internal";
import type { Span } from "@tideward/time";
import { Window } from "@tideward/window";

/**
 * The constants of probability-based client-side throttling (Google SRE book, "Handling
 * Overload"), as a {@link Breaker} reads them.
 *
 * The preset is {@link sre}; change one field with `{ ...sre, k: 2 }`, or pass only the fields
 * you change to `new Breaker({ k: 2 })`. {@link client} is the preset a guard's breaker starts from.
 */
export interface Sre {
  /**
   * How many calls each success pays for, while nothing is failing. At 1.5 a backend is left
   * alone until more than a third of its calls fail. Must be at least {@link Sre.floor}.
   * @defaultValue 1.5
   */
  readonly k: number;
  /**
   * What `k` decays to as the run of all-failure buckets at the head of the window grows to the
   * whole window, so that old successes excuse less during a long outage. Above 0.
   * @defaultValue 1.1
   */
  readonly floor: number;
  /** Calls every backend gets in a window regardless of how they went (a count, 0 or more). @defaultValue 5 */
  readonly protection: number;
  /**
   * How long with nothing let through before one call is let through anyway, in milliseconds.
   * Above 0; `Infinity` turns probing off, and is refused with {@link Sre.halfOpen} on: a
   * half-open breaker lets only the probe through, so without one it would never close.
   * @defaultValue 1000
   */
  readonly probe: Span;
  /** How many buckets the window has (a whole number, 1 or more). @defaultValue 40 */
  readonly size: number;
  /** How far back the window reaches, in milliseconds (above 0). @defaultValue 10000 */
  readonly window: Span;
  /**
   * Whether a breaker throttling with no success in its window is half-open. On, only the probe
   * goes through (one every `probe` ms) and its success clears the window: a recovered backend
   * is refused for at most `probe` ms. Off (go-zero's way), a dead backend still gets
   * `(protection + 1) / (total + 1)` of the calls, and a recovered one is refused until the
   * failures age out. Off in {@link sre}, on in {@link client}.
   * @defaultValue false
   */
  readonly halfOpen?: boolean;
}

/**
 * The preset: k 1.5 decaying to 1.1, five calls of protection, a probe after a second with
 * nothing let through, ten seconds of history in forty buckets of 250 ms, and never half-open.
 *
 * These are go-zero's constants (`core/breaker/googlebreaker.go`). The decay, the probe and the
 * recovery scaling are what keep a long outage from leaning on past successes, and a short one
 * from being remembered for long.
 */
export const sre: Sre = Object.freeze({
  k: 1.5,
  floor: 1.1,
  protection: 5,
  probe: 1_000,
  size: 40,
  window: 10_000,
  // Stated, not left out: fields laid over another preset (`{ ...client, ...sre }`) give this one.
  halfOpen: false,
});

const KNOWN = ["k", "floor", "protection", "probe", "size", "window", "halfOpen"] as const;

/**
 * Lays `policy` over the preset and checks every field once, so the breaker's hot path never has
 * to. The policy is read once, into a copy, before anything is checked.
 *
 * @throws TypeError when `policy` is not an object or names a field `Sre` does not have (with the
 *   closest it does), a number field is not a number or `halfOpen` is not a boolean; RangeError
 *   when a field is out of range, naming the field, the value and the bound, or for a `probe`
 *   of `Infinity` with `halfOpen` on (it could never close)
 */
export function resolveSre(policy?: Partial<Sre>): Sre {
  const given = check.options(policy, KNOWN, "Breaker", "policy");
  // Only a field left out (or undefined) takes the preset's value: a null is checked, and refused.
  const or = <T>(value: T | undefined, preset: T): T => (value === undefined ? preset : value);
  const floor = check.positive(or(given.floor, sre.floor), "Sre floor");
  const k = check.finite(or(given.k, sre.k), "Sre k");
  if (k < floor) throw check.rangeError("Sre k", `must be at least floor (${floor}), got ${k}`, k);
  const protection = check.nonNegative(or(given.protection, sre.protection), "Sre protection");
  const probe = or(given.probe, sre.probe);
  // Infinity is allowed here, and only here: it is how a caller says "never probe".
  if (probe !== Infinity) check.positive(probe, "Sre probe (ms)");
  const size = check.integer(or(given.size, sre.size), "Sre size", 1);
  if (size > Window.maxSize)
    throw check.rangeError("Sre size", `must be at most ${Window.maxSize} buckets, got ${size}`, size);
  const window = check.positive(or(given.window, sre.window), "Sre window (ms)");
  const least = Window.shortest(size);
  if (!(window >= least))
    throw check.rangeError(
      "Sre window (ms)",
      `must be at least ${least} for ${size} ${size === 1 ? "bucket" : "buckets"} (${Window.minWidth} ms a bucket), got ${window}`,
      window,
    );
  const halfOpen = or(given.halfOpen, sre.halfOpen);
  if (typeof halfOpen !== "boolean")
    throw check.typeError(
      "Sre halfOpen",
      `must be true or false, got ${halfOpen === null ? "null" : `${typeof halfOpen} ${check.describe(halfOpen)}`}`,
      halfOpen,
    );
  // Half-open, only the probe goes through once the window holds no success, and each refusal
  // keeps the window full: with no probe, steady traffic would keep it throttled for ever. (Off,
  // the formula lets (protection + 1) / (total + 1) of the calls through, so it recovers.)
  if (halfOpen && probe === Infinity)
    throw check.rangeError(
      "Sre probe (ms)",
      "must be finite when halfOpen is true: a half-open breaker lets only the probe through, so with no probe it never closes (give a finite probe, or halfOpen: false), got Infinity",
      probe,
    );
  return Object.freeze({ k, floor, protection, probe, size, window, halfOpen });
}
