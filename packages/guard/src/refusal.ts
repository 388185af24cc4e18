/**
 * Which of tideward's own policies refused a call:
 * - `"deadline"` — the call's deadline had passed, or a wait it needed would pass it;
 * - `"rate"` — a rate limit (the client's bucket, a server's per-key limiter) had no token in time;
 * - `"breaker"` — the circuit breaker throttled the call;
 * - `"budget"` — the retry budget had nothing left for a retry or a hedge;
 * - `"shed"` — the load shedder found the process hot and full;
 * - `"gate"` — the concurrency gate was full;
 * - `"quota"` — a quota-engine charge set did not fit;
 * - `"limit"` — the adaptive concurrency limit was full;
 * - `"reserved"` — the adaptive concurrency limit had places left, but they are held for more
 *   important calls than this one.
 */
export type RefusalKind = "deadline" | "rate" | "breaker" | "budget" | "shed" | "gate" | "quota" | "limit" | "reserved";

/** Every {@link RefusalKind}, in the order of the list above. */
export const refusalKinds: readonly RefusalKind[] = Object.freeze([
  "deadline",
  "rate",
  "breaker",
  "budget",
  "shed",
  "gate",
  "quota",
  "limit",
  "reserved",
] as const);

const WHY: Readonly<Record<RefusalKind, string>> = {
  deadline: "the deadline leaves no time for it",
  rate: "the rate limit has no room for it",
  breaker: "the circuit breaker is throttling calls",
  budget: "the retry budget is spent",
  shed: "the process is overloaded",
  gate: "too many calls are in flight",
  quota: "the quota is exhausted",
  limit: "the concurrency limit is full",
  reserved: "the places left are held for more important calls",
};

/**
 * A call tideward refused before it reached the backend: the policy that refused it, and how
 * long to wait before asking again where that is known.
 *
 * A refusal is never counted as a backend failure and never retried by the guard that made it
 * (an outer guard that sees one from an inner guard does neither). Test for it with
 * {@link isRefusal} rather than `instanceof`, which fails when two copies of this package end
 * up in one bundle.
 *
 * @example
 * const call = guard(async () => "ok", { bucket: { rate: 1, burst: 1 } }); // one call a second
 * await call(); // "ok"
 * let retryAfter = "";
 * try { await call(); } catch (e) {
 *   // in a server: res.writeHead(503, { "retry-after": ... })
 *   if (isRefusal(e)) retryAfter = String(Math.ceil(e.retryAfter / 1000));
 * }
 * retryAfter; // "1"
 */
export class Refusal extends Error {
  /** Brand read by {@link isRefusal}. */
  readonly isRefusal = true;
  override readonly name = "Refusal";
  /** Which policy refused. */
  readonly kind: RefusalKind;
  /**
   * Milliseconds until the same call could be admitted, where the policy knows (a bucket's next
   * token, a quota's refill); 0 when it does not (a breaker's refusal is a roll of the dice).
   * `Infinity` when it never will (a cost above what the limit can ever hold).
   */
  readonly retryAfter: number;

  /**
   * @param kind - which policy refused
   * @param retryAfter - milliseconds until it could be admitted; 0 when unknown
   * @param options - `cause`, when a refusal stands for an earlier error
   */
  constructor(kind: RefusalKind, retryAfter = 0, options?: { cause?: unknown }) {
    super(
      `Refused (${kind}): ${WHY[kind]}${retryAfter > 0 && retryAfter < Infinity ? `; retry after ${Math.ceil(retryAfter)} ms` : ""}`,
      options,
    );
    this.kind = kind;
    this.retryAfter = retryAfter > 0 ? retryAfter : 0;
  }
}

/** Whether `e` is a {@link Refusal}, from this or any other copy of the package. */
export function isRefusal(e: unknown): e is Refusal {
  return typeof e === "object" && e !== null && (e as { isRefusal?: unknown }).isRefusal === true;
}

/**
 * Where a {@link TimeoutError} came from: `"attempt"` — the per-attempt timeout (another attempt
 * may follow); `"deadline"` — the call's whole deadline (nothing follows).
 */
export type TimeoutScope = "attempt" | "deadline";

/**
 * An attempt the guard cut off: it reached the backend and took too long. Unlike a
 * {@link Refusal} it counts as a failure on the breaker. It is the reason of the signal the
 * attempt was handed, and what the call rejects with when nothing follows.
 *
 * Test for it with {@link isTimeoutError}.
 */
export class TimeoutError extends Error {
  /** Brand read by {@link isTimeoutError}. */
  readonly isTimeoutError = true;
  override readonly name = "TimeoutError";
  /** Which limit ran out. */
  readonly scope: TimeoutScope;
  /** How long the attempt had run when it was cut off, in milliseconds. */
  readonly after: number;

  /**
   * @param scope - which limit ran out
   * @param after - milliseconds the attempt had run
   */
  constructor(scope: TimeoutScope, after: number) {
    super(
      scope === "attempt"
        ? `The attempt timed out after ${Math.round(after)} ms`
        : `The call's deadline passed after ${Math.round(after)} ms of this attempt`,
    );
    this.scope = scope;
    this.after = after;
  }
}

/** Whether `e` is a {@link TimeoutError}, from this or any other copy of the package. */
export function isTimeoutError(e: unknown): e is TimeoutError {
  return typeof e === "object" && e !== null && (e as { isTimeoutError?: unknown }).isTimeoutError === true;
}
