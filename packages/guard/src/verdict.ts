// What admission answers for one request: the verdict, and the one class that carries it.
import type { Gate } from "@tideward/limiters";
import type { Ticket } from "@tideward/shedder";
import type { Clock } from "@tideward/time";
import type { Reservation, Settling } from "./quota-reservation";
import type { RefusalKind } from "./refusal";

/** A header field to append to the response: name and value. */
export type Field = readonly [name: string, value: string];

// What an admitted response carries when no field is due: one array for all of them.
export const NO_FIELDS: readonly Field[] = Object.freeze([]);

/**
 * What {@link Admission.check} answered for one request.
 *
 * When `allowed`, run the handler, append `headers` to its response, and call `release` once it
 * has finished (the adapters do all three). When refused, answer `status` with `headers` (they
 * include `Retry-After`) and `body`; there is nothing to release.
 */
export interface Verdict {
  readonly allowed: boolean;
  /** 200 when allowed (the handler decides the real one); 429 for a limit or quota, 503 for the shedder or gate. */
  readonly status: number;
  /** `RateLimit-Policy` and `RateLimit` members (one per policy) and, when refused, `Retry-After`. */
  readonly headers: readonly Field[];
  /** Which policy refused: `"shed"`, `"gate"`, `"rate"` or `"quota"`; `undefined` when allowed. */
  readonly reason: RefusalKind | undefined;
  /** Milliseconds until the request could be admitted (exact; the field is whole seconds); 0 when allowed. */
  readonly retryAfter: number;
  /** The refusal's body: problem+json when the `problem` option is on, else a sentence. `undefined` when allowed. */
  readonly body: string | undefined;
  /** The body's media type. */
  readonly contentType: string | undefined;
  /**
   * Settles the request: the shedder's ticket (a pass when `ok`, with its response time) and the
   * gate's place. Once only; later calls do nothing. A clock that throws here settles the ticket
   * as a failure, then the error goes on.
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
  #ticket: Ticket | undefined;
  #gate: Gate | undefined;
  readonly #clock: Clock;
  readonly #held: Reservation | undefined;

  constructor(
    allowed: boolean,
    status: number,
    headers: readonly Field[],
    reason: RefusalKind | undefined,
    retryAfter: number,
    body: string | undefined,
    contentType: string | undefined,
    ticket: Ticket | undefined,
    gate: Gate | undefined,
    clock: Clock,
    held?: Reservation,
  ) {
    this.allowed = allowed;
    this.status = status;
    this.headers = headers;
    this.reason = reason;
    this.retryAfter = retryAfter;
    this.body = body;
    this.contentType = contentType;
    this.#ticket = ticket;
    this.#gate = gate;
    this.#clock = clock;
    this.#held = held;
    this.reservation = held?.id;
  }

  settle(actual: Settling): void {
    this.#held?.settle(actual);
  }

  release(ok = true): void {
    // First, as it never throws: a reservation nothing settled is settled as reserved.
    this.#held?.settle(undefined);
    const ticket = this.#ticket;
    const gate = this.#gate;
    this.#ticket = undefined;
    this.#gate = undefined;
    gate?.leave();
    if (ticket === undefined) return;
    if (!ok) return ticket.fail();
    let now: number;
    try {
      now = this.#clock();
    } catch (e) {
      // The clock broke: the ticket still leaves flight (as a failure, no time to count), then the error goes on.
      ticket.fail();
      throw e;
    }
    ticket.pass(now);
  }
}
