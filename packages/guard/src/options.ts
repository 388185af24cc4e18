import type { RetryBudget, RetryRule } from "@tideward/backoff";
import { systemClock, systemRandom } from "@tideward/time";
import { check } from "@tideward/time/internal";
import type { Clock, Random, Span } from "@tideward/time";
import type { HedgeEvent, OutcomeEvent, RefuseEvent, RetryEvent } from "./events";
import { Pipeline } from "./pipeline";
import type { Host, Stage } from "./stage";
import { stagesOf } from "./stages/index";
import type { ClientStageOptions } from "./stages/index";
import { BucketStage } from "./stages/bucket";
import { BudgetStage } from "./stages/budget";
import type { PriorityOf } from "./stages/limit";
import { retry } from "./stages/retry";
import type { RetryOption, RetryPolicy } from "./stages/retry";
import { realTimers } from "./timers";
import type { Timers } from "./timers";

export type { BucketFields } from "./stages/bucket";

/** Hedging: start another attempt when the first is slow, and take the first good answer. */
export interface Hedge {
  /** How long an attempt may run before the next hedge starts, in milliseconds; 0 or more. */
  readonly delay: Span;
  /** The most hedges per round on top of its first attempt, a whole number from 1 to 100. @defaultValue 1 */
  readonly max?: number;
}

/**
 * Options of {@link guard}. Every policy is optional, and they always apply in the same order
 * (see the package README): deadline, then per attempt the bucket, gate, shedder and breaker,
 * the attempt with its timeout, then retry or hedge.
 *
 * A policy given as an instance (`new Breaker()`) may be shared with other guards, so that every
 * call to one backend feeds one breaker; given as fields, the guard builds its own.
 *
 * @typeParam R - what the guarded function returns
 * @typeParam A - the guarded function's arguments after its `Attempt` (what `priority` reads)
 */
export interface GuardOptions<R = unknown, A extends unknown[] = unknown[]>
  extends Omit<ClientStageOptions, "priority">, RetryOption<R> {
  /**
   * How important each call is, to the concurrency limit and the shedder (when it has levels): a
   * level's number (0 the most important) or name, for every call of the guard; or a function of
   * the call's arguments answering one, asked once a call before anything is taken, so that one
   * guard serves mixed traffic. An answer that is not a level (an unknown name, a number out of
   * range, NaN) counts as the least important level, `undefined` as the priorities' fallback; what
   * the function throws is the call's error (it then takes nothing). Retries and hedges keep the
   * call's priority. @defaultValue the priorities' `fallback` level
   */
  readonly priority?: number | string | PriorityOf<A>;
  /**
   * The whole call's budget, in milliseconds on the guard's clock: attempts, waits for a token
   * and backoff sleeps included. When it passes, the attempt in flight is abandoned (its signal
   * fires, its permit is settled as a failure) and the call rejects with a `TimeoutError`
   * (scope `"deadline"`), whether or not the function listens to its signal. 0 or `Infinity`:
   * none. @defaultValue none
   */
  readonly deadline?: Span;
  /**
   * How long each attempt may run, in milliseconds; it is then abandoned like a deadline, with a
   * `TimeoutError` of scope `"attempt"`, which counts as a failure and may be retried.
   * 0 or `Infinity`: none. @defaultValue none
   */
  readonly timeout?: Span;
  /**
   * Whether an attempt's answer counts as a failure on the breaker, the shedder and in
   * `onOutcome`. `error` is what it threw (`undefined` when it returned), `result` what it
   * returned. A `Refusal` from something the attempt called is never asked about: it is not a
   * backend failure. @defaultValue a thrown error is a failure, a returned value is not
   */
  readonly isFailure?: (error: unknown, result: R | undefined) => boolean;
  /** Hedging, for idempotent calls only: see {@link Hedge}. @defaultValue none */
  readonly hedge?: Hedge;
  /**
   * Called with every result the caller will not get: one about to be retried, one that lost a
   * hedge, one that arrived after its attempt was abandoned. `guardFetch` cancels response bodies
   * here. @defaultValue none
   */
  readonly discard?: (result: R) => void;
  /** A policy refused an attempt (the first, a retry or a hedge). */
  readonly onRefuse?: (event: RefuseEvent) => void;
  /** An attempt failed and another will follow, after `delay` ms. */
  readonly onRetry?: (event: RetryEvent<R>) => void;
  /** A hedge is starting. */
  readonly onHedge?: (event: HedgeEvent) => void;
  /** An attempt ended. */
  readonly onOutcome?: (event: OutcomeEvent<R>) => void;
  /**
   * Reads the time, in milliseconds. The guard's clock is the Unix-epoch scale of `Date.now()`:
   * the primitives it feeds are checked at that scale, and an HTTP date in `Retry-After` is read
   * against it. @defaultValue `systemClock` (monotonic, `performance.timeOrigin + performance.now()`)
   */
  readonly clock?: Clock;
  /**
   * Draws in [0, 1) for the breaker's roll (drawn only while the breaker throttles) and the
   * backoff's jitter. @defaultValue `Math.random`
   */
  readonly random?: Random;
  /** Schedules timeouts, hedges and waits. @defaultValue the platform's `setTimeout` */
  readonly timers?: Timers;
}

/** The most hedges a round may start: each is an attempt in flight at once. */
const MAX_HEDGES = 100;

/** The options the guard itself reads; retries and each stage read their own (see `stages/`). */
const CORE_OPTIONS = [
  "deadline",
  "timeout",
  "isFailure",
  "hedge",
  "discard",
  "onRefuse",
  "onRetry",
  "onHedge",
  "onOutcome",
  "clock",
  "random",
  "timers",
] as const satisfies readonly (keyof GuardOptions)[];

/** The client side's stages, in the order they are asked. */
const CLIENT_STAGES = stagesOf("client");

/** Every option name, for the "did you mean" of a misspelt one: the guard's own, the retries', then each stage's. */
export const GUARD_OPTIONS: readonly (keyof GuardOptions)[] = [
  ...CORE_OPTIONS,
  ...retry.options,
  ...(CLIENT_STAGES.flatMap((d) => d.options) as (keyof ClientStageOptions)[]),
];

/** Each option named in one list above and no other: what a field added without its name would break. */
type Named = (typeof CORE_OPTIONS)[number] | (typeof retry.options)[number] | keyof ClientStageOptions;
const EVERY_OPTION_NAMED: [Exclude<keyof GuardOptions, Named>] extends [never] ? true : never = true;
void EVERY_OPTION_NAMED;

/**
 * The options checked once, with every default in place: what a guard runs on. Its retry fields
 * (`backoff`, `maxRetryAfter`, `overMaxRetryAfter`, `budget`) are the {@link RetryRule} every
 * retry is decided by; its policies are the stages of its pipeline.
 */
export interface Resolved<R> extends RetryRule, RetryPolicy<R> {
  /** How errors name the guard: `"guard"`, `"guardFetch"`. */
  readonly owner: string;
  /** How errors name the caller's signal: `"guard run signal"`, `"guardFetch init.signal"`. */
  readonly signalName: string;
  readonly deadline: number;
  readonly timeout: number;
  /** The policies every attempt passes, in order. */
  readonly pipeline: Pipeline;
  /** The bucket's stage when an attempt may wait for its token (`maxWait` above 0). */
  readonly waits: BucketStage | undefined;
  readonly budget: RetryBudget | undefined;
  readonly isFailure: ((error: unknown, result: R | undefined) => boolean) | undefined;
  readonly hedgeDelay: number;
  readonly hedgeMax: number;
  readonly discard: ((result: R) => void) | undefined;
  /** The call's priority from its arguments, when `priority` is a function. */
  readonly priorityOf: PriorityOf<never[]> | undefined;
  readonly onRefuse: ((event: RefuseEvent) => void) | undefined;
  readonly onRetry: ((event: RetryEvent<R>) => void) | undefined;
  readonly onHedge: ((event: HedgeEvent) => void) | undefined;
  readonly onOutcome: ((event: OutcomeEvent<R>) => void) | undefined;
  readonly clock: Clock;
  /** The clock's reading, checked: a finite number of ms, or an error naming the clock. */
  readonly now: () => number;
  readonly random: Random;
  readonly timers: Timers;
}

/** A span where 0 and `Infinity` both mean "none" (returned as `Infinity`). */
function limit(value: unknown, what: string): number {
  if (value === undefined || value === Infinity) return Infinity;
  const n = check.nonNegative(value, what);
  return n === 0 ? Infinity : n;
}

/** User timers behind a guard: `clear`, `ref` and `unref` that throw are ignored (see the README). */
function sturdy(t: Timers): Timers {
  const set = t.set.bind(t);
  const clear = t.clear.bind(t);
  const ref = typeof t.ref === "function" ? t.ref.bind(t) : undefined;
  const unref = typeof t.unref === "function" ? t.unref.bind(t) : undefined;
  const quiet =
    (f: (handle: unknown) => void) =>
    (handle: unknown): void => {
      try {
        f(handle);
      } catch {
        // A timer that cannot be cleared fires into state that ignores it.
      }
    };
  return {
    set,
    clear: quiet(clear),
    ref: ref === undefined ? undefined : quiet(ref),
    unref: unref === undefined ? undefined : quiet(unref),
  };
}

/**
 * Checks every option once and fills in the defaults, building the policies given as fields into
 * the stages of the guard's pipeline.
 *
 * @throws TypeError for an unknown option (naming the closest known one), a field of the wrong
 *   type, or a shedder without a load; RangeError for a number out of range, naming the field
 */
export function resolveGuard<R>(
  given: GuardOptions<R, never> | undefined,
  owner = "guard",
  signalName = `${owner} run signal`,
): Resolved<R> {
  const fn = <T>(value: unknown, what: string): T | undefined =>
    value === undefined ? undefined : check.fn<T & ((...args: never[]) => unknown)>(value, `${owner} ${what}`);
  const o = check.options(given, GUARD_OPTIONS, owner);
  const clock = fn<Clock>(o.clock, "clock") ?? systemClock;
  const random = fn<Random>(o.random, "random") ?? systemRandom;
  const givenTimers = o.timers;
  if (
    givenTimers !== undefined &&
    (!check.isObject(givenTimers) || typeof givenTimers.set !== "function" || typeof givenTimers.clear !== "function")
  ) {
    throw check.typeError(
      `${owner} timers`,
      `must have set(fn, ms) and clear(handle), got ${check.describe(givenTimers)}`,
      givenTimers,
    );
  }
  const timers = givenTimers === undefined ? realTimers : sturdy(givenTimers);
  const now = check.finite(clock(), `${owner} clock()`);

  const retries = retry.parse<R>(o, owner);
  const attempts = retries.attempts;

  let hedgeDelay = Infinity;
  let hedgeMax = 0;
  if (o.hedge !== undefined) {
    if (!check.isObject(o.hedge))
      throw check.typeError(`${owner} hedge`, `must be { delay, max }, got ${check.describe(o.hedge)}`, o.hedge);
    const h = check.options(o.hedge, ["delay", "max"], `${owner} hedge`);
    if (h.delay === undefined)
      throw check.typeError(
        `${owner} hedge.delay (ms)`,
        "is missing: hedging is { delay, max }, such as { delay: 50 }",
        undefined,
      );
    hedgeDelay = check.nonNegative(h.delay, `${owner} hedge.delay (ms)`);
    hedgeMax = h.max === undefined ? 1 : check.integer(h.max, `${owner} hedge.max`, 1);
    if (hedgeMax > MAX_HEDGES)
      throw check.rangeError(
        `${owner} hedge.max`,
        `must be at most ${MAX_HEDGES} (each hedge is one more attempt in flight at once), got ${hedgeMax}`,
        hedgeMax,
      );
  }

  // Each policy's stage, read by its own module, in the order the pipeline asks them.
  const host: Host = { side: "client", owner, now, random, retrying: attempts > 1 || hedgeMax > 0 };
  const stages: Stage[] = [];
  for (const def of CLIENT_STAGES) {
    const stage = def.parse(o, host);
    if (stage !== undefined) stages.push(stage);
  }
  const bucket = stages.find((s): s is BucketStage => s instanceof BucketStage);
  const budget = stages.find((s): s is BudgetStage => s instanceof BudgetStage)?.budget;

  return Object.freeze({
    owner,
    signalName,
    deadline: limit(o.deadline, `${owner} deadline (ms)`),
    timeout: limit(o.timeout, `${owner} timeout (ms)`),
    pipeline: new Pipeline(stages),
    waits: bucket !== undefined && bucket.maxWait > 0 ? bucket : undefined,
    ...retries,
    budget,
    isFailure: fn<(error: unknown, result: R | undefined) => boolean>(o.isFailure, "isFailure"),
    hedgeDelay,
    hedgeMax,
    discard: fn<(result: R) => void>(o.discard, "discard"),
    // Checked as a level by the stages when it is not a function.
    priorityOf: typeof o.priority === "function" ? (o.priority as PriorityOf<never[]>) : undefined,
    onRefuse: fn<(event: RefuseEvent) => void>(o.onRefuse, "onRefuse"),
    onRetry: fn<(event: RetryEvent<R>) => void>(o.onRetry, "onRetry"),
    onHedge: fn<(event: HedgeEvent) => void>(o.onHedge, "onHedge"),
    onOutcome: fn<(event: OutcomeEvent<R>) => void>(o.onOutcome, "onOutcome"),
    clock,
    now: () => {
      const t = clock();
      if (typeof t !== "number" || t - t !== 0) check.finite(t, `${owner} clock()`);
      return t;
    },
    random,
    timers,
  });
}
