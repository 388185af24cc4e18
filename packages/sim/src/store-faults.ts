import { check } from "@tideward/time/internal";
import type { Span } from "@tideward/time";
import { formatCount } from "./memory";

/** A stretch of the run, in milliseconds after its start: `[from, to)`. */
export interface Stretch {
  readonly from: Span;
  readonly to: Span;
}

/** A stretch during which each store answer takes `latency` ms. */
export interface SlowStretch extends Stretch {
  readonly latency: Span;
}

/** A stretch during which a share `rate` of charges is committed and its answer lost. */
export interface LostStretch extends Stretch {
  readonly rate: number;
}

/**
 * What goes wrong between an application and a shared quota store (Redis, say), modelled around
 * any `QuotaStore`: the store itself answers as it always does; these faults are on the way to it
 * and back, and in the callers' clocks.
 *
 * - **down**: no answer at all. The caller waits `timeout` ms and then follows `onError`.
 * - **slow**: each answer takes `latency` ms; past `timeout` the caller gives up, though the
 *   store has already charged (an answer that came too late is a commit the caller never saw).
 * - **lost**: commit-then-timeout: the store charges, the answer is lost, the caller times out.
 * - **skew**: the callers are several application instances whose clocks disagree; each call
 *   goes to one of them at random and reaches the store with that instance's reading.
 */
export interface StoreFaults {
  /** Stretches when the store is unreachable. @defaultValue none */
  readonly down?: readonly Stretch[];
  /** Stretches when it is slow. @defaultValue none */
  readonly slow?: readonly SlowStretch[];
  /** A share of charges committed but unanswered: all through the run, or by stretch. @defaultValue 0 */
  readonly lost?: number | readonly LostStretch[];
  /** How long a caller waits for the store, ms. @defaultValue 50 */
  readonly timeout?: Span;
  /** The store's round trip when nothing is wrong, ms. @defaultValue 0 */
  readonly latency?: Span;
  /** Each instance's clock offset, ms (one instance per entry, at most 1 024 of them). @defaultValue one instance, no skew */
  readonly skew?: readonly number[];
}

/** {@link StoreFaults}, checked, with the lookups a call needs. */
export interface ResolvedFaults {
  readonly timeout: number;
  readonly latency: number;
  readonly skew: readonly number[];
  /** The widest gap between two instances' clocks, ms. */
  readonly spread: number;
  down(offset: number): boolean;
  slow(offset: number): number;
  lost(offset: number): number;
}

function stretches<T extends Stretch>(
  list: readonly T[] | undefined,
  what: string,
  extra: readonly (keyof T & string)[],
  check1: (s: T, i: number) => void,
): readonly T[] {
  if (list === undefined) return [];
  const given: unknown = list;
  if (!Array.isArray(given)) throw new TypeError(`${what} must be an array of stretches, got ${check.describe(list)}`);
  // Every index, holes included: a hole is refused as the stretch it is not.
  return Array.from(list as readonly unknown[], (s, i) => {
    if (s === undefined)
      throw new TypeError(`${what}[${i}] must be a stretch such as { from: 0, to: 1000 }, got undefined`);
    const o = check.options(s as T, ["from", "to", ...extra] as (keyof T & string)[], `${what}[${i}]`) as T;
    const from = check.nonNegative(o.from, `${what}[${i}] from (ms)`);
    const to = check.nonNegative(o.to, `${what}[${i}] to (ms)`);
    if (to < from) throw new RangeError(`${what}[${i}] to (ms) must be at least from (${from}), got ${to}`);
    check1(o, i);
    return o;
  });
}

const within = (s: Stretch, offset: number): boolean => offset >= s.from && offset < s.to;

/** The most instances `skew` may list: each may keep a quota engine of its own. */
export const MAX_INSTANCES = 1_024;

/** Checks store faults once, naming any bad field. */
export function resolveFaults(faults: StoreFaults, what = "store faults"): ResolvedFaults {
  const o = check.options(faults, ["down", "slow", "lost", "timeout", "latency", "skew"], what);
  const down = stretches(o.down, `${what} down`, [], () => {});
  const slow = stretches(o.slow, `${what} slow`, ["latency"], (s, i) =>
    check.nonNegative(s.latency, `${what} slow[${i}] latency (ms)`),
  );
  const lostRate = typeof o.lost === "number" ? check.between(o.lost, 0, 1, `${what} lost`) : 0;
  const lost =
    typeof o.lost === "number" || o.lost === undefined
      ? []
      : stretches(o.lost, `${what} lost`, ["rate"], (s, i) => check.between(s.rate, 0, 1, `${what} lost[${i}] rate`));
  const timeout = check.positive(check.or(o.timeout, 50), `${what} timeout (ms)`);
  const latency = check.nonNegative(check.or(o.latency, 0), `${what} latency (ms)`);
  const given = check.or<unknown>(o.skew, [0]);
  if (!Array.isArray(given))
    throw new TypeError(
      `${what} skew must be an array of clock offsets (ms), one per instance, got ${check.describe(given)}`,
    );
  if (given.length === 0) throw new RangeError(`${what} skew must list at least one instance`);
  // With onError "local" each instance keeps an engine of its own.
  if (given.length > MAX_INSTANCES)
    throw new RangeError(
      `${what} skew lists ${formatCount(given.length)} instances; a store is called from at most ${formatCount(MAX_INSTANCES)}`,
    );
  const skew = Array.from(given as readonly unknown[], (s, i) => check.finite(s, `${what} skew[${i}] (ms)`));
  let lo = Infinity;
  let hi = -Infinity;
  for (const s of skew) {
    if (s < lo) lo = s;
    if (s > hi) hi = s;
  }
  return {
    timeout,
    latency,
    skew,
    spread: hi - lo,
    down: (offset) => down.some((s) => within(s, offset)),
    slow: (offset) => {
      for (let i = slow.length - 1; i >= 0; i--) if (within(slow[i], offset)) return slow[i].latency;
      return latency;
    },
    lost: (offset) => {
      for (let i = lost.length - 1; i >= 0; i--) if (within(lost[i], offset)) return lost[i].rate;
      return lostRate;
    },
  };
}
