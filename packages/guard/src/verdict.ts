// What admission answers for one request: the verdict, and the one class that carries it.
import type { Clock } from "@tideward/time";
import type { Held, Pipeline } from "./pipeline";
import type { Reservation, Settling } from "./quota-reservation";
import type { RefusalKind } from "./refusal";
import type { Field } from "./field";

export type { Field } from "./field";

/**
 * What {@link Admission.check} answered for one request.
 *
 * When `allowed`, run the handler, append `headers` to its response, and call `release` once it
 * has finished (the adapters do all three). When refused, answer `status` with `headers` (they
 * include `Retry-After`) and `body`; there is nothing to release.
 */
export interface Verdict {
  readonly allowed: boolean;
  /**
   * 200 when allowed (the handler decides the real one); 429 for a limit or quota, 503 for the
   * shedder, the gate or the concurrency limit.
   */
  readonly status: number;
  /** `RateLimit-Policy` and `RateLimit` members (one per policy) and, when refused, `Retry-After`. */
  readonly headers: readonly Field[];
  /**
   * Which policy refused: `"shed"`, `"gate"`, `"limit"` or `"reserved"` (the concurrency limit:
   * full, or its places left held for more important requests), `"rate"` or `"quota"`;
   * `undefined` when allowed.
   */
  readonly reason: RefusalKind | undefined;
  /** Milliseconds until the request could be admitted (exact; the field is whole seconds); 0 when allowed. */
  readonly retryAfter: number;
  /** The refusal's body: problem+json when the `problem` option is on, else a sentence. `undefined` when allowed. */
  readonly body: string | undefined;
  /** The body's media type. */
  readonly contentType: string | undefined;
  /**
   * Settles the request: the shedder's ticket (a pass when `ok`, with its response time), the
   * gate's place, and the concurrency limit's place (its round trip a sample when `ok`; a failure
   * teaches the limit nothing). Once only; later calls do nothing. A clock that throws here
   * settles them as a failure, then the error goes on.
   * @param ok - whether the handler succeeded (say, answered under 500) @defaultValue true
   */
  release(ok?: boolean): void;
  /** The id of the quota reservation this request holds (admit's `quota.reserve`); `undefined` without one. */
  readonly reservation: string | undefined;
  /**
   * Settles the request's quota reservation once: at `actual` units per limit name (a limit left
   * out, or `undefined`, or one the store refuses, as reserved), at a promise of them, or
   * `"cancel"` for a request that did no work. Never throws; a store that fails leaves it to its
   * time to live. `release` settles one still open as reserved.
   */
  settle(actual: Settling): void;
}

export class Answer implements Verdict {
  readonly allowed: boolean;
  readonly status: number;
  readonly headers: readonly Field[];
  readonly reason: RefusalKind | undefined;
  readonly retryAfter: number;
  readonly body: string | undefined;
  readonly contentType: string | undefined;
  readonly reservation: string | undefined;
  #held: Held | undefined;
  readonly #pipeline: Pipeline | undefined;
  readonly #clock: Clock | undefined;
  readonly #reservation: Reservation | undefined;

  constructor(
    allowed: boolean,
    status: number,
    headers: readonly Field[],
    reason: RefusalKind | undefined,
    retryAfter: number,
    body: string | undefined,
    contentType: string | undefined,
    held: Held | undefined,
    pipeline: Pipeline | undefined,
    clock: Clock | undefined,
    reservation?: Reservation,
  ) {
    this.allowed = allowed;
    this.status = status;
    this.headers = headers;
    this.reason = reason;
    this.retryAfter = retryAfter;
    this.body = body;
    this.contentType = contentType;
    this.#held = held;
    this.#pipeline = pipeline;
    this.#clock = clock;
    this.#reservation = reservation;
    this.reservation = reservation?.id;
  }

  settle(actual: Settling): void {
    this.#reservation?.settle(actual);
  }

  release(ok = true): void {
    // First, as it never throws: a reservation nothing settled is settled as reserved.
    this.#reservation?.settle(undefined);
    const held = this.#held;
    const pipeline = this.#pipeline;
    this.#held = undefined;
    if (held === undefined || pipeline === undefined) return;
    // A failure needs no time: nothing it settles reads one; nor does a success without a clock
    // (what it holds counts no response time).
    if (!ok) return pipeline.settle(Number.NaN, "failure", held);
    if (this.#clock === undefined) return pipeline.settle(Number.NaN, "success", held);
    let now: number;
    try {
      now = this.#clock();
    } catch (e) {
      // The clock broke: everything still leaves flight (as a failure, no time to count), then the error goes on.
      pipeline.settle(Number.NaN, "failure", held);
      throw e;
    }
    pipeline.settle(now, "success", held);
  }
}
