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
   * answers that reservation's first report (`"replayed"`) and charges nothing. @defaultValue one
   * made for it
   */
  readonly id?: string;
  /** How long it stays open, in milliseconds (1 to 2^44). @defaultValue the policy's `reservationTtl` */
  readonly ttl?: number;
}

const FIELDS = ["id", "ttl"];

/**
 * The id (undefined: make one) and the time to live of `options`, each read once.
 *
 * @throws TypeError or RangeError naming the option
 */
export function readReserveOptions(options: unknown, ttlDefault: number): [string | undefined, number] {
  if (options === undefined) return [undefined, ttlDefault];
  if (options === null || typeof options !== "object" || Array.isArray(options))
    throw new TypeError(
      `reserve options must be an object, got ${options === null ? "null" : Array.isArray(options) ? "an array" : typeof options}`,
    );
  // for-in over a plain object allocates nothing: a misspelt option is refused, not ignored.
  for (const f in options) if (f !== "id" && f !== "ttl") throw strayError(f, FIELDS, "reserve options");
  const { id, ttl } = options as ReserveOptions;
  if (id !== undefined) {
    checkId(id, "reserve options id");
    if (id.charCodeAt(0) === 35)
      throw new RangeError(
        `reserve options id must not start with "#" (the engine's own ids do), got ${JSON.stringify(id)}`,
      );
  }
  if (ttl === undefined) return [id, ttlDefault];
  checkTtl(ttl, "reserve options ttl");
  return [id, ttl];
}

/** A reserve that reserved nothing before evaluating its set: no decisions, nothing charged. */
export function unreserved(id: string, code: ReserveCode, retryAfter: number): ReserveReport {
  return { allowed: false, committed: false, failedIndex: -1, retryAfter, decisions: [], id, code, expiresAfter: 0 };
}
