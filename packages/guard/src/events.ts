import type { RefusalKind } from "./refusal";

/**
 * How one attempt ended, as the guard counted it:
 * - `"success"` — it answered and {@link GuardOptions.isFailure} said no;
 * - `"failure"` — it threw, or answered what `isFailure` calls a failure;
 * - `"timeout"` — the per-attempt timeout or the deadline cut it off (a failure on the breaker);
 * - `"cancelled"` — the caller's signal fired, or another attempt won the hedge (not counted);
 * - `"refused"` — it threw a {@link Refusal} from something it called, such as an inner guard
 *   (not counted, never retried).
 */
export type Outcome = "success" | "failure" | "timeout" | "cancelled" | "refused";

/** What `onRefuse` is told: a policy refused a first attempt, a retry or a hedge. */
export interface RefuseEvent {
  /** Which policy refused. */
  readonly kind: RefusalKind;
  /** Milliseconds until it could admit, 0 when unknown. */
  readonly retryAfter: number;
  /** The attempt that was refused, the first being 1. */
  readonly attempt: number;
  /** The call's priority as the guard's `priority` function gave it; `undefined` without one. */
  readonly priority?: number | string;
}

/** What `onRetry` is told, before the wait that precedes a retry. */
export interface RetryEvent<R = unknown> {
  /** The attempt that failed, the first being 1. */
  readonly attempt: number;
  /** How long the guard waits before the next attempt, in milliseconds. */
  readonly delay: number;
  /** What the failed attempt threw; `undefined` when it returned a failed result. */
  readonly error: unknown;
  /** What the failed attempt returned; `undefined` when it threw. */
  readonly result: R | undefined;
}

/** What `onHedge` is told when a hedged attempt starts. */
export interface HedgeEvent {
  /** The attempt now starting, counted with every attempt of the call, the first being 1. */
  readonly attempt: number;
  /** Attempts of the call in flight, the new one included. */
  readonly inFlight: number;
  /** Milliseconds since the call started. */
  readonly elapsed: number;
}

/**
 * What `onOutcome` is told when an attempt ends: one event per attempt that reached the
 * backend, shaped to feed a counter (by `outcome`) and a histogram (of `duration`).
 */
export interface OutcomeEvent<R = unknown> {
  /** How it ended. */
  readonly outcome: Outcome;
  /** Which attempt, the first being 1 (hedges included). */
  readonly attempt: number;
  /** Whether it was a hedge rather than a first attempt or a retry. */
  readonly hedge: boolean;
  /** Milliseconds from its start to its end on the guard's clock. */
  readonly duration: number;
  /** What it threw (or why it was cut off); `undefined` when it returned. */
  readonly error: unknown;
  /** What it returned; `undefined` when it threw or was cut off. */
  readonly result: R | undefined;
}
