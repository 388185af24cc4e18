/**
 * Why a check answered as it did; a small fixed set, so callers can switch on it.
 *
 * | reason | allowed | means |
 * | --- | --- | --- |
 * | `"ok"` | yes | charged |
 * | `"exhausted"` | no | not enough room now; `retryAfter` says when there will be |
 * | `"too_large"` | no | the cost exceeds what the limit can ever hold; `retryAfter` is `Infinity` |
 * | `"unknown_limit"` | no | no limit of that name; `retryAfter` is `Infinity` |
 * | `"not_committed"` | no | in a charge set: this charge fit, but another did not, so nothing was charged |
 * | `"key_limit"` | no | the engine tracks `maxKeys` keys already and this key is new; `retryAfter` is 0 (unknown) |
 */
export type Reason = "ok" | "exhausted" | "too_large" | "unknown_limit" | "not_committed" | "key_limit";

/** Every {@link Reason}, in the order of the table above. */
export const reasons: readonly Reason[] = Object.freeze([
  "ok",
  "exhausted",
  "too_large",
  "unknown_limit",
  "not_committed",
  "key_limit",
] as const);

/**
 * The answer to one check: whether it was charged, why, and when to come back.
 *
 * In JSON, a `retryAfter` of `Infinity` (never) becomes `null`.
 */
export interface Decision {
  /** Whether the cost was charged. */
  readonly allowed: boolean;
  /** Why; see {@link Reason}. */
  readonly reason: Reason;
  /** Units asked for. */
  readonly cost: number;
  /**
   * Whole units left after this decision: tokens in the bucket (rounded down), room left in the
   * window, or units GCRA would still admit back to back. Nothing is taken by a denial.
   */
  readonly remaining: number;
  /**
   * Milliseconds from the caller's `now` until the same charge would be allowed: 0 exactly when
   * allowed, `Infinity` when never. Added to `now` as the caller adds it, it lands where the
   * charge passes.
   */
  readonly retryAfter: number;
  /**
   * Milliseconds from the caller's `now` until the key is back to a fresh key's state (bucket
   * full, give or take its slack; window closed; GCRA caught up).
   */
  readonly resetAfter: number;
  /** The rules that fired, for audit: one entry per rule, such as `"bucket tokens: exhausted"`. */
  readonly trace: readonly string[];
}

/** The one shape every decision has, so the engine's hot path stays monomorphic. */
export class Verdict implements Decision {
  constructor(
    readonly allowed: boolean,
    readonly reason: Reason,
    readonly cost: number,
    readonly remaining: number,
    readonly retryAfter: number,
    readonly resetAfter: number,
    readonly trace: readonly string[],
  ) {}
}

/** The decision for a charge of `cost` to a limit the engine does not have (`kind` names the algorithm). */
export function unknownLimit(kind: string, limit: string, cost: number): Decision {
  return new Verdict(false, "unknown_limit", cost, 0, Infinity, 0, [
    `${kind} ${limit}: unknown_limit (no limit of that name)`,
  ]);
}
