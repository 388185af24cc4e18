import type { PrioritySeries, PrioritySummary } from "./priority";

/**
 * A run's time series: one entry per bucket of `step` milliseconds, bucket `i` covering
 * `[t[i], t[i] + step)` after the run's start. Counts are per bucket (divide by the step in
 * seconds for a rate); levels are time-weighted means over the bucket. Plain arrays of numbers
 * (`null` where a bucket has nothing to measure), so a result survives `JSON.stringify` and
 * `postMessage` as it is.
 */
export interface Series {
  /** Each bucket's start, in milliseconds after the run's start. */
  readonly t: readonly number[];
  /** Calls that arrived (first attempts). */
  readonly offered: readonly number[];
  /** Attempts started: first attempts, retries and hedges. */
  readonly attempts: readonly number[];
  /** Retries started. */
  readonly retries: readonly number[];
  /** Hedged attempts started. */
  readonly hedges: readonly number[];
  /** Attempts every policy admitted. */
  readonly admitted: readonly number[];
  /** Attempts a policy refused. */
  readonly refused: readonly number[];
  /**
   * Refused attempts by reason (`"breaker"`, `"quota/tenant"`, …): a record without a prototype,
   * so every reason (`"__proto__"` and `"constructor"` too) is a field of its own.
   */
  readonly refusedBy: Readonly<Record<string, readonly number[]>>;
  /** Attempts that succeeded, counted when the client saw them. */
  readonly succeeded: readonly number[];
  /** Attempts that failed (timeouts included), counted when the client saw them. */
  readonly failed: readonly number[];
  /** Attempts the client stopped waiting for. */
  readonly timedOut: readonly number[];
  /** Calls that ended in a success. */
  readonly completed: readonly number[];
  /** Calls that ended without one (refused or failed, retries spent). */
  readonly gaveUp: readonly number[];
  /** Calls that ended in a success within their caller's deadline (every success, without one): goodput. */
  readonly goodput: readonly number[];
  /** Mean attempts in flight (admitted, not yet answered to the client). */
  readonly inFlight: readonly number[];
  /** Mean latency of successful attempts as the client saw it, ms. */
  readonly latencyMean: readonly (number | null)[];
  /** Median latency of successful attempts, ms (within 1.6 %). */
  readonly p50: readonly (number | null)[];
  /** 95th percentile, ms. */
  readonly p95: readonly (number | null)[];
  /** 99th percentile, ms. */
  readonly p99: readonly (number | null)[];
  /** Attempts that reached the backend (those it then turned away or dropped included). */
  readonly backendLoad: readonly number[];
  /** Mean busy workers of a backend with a capacity model (0 without one). */
  readonly backendBusy: readonly number[];
  /** Mean calls waiting in its queue. */
  readonly backendQueue: readonly number[];
  /** Its CPU reading at the bucket's end, thousandths. */
  readonly backendCpu: readonly number[];
  /** Attempts the backend finished serving after their caller had stopped waiting: work done for nobody. */
  readonly wasted: readonly number[];
  /** Attempts the backend dropped unserved because their caller had stopped waiting (`abandoned: "drop"`). */
  readonly dropped: readonly number[];
  /** Attempts that reached the backend per call offered, or `null` in a bucket with no call. */
  readonly amplification: readonly (number | null)[];
  /**
   * Per priority (by its name or number as text; `"(none)"` for calls that give none), when the
   * traffic has priorities (`traffic.priority`): calls offered, attempts refused, goodput and
   * successes, a record without a prototype.
   */
  readonly byPriority?: Readonly<Record<string, PrioritySeries>>;
}

/** Latency of successful attempts over a whole run, in milliseconds (`null` with none). */
export interface LatencySummary {
  readonly mean: number | null;
  readonly p50: number | null;
  readonly p95: number | null;
  readonly p99: number | null;
  readonly max: number | null;
}

/** A run's totals, the drain after the traffic stopped included. */
export interface Summary {
  /** Calls offered. */
  readonly calls: number;
  readonly attempts: number;
  readonly retries: number;
  readonly hedges: number;
  readonly admitted: number;
  readonly refused: number;
  /** Refused attempts by reason, as the series' `refusedBy`: a record without a prototype. */
  readonly refusedBy: Readonly<Record<string, number>>;
  readonly succeeded: number;
  readonly failed: number;
  readonly timedOut: number;
  /** Calls that ended in a success. */
  readonly completed: number;
  /** Calls that ended without one. */
  readonly gaveUp: number;
  /** Calls that ended in a success within their caller's deadline (every success, without one): goodput. */
  readonly goodput: number;
  /** Calls still unresolved when the run ended (0 unless the drain was cut short). */
  readonly unfinished: number;
  /** `completed / calls`, or `null` with no calls. */
  readonly successRate: number | null;
  /** `goodput / calls`, or `null` with no calls. */
  readonly goodputRate: number | null;
  /** `refused / attempts`, or `null` with no attempts. */
  readonly refusalRate: number | null;
  /** Attempts that reached the backend. */
  readonly backendLoad: number;
  /** The most attempts that reached the backend in one bucket, per second. */
  readonly peakBackendLoad: number;
  /** `backendLoad / calls`: how much work each call caused downstream, or `null` with no calls. */
  readonly amplification: number | null;
  /** Attempts the backend finished serving after their caller had stopped waiting: work done for nobody. */
  readonly wasted: number;
  /** Attempts the backend dropped unserved because their caller had stopped waiting. */
  readonly dropped: number;
  /**
   * When the last call ended (in a success or given up), ms after the run's start: a finite
   * job's completion time. `null` when no call ended, or some are unfinished.
   */
  readonly completionTime: number | null;
  readonly latency: LatencySummary;
  /** Events the simulator fired. */
  readonly events: number;
  /** The trace's fingerprint: sixteen hex digits, equal for runs that made the same decisions at the same instants. */
  readonly hash: string;
  /** Per priority, the totals of `series.byPriority`, when the traffic has priorities: a record without a prototype. */
  readonly byPriority?: Readonly<Record<string, PrioritySummary>>;
}

/** Per-key totals, in key order (see `perKey`). */
export interface KeyTotals {
  readonly names: readonly string[];
  readonly offered: readonly number[];
  readonly admitted: readonly number[];
  readonly refused: readonly number[];
}

/** What a policy reported about itself at the end of a run. */
export interface PolicyReport {
  readonly name: string;
  readonly side: "client" | "server";
  /** Its figures by name, as the policy's `stats` gave them: a record without a prototype. */
  readonly stats: Readonly<Record<string, number>>;
}

/** Everything one run produced: plain JSON. */
export interface RunResult {
  /** How the run was named. */
  readonly label: string;
  readonly seed: number;
  /** The clock reading the run started at, ms. */
  readonly start: number;
  /** How long traffic was offered, ms. */
  readonly duration: number;
  /** The series' resolution, ms per bucket. */
  readonly step: number;
  /** The traffic model, in words. */
  readonly traffic: string;
  /** The backend, in words. */
  readonly backend: string;
  readonly policies: readonly PolicyReport[];
  readonly series: Series;
  readonly summary: Summary;
  /** Per-key totals, when the run was asked for them. */
  readonly keys?: KeyTotals;
}
