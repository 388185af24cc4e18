// What `reserve` takes besides the charges (an id, a time to live), read once and checked, and
// the answers of a reserve that reserved nothing without evaluating the set.
import { strayError } from "./args";
import { checkTtl } from "./policy";
import type { ReserveCode, ReserveReport } from "./reservation";
import { checkId } from "./settle";

/** Options of one {@link QuotaEngine.reserve}. */
export interface ReserveOptions {
  /**
   * The reservation's id, to settle or cancel it by: 1 to 256 characters, not starting with `#`
   * (the engine's own ids do). A repeat with the id of an open reservation and the same charges
   * answers `"replayed"` and charges nothing again. @defaultValue one made for it
   */
  readonly id?: string;
  /** How long it stays open, in milliseconds (1 to 2^44). @defaultValue the policy's `reservationTtl` */
  readonly ttl?: number;
}

const FIELDS = ["id", "ttl"];

/**
 * Throws unless `options` is what `reserve` takes: undefined, or an object with no field but `id`
 * and `ttl`. The fields themselves are read once by the caller and checked with
 * {@link checkReserveId} and {@link checkReserveTtl}.
 *
 * @throws TypeError naming what is wrong
 */
export function checkReserveOptions(options: unknown): void {
  if (options === undefined) return;
  if (options === null || typeof options !== "object" || Array.isArray(options))
    throw new TypeError(
      `reserve options must be an object, got ${options === null ? "null" : Array.isArray(options) ? "an array" : typeof options}`,
    );
  // for-in over a plain object allocates nothing: a misspelt option is refused, not ignored.
  for (const f in options) if (f !== "id" && f !== "ttl") throw strayError(f, FIELDS, "reserve options");
}

/** Throws unless `id` (given) is a reservation id a caller may choose. */
export function checkReserveId(id: unknown): asserts id is string {
  checkId(id, "reserve options id");
  if (id.charCodeAt(0) === 35)
    throw new RangeError(
      `reserve options id must not start with "#" (the engine's own ids do), got ${JSON.stringify(id)}`,
    );
}

/** Throws unless `ttl` (given) is a time to live: a number of ms from 1 to 2^44. */
export function checkReserveTtl(ttl: unknown): asserts ttl is number {
  checkTtl(ttl, "reserve options ttl");
}

/** A reserve that reserved nothing before evaluating its set: no decisions, nothing charged. */
export function unreserved(id: string, code: ReserveCode, retryAfter: number): ReserveReport {
  return { allowed: false, committed: false, failedIndex: -1, retryAfter, decisions: [], id, code, expiresAfter: 0 };
}

/** The answer to a repeat of an open reservation (its id and expiry to be filled in): nothing charged again. */
export const replayed: Omit<ReserveReport, "id" | "expiresAfter"> = Object.freeze({
  allowed: true,
  committed: true,
  failedIndex: -1,
  retryAfter: 0,
  decisions: Object.freeze([]),
  code: "replayed",
});
