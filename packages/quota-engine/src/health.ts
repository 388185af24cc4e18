// What an engine reports about itself: the counts (stats), the hazards worth a look (validate)
// and the small summary JSON.stringify gives.
import type { FairShare } from "./fair";
import type { Links } from "./hierarchy";
import type { KeySpace } from "./key-space";
import { BUCKET, GCRA, WINDOW } from "./kinds";
import type { LimitSpec } from "./limit";
import type { LimitState } from "./limit-state";
import { SNAPSHOT_VERSION } from "./snapshot";

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
  /**
   * Reservations held open: made and not yet settled or cancelled, those past their time to live
   * included until dropped (each reserve drops a few, `sweep` more).
   */
  readonly reservations: number;
  /** Per-key overrides, over every limit. */
  readonly overrides: number;
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
  readonly version: 4;
  /** The latest instant the engine has seen (ms), or null. */
  readonly clock: number | null;
  readonly stats: Omit<QuotaStats, "maxKeys"> & { readonly maxKeys: number | null };
  readonly limits: readonly LimitSpec[];
}

/** The summary `toJSON()` gives of an engine of `stats` and `limits` whose clock is at `clock` (ms). */
export function summarize(stats: QuotaStats, clock: number, limits: readonly LimitSpec[]): EngineSummary {
  return {
    version: SNAPSHOT_VERSION,
    clock: clock === -Infinity ? null : clock,
    stats: { ...stats, maxKeys: stats.maxKeys === Infinity ? null : stats.maxKeys },
    limits,
  };
}

/** Chains longer than this are reported by `validate()`. */
const DEEP_CHAIN = 8;

/** What an engine holds, as {@link countStats} and {@link findIssues} read it. */
export interface EngineParts {
  readonly limits: ReadonlyMap<string, LimitState>;
  readonly space: KeySpace;
  readonly links: Links;
  readonly fair: FairShare;
  /** Reservations held open. */
  readonly reservations: number;
  /** Per-key overrides. */
  readonly overrides: number;
}

/** The counts of {@link QuotaStats}. */
export function countStats({ limits, space, links, fair, reservations, overrides }: EngineParts): QuotaStats {
  let buckets = 0;
  let windows = 0;
  let gcra = 0;
  for (const base of limits.values())
    for (const limit of [base, ...(base.overrides?.values() ?? [])]) {
      buckets += limit.tables[BUCKET]?.size ?? 0;
      windows += limit.tables[WINDOW]?.size ?? 0;
      gcra += limit.tables[GCRA]?.size ?? 0;
    }
  return {
    limits: limits.size,
    buckets,
    windows,
    gcra,
    keys: space.keys,
    maxKeys: space.maxKeys,
    links: links.size,
    subjects: fair.size,
    dropped: space.dropped,
    refused: space.refused,
    reservations,
    overrides,
  };
}

/** The hazards of {@link IssueCode}, in the order of its table. */
export function findIssues({ limits, space, links, fair }: EngineParts): ValidationIssue[] {
  const issues: ValidationIssue[] = [];
  if (limits.size === 0)
    issues.push({ code: "no_limits", message: "the engine has no limits: every check answers unknown_limit" });
  for (const { rule } of limits.values()) {
    if (rule.burst > rule.capacity) {
      issues.push({
        code: "burst_exceeds_capacity",
        message: `limit ${JSON.stringify(rule.name)} has GCRA burst ${rule.burst} above its capacity ${rule.capacity}`,
      });
    }
  }
  if (space.maxKeys !== Infinity && space.keys >= 0.9 * space.maxKeys) {
    issues.push({
      code: "keys_near_limit",
      message: `${space.keys} keys tracked of maxKeys ${space.maxKeys}: new keys will soon be refused with key_limit`,
    });
  }
  const depth = links.depth();
  if (depth > DEEP_CHAIN)
    issues.push({
      code: "deep_chain",
      message: `a hierarchy chain has ${depth} links (more than ${DEEP_CHAIN}); every hierarchical check charges all of them`,
    });
  const { weight, used } = fair.extremes();
  if (used * weight > Number.MAX_SAFE_INTEGER)
    issues.push({
      code: "fair_precision",
      message: `fair-share usage ${used} times weight ${weight} passes 2^53: scores no longer compare exactly`,
    });
  return issues;
}
