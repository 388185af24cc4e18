import type { Decision } from "./decision";
import type { QuotaKey } from "./key";

/**
 * Which algorithm a charge runs, each with its own state per key and limit:
 * - `"bucket"`: a token bucket; bursts up to `capacity` after a quiet spell, then the refill rate.
 * - `"window"`: a fixed window; at most `capacity` per window, explainable, coarse at the edges.
 * - `"gcra"`: the generic cell rate algorithm; the refill rate, `burst` ahead of schedule at most:
 *   smooth shaping, its burst set apart from the bucket's capacity.
 */
export type ChargeKind = "bucket" | "window" | "gcra";

/** One dimension of a charge set: charge `cost` units of `limit` to `key`. */
export interface QuotaCharge {
  readonly key: QuotaKey;
  /** The name of a limit added with `addLimit`. */
  readonly limit: string;
  /** Units, a whole number of at least 1. */
  readonly cost: number;
  /** @defaultValue "bucket" */
  readonly kind?: ChargeKind;
}

/**
 * A {@link QuotaCharge}: `cost` units (a whole number of at least 1; 1 by default) of `limit` to
 * `key`, run by the algorithm `kind` (a token bucket by default).
 */
export function charge(key: QuotaKey, limit: string, cost = 1, kind: ChargeKind = "bucket"): QuotaCharge {
  return { key, limit, cost, kind };
}

/**
 * What an atomic charge set answered. Either every charge was charged or none was.
 *
 * `decisions[i]` is charge `i` evaluated on staged state, that is after the charges before it in
 * the set that fit (so repeated charges to one bucket add up). In a set that did not commit, the
 * charges that fit say `"not_committed"` and report what would have remained.
 */
export interface AtomicReport {
  /** Whether every charge fit. */
  readonly allowed: boolean;
  /** Whether the charges were applied: equal to `allowed` for `checkAtomic`, always false for `peekAtomic`. */
  readonly committed: boolean;
  /** The index of the first charge that did not fit, or -1 when all did. */
  readonly failedIndex: number;
  /**
   * Milliseconds from the caller's `now` until the whole set would fit (each bucket holding the
   * set's total demand on it, confirmed by evaluating the set there): 0 when it fits, `Infinity`
   * when it never will (a limit unknown or a total too large).
   */
  readonly retryAfter: number;
  /** One decision per charge, in order. */
  readonly decisions: readonly Decision[];
}

/** One request of a batch: a key, the instant it arrived (ms) and its cost in units. */
export interface EvaluationInput {
  readonly key: QuotaKey;
  /** Milliseconds on the caller's clock. */
  readonly now: number;
  /** Units, a whole number of at least 1. @defaultValue 1 */
  readonly cost?: number;
}

/** What a batch answered: totals and every decision, in input order. */
export interface BatchReport {
  /** Inputs checked. */
  readonly total: number;
  /** Inputs charged. */
  readonly allowed: number;
  /** Inputs refused (`total − allowed`). */
  readonly denied: number;
  /** One decision per input, in input order. */
  readonly decisions: readonly Decision[];
}
