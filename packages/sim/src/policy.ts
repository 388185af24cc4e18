import type { Random } from "@tideward/time";

/**
 * What a policy adapter is created with, once per run.
 */
export interface PolicyContext {
  /** The clock reading the run starts at, in milliseconds: where a policy's window opens. */
  readonly start: number;
  /** Draws in [0, 1) for this policy alone (a breaker's rolls, a sampler's coin). */
  readonly random: Random;
  /** How many keys the traffic has (keys are numbered from 0). */
  readonly keys: number;
  /** The text of key `i`, as a log or a quota would see it. */
  readonly keyName: (i: number) => string;
  /** The backend's CPU use at `now` (ms), in thousandths (0–1000): what a shedder reads. */
  readonly cpu: (now: number) => number;
  /**
   * Sets `bytes` aside from the run's memory ceiling (`maxBytes`) for `what`, before the policy
   * allocates them (a limiter made for a new key, say), or throws a `RangeError` naming the
   * ceiling. Given by `simulate`; an adapter made by hand may be given none.
   */
  readonly reserve?: (bytes: number, what: string) => void;
}

/**
 * A bound a policy promises to keep, which the simulator checks at every step when asked
 * (`invariants: true`), independently of the policy's own code.
 *
 * - `"rate"`: over any stretch of `d` ms, what is admitted weighs at most
 *   `burst + rate · d / 1000 + overshoot` (a token bucket's envelope; GCRA's too).
 * - `"window"`: in any `window`-long stretch, at most `quota + overshoot` is admitted
 *   (a sliding window's bound; a fixed window's is twice its quota).
 * - `"concurrency"`: at most `limit + overshoot` admitted calls are unsettled at once.
 *
 * With `exact`, the bound is also the rule: a refusal while the envelope still has room means
 * the policy counted something it should not have (a charge counted twice), and is reported.
 */
export type Envelope = RateEnvelope | WindowEnvelope | ConcurrencyEnvelope;

interface EnvelopeBase {
  /** How a report names it: `"bucket per key"`. */
  readonly label: string;
  /** Which instance of the envelope a call counts against: its key, a tenant, or 0 for one global envelope. @defaultValue one global envelope */
  readonly scope?: (key: number) => number;
  /** What a call weighs: its cost, or one whatever its cost. @defaultValue "cost" */
  readonly units?: "cost" | "calls";
  /** How far past the bound the policy may go by design, in the bound's units. @defaultValue 0 */
  readonly overshoot?: number;
  /** Whether a refusal with room left is a violation. @defaultValue false */
  readonly exact?: boolean;
  /**
   * The refusal reason this envelope answers for, when a policy keeps several (a quota's
   * dimensions): a refusal is then checked against the envelope of its own reason only.
   * Without reasons, a refusal is a violation only when every envelope is exact and has room.
   */
  readonly reason?: string;
}

/** See {@link Envelope}. */
export interface RateEnvelope extends EnvelopeBase {
  readonly kind: "rate";
  /** Units regained per second, above 0. */
  readonly rate: number;
  /** Units admitted back to back from rest, at least 1. */
  readonly burst: number;
}

/** See {@link Envelope}. */
export interface WindowEnvelope extends EnvelopeBase {
  readonly kind: "window";
  /** Units admitted in any window-long stretch. */
  readonly quota: number;
  /** The stretch, in milliseconds. */
  readonly window: number;
}

/** See {@link Envelope}. */
export interface ConcurrencyEnvelope extends EnvelopeBase {
  readonly kind: "concurrency";
  /** Admitted calls unsettled at once. */
  readonly limit: number;
}

/**
 * One policy as the simulator drives it: the small interface every tideward primitive and every
 * baseline is adapted to. The simulator asks it to admit each attempt and tells it how the
 * attempt went; it never looks inside.
 *
 * - A **client-side** policy (a breaker, a client's rate limit) hears the outcome when the
 *   client does: on the response, or on the client's timeout.
 * - A **server-side** policy (a shedder, a concurrency gate) hears it when the server finishes.
 *
 * Adapters are made fresh for every run by a {@link PolicySpec}, so runs never share state.
 */
export interface Adapter {
  /** How results name it: `"breaker"`. */
  readonly name: string;
  /** Where it sits. */
  readonly side: "client" | "server";
  /** Why it refused, read right after {@link Adapter.admit} returned `undefined`: a refusal reason such as `"breaker"` or `"quota/tenant"`. */
  readonly reason: string;
  /** Milliseconds the last admission delays the call by before it goes on (a slow store); read right after `admit` admitted. */
  readonly delay?: number;
  /**
   * Asks to admit one attempt at `now` (ms) from `key` weighing `cost`, at its key's `priority`
   * (if the traffic has any): a token for {@link Adapter.settle} (not `undefined`), or `undefined`
   * to refuse it.
   */
  admit(now: number, key: number, cost: number, priority?: number | string): unknown;
  /** The admitted attempt `token` finished at `now` (ms): it succeeded (`ok`) or failed (a timeout is a failure). */
  settle(token: unknown, now: number, ok: boolean): void;
  /** The admitted attempt `token` never ran (refused after, or dropped unserved) at `now` (ms). */
  release?(token: unknown, now: number): void;
  /** Bounds the simulator checks against this policy's admissions when invariants are on. */
  readonly envelopes?: readonly Envelope[];
  /** How many admitted attempts it believes are unsettled (a gate's `held`): checked against the simulator's own count. */
  held?(): number;
  /** Figures of its own for the result (a breaker's standing refusal ratio, a quota's wasted charges). */
  stats?(): Readonly<Record<string, number>>;
}

/**
 * A policy to run: a name and a way to make a fresh {@link Adapter} for each run. Build one with
 * the functions of `policy` (`policy.breaker()`, `policy.bucket(100)`, …) or write your own.
 */
export interface PolicySpec {
  /** How results name it. */
  readonly name: string;
  /** A fresh adapter for one run. */
  create(context: PolicyContext): Adapter;
}
