import type { Attributes, Histogram } from "@opentelemetry/api";
import { isRefusal, isTimeoutError, refusalKinds } from "@tideward/guard";
import type { HedgeEvent, Outcome, OutcomeEvent, RefuseEvent, RetryEvent } from "@tideward/guard";
import { errorType } from "./error-type";
import type { Counts, Row, Series } from "./instruments";
import { ATTRIBUTES, METRICS, OTHER } from "./names";

/** Which attempt of its call, as `tideward.attempt.kind` names it. */
export const ATTEMPT_KINDS = ["first", "retry", "hedge"] as const;

/** The `tideward.attempt.kind` of an attempt, as an index into {@link ATTEMPT_KINDS}. */
export function kindOf(attempt: number, hedge: boolean): 0 | 1 | 2 {
  return hedge ? 2 : attempt === 1 ? 0 : 1;
}

const KINDS: ReadonlySet<string> = new Set(refusalKinds);

/** A refusal's kind as an attribute value: one of the guard's kinds, or `_OTHER` for a forgery. */
export function refusalKindOf(error: unknown): string {
  try {
    const kind = (error as { kind?: unknown }).kind;
    return typeof kind === "string" && KINDS.has(kind) ? kind : OTHER;
  } catch {
    return OTHER; // a getter that throws
  }
}

/** Whether a thrown value is one of the guard's refusals or timeouts; reading it may throw (a proxy). */
function brandOf(answer: unknown): "refused" | "timeout" | undefined {
  try {
    return isRefusal(answer) ? "refused" : isTimeoutError(answer) ? "timeout" : undefined;
  } catch {
    return undefined;
  }
}

/** Milliseconds as the seconds a duration histogram records (a clock that stepped back reads 0). */
function seconds(ms: number): number {
  return ms > 0 ? ms / 1000 : 0;
}

/**
 * A guard's metrics: the events it raises counted in place, durations recorded in seconds.
 * Success rows, the commonest, are found without building a key.
 */
export class GuardMetrics {
  /** Set by `close`: nothing more is counted. */
  closed = false;
  readonly #series: Series;
  readonly #name: string;
  readonly #calls: Counts;
  readonly #attempts: Counts;
  readonly #retries: Counts;
  readonly #refusals: Counts;
  readonly #callDuration: Histogram | undefined;
  readonly #attemptDuration: Histogram | undefined;
  // The rows met on every healthy call, kept at hand once made (made when first met, so that a
  // combination that never happens is never reported).
  #callSuccess: Row | undefined = undefined;
  readonly #attemptSuccess: (Row | undefined)[] = [undefined, undefined, undefined];
  #hedge: Row | undefined = undefined;
  readonly #hedges: Counts;
  readonly #levelOf: ((given: number | string | undefined) => string) | undefined;

  /**
   * @param series - where the counts go
   * @param name - the `tideward.name` of every row
   * @param durations - whether to record the two duration histograms
   * @param levelOf - the `tideward.priority` of a refusal from the call's priority (a refusal
   *   event's): the name of its level in the concurrency limit's priorities; `undefined` without a limit
   */
  constructor(
    series: Series,
    name: string,
    durations: boolean,
    levelOf?: (given: number | string | undefined) => string,
  ) {
    this.#series = series;
    this.#name = name;
    this.#levelOf = levelOf;
    this.#calls = series.counts(METRICS.calls);
    this.#attempts = series.counts(METRICS.attempts);
    this.#retries = series.counts(METRICS.retries);
    this.#refusals = series.counts(METRICS.refusals);
    this.#hedges = series.counts(METRICS.hedges);
    this.#callDuration = durations ? series.histogram(METRICS.callDuration) : undefined;
    this.#attemptDuration = durations ? series.histogram(METRICS.attemptDuration) : undefined;
  }

  /** One attempt ended (the guard's `onOutcome`). */
  attempt(e: OutcomeEvent): void {
    if (this.closed) return;
    const kind = kindOf(e.attempt, e.hedge);
    let row: Row;
    if (e.outcome === "success")
      row = this.#attemptSuccess[kind] ??= this.#attemptRow("success", kind, undefined, undefined);
    else {
      const threw = e.error !== undefined;
      const answer = threw ? e.error : e.result;
      const refused = e.outcome === "refused" ? refusalKindOf(answer) : undefined;
      row = this.#attemptRow(e.outcome, kind, this.#series.errorTypes.bound(errorType(threw, answer)), refused);
    }
    // Recorded before it is counted: a histogram that throws leaves the event uncounted.
    this.#attemptDuration?.record(seconds(e.duration), row.attributes);
    row.value++;
  }

  /** A call ended `outcome`, answering `answer` (thrown when `threw`), after `ms` milliseconds. */
  call(outcome: Outcome, threw: boolean, answer: unknown, ms: number): void {
    if (this.closed) return;
    let row: Row;
    if (outcome === "success") row = this.#callSuccess ??= this.#callRow("success", undefined, undefined);
    else {
      const refused = outcome === "refused" ? refusalKindOf(answer) : undefined;
      row = this.#callRow(outcome, this.#series.errorTypes.bound(errorType(threw, answer)), refused);
    }
    // A clock that threw gave no start: the call is counted, its duration is not known.
    if (!Number.isNaN(ms)) this.#callDuration?.record(seconds(ms), row.attributes);
    row.value++;
  }

  /** A call was refused before its first attempt (the `Refusal` it rejects with is the guard's). */
  refusedCall(e: RefuseEvent): void {
    if (this.closed) return;
    const row = this.#callRow("refused", this.#series.errorTypes.bound("Refusal"), refusalKindOf(e));
    this.#callDuration?.record(0, row.attributes);
    row.value++;
  }

  /** The guard decided on a retry (`onRetry`). */
  retry(e: RetryEvent): void {
    if (this.closed) return;
    const threw = e.error !== undefined;
    const type = this.#series.errorTypes.bound(errorType(threw, threw ? e.error : e.result));
    this.#retries.row(type, () => ({ [ATTRIBUTES.name]: this.#name, [ATTRIBUTES.errorType]: type })).value++;
  }

  /** A hedge started (`onHedge`). */
  hedge(_e: HedgeEvent): void {
    if (!this.closed) (this.#hedge ??= this.#hedges.row("", () => ({ [ATTRIBUTES.name]: this.#name }))).value++;
  }

  /** A policy refused an attempt (`onRefuse`). */
  refusal(e: RefuseEvent): void {
    if (this.closed) return;
    const kind = refusalKindOf(e);
    const level = this.#levelOf?.(e.priority);
    this.#refusals.row(level === undefined ? kind : `${kind}|${level}`, () => {
      const a: Attributes = { [ATTRIBUTES.name]: this.#name, [ATTRIBUTES.refusalKind]: kind };
      if (level !== undefined) a[ATTRIBUTES.priority] = level;
      return a;
    }).value++;
  }

  #attemptRow(outcome: Outcome, kind: number, type: string | undefined, refused: string | undefined): Row {
    return this.#attempts.row(`${outcome}|${kind}|${type ?? ""}|${refused ?? ""}`, () => {
      const a: Attributes = {
        [ATTRIBUTES.name]: this.#name,
        [ATTRIBUTES.outcome]: outcome,
        [ATTRIBUTES.attemptKind]: ATTEMPT_KINDS[kind],
      };
      if (type !== undefined) a[ATTRIBUTES.errorType] = type;
      if (refused !== undefined) a[ATTRIBUTES.refusalKind] = refused;
      return a;
    });
  }

  #callRow(outcome: Outcome, type: string | undefined, refused: string | undefined): Row {
    return this.#calls.row(`${outcome}|${type ?? ""}|${refused ?? ""}`, () => {
      const a: Attributes = { [ATTRIBUTES.name]: this.#name, [ATTRIBUTES.outcome]: outcome };
      if (type !== undefined) a[ATTRIBUTES.errorType] = type;
      if (refused !== undefined) a[ATTRIBUTES.refusalKind] = refused;
      return a;
    });
  }
}

/**
 * How a call ended, judged as the guard judges an attempt: a `Refusal` is `refused`, a
 * `TimeoutError` `timeout`, the caller's own abort `cancelled`; any other answer is what
 * `isFailure` says of it (by default a throw fails and a return succeeds).
 */
export function callOutcome(
  threw: boolean,
  answer: unknown,
  isFailure: ((error: unknown, result: unknown) => boolean) | undefined,
  signal: AbortSignal | undefined,
): Outcome {
  if (threw) {
    const brand = brandOf(answer);
    if (brand !== undefined) return brand;
    if (signal?.aborted === true && answer === signal.reason) return "cancelled";
  }
  if (isFailure === undefined) return threw ? "failure" : "success";
  try {
    return (threw ? isFailure(answer, undefined) : isFailure(undefined, answer)) ? "failure" : "success";
  } catch {
    // The guard would have rejected with this error itself; what it said is a failure.
    return "failure";
  }
}
