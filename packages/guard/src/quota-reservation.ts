// The quota reservation an admitted request holds when admit's `quota.reserve` is on: its
// charges reserved at admission (their estimate), settled once when the response is done — at the
// actual units a function of the response gives, as reserved when there is none (or it throws),
// or cancelled for a request that did no work. Nothing a caller hands it, and no store failure,
// leaves it open: what cannot be settled expires by its time to live, settled as reserved.
import type { ActualCost, ReservationStore, ReserveOptions } from "@tideward/quota-engine";
import { check } from "@tideward/time/internal";
import type { Clock } from "@tideward/time";

/** What `admit`'s `quota.reserve` takes besides `true`. */
export interface ReserveOption {
  /** How long a reservation stays open unsettled, in milliseconds. @defaultValue the store's `reservationTtl` (5 minutes) */
  readonly ttl?: number;
}

/** The actual units a response came to, per limit name: a settle function's answer. `undefined` settles as reserved. */
export type Actual = ActualCost | undefined;

/** What {@link Verdict.settle} takes: the actual units, a promise of them, or `"cancel"`. */
export type Settling = Actual | PromiseLike<Actual> | "cancel";

/**
 * `quota.reserve` read once: the options each reserve is made with, `undefined` when off.
 * @param path - the quota option's, as errors name it: `"admit quota"`
 * @throws TypeError naming the path under `${path}.reserve` and the value
 */
export function reserveOption(reserve: unknown, store: unknown, path: string): ReserveOptions | undefined {
  if (reserve === undefined || reserve === false) return undefined;
  if (!check.has(store, "reserve") || !check.has(store, "settle") || !check.has(store, "cancel"))
    throw new TypeError(
      `${path}.reserve needs a store that reserves (reserve, settle and cancel: a QuotaEngine, or a Redis engine), got ${check.describe(store)}`,
    );
  if (reserve === true) return {};
  const o = check.options(reserve as ReserveOption, ["ttl"], `${path}.reserve`);
  return o.ttl === undefined ? {} : { ttl: check.positive(o.ttl, `${path}.reserve.ttl (ms)`) };
}

function isThenable<T>(value: unknown): value is PromiseLike<T> {
  return typeof (value as PromiseLike<T> | null)?.then === "function";
}

/** The reservation of a reserve report that reserved: its id, or `undefined` (refused, or no room for one). */
export function reservedId(report: unknown): string | undefined {
  const r = report as { code?: unknown; id?: unknown } | null;
  return r?.code === "reserved" && typeof r.id === "string" ? r.id : undefined;
}

/** Whether a reserve reserved nothing without deciding the charges (`reservation_limit`, `duplicate_id`). */
export function unreserved(report: unknown): boolean {
  const code = (report as { code?: unknown } | null)?.code;
  return code === "reservation_limit" || code === "duplicate_id";
}

/** Swallows a store's failure: the reservation is then left to its time to live. */
const ignore = (): undefined => undefined;

/** One reservation, settled or cancelled once. */
export class Reservation {
  readonly id: string;
  readonly #store: ReservationStore;
  readonly #clock: Clock;
  #open = true;

  constructor(store: ReservationStore, id: string, clock: Clock) {
    this.id = id;
    this.#store = store;
    this.#clock = clock;
  }

  /** Whether nothing has settled it yet. */
  get open(): boolean {
    return this.#open;
  }

  /** Settles it once (see {@link Verdict.settle}); later calls do nothing. Never throws. */
  settle(actual: Settling): void {
    if (!this.#open) return;
    this.#open = false;
    if (isThenable<Actual>(actual))
      Promise.resolve(actual).then(
        (a) => this.#apply(a),
        () => this.#apply(undefined),
      );
    else this.#apply(actual);
  }

  #apply(given: Actual | "cancel" | null): void {
    // A function of the response that answered null means as reserved, as undefined does.
    const actual = given === null ? undefined : given;
    const store = this.#store;
    const id = this.id;
    let now: number;
    try {
      now = check.finite(this.#clock(), "admit clock()");
    } catch {
      return; // no instant to settle at: it expires by its time to live, settled as reserved
    }
    // A settle at an actual the store refuses (a malformed one throws, one naming a limit the
    // reservation did not charge answers "unknown_dimension", a Redis store's may reject) is
    // settled as reserved instead; a second settle of one that did run answers "already_settled".
    const reserved = (): void => {
      try {
        const again = store.settle(id, {}, now);
        if (isThenable(again)) again.then(undefined, ignore);
      } catch {
        // a store that throws on the plainest settle: left to its time to live
      }
    };
    try {
      const r = actual === "cancel" ? store.cancel(id, now) : store.settle(id, actual === undefined ? {} : actual, now);
      if (actual === "cancel" || actual === undefined) {
        if (isThenable(r)) r.then(undefined, ignore);
        return;
      }
      const after = (s: { ok: boolean; code?: string } | undefined) => {
        if (s?.ok === false && s.code === "unknown_dimension") reserved();
      };
      if (isThenable<{ ok: boolean; code?: string }>(r)) r.then(after, reserved);
      else after(r as { ok: boolean; code?: string });
    } catch {
      if (actual !== "cancel") reserved();
    }
  }
}
