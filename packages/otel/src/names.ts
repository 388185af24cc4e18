// Every name this package gives OpenTelemetry, in one place, so the README's table and the code
// cannot disagree about a spelling. Metric names are dot-separated and lower case, with no unit
// in the name (the unit is the instrument's): the Prometheus exporter turns
// `tideward.guard.calls` into `tideward_guard_calls_total`.

/** The name of every instrument this package makes, as OpenTelemetry sees it. */
export const METRICS = Object.freeze({
  calls: "tideward.guard.calls",
  callDuration: "tideward.guard.call.duration",
  attempts: "tideward.guard.attempts",
  attemptDuration: "tideward.guard.attempt.duration",
  retries: "tideward.guard.retries",
  hedges: "tideward.guard.hedges",
  refusals: "tideward.guard.refusals",
  budgetAvailable: "tideward.retry_budget.available",
  dropRatio: "tideward.breaker.drop_ratio",
  shedderActive: "tideward.shedder.active_calls",
  shedderAverage: "tideward.shedder.average_active_calls",
  shedderCapacity: "tideward.shedder.capacity",
  shedderLoad: "tideward.shedder.load",
  concurrencyLimit: "tideward.concurrency.limit",
  concurrencyInFlight: "tideward.concurrency.in_flight",
  verdicts: "tideward.admit.verdicts",
  admitKeys: "tideward.admit.keys",
  decisions: "tideward.quota.decisions",
  quotaKeys: "tideward.quota.keys",
  reserved: "tideward.quota.reserved",
  refunded: "tideward.quota.refunded",
  toppedUp: "tideward.quota.topped_up",
} as const);

/** The attributes this package sets. Each has a bounded set of values: never a key or a user id. */
export const ATTRIBUTES = Object.freeze({
  /** The `name` given when instrumenting: which guard, service or engine. */
  name: "tideward.name",
  /** How a call or an attempt ended: `success`, `failure`, `timeout`, `cancelled`, `refused`. */
  outcome: "tideward.outcome",
  /** Which attempt of its call: `first`, `retry` or `hedge`. */
  attemptKind: "tideward.attempt.kind",
  /**
   * Which policy refused: `deadline`, `rate`, `breaker`, `budget`, `shed`, `gate`, `quota`, and
   * the concurrency limit's reasons, `limit` (full) and `reserved` (its places left held for
   * more important calls).
   */
  refusalKind: "tideward.refusal.kind",
  /**
   * How important the refused call or request was: the name of its level in the concurrency
   * limit's priorities (a priority that is not a level reads as the least important one). Set
   * only where a limit is configured.
   */
  priority: "tideward.priority",
  /** The semantic conventions' error class: the thrown error's type, or a failed response's status. */
  errorType: "error.type",
  /** The semantic conventions' response status: 200, 429 or 503 for an admission verdict. */
  status: "http.response.status_code",
  /** A quota-engine limit's name (names the engine does not know read `_OTHER`). */
  limit: "tideward.quota.limit",
  /** Why the quota engine decided as it did: `ok`, `exhausted`, `too_large`, … */
  reason: "tideward.quota.reason",
  /** The algorithm a quota charge ran: `bucket`, `window` or `gcra`. */
  algorithm: "tideward.quota.algorithm",
} as const);

/** What a span's events and attributes are called. */
export const SPAN = Object.freeze({
  attempt: "tideward.attempt",
  retry: "tideward.retry",
  refusal: "tideward.refusal",
  hedge: "tideward.hedge",
  /** The attempt's number in its call, the first being 1 (an event attribute). */
  attemptNumber: "tideward.attempt.number",
  /** Seconds an attempt ran (an event attribute). */
  attemptDuration: "tideward.attempt.duration",
  /** Seconds the guard waits before the retry (an event attribute). */
  retryDelay: "tideward.retry.delay",
  /** Seconds until the refusing policy could admit, 0 when unknown (an event attribute). */
  retryAfter: "tideward.refusal.retry_after",
  /** Attempts in flight once a hedge has started (an event attribute). */
  inFlight: "tideward.hedge.in_flight",
  /** How many attempts the call made (a span attribute). */
  attempts: "tideward.attempts",
} as const);

/**
 * The bucket boundaries of both duration histograms, in seconds: the semantic conventions' advice
 * for HTTP durations (5 ms to 10 s) with 1 ms and 2.5 ms in front, for calls that stay on a
 * loopback or in a data centre. A view can replace them.
 */
export const DURATION_BUCKETS: readonly number[] = Object.freeze([
  0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10,
]);

/** The value an attribute takes when the real one would make its set of values unbounded. */
export const OTHER = "_OTHER";
