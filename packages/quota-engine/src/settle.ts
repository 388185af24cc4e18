// Settling a reservation: the actual cost per dimension read once and checked, spread over the
// reservation's charges (a limit charged more than once, as up a hierarchy, in proportion to what
// each charge reserved), and each charge's difference applied to its key's state at the settle's
// instant with the algorithm's own rule (algorithms.ts `adjust`). A settle never refuses: the work
// is done. Nothing is read from the caller after the checks, and nothing changes unless all pass.
import { check } from "@tideward/time/internal";
import { adjust, freshAmount, freshInstant } from "./algorithms";
import type { ChargeKind } from "./charge";
import type { QuotaKey } from "./key";
import type { KeySpace } from "./key-space";
import { KIND_NAMES } from "./kinds";
import type { LimitState } from "./limit-state";
import { step } from "./outcome";
import { MAX_RESERVATION_ID } from "./reservation";
import type { Reserved } from "./reservation";
import { STRIDE } from "./table";

/** Why a settle or cancel changed nothing. */
export type SettleCode = "unknown_reservation" | "already_settled" | "already_cancelled" | "unknown_dimension";

/** What one charge of a reservation came to when it was settled or cancelled. */
export interface SettledCharge {
  /** The key the charge was to. */
  readonly key: QuotaKey;
  /** The limit it was to, by name. */
  readonly limit: string;
  /** The algorithm it ran. */
  readonly kind: ChargeKind;
  /** Units the reservation charged. */
  readonly reserved: number;
  /** Units it came to: the actual given for its limit (in proportion, see `settle`), as reserved where none was given, 0 when cancelled. */
  readonly actual: number;
  /** Units given back: `reserved − actual` when that is above 0, else 0 (and 0 when the limit has been removed since). */
  readonly refunded: number;
  /** Units charged on top: `actual − reserved − forgiven` when that is above 0, else 0. */
  readonly toppedUp: number;
  /**
   * Units of the top-up not charged: what a `"cap"` top-up found no room for, what a debt past a
   * limit's worth would have owed, or all of it when the limit has been removed since or a new
   * key found no room under `maxKeys`.
   */
  readonly forgiven: number;
}

/** A reservation settled or cancelled by this call: what each of its charges came to, in order. */
export interface Settlement {
  /** Settled (or cancelled) by this call. */
  readonly ok: true;
  /** The reservation's id. */
  readonly id: string;
  /** One entry per charge of the reservation, in the order reserved. */
  readonly charges: readonly SettledCharge[];
}

/**
 * What `settle` and `cancel` answer: the {@link Settlement}, or why nothing changed.
 *
 * | code | means |
 * | --- | --- |
 * | `"unknown_reservation"` | no reservation has this id: none was made, or its time to live has passed (it was settled as reserved) |
 * | `"already_settled"` | it was settled before: nothing changes (no second refund or top-up) |
 * | `"already_cancelled"` | it was cancelled before: nothing changes |
 * | `"unknown_dimension"` | `actual` names a limit the reservation did not charge |
 */
export type SettleResult = Settlement | { readonly ok: false; readonly code: SettleCode; readonly reason: string };

/** A settle or cancel that changed nothing, and why. */
export function unsettled(code: SettleCode, reason: string): SettleResult {
  return Object.freeze({ ok: false as const, code, reason });
}

/** The answer for an id no reservation has (never made, or past its time to live). */
export function unknownReservation(id: string): SettleResult {
  return unsettled(
    "unknown_reservation",
    `no reservation has the id ${JSON.stringify(id)}: none was made, or its time to live has passed (it was settled as reserved)`,
  );
}

/** The answer for a reservation settled (`settled` true) or cancelled before. */
export function alreadyClosed(id: string, settled: boolean): SettleResult {
  const was = settled ? "settled" : "cancelled";
  return unsettled(`already_${was}`, `reservation ${JSON.stringify(id)} was ${was} already: nothing changed`);
}

/** The answer for an actual naming `name`, a limit reservation `r` did not charge. */
export function unknownDimension(r: Reserved, name: string): SettleResult {
  const charged = [...new Set(Array.from({ length: r.size }, (_, i) => r.limit(i)))];
  const near = check.closest(name, charged);
  return unsettled(
    "unknown_dimension",
    `reservation ${JSON.stringify(r.id)} charged no limit ${JSON.stringify(name)}${near === undefined ? "" : `; did you mean ${JSON.stringify(near)}?`} (it charged ${charged.map((c) => JSON.stringify(c)).join(", ")})`,
  );
}

/** The actual units a settle gives, per limit name. */
export type ActualCost = Readonly<Record<string, number>>;

/** Throws unless `id` is a reservation id: a string of 1 to {@link MAX_RESERVATION_ID} characters. */
export function checkId(id: unknown, what: string): asserts id is string {
  if (typeof id !== "string") throw new TypeError(`${what} must be a string, got ${typeof id} ${check.describe(id)}`);
  if (id.length === 0 || id.length > MAX_RESERVATION_ID)
    throw new RangeError(`${what} must be 1 to ${MAX_RESERVATION_ID} characters, got ${id.length}`);
}

/** The most dimensions a settle may name: as many as a charge set may hold. */
const MOST_DIMENSIONS = 65_536;

/**
 * `actual` read once into a Map of limit name to units, each field checked: an object whose own
 * enumerable fields are whole numbers of at least 0.
 *
 * @throws TypeError or RangeError naming `actual["name"]` and the value
 */
export function readActual(actual: unknown): Map<string, number> {
  if (actual === null || typeof actual !== "object" || Array.isArray(actual))
    throw new TypeError(
      `actual must be an object of units per limit name ({ "tokens": 300 }), got ${Array.isArray(actual) ? "an array" : check.describe(actual)}`,
    );
  const names = Object.keys(actual);
  if (names.length > MOST_DIMENSIONS)
    throw new RangeError(`actual must name at most ${MOST_DIMENSIONS} limits, got ${names.length}`);
  const out = new Map<string, number>();
  for (const name of names) {
    const units = (actual as Record<string, unknown>)[name];
    if (typeof units !== "number")
      throw new TypeError(
        `actual[${JSON.stringify(name)}] must be a number of units, got ${typeof units} ${check.describe(units)}`,
      );
    if (!Number.isSafeInteger(units) || units < 0)
      throw new RangeError(
        `actual[${JSON.stringify(name)}] must be a whole number of at least 0, got ${check.describe(units)}`,
      );
    out.set(name, units);
  }
  return out;
}

/**
 * The units each charge of `r` comes to: for a limit named in `given`, its first charge comes to
 * the units given and every other charge of that limit in proportion to what it reserved (rounded
 * up), so a chain up a hierarchy settles up the same links; a limit not named, as reserved; with
 * no `given` (a cancel), nothing. A name `r` did not charge is answered as a string: that name.
 *
 * @throws RangeError when a charge in proportion would pass 2^53 units
 */
export function actualsOf(r: Reserved, given: Map<string, number> | undefined): number[] | string {
  const n = r.size;
  const out = new Array<number>(n).fill(0);
  if (given === undefined) return out;
  // Each limit's first charge: a scan back for a small set, a Map past it (a scan is quadratic).
  let first: Map<string, number> | undefined;
  if (n > 16) {
    first = new Map();
    for (let i = 0; i < n; i++) if (!first.has(r.limit(i))) first.set(r.limit(i), i);
  }
  for (const name of given.keys()) {
    let charged = first?.has(name) ?? false;
    for (let i = 0; i < n && !charged; i++) charged = r.limit(i) === name;
    if (!charged) return name;
  }
  for (let i = 0; i < n; i++) {
    const name = r.limit(i);
    const cost = r.cost(i);
    const units = given.get(name);
    if (units === undefined) {
      out[i] = cost;
      continue;
    }
    const base = r.cost(firstCharge(r, name, i, first));
    const share = cost % base === 0 ? units * (cost / base) : Math.ceil((units * cost) / base);
    if (!Number.isSafeInteger(share))
      throw new RangeError(
        `actual[${JSON.stringify(name)}] of ${units} comes to ${share} units for a charge that reserved ${cost} (in proportion to ${base}): past 2^53`,
      );
    out[i] = share;
  }
  return out;
}

// The index of the first charge of `r` to the limit `name`, charge `i` being one.
function firstCharge(r: Reserved, name: string, i: number, first: Map<string, number> | undefined): number {
  if (first !== undefined) return first.get(name) as number;
  for (let j = 0; j < i; j++) if (r.limit(j) === name) return j;
  return i;
}

/**
 * Applies `actuals` (units per charge, from {@link actualsOf}) to the state of each charge of `r`
 * at `t`, in order: each charge's difference from what it reserved, refunded or topped up by its
 * algorithm's rule, on the limit of that name as it is now (an override for the key included). A
 * limit removed since takes nothing; a top-up to a key with no state takes a slot as a charge
 * would, and is forgiven when `maxKeys` leaves none.
 */
export function applyActuals(
  r: Reserved,
  actuals: readonly number[],
  limits: ReadonlyMap<string, LimitState>,
  space: KeySpace,
  t: number,
  debt: boolean,
): SettledCharge[] {
  const n = r.size;
  const out = new Array<SettledCharge>(n);
  for (let i = 0; i < n; i++) {
    const key = r.key(i);
    const name = r.limit(i);
    const kind = r.kind(i);
    const reserved = r.cost(i);
    const actual = actuals[i];
    const delta = actual - reserved;
    const base = limits.get(name);
    let forgiven = delta > 0 ? delta : 0;
    if (base !== undefined && delta !== 0) {
      const held = base.forKey(key);
      const table = held.tables[kind];
      let slot = table === undefined ? -1 : table.find(key);
      const amount = slot < 0 ? freshAmount(kind, held.rule) : (table as NonNullable<typeof table>).data[slot * STRIDE];
      const instant = slot < 0 ? freshInstant(kind, t) : (table as NonNullable<typeof table>).data[slot * STRIDE + 1];
      const missed = adjust(kind, held.rule, amount, instant, t, delta, debt, r.end(i));
      // Only a top-up changes a key with no state (a refund finds it full, closed or at rest).
      const left = step.amount;
      const since = step.instant;
      if (slot >= 0 || delta - missed > 0) {
        const next = held.table(kind);
        const fresh = slot < 0;
        if (fresh) slot = space.add(next, key, limits, t);
        if (slot >= 0) {
          next.data[slot * STRIDE] = left;
          next.data[slot * STRIDE + 1] = since;
          if (fresh) space.stepAfterAdd(next, t);
          forgiven = missed;
        }
      } else forgiven = missed;
    }
    out[i] = {
      key,
      limit: name,
      kind: KIND_NAMES[kind],
      reserved,
      actual,
      refunded: delta < 0 && base !== undefined ? -delta : 0,
      toppedUp: delta > forgiven ? delta - forgiven : 0,
      forgiven,
    };
  }
  return out;
}
