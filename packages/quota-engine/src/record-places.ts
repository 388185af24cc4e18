// Where the reservations' records live: two arrays, a place's numbers in one (a Float64Array,
// W a place) and its references in the other (R a place), so a reserve or an expiry touches two
// arrays, not one a field. Up to INLINE charges are kept in the place; a larger set keeps the rest
// in an array of its own. Reservations (reservation.ts) decides which record goes at which place.
import type { ChargeSets } from "./charge-set";
import type { QuotaKey } from "./key";
import type { Kind } from "./kinds";

/** Where a reservation stands, in its flags. */
export const OPEN = 1;
export const SETTLED = 2;
export const CANCELLED = 3;
/** A free place: no reservation (expired, forgotten, moved, or never used); 0, as new arrays hold. */
export const FREE = 0;
/** Added to a record's status while it is walked to expire in the order made (not in the heap). */
export const WALKED = 4;

/** Charges kept in the place itself. */
export const INLINE = 4;
/** Numbers a place: when it expires, its sequence number, its flags, its size, then each inline charge's kind, cost and window end. */
export const W = 16;
/** References a place: a caller's id, the array of charges past INLINE, then each inline charge's key and limit name. */
export const R = 10;
/** Where each number is, from the place's first. */
export const EXPIRES = 0;
export const SEQ = 1;
export const FLAGS = 2;
export const SIZE = 3;
const CHARGES = 4;
/** Where each reference is, from the place's first. */
export const ID = 0;
const MORE = 1;
const KEYS = 2;
/** Entries a charge past INLINE keeps in its set's own array: key, name, kind, cost, end. */
const EXTRA = 5;

/** What a settle reads of one reservation: its charges, in order. */
export interface Reserved {
  /** The reservation's id. */
  readonly id: string;
  /** How many charges it holds. */
  readonly size: number;
  key(i: number): QuotaKey;
  limit(i: number): string;
  kind(i: number): Kind;
  /** Units charge `i` reserved. */
  cost(i: number): number;
  /** For a window, the end of the window charge `i` was counted in (ms); 0 for the other kinds. */
  end(i: number): number;
}

/** Places: `nums` and `refs` for `length` records. */
export interface Places {
  readonly length: number;
  readonly nums: Float64Array;
  readonly refs: unknown[];
}

/** Room for `length` records, every place free (its flags 0). */
export function places(length: number): Places {
  return { length, nums: new Float64Array(length * W), refs: new Array<unknown>(length * R).fill(undefined) };
}

/** Writes the `n` charges `sets` has just committed at place `p`. */
export function writeCharges(nums: Float64Array, refs: unknown[], p: number, n: number, sets: ChargeSets): void {
  const inline = n < INLINE ? n : INLINE;
  for (let i = 0, x = p * W + CHARGES, r = p * R + KEYS; i < inline; i++, x += 3, r += 2) {
    refs[r] = sets.keyAt(i);
    refs[r + 1] = sets.nameAt(i);
    nums[x] = sets.kindAt(i);
    nums[x + 1] = sets.costAt(i);
    nums[x + 2] = sets.endAt(i);
  }
  if (n > INLINE) {
    const more = new Array<unknown>((n - INLINE) * EXTRA);
    for (let i = INLINE, x = 0; i < n; i++, x += EXTRA) {
      more[x] = sets.keyAt(i);
      more[x + 1] = sets.nameAt(i);
      more[x + 2] = sets.kindAt(i);
      more[x + 3] = sets.costAt(i);
      more[x + 4] = sets.endAt(i);
    }
    refs[p * R + MORE] = more;
  }
}

/** Lets go of the charges' references at place `p` (its id stays). */
export function releaseCharges(nums: Float64Array, refs: unknown[], p: number): void {
  const size = nums[p * W + SIZE];
  const n = size < INLINE ? size : INLINE;
  for (let i = 0, r = p * R + KEYS; i < n; i++, r += 2) {
    refs[r] = undefined;
    refs[r + 1] = undefined;
  }
  if (size > INLINE) refs[p * R + MORE] = undefined;
}

/** Copies the record at `from`'s place `p` to `to`'s place `q`. */
export function copyPlace(from: Places, p: number, to: Places, q: number): void {
  to.nums.set(from.nums.subarray(p * W, p * W + W), q * W);
  for (let i = 0; i < R; i++) to.refs[q * R + i] = from.refs[p * R + i];
}

/** What a settle reads of the record at place `p`, under `id` (valid until the places next change). */
export function viewPlace(nums: Float64Array, refs: unknown[], p: number, id: string): Reserved {
  return new View(id, nums[p * W + SIZE], p, nums, refs, refs[p * R + MORE] as unknown[] | undefined);
}

/** A reservation's charges, read in place: inline up to INLINE, then from its own array. */
class View implements Reserved {
  constructor(
    readonly id: string,
    readonly size: number,
    readonly at: number,
    readonly nums: Float64Array,
    readonly refs: readonly unknown[],
    readonly more: readonly unknown[] | undefined,
  ) {}

  #extra(i: number, field: number): unknown {
    return (this.more as unknown[])[(i - INLINE) * EXTRA + field];
  }

  key(i: number): QuotaKey {
    return (i < INLINE ? this.refs[this.at * R + KEYS + 2 * i] : this.#extra(i, 0)) as QuotaKey;
  }

  limit(i: number): string {
    return (i < INLINE ? this.refs[this.at * R + KEYS + 2 * i + 1] : this.#extra(i, 1)) as string;
  }

  kind(i: number): Kind {
    return (i < INLINE ? this.nums[this.at * W + CHARGES + 3 * i] : this.#extra(i, 2)) as Kind;
  }

  cost(i: number): number {
    return (i < INLINE ? this.nums[this.at * W + CHARGES + 3 * i + 1] : this.#extra(i, 3)) as number;
  }

  end(i: number): number {
    return (i < INLINE ? this.nums[this.at * W + CHARGES + 3 * i + 2] : this.#extra(i, 4)) as number;
  }
}
