// A quota-engine charge set as a stage: each request's charges (admit's `quota.charges(key,
// cost)`) made all or none on a QuotaStore, in process or on Redis, or reserved and settled when
// the response is done (`quota.reserve`). Only in front of a server. A store over the network
// answers promises, so the stage answers through `enterThen` and stands at the pipeline's last
// place: the per-key limits are charged once it has committed.
import type { AtomicReport, QuotaCharge, ReservationStore, ReserveOptions } from "@tideward/quota-engine";
import { systemClock } from "@tideward/time";
import type { Clock } from "@tideward/time";
import { check } from "@tideward/time/internal";
import { checkNames, quotaSpecs, quotaStates } from "../quota-admission";
import type { QuotaAdmission, QuotaSpecs } from "../quota-admission";
import { Reservation, reserveOption, reservedId, unreserved } from "../quota-reservation";
import type { PolicyState } from "../ratelimit-fields";
import { fieldsOf } from "../keyed-fields";
import type { Ask, Host, Stage, StageDef } from "../stage";
import type { Field } from "../verdict";

/** admit's quota option. */
export interface QuotaOption {
  /** A quota-engine charge set per request. */
  readonly quota?: QuotaAdmission;
}

/** admit's `busyRetryAfter` (ms): the wait of a refusal whose wait nobody knows, named under `owner`. @defaultValue 1000 */
export function parseBusy(value: unknown, owner: string): number {
  return value === undefined ? 1_000 : check.nonNegative(value, `${owner} busyRetryAfter (ms)`);
}

/**
 * A charge set in the pipeline: its token is the request's reservation (cancelled when a later
 * stage refuses), or `true` when it reserves nothing. The verdict settles a reservation.
 */
export class QuotaStage implements Stage<Reservation | true> {
  readonly kind = "quota";
  readonly #quota: QuotaAdmission;
  readonly specs: QuotaSpecs;
  readonly #reserving: ReserveOptions | undefined;
  /** The wait (ms) of a refusal whose wait the store does not know. */
  readonly #busy: number;
  readonly #clock: Clock;
  // Of its latest decision, read by admit as soon as it is made (the fields, the names refused).
  /** The policies the store's report comes to. */
  states: readonly PolicyState[] = [];
  /** The limits that refused. */
  violated: readonly string[] = [];
  /** Whether it refused with no room for one more reservation in the store (a capacity refusal). */
  full = false;
  /** The reservation it made, if any. */
  reservation: Reservation | undefined = undefined;

  /** Over quota (429), or no room for one more reservation in the store (503, a capacity refusal). */
  get status(): 429 | 503 {
    return this.full ? 503 : 429;
  }

  fields(): Field[] {
    return fieldsOf(this.states);
  }

  low(): boolean {
    return this.states.some((p) => p.remaining * 10 <= p.quota);
  }

  constructor(
    quota: QuotaAdmission,
    specs: QuotaSpecs,
    reserving: ReserveOptions | undefined,
    busy: number,
    clock: Clock,
  ) {
    this.#quota = quota;
    this.specs = specs;
    this.#reserving = reserving;
    this.#busy = busy;
    this.#clock = clock;
  }

  enter(now: number, ask: Ask): Reservation | true | undefined {
    // A store that answers later is only asked through enterThen (a pipeline that holds this stage).
    return this.enterThen<Reservation | true | undefined>(
      now,
      ask,
      (t) => t,
      (e) => {
        throw e;
      },
    ) as Reservation | true | undefined;
  }

  enterThen<R>(
    now: number,
    ask: Ask,
    go: (token: Reservation | true | undefined, late: boolean) => R,
    fail: (error: unknown) => R,
  ): R | Promise<R> {
    let charges: readonly QuotaCharge[];
    let report: unknown;
    try {
      const quota = this.#quota;
      charges = quota.charges(ask.key ?? "", ask.cost);
      if (!Array.isArray(charges))
        throw new TypeError(`${this.specs.path}.charges answered ${check.describe(charges)}, not an array of charges`);
      checkNames(charges, this.specs);
      const reserving = this.#reserving;
      report =
        reserving === undefined
          ? quota.store.checkAtomic(charges, now)
          : (quota.store as ReservationStore).reserve(charges, now, reserving);
    } catch (error) {
      return fail(error);
    }
    const answer = (r: unknown, late: boolean): R => {
      let token: Reservation | true | undefined;
      try {
        token = this.#decide(r, charges, ask);
      } catch (error) {
        return fail(error);
      }
      return go(token, late);
    };
    if (typeof (report as PromiseLike<AtomicReport> | null)?.then === "function")
      return Promise.resolve(report).then((r) => answer(r, true), fail);
    return answer(report, false);
  }

  /** The store's answer as a token, or `undefined` with the wait in `ask.retryAfter`, its figures kept. */
  #decide(report: unknown, charges: readonly QuotaCharge[], ask: Ask): Reservation | true | undefined {
    this.full = false;
    if (this.#reserving !== undefined && unreserved(report)) {
      // No room for one more reservation in the store: nothing reserved.
      this.full = true;
      ask.retryAfter = this.#busy;
      return undefined;
    }
    const id = this.#reserving === undefined ? undefined : reservedId(report);
    const reservation =
      id === undefined ? undefined : new Reservation(this.#quota.store as ReservationStore, id, this.#clock);
    try {
      const { allowed, states, violated, wait } = quotaStates(report, charges, this.specs, this.#busy);
      this.states = states;
      this.violated = violated;
      if (!allowed) {
        reservation?.settle("cancel");
        ask.retryAfter = wait;
        return undefined;
      }
    } catch (error) {
      reservation?.settle("cancel");
      throw error;
    }
    this.reservation = reservation;
    return reservation ?? true;
  }

  release(token: Reservation | true): void {
    // It will not run: its reservation is cancelled.
    if (token !== true) token.settle("cancel");
  }
}

export const quota: StageDef<QuotaOption, "server"> = {
  kind: "quota",
  options: ["quota"] satisfies (keyof QuotaOption)[],
  place: { server: 50 },
  parse(o, host: Host) {
    const q = o.quota as QuotaAdmission | undefined;
    if (q === undefined) return undefined;
    const busy = parseBusy(o.busyRetryAfter, host.owner);
    const path = `${host.owner} quota`;
    const specs = quotaSpecs(q, path);
    const reserving = reserveOption(q.reserve, q.store, path);
    // The reservation settles at admit's clock (checked by admit before any stage is read).
    return new QuotaStage(q, specs, reserving, busy, (o.clock as Clock | undefined) ?? systemClock);
  },
};
