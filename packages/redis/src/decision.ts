import type { AtomicReport, BatchReport, Decision, Reason } from "@tideward/quota-engine";
import type { Path } from "./policy";

/** What a limit in shadow mode would have answered, had it been enforced. */
export interface Shadow {
  /** Whether the limit would have admitted the charge. */
  readonly allowed: boolean;
  /** Why, as the limit would have said. */
  readonly reason: Reason;
  /** Milliseconds until it would have admitted it. */
  readonly retryAfter: number;
}

/** A {@link @tideward/quota-engine#Decision | Decision} of a Redis-backed engine: the in-process answer plus where it came from. */
export interface RedisDecision extends Decision {
  /** Which part answered (see {@link Path}). */
  readonly path: Path;
  /** For a limit in shadow mode, what it would have answered; `allowed` is then always true. */
  readonly shadow: Shadow | undefined;
  /**
   * Whether this answer is the stored one of an earlier call with the same request id: its
   * figures are as of that call, and nothing was charged again. False without a request id.
   */
  readonly replayed: boolean;
}

/** An {@link @tideward/quota-engine#AtomicReport | AtomicReport} of a Redis-backed engine. */
export interface RedisAtomicReport extends AtomicReport {
  readonly decisions: readonly RedisDecision[];
  /** Which part answered the set (every decision in it says the same). */
  readonly path: Path;
  /** Whether this answer is the stored one of an earlier call with the same request id (nothing was charged again). */
  readonly replayed: boolean;
}

/** A {@link @tideward/quota-engine#BatchReport | BatchReport} of a Redis-backed engine. */
export interface RedisBatchReport extends BatchReport {
  readonly decisions: readonly RedisDecision[];
}

/**
 * The one shape every Redis decision has (one class, so every decision shares one hidden class),
 * made from its fields by name: `new RedisVerdict({ allowed: false, reason: "exhausted", … })`.
 */
export class RedisVerdict implements RedisDecision {
  readonly allowed: boolean;
  readonly reason: Reason;
  readonly cost: number;
  readonly remaining: number;
  readonly retryAfter: number;
  readonly resetAfter: number;
  readonly trace: readonly string[];
  readonly path: Path;
  readonly shadow: Shadow | undefined;
  readonly replayed: boolean;

  constructor(d: RedisDecision) {
    this.allowed = d.allowed;
    this.reason = d.reason;
    this.cost = d.cost;
    this.remaining = d.remaining;
    this.retryAfter = d.retryAfter;
    this.resetAfter = d.resetAfter;
    this.trace = d.trace;
    this.path = d.path;
    this.shadow = d.shadow;
    this.replayed = d.replayed;
  }
}
