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
   *
   * A {@link HalfOpen} record is on, tuned: how many probes decide, what share of them must pass,
   * and how many may be in flight at once. `true` is `{ probes: 1, share: 1, inFlight: Infinity }`.
   * @defaultValue false
   */
  readonly halfOpen?: boolean | HalfOpen;
}

/**
 * How a half-open breaker decides to close (see {@link Sre.halfOpen}). A trial starts with the
 * first success into a window that holds calls and none: it closes the breaker (clears the window)
 * once `⌈share × probes⌉` of its outcomes have passed, and fails once more than the rest have
 * failed, leaving the breaker half-open until the next success starts another. Probes still go
 * one every `probe` ms at most, and at most `inFlight` at once.
 */
export interface HalfOpen {
  /** How many probes a trial runs: a whole number, 1 or more. @defaultValue 1 */
  readonly probes?: number;
  /**
   * The share of a trial's probes that must pass for the breaker to close, above 0 and at most 1:
   * it closes at the first count of passes `p` with `p / probes ≥ share`. @defaultValue 1
   */
  readonly share?: number;
  /**
   * How many probes may be in flight at once (let through and not yet settled): a whole number,
   * 1 or more, or `Infinity` for no bound. A probe holds its place until it settles or for `hold`
   * ms, whichever comes first. @defaultValue Infinity
   */
  readonly inFlight?: number;
  /**
   * How long a probe in flight holds its place at most, in milliseconds: above 0, `Infinity` for
   * until it settles. Past it the probe no longer counts, so a permit never settled (a cancelled
   * call) cannot keep the breaker half-open for good; give your calls' timeout, so a backend that
   * hangs gets one probe at a time. @defaultValue the breaker's `window`
   */
  readonly hold?: Span;
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
  const wanted = or(given.halfOpen, false);
  const halfOpen = typeof wanted === "boolean" ? wanted : resolveHalfOpen(wanted, window);
  // Half-open, only the probe goes through once the window holds no success, and each refusal
  // keeps the window full: with no probe, steady traffic would keep it throttled for ever. (Off,
  // the formula lets (protection + 1) / (total + 1) of the calls through, so it recovers.)
  if (halfOpen !== false && probe === Infinity)
    throw check.rangeError(
      "Sre probe (ms)",
      `must be finite when halfOpen is ${halfOpen === true ? "true" : "on"}: a half-open breaker lets only the probe through, so with no probe it never closes (give a finite probe, or halfOpen: false), got Infinity`,
      probe,
    );
  return Object.freeze({ k, floor, protection, probe, size, window, halfOpen });
}

const HALF_OPEN = ["probes", "share", "inFlight", "hold"] as const;

/**
 * A {@link HalfOpen} record with every field stated, checked; read once, into a copy. A probe
 * holds its place for `window` ms unless told otherwise.
 */
function resolveHalfOpen(value: HalfOpen, window: number): Required<HalfOpen> {
  // A caller's value, whatever its type says: null, text, a number or an array included.
  const v: unknown = value;
  if (v === null || typeof v !== "object" || Array.isArray(v))
    throw check.typeError(
      "Sre halfOpen",
      `must be true, false or { probes, share, inFlight, hold }, got ${v === null ? "null" : Array.isArray(v) ? "an array" : `${typeof v} ${check.describe(v)}`}`,
      v,
    );
  const given = check.options(value, HALF_OPEN, "Sre halfOpen");
  const probes = check.integer(check.or(given.probes, 1), "Sre halfOpen.probes", 1);
  const share = check.finite(check.or(given.share, 1), "Sre halfOpen.share");
  if (!(share > 0 && share <= 1))
    throw check.rangeError("Sre halfOpen.share", `must be above 0 and at most 1, got ${check.describe(share)}`, share);
  const inFlight = check.or(given.inFlight, Infinity);
  // Infinity is allowed here, and only here: it is how a caller says "no bound".
  if (inFlight !== Infinity) check.integer(inFlight, "Sre halfOpen.inFlight", 1);
  const hold = check.or(given.hold, window);
  if (hold !== Infinity) check.positive(hold, "Sre halfOpen.hold (ms)");
  return Object.freeze({ probes, share, inFlight, hold });
}

/**
 * How many of a trial's `probes` must pass to close: the least `p` with `p / probes ≥ share`,
 * computed as a caller reads it (0.7 of 10 is 7, though 0.7 × 10 is 7.000000000000001).
 */
export function passesNeeded(h: Required<HalfOpen>): number {
  let p = Math.min(Math.max(Math.ceil(h.share * h.probes), 1), h.probes);
  while (p > 1 && (p - 1) / h.probes >= h.share) p--;
  while (p < h.probes && p / h.probes < h.share) p++;
  return p;
}
