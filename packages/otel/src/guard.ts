import { guard } from "@tideward/guard";
import { LimitStage, guardWith, resolveGuard } from "@tideward/guard/internal";
import type {
  Attempt,
  CallScope,
  GuardOptions,
  Guarded,
  HedgeEvent,
  Outcome,
  OutcomeEvent,
  RefuseEvent,
  RetryEvent,
} from "@tideward/guard";
import { GuardMetrics, callOutcome } from "./guard-metrics";
import { GuardSpans } from "./guard-spans";
import type { CallSpan } from "./guard-spans";
import { Gauges, seriesOf } from "./instruments";
import { watchReadings } from "./policies";
import { now as read, quietly } from "./quiet";
import { readTelemetry } from "./telemetry";
import type { Instrumentation, TelemetryOptions } from "./telemetry";

/** A guarded function that reports what it does; `close()` stops the reporting. */
export interface InstrumentedGuard<A extends unknown[], R> extends Guarded<A, R>, Instrumentation {}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * Our listener, then the user's, as the guard would call it (what it throws ends the call); then
 * `after`, told whether it threw. Ours and `after` throw nothing.
 */
function chain<E>(
  theirs: ((event: E) => void) | undefined,
  ours: (event: E) => void,
  after?: (event: E, threw: boolean, error: unknown) => void,
): (event: E) => void {
  return (event: E) => {
    quietly(ours, event);
    if (after === undefined) return theirs?.(event);
    let threw = false;
    let error: unknown;
    try {
      theirs?.(event);
    } catch (e) {
      threw = true;
      error = e;
    }
    quietly(after, event, threw, error);
    if (threw) throw error;
  };
}

/**
 * The scope a traced call runs with: the caller's, with a signal of our own when it has none. One
 * the guard will refuse (not an object, a misspelt field) still reaches it, to be refused alike.
 */
function tracedScope(scope: CallScope | undefined): CallScope {
  if (scope === undefined) return { signal: new AbortController().signal };
  if (!isObject(scope)) return scope;
  try {
    if (scope.signal !== undefined) return scope;
    // Own fields copied (so a misspelt one is still there); `deadline` read, as the guard reads it.
    return { ...scope, signal: new AbortController().signal, deadline: (scope as CallScope).deadline };
  } catch {
    return scope; // a getter that throws: the guard meets it too
  }
}

/**
 * `guard` from `@tideward/guard`, reporting what it does as OpenTelemetry metrics and spans:
 * calls by outcome, attempts, retries, hedges and refusals, attempt and call durations (in
 * seconds), the breaker's drop ratio, the shedder's load, and the retry budget's credits (see
 * the package README for every instrument).
 *
 * It builds the guard with its events wired in — your own `onOutcome`, `onRetry`, `onHedge` and
 * `onRefuse` still run, after the package's — and wraps the guarded function to see each call
 * end. It is the guard `guard(fn, options)` builds — the same presets, the same breaker, shedder
 * and retry budget built from fields — and those are what its gauges read. A call's outcome is judged as the guard judges an attempt, so
 * `isFailure`, when given, is asked once more, about the call's answer.
 *
 * With a `tracer`, every call gets a span (`guard <name>`, a child of the active one, active
 * while the call runs so that what the function calls nests under it) with an event per attempt,
 * retry, hedge and refusal. A traced call always runs with a signal (its own when the caller
 * gives none), so each attempt has one to listen to.
 *
 * What the telemetry throws (a meter, a tracer, a span or a clock) is dropped, and the event it
 * was reporting goes uncounted: a call answers as the guard alone would answer it.
 *
 * An uninstrumented guard is untouched: none of this is on its path.
 *
 * @example
 * import { MeterProvider, MetricReader } from "@opentelemetry/sdk-metrics";
 * class Reader extends MetricReader { protected async onForceFlush() {} protected async onShutdown() {} }
 * const reader = new Reader();
 * const meter = new MeterProvider({ readers: [reader] }).getMeter("app");
 * let n = 0;
 * const flaky = async () => { if (++n === 1) throw new Error("reset"); return "ok"; };
 * const call = instrumentGuard(flaky, { retry: { attempts: 3, base: 1 } }, { meter, name: "api" });
 * await call(); // "ok"
 * const { resourceMetrics } = await reader.collect();
 * const metrics = resourceMetrics.scopeMetrics[0].metrics;
 * const attempts = metrics.find((m) => m.descriptor.name === "tideward.guard.attempts");
 * attempts?.dataPoints.map((p) => [p.attributes["tideward.outcome"], p.value]); // [["success", 1], ["failure", 1]]
 * @param fn - the call, as `guard` takes it: an `Attempt`, then the caller's arguments
 * @param options - the guard's options, see `GuardOptions`
 * @param telemetry - the meter and tracer, and the name every series carries
 * @returns the guarded function, with `close()`
 * @throws what `guard` throws for bad options; TypeError for bad telemetry options
 */
export function instrumentGuard<A extends unknown[], R>(
  fn: (attempt: Attempt, ...args: A) => R | PromiseLike<R>,
  options: GuardOptions<R, NoInfer<A>> | undefined,
  telemetry: TelemetryOptions,
): InstrumentedGuard<A, R> {
  const t = readTelemetry(telemetry, "instrumentGuard", true);
  // A function that is not one is the guard's to refuse, in its own words.
  if (typeof fn !== "function") guard(fn, options as GuardOptions<R> | undefined);
  // The options as the guard reads them (its checks, its presets, the primitives it builds from
  // fields): the instrumented guard is the guard `guard(fn, options)` would build, with our
  // listeners added, and what it reports on are the primitives that guard holds.
  const r = resolveGuard(options);
  const clock = r.clock;

  const series = t.meter === undefined ? undefined : seriesOf(t.meter, t.name);
  // A refused call's level in the concurrency limit's priorities, by name, as the limit judged it:
  // the call's own (a priority function's answer), else the guard's.
  const limit = r.pipeline.stages.find((s): s is LimitStage => s instanceof LimitStage);
  const levels = limit?.limiter.priorities;
  const levelOf =
    levels === undefined
      ? undefined
      : (given: number | string | undefined) =>
          levels.names[levels.level(given === undefined ? limit?.priority : given)];
  const metrics = series === undefined ? undefined : new GuardMetrics(series, t.name, t.durations, levelOf);
  const spans = t.tracer === undefined ? undefined : new GuardSpans(t.tracer, t.name, clock);
  // A guard whose calls make one attempt each (no retry, no hedge, no wait for a token) and no
  // spans is counted from its events alone: every call raises exactly one onOutcome or one
  // refusal of its first attempt, which says how the call ended, and the call's own path is
  // left as it is. Any other guard is wrapped, to see its calls end.
  const waits = r.waits !== undefined;
  const single = metrics !== undefined && spans === undefined && r.attempts === 1 && r.hedgeMax === 0 && !waits;
  // Anything a call does that the guard reports or that reaches the function (see `call`).
  let activity = 0;
  const onOutcome = chain<OutcomeEvent<R>>(
    r.onOutcome,
    (e) => {
      activity++;
      metrics?.attempt(e);
      spans?.outcome(e);
    },
    // A one-attempt call ends with its attempt's answer, or with what replaced it: the user's
    // listener's error, or the clock's after a success (the event carries it). It is counted
    // once the user's listener has run, as what the caller gets.
    single
      ? (e, threw, error) => {
          const failed = threw || e.error !== undefined;
          const answer = threw ? error : failed ? e.error : e.result;
          const replaced = threw || (e.outcome === "success" && failed);
          metrics.call(
            replaced ? callOutcome(true, answer, undefined, undefined) : e.outcome,
            failed,
            answer,
            e.duration,
          );
        }
      : undefined,
  );
  // A retry is counted once the caller's listener has let it go: one that throws stops it.
  const onRetry = chain<RetryEvent<R>>(
    r.onRetry,
    () => undefined,
    (e, threw) => {
      if (threw) return;
      metrics?.retry(e);
      spans?.retry(e);
    },
  );
  const onHedge = chain<HedgeEvent>(r.onHedge, (e) => {
    metrics?.hedge(e);
    spans?.hedge(e);
  });
  const onRefuse = chain<RefuseEvent>(
    r.onRefuse,
    (e) => {
      activity++;
      metrics?.refusal(e);
      spans?.refusal(e);
    },
    // A refused first attempt ends the call with the refusal, or with the user's listener's error.
    single
      ? (e, threw, error) => {
          if (e.attempt !== 1) return;
          if (threw) metrics.call(callOutcome(true, error, undefined, undefined), true, error, 0);
          else metrics.refusedCall(e);
        }
      : undefined,
  );
  const traced = spans === undefined ? fn : spans.wrap(fn);
  // A wrapped guard's function notes each attempt that reaches it (a one-attempt guard's path is left as it is).
  const inner = guardWith(
    single
      ? traced
      : (attempt: Attempt, ...args: A) => {
          activity++;
          return traced(attempt, ...args);
        },
    Object.freeze({
      ...r,
      onOutcome,
      onRetry,
      onHedge,
      onRefuse,
    }),
  );

  const gauges = new Gauges();
  if (t.meter !== undefined) {
    const target = { meter: t.meter, name: t.name };
    // Each stage's own figures: the breaker's drop ratio, the shedder's load, the budget's credits.
    for (const stage of r.pipeline.stages) watchReadings(gauges, target, stage.readings, clock);
  }
  const close = () => {
    if (metrics !== undefined) metrics.closed = true;
    gauges.close();
  };

  if (single) {
    const plain = inner.run.bind(inner);
    const counted = inner as InstrumentedGuard<A, R>;
    // The one call no event reports: one whose caller's signal fired before it began.
    const cancelled = (scope: CallScope) => {
      const signal = scope?.signal;
      if (signal?.aborted === true) metrics.call("cancelled", true, signal.reason, 0);
    };
    counted.run = (scope: CallScope, ...args: A) => {
      quietly(cancelled, scope);
      return plain(scope, ...args);
    };
    counted.close = close;
    return counted;
  }

  const isFailure = r.isFailure as ((error: unknown, result: unknown) => boolean) | undefined;
  // Without durations a call's clock is not read: it is counted, not timed.
  const timed = t.durations && metrics !== undefined;
  let closed = false;

  // Without waits for a token, a call's first attempt (or its refusal) comes while the guard is
  // called: a call that did nothing by then was rejected before it (a bad scope, or a clock, load
  // or random source that threw) and raised no event, and is not counted, as a one-attempt
  // guard's is not. A call that waits is counted however it ends.
  const ended = (
    start: number,
    scope: CallScope | undefined,
    span: CallSpan | undefined,
    begun: boolean,
    threw: boolean,
    answer: unknown,
  ) => {
    let outcome: Outcome = "failure";
    try {
      outcome = callOutcome(threw, answer, isFailure, scope?.signal);
      if (begun || outcome === "cancelled")
        metrics?.call(outcome, threw, answer, timed ? read(clock) - start : Number.NaN);
    } catch {
      // Telemetry never fails a call, and never leaves a rejection unhandled.
    } finally {
      // Ended whatever the metrics did.
      if (span !== undefined) quietly(() => spans?.end(span, outcome, threw, answer));
    }
  };

  const call = (scope: CallScope | undefined, args: A): Promise<R> => {
    if (closed) return scope === undefined ? inner(...args) : inner.run(scope, ...args);
    // The guard reads the same clock, and rejects with what it throws.
    const start = timed ? read(clock) : Number.NaN;
    const before = activity;
    const span = spans?.start();
    const answer =
      span !== undefined && spans !== undefined
        ? spans.run(span, () => inner.run(tracedScope(scope), ...args))
        : scope === undefined
          ? inner(...args)
          : inner.run(scope, ...args);
    const begun = waits || activity !== before;
    // Settled before the caller's own reactions run: once the caller has the answer, it is counted.
    answer.then(
      (value) => ended(start, scope, span, begun, false, value),
      (error: unknown) => ended(start, scope, span, begun, true, error),
    );
    return answer;
  };

  const guarded = ((...args: A) => call(undefined, args)) as InstrumentedGuard<A, R>;
  guarded.run = (scope: CallScope, ...args: A) => call(scope, args);
  guarded.close = () => {
    closed = true;
    close();
  };
  return guarded;
}
