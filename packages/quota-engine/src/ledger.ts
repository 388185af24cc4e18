// Reserve, then settle: what a reserve does once its arguments are read (a repeated id answered,
// room for one more made, the set charged as a charge set and, if it fit, recorded), and what a
// settle or cancel does to the record of its id. The engine checks the arguments and keeps the
// clock; the records themselves live in reservation.ts, the settle's arithmetic in settle.ts.
import { until } from "@tideward/limiters/math";
import type { ChargeSets } from "./charge-set";
import type { KeySpace } from "./key-space";
import type { LimitState } from "./limit-state";
import { CANCELLED, OPEN, Reservations, SETTLED } from "./reservation";
import type { ReserveReport } from "./reservation";
import { replayed, unreserved } from "./reserve";
import { actualsOf, alreadyClosed, applyActuals, unknownDimension, unknownReservation } from "./settle";
import type { SettleResult } from "./settle";

export class Ledger {
  readonly #book: Reservations;

  /** @param max - the most reservations open at once (`maxReservations`) */
  constructor(max: number) {
    this.#book = new Reservations(max);
  }

  /** Reservations open. */
  get open(): number {
    return this.#book.open;
  }

  /** Drops up to `budget` reservations past their time to live at `t`; returns how many open ones expired. */
  expire(t: number, budget: number): number {
    return this.#book.expire(t, budget);
  }

  /** Forgets every reservation. */
  clear(): void {
    this.#book.clear();
  }

  /**
   * Reserves the `n` charges `sets` has just read, at `t` (the engine's instant for the caller's
   * `now`), under `id` (undefined: one made) for `ttl` ms.
   */
  reserve(
    sets: ChargeSets,
    n: number,
    id: string | undefined,
    ttl: number,
    limits: Map<string, LimitState>,
    space: KeySpace,
    t: number,
    now: number,
  ): ReserveReport {
    const book = this.#book;
    if (id !== undefined) {
      const slot = book.find(id, t);
      if (slot >= 0)
        return book.status(slot) === OPEN && book.holds(slot, n, sets)
          ? { ...replayed, id, expiresAfter: until(now, t, book.expiresAt(slot)) }
          : unreserved(id, "duplicate_id", Infinity);
    }
    if (!book.room(t)) return unreserved(id ?? "", "reservation_limit", 0);
    const failed = sets.decide(n, limits, space, t, true);
    const decisions = sets.decisions(n, failed, t, now);
    if (failed >= 0) {
      const retryAfter = sets.retryAfter(n, limits, t, now);
      return {
        allowed: false,
        committed: false,
        failedIndex: failed,
        retryAfter,
        decisions,
        id: id ?? "",
        code: "refused",
        expiresAfter: 0,
      };
    }
    const expiresAt = t + ttl;
    return {
      allowed: true,
      committed: true,
      failedIndex: -1,
      retryAfter: 0,
      decisions,
      id: book.add(id, expiresAt, n, sets),
      code: "reserved",
      expiresAfter: until(now, t, expiresAt),
    };
  }

  /**
   * Settles reservation `id` at `t` for the units `given` per limit, or cancels it (`given`
   * undefined), or says why nothing changed.
   *
   * @throws RangeError when a charge in proportion would pass 2^53 units (nothing changed)
   */
  close(
    id: string,
    given: Map<string, number> | undefined,
    limits: Map<string, LimitState>,
    space: KeySpace,
    t: number,
    debt: boolean,
  ): SettleResult {
    const book = this.#book;
    const slot = book.find(id, t);
    if (slot < 0) return unknownReservation(id);
    const status = book.status(slot);
    if (status !== OPEN) return alreadyClosed(id, status === SETTLED);
    const r = book.view(slot);
    const actuals = actualsOf(r, given);
    if (typeof actuals === "string") return unknownDimension(r, actuals);
    const charges = applyActuals(r, actuals, limits, space, t, debt);
    book.close(slot, given === undefined ? CANCELLED : SETTLED);
    return { ok: true, id, charges };
  }
}
