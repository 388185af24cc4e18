import { context, createContextKey, trace } from "@opentelemetry/api";
import type { Attributes, Context, Span, SpanStatusCode, Tracer } from "@opentelemetry/api";
import { isTimeoutError } from "@tideward/guard";
import type { Attempt, HedgeEvent, Outcome, OutcomeEvent, RefuseEvent, RetryEvent } from "@tideward/guard";
import type { Clock } from "@tideward/time";
import { errorType } from "./error-type";
import { ATTEMPT_KINDS, kindOf, refusalKindOf } from "./guard-metrics";
import { ATTRIBUTES, SPAN } from "./names";
import { now, quietly } from "./quiet";

// `SpanStatusCode.ERROR`, written out so that the API is imported for its context alone.
const ERROR = 2 as SpanStatusCode.ERROR;

/** Where a guarded call's span record sits in OpenTelemetry's context. */
const CALL = createContextKey("tideward guarded call");

/** One guarded call's span, and what its events need. */
export class CallSpan {
  readonly span: Span;
  /** The caller's context with this span active and this record under {@link CALL}. */
  readonly context: Context;
  /** Attempts started, counted as the guard invokes the function. */
  attempts = 0;
  /** Whether the context reaches the call: with no context manager, attempts and events are not seen. */
  tracked = false;
  ended = false;

  constructor(span: Span, parent: Context) {
    this.span = span;
    this.context = trace.setSpan(parent, span).setValue(CALL, this);
  }
}

/** Seconds from milliseconds, for event attributes. */
function seconds(ms: number): number {
  return ms > 0 ? ms / 1000 : 0;
}

/**
 * A guard's spans: one per call, with an event per attempt, retry, hedge and refusal.
 *
 * The guard's events carry no call, so each finds its call's span through OpenTelemetry's
 * context, which the call runs in: the guard raises them from the call's own continuations. An
 * attempt cut off by a timeout or a cancellation is the exception (the guard's shared timer cuts
 * off the attempts of every call): its event comes from the attempt's own signal, which the
 * wrapper around the guarded function listens to.
 */
export class GuardSpans {
  readonly #tracer: Tracer;
  readonly #name: string;
  readonly #clock: Clock;
  readonly #spanName: string;

  constructor(tracer: Tracer, name: string, clock: Clock) {
    this.#tracer = tracer;
    this.#name = name;
    this.#clock = clock;
    this.#spanName = `guard ${name}`;
  }

  /** Starts a call's span as a child of the active one; undefined when the tracer throws (the call runs untraced). */
  start(): CallSpan | undefined {
    try {
      const parent = context.active();
      const span = this.#tracer.startSpan(this.#spanName, { attributes: { [ATTRIBUTES.name]: this.#name } }, parent);
      return new CallSpan(span, parent);
    } catch {
      return undefined;
    }
  }

  /** Runs `f` with the call's span active, so its attempts and events find it. */
  run<T>(call: CallSpan, f: () => T): T {
    return context.with(call.context, () => {
      call.tracked = context.active() === call.context;
      return f();
    });
  }

  /** Ends the call's span with how the call ended (ended even when a span method throws). */
  end(call: CallSpan, outcome: Outcome, threw: boolean, answer: unknown): void {
    call.ended = true;
    const span = call.span;
    try {
      span.setAttribute(ATTRIBUTES.outcome, outcome);
      if (call.tracked) span.setAttribute(SPAN.attempts, call.attempts);
      if (outcome !== "success") {
        const type = errorType(threw, answer);
        span.setAttribute(ATTRIBUTES.errorType, type);
        if (outcome === "refused") span.setAttribute(ATTRIBUTES.refusalKind, refusalKindOf(answer));
        // The caller's own abort says nothing about the backend.
        if (outcome !== "cancelled") span.setStatus({ code: ERROR, message: type });
      }
    } finally {
      span.end();
    }
  }

  /** The guarded function, counting its attempts and listening for their cut-offs. */
  wrap<A extends unknown[], R>(
    fn: (attempt: Attempt, ...args: A) => R | PromiseLike<R>,
  ): (attempt: Attempt, ...args: A) => R | PromiseLike<R> {
    return (attempt, ...args) => {
      const call = current();
      if (call !== undefined) {
        call.attempts++;
        const started = now(this.#clock);
        // Every attempt of a traced call has a signal of its own (the call always runs with one).
        // What the listener throws would reach 'uncaughtException': it throws nothing.
        const signal = attempt.signal;
        const cutOff = () => this.#cutOff(call, attempt, signal.reason, started);
        signal.addEventListener("abort", () => quietly(cutOff), { once: true });
      }
      return fn(attempt, ...args);
    };
  }

  /** An attempt ended with an answer (`onOutcome`); cut-offs are the signal's. */
  outcome(e: OutcomeEvent): void {
    if (e.outcome === "timeout" || e.outcome === "cancelled") return;
    const call = current();
    if (call === undefined) return;
    const threw = e.error !== undefined;
    const a: Attributes = this.#attempt(e.attempt, e.hedge, e.outcome, e.duration);
    if (e.outcome !== "success") a[ATTRIBUTES.errorType] = errorType(threw, threw ? e.error : e.result);
    if (e.outcome === "refused") a[ATTRIBUTES.refusalKind] = refusalKindOf(e.error);
    call.span.addEvent(SPAN.attempt, a);
  }

  retry(e: RetryEvent): void {
    const call = current();
    if (call === undefined) return;
    const threw = e.error !== undefined;
    call.span.addEvent(SPAN.retry, {
      [SPAN.attemptNumber]: e.attempt,
      [SPAN.retryDelay]: seconds(e.delay),
      [ATTRIBUTES.errorType]: errorType(threw, threw ? e.error : e.result),
    });
  }

  refusal(e: RefuseEvent): void {
    current()?.span.addEvent(SPAN.refusal, {
      [ATTRIBUTES.refusalKind]: refusalKindOf(e),
      [SPAN.attemptNumber]: e.attempt,
      [SPAN.retryAfter]: seconds(e.retryAfter),
    });
  }

  hedge(e: HedgeEvent): void {
    current()?.span.addEvent(SPAN.hedge, { [SPAN.attemptNumber]: e.attempt, [SPAN.inFlight]: e.inFlight });
  }

  #cutOff(call: CallSpan, attempt: Attempt, reason: unknown, started: number): void {
    if (call.ended) return;
    const outcome = isTimeoutError(reason) ? "timeout" : "cancelled";
    const a = this.#attempt(attempt.attempt, attempt.hedge, outcome, now(this.#clock) - started);
    a[ATTRIBUTES.errorType] = errorType(true, reason);
    call.span.addEvent(SPAN.attempt, a);
  }

  #attempt(n: number, hedge: boolean, outcome: Outcome, ms: number): Attributes {
    return {
      [SPAN.attemptNumber]: n,
      [ATTRIBUTES.attemptKind]: ATTEMPT_KINDS[kindOf(n, hedge)],
      [ATTRIBUTES.outcome]: outcome,
      [SPAN.attemptDuration]: seconds(ms),
    };
  }
}

/** The call whose span the active context carries, while it is open. */
function current(): CallSpan | undefined {
  const call = context.active().getValue(CALL) as CallSpan | undefined;
  return call !== undefined && !call.ended ? call : undefined;
}
