// What the conformance suites share: the test functions they take, their options, and the
// comparable part of a decision with its two hand-written shapes.
import type { Decision } from "./decision";

/** The assertions the suite uses; vitest's and jest's `expect` fit. */
export interface ConformanceExpect {
  (actual: unknown): { toBe(expected: unknown): void; toEqual(expected: unknown): void };
}

/** The test functions the suite registers its cases with; vitest's and jest's fit. */
export interface ConformanceApi {
  readonly describe: (name: string, body: () => void) => void;
  readonly it: (name: string, body: () => Promise<void>) => void;
  readonly expect: ConformanceExpect;
}

/** Options of {@link quotaConformance}. */
export interface ConformanceOptions {
  /** The name of the top-level `describe`. @defaultValue "QuotaStore conformance" */
  readonly name?: string;
  /**
   * The clock reading every scenario starts from (ms), a multiple of 1000 (aligned windows are
   * computed from it); scenarios add small offsets to it. Run the suite twice, near 0 and near
   * `Date.now()`, to cover both magnitudes. @defaultValue 0
   */
  readonly origin?: number;
}

/** A decision without its trace: the part two stores must agree on exactly. */
export type Answer = Pick<Decision, "allowed" | "reason" | "cost" | "remaining" | "retryAfter" | "resetAfter">;

/** The comparable part of a decision. */
export function answer(d: Decision): Answer {
  return {
    allowed: d.allowed,
    reason: d.reason,
    cost: d.cost,
    remaining: d.remaining,
    retryAfter: d.retryAfter,
    resetAfter: d.resetAfter,
  };
}

export const yes = (cost: number, remaining: number, resetAfter: number): Answer => ({
  allowed: true,
  reason: "ok",
  cost,
  remaining,
  retryAfter: 0,
  resetAfter,
});
export const no = (
  reason: Answer["reason"],
  cost: number,
  remaining: number,
  retryAfter: number,
  resetAfter: number,
): Answer => ({ allowed: false, reason, cost, remaining, retryAfter, resetAfter });
