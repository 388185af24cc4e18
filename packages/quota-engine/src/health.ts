import type { LimitSpec } from "./limit";

/** Counts for a health check or a dashboard. */
export interface QuotaStats {
  /** Limits added. */
  readonly limits: number;
  /** Keys with token-bucket state. */
  readonly buckets: number;
  /** Keys with fixed-window state. */
  readonly windows: number;
  /** Keys with GCRA state. */
  readonly gcra: number;
  /** All keys with state: `buckets + windows + gcra`. */
  readonly keys: number;
  /** The ceiling on `keys` (`Infinity` when there is none; `null` in JSON). */
  readonly maxKeys: number;
  /** Hierarchy links. */
  readonly links: number;
  /** Fair-share subjects. */
  readonly subjects: number;
  /** Idle keys dropped by sweeping since the engine was made. */
  readonly dropped: number;
  /** Checks refused with `"key_limit"` since the engine was made. */
  readonly refused: number;
}

/**
 * Something `validate()` found worth a look. The engine refuses invalid configuration when it is
 * added, so these are hazards rather than corruption:
 *
 * | code | means |
 * | --- | --- |
 * | `"no_limits"` | the engine has no limits, so every check answers `"unknown_limit"` |
 * | `"burst_exceeds_capacity"` | a limit's GCRA burst is above its capacity: GCRA admits bigger bursts than its bucket or window |
 * | `"keys_near_limit"` | tracked keys are at 90% of `maxKeys` or more: new keys will soon be refused |
 * | `"deep_chain"` | a hierarchy chain is longer than 8 links: every hierarchical check charges all of it |
 * | `"fair_precision"` | fair-share usage is so large that scores no longer compare exactly (`used · weight` past 2^53) |
 */
export type IssueCode = "no_limits" | "burst_exceeds_capacity" | "keys_near_limit" | "deep_chain" | "fair_precision";

/** One finding of `validate()`. */
export interface ValidationIssue {
  readonly code: IssueCode;
  /** A sentence naming what and where. */
  readonly message: string;
}

/** What `toJSON()` gives: a small, deterministic summary (the full state is `snapshot()`). */
export interface EngineSummary {
  readonly version: 2;
  /** The latest instant the engine has seen (ms), or null. */
  readonly clock: number | null;
  readonly stats: Omit<QuotaStats, "maxKeys"> & { readonly maxKeys: number | null };
  readonly limits: readonly LimitSpec[];
}
