import { Breaker } from "@tideward/breaker";
import { guard } from "@tideward/guard";
import type {
  Attempt,
  CallScope,
  GuardOptions,
  Guarded,
  HedgeEvent,
  OutcomeEvent,
  RefuseEvent,
  RetryEvent,
} from "@tideward/guard";
import { Shedder } from "@tideward/shedder";
import { systemClock } from "@tideward/time";
import type { Clock } from "@tideward/time";
import { GuardMetrics, callOutcome } from "./guard-metrics";
import { GuardSpans } from "./guard-spans";
import type { CallSpan } from "./guard-spans";
import { Gauges, seriesOf } from "./instruments";
import { LoadSeen, watchBreaker, watchBudget, watchShedder } from "./policies";
import { readTelemetry } from "./telemetry";
import type { Instrumentation, TelemetryOptions } from "./telemetry";

/** A guarded function that reports what it does; `close()` stops the reporting. */
export interface InstrumentedGuard<A extends unknown[], R> extends Guarded<A, R>, Instrumentation {}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

// Fields rather than an instance: what the guard would build a primitive from (it tells the two
// apart by a method, as here, so that an instance from another copy of a package is still one).
function isFields(value: unknown, method: string): value is Record<string, unknown> {
  return isObject(value) && typeof value[method] !== "function";
}

/** The clock's reading, or undefined when it throws or is not finite (the guard then says why). */
function reading(clock: unknown): number | undefined {
  if (typeof clock !== "function") return undefined;
  try {
    const now: unknown = (clock as Clock)();
    return typeof now === "number" && Number.isFinite(now) ? now : undefined;
  } catch {
    return undefined;
  }
}

/**
 * A user's listener, called after ours; something that is not a function is left for the guard
 * to refuse with its own message.
 */
function chain<E>(given: unknown, ours: (event: E) => void): unknown {
  if (given === undefined) return ours;
  if (typeof given !== "function") return given;
  const theirs = given as (event: E) => void;
  return (event: E) => {
    ours(event);
    theirs(event);
  };
}

/**
 * `guard` from `@tideward/guard`, reporting what it does as OpenTelemetry metrics and spans:
 * calls by outcome, attempts, retries, hedges and refusals, attempt and call durations (in
 * seconds), the breaker's drop ratio, the shedder's load, and the retry budget's credits (see
 * the package README for every instrument).
 *
 * It builds the guard with its events wired in — your own `onOutcome`, `onRetry`, `onHedge` and
 * `onRefuse` still run, after the package's — and wraps the guarded function to see each call
 * end. A breaker or a shedder given as fields is built here (as the guard would build it) so
 * that it can be read. A call's outcome is judged as the guard judges an attempt, so
 * `isFailure`, when given, is asked once more, about the call's answer.
 *
 * With a `tracer`, every call gets a span (`guard <name>`, a child of the active one, active
 * while the call runs so that what the function calls nests under it) with an event per attempt,
 * retry, hedge and refusal. A traced call always runs with a signal (its own when the caller
 * gives none), so each attempt has one to listen to.
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
  options: GuardOptions<R> | undefined,
  telemetry: TelemetryOptions,
): InstrumentedGuard<A, R> {
  const t = readTelemetry(telemetry, "instrumentGuard", true);
  // Read once, into a copy: the guard then reads the copy, with our listeners in it.
  const o: Record<string, unknown> = isObject(options) ? { ...options } : {};
  // Bad options are the guard's to refuse, in its own words (naming the path the user typed):
  // a guard is built from them as given first, and thrown away.
  guard(fn, isObject(options) ? (o as GuardOptions<R>) : options);
  const clock = typeof o.clock === "function" ? (o.clock as Clock) : systemClock;
  const now = reading(o.clock ?? systemClock);
  if (now !== undefined) {
    if (isFields(o.breaker, "allow")) o.breaker = new Breaker(o.breaker, now);
    if (isFields(o.shedder, "allow")) o.shedder = new Shedder(o.shedder, now);
  }
  const load = typeof o.load === "function" ? new LoadSeen() : undefined;
  if (load !== undefined) o.load = load.wrap(o.load as () => number);

  const series = t.meter === undefined ? undefined : seriesOf(t.meter, t.name);
  const metrics = series === undefined ? undefined : new GuardMetrics(series, t.name, t.durations);
  const spans = t.tracer === undefined ? undefined : new GuardSpans(t.tracer, t.name, clock);
  // A guard whose calls make one attempt each (no retry, no hedge, no wait for a token) and no
  // spans is counted from its events alone: every call raises exactly one onOutcome or one
  // refusal of its first attempt, which says how the call ended, and the call's own path is
  // left as it is. Any other guard is wrapped, to see its calls end.
  const retries = o.retry === undefined ? 1 : isObject(o.retry) ? (o.retry.attempts ?? 3) : 0;
  const waits = o.bucket !== undefined && typeof o.maxWait === "number" && o.maxWait > 0;
  const single = metrics !== undefined && spans === undefined && retries === 1 && o.hedge === undefined && !waits;
  o.onOutcome = chain<OutcomeEvent<R>>(o.onOutcome, (e) => {
    if (metrics !== undefined) {
      metrics.attempt(e);
      if (single) metrics.call(e.outcome, e.error !== undefined, e.error ?? e.result, e.duration);
    }
    spans?.outcome(e);
  });
  o.onRetry = chain<RetryEvent<R>>(o.onRetry, (e) => {
    metrics?.retry(e);
    spans?.retry(e);
  });
  o.onHedge = chain<HedgeEvent>(o.onHedge, (e) => {
    metrics?.hedge(e);
    spans?.hedge(e);
  });
  o.onRefuse = chain<RefuseEvent>(o.onRefuse, (e) => {
    if (metrics !== undefined) {
      metrics.refusal(e);
      if (single && e.attempt === 1) metrics.refusedCall(e);
    }
    spans?.refusal(e);
  });
  const inner = guard(spans === undefined ? fn : spans.wrap(fn), o as GuardOptions<R>);

  const gauges = new Gauges();
  if (t.meter !== undefined) {
    const target = { meter: t.meter, name: t.name };
    if (isObject(o.breaker) && typeof o.breaker.ratio === "function")
      watchBreaker(gauges, target, o.breaker as unknown as Breaker, clock);
    if (isObject(o.shedder) && typeof o.shedder.capacity === "function")
      watchShedder(gauges, target, o.shedder as unknown as Shedder, clock, load);
    watchBudget(gauges, target, o.budget, clock);
  }
  const close = () => {
    if (metrics !== undefined) metrics.closed = true;
    gauges.close();
  };

  if (single) {
    const plain = inner.run.bind(inner);
    const counted = inner as InstrumentedGuard<A, R>;
    // The one call no event reports: one whose caller's signal fired before it began.
    counted.run = (scope: CallScope, ...args: A) => {
      const signal = scope?.signal;
      if (signal?.aborted === true) metrics.call("cancelled", true, signal.reason, 0);
      return plain(scope, ...args);
    };
    counted.close = close;
    return counted;
  }

  const isFailure =
    typeof o.isFailure === "function" ? (o.isFailure as (error: unknown, result: unknown) => boolean) : undefined;
  // Without durations a call's clock is not read: it is counted, not timed.
  const timed = t.durations && metrics !== undefined;
  let closed = false;

  const ended = (
    start: number,
    scope: CallScope | undefined,
    span: CallSpan | undefined,
    threw: boolean,
    answer: unknown,
  ) => {
    try {
      let ms = Number.NaN;
      if (timed) {
        try {
          ms = clock() - start;
        } catch {
          // A clock that throws: the call is counted, its duration is not known.
        }
      }
      const outcome = callOutcome(threw, answer, isFailure, scope?.signal);
      metrics?.call(outcome, threw, answer, ms);
      if (span !== undefined) spans?.end(span, outcome, threw, answer);
    } catch {
      // Telemetry never fails a call, and never leaves a rejection unhandled.
    }
  };

  const call = (scope: CallScope | undefined, args: A): Promise<R> => {
    if (closed) return scope === undefined ? inner(...args) : inner.run(scope, ...args);
    let start = Number.NaN;
    if (timed) {
      try {
        start = clock();
      } catch {
        // The guard reads the same clock and rejects with what it throws.
      }
    }
    let span: CallSpan | undefined;
    let answer: Promise<R>;
    if (spans !== undefined) {
      const s = spans.start();
      span = s;
      const traced: CallScope =
        scope?.signal !== undefined ? scope : { signal: new AbortController().signal, deadline: scope?.deadline };
      answer = spans.run(s, () => inner.run(traced, ...args));
    } else answer = scope === undefined ? inner(...args) : inner.run(scope, ...args);
    // Settled before the caller's own reactions run: once the caller has the answer, it is counted.
    answer.then(
      (value) => ended(start, scope, span, false, value),
      (error: unknown) => ended(start, scope, span, true, error),
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
