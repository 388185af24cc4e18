import { MAX_SPAN } from "@tideward/limiters/math";
import { check } from "@tideward/time/internal";

/**
 * The most `maxReservations` may be: 2^24. A reservation of three charges holds about 300 B, so at
 * the worst, 2^24 open and as many settled ids remembered, some 10 GB.
 */
export const MOST_RESERVATIONS = 2 ** 24;
/** The most `maxOverrides` may be: 2^20. */
export const MOST_OVERRIDES = 2 ** 20;

/**
 * What a top-up (a settle above what was reserved) does when the state cannot take it all:
 * - `"debt"`: the state owes it — a bucket goes below empty, a window counts past its capacity, a
 *   GCRA flow runs past its tolerance — and later charges wait until it is paid off; a state owes
 *   one limit's worth at most (its capacity, or its burst for GCRA), the rest is forgiven.
 * - `"cap"`: the state takes what it holds (a bucket down to empty, a window up to its capacity,
 *   a flow up to its tolerance) and the rest is forgiven.
 */
export type TopUp = "debt" | "cap";

/** How a {@link QuotaEngine} bounds its memory, and settles reservations. */
export interface EnginePolicy {
  /**
   * The most keys with state at once, across every limit and algorithm. A check or charge set
   * that would add a key past it first sweeps a bounded number of slots for idle keys, and if
   * that frees no room it is refused with `"key_limit"` (fail closed; nothing is charged).
   * Keys that already have state are never refused for it. @defaultValue Infinity
   */
  readonly maxKeys: number;
  /**
   * Slots examined for idleness each time a new key gets state: the bounded, incremental sweep
   * that keeps memory proportional to the keys in use without a stop-the-world pass. 0 turns it
   * off (call {@link QuotaEngine.sweep} yourself). @defaultValue 2
   */
  readonly sweepStep: number;
  /**
   * The most reservations open at once (a whole number from 1 to 2^24); a reserve past it, after
   * the expired ones are dropped, is refused with `"reservation_limit"`. As many settled or
   * cancelled ids are remembered (see {@link QuotaEngine.settle}). @defaultValue 100000
   */
  readonly maxReservations: number;
  /**
   * How long a reservation stays open when `reserve` is given no `ttl`, in milliseconds (from 1
   * to 2^44): past it, the reservation is settled as reserved. @defaultValue 300000 (5 minutes)
   */
  readonly reservationTtl: number;
  /**
   * What a top-up does when the state cannot take it all: owe it (`"debt"`) or forgive what does
   * not fit (`"cap"`); see {@link TopUp}. @defaultValue "debt"
   */
  readonly topUp: TopUp;
  /**
   * The most per-key overrides at once, across every limit (a whole number from 0 to 2^20); an
   * override past it is refused with `"override_limit"`. @defaultValue 10000
   */
  readonly maxOverrides: number;
}

/** The preset {@link EnginePolicy}. */
export const enginePolicy: EnginePolicy = Object.freeze({
  maxKeys: Infinity,
  sweepStep: 2,
  maxReservations: 100_000,
  reservationTtl: 300_000,
  topUp: "debt",
  maxOverrides: 10_000,
});

const FIELDS = ["maxKeys", "sweepStep", "maxReservations", "reservationTtl", "topUp", "maxOverrides"] as const;

/**
 * `policy` laid over the preset, read once and checked.
 *
 * @throws RangeError or TypeError naming the field when `maxKeys` is not a whole number of at
 *   least 1 (or Infinity), `sweepStep` not a whole number of at least 0, `maxReservations` not a
 *   whole number from 1 to 2^24, `reservationTtl` not a number of ms from 1 to 2^44, `topUp` not
 *   `"debt"` or `"cap"`, or `maxOverrides` not a whole number from 0 to 2^20; TypeError when
 *   `policy` is not an object or names an unknown field (with the closest known one)
 */
export function resolvePolicy(policy?: Partial<EnginePolicy>): EnginePolicy {
  const merged = { ...enginePolicy, ...check.options(policy, [...FIELDS], "QuotaEngine", "policy") };
  const { maxKeys, sweepStep, maxReservations, reservationTtl, topUp, maxOverrides } = merged;
  if (maxKeys !== Infinity) check.integer(maxKeys, "QuotaEngine maxKeys", 1);
  check.integer(sweepStep, "QuotaEngine sweepStep", 0);
  check.integer(maxReservations, "QuotaEngine maxReservations", 1);
  if (maxReservations > MOST_RESERVATIONS)
    throw new RangeError(
      `QuotaEngine maxReservations must be at most ${MOST_RESERVATIONS} (2^24), got ${maxReservations}`,
    );
  checkTtl(reservationTtl, "QuotaEngine reservationTtl");
  if (topUp !== "debt" && topUp !== "cap")
    throw new TypeError(`QuotaEngine topUp must be "debt" or "cap", got ${check.describe(topUp)}`);
  check.integer(maxOverrides, "QuotaEngine maxOverrides", 0);
  if (maxOverrides > MOST_OVERRIDES)
    throw new RangeError(`QuotaEngine maxOverrides must be at most ${MOST_OVERRIDES} (2^20), got ${maxOverrides}`);
  return Object.freeze({ maxKeys, sweepStep, maxReservations, reservationTtl, topUp, maxOverrides });
}

/** Throws unless `ttl` is a reservation's time to live: a number of ms from 1 to 2^44. */
export function checkTtl(ttl: unknown, what: string): void {
  check.finite(ttl, what);
  if ((ttl as number) < 1 || (ttl as number) > MAX_SPAN)
    throw new RangeError(`${what} must be from 1 to ${MAX_SPAN} ms (2^44), got ${check.describe(ttl)}`);
}
