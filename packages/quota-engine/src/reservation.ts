// The reservations of one engine: for each, what its charge set charged (the keys, limits, kinds
// and costs, and for a window the end of the window it was counted in), its id and the instant it
// expires, kept in typed arrays, up to four charges inline. Every reservation has a sequence
// number, counted up; the engine makes its own ids from it (`#` and the number). A record lives at
// the place of its number in a ring (the number modulo the ring's length), so an id finds its
// record with no Map, and a reserve writes its record where the number says, with no free list.
// One still kept when a number a ring's length later comes (a long-lived one) moves past the ring,
// where a Map finds it; the ring grows (twice as long) instead when it is half full.
//
// Why not an object a reservation, in a Map by id: a reserve then allocates a record, its charges
// and a Map entry, and stores young objects into long-lived arrays, which the young-generation
// collector must then trace and copy; together they cost as much as the charge set itself. Here a
// reserve writes numbers and references the engine holds anyway, and allocates nothing but its id.
// A record that expires leaves its references (keys and limit names) at its place until the next
// record there writes over them: what the ring keeps alive is bounded by its length, and a reserve,
// which drops one record and writes one, does not pay to let go of the first.
//
// Records expire in the order of the instant they expire, a few per reservation made (as keys are
// swept), so memory follows the reservations in use. Those made in that order (a service's
// reservations mostly share one time to live) are walked in the order made, from the oldest;
// those that expire before one made earlier wait in a heap. A settled or cancelled reservation
// stays as a tombstone until it expires, so that a second settle says what happened: at most
// `max` tombstones are kept, the oldest forgotten first. Records kept are at most `2 · max`: the
// open ones and the tombstones.
import type { AtomicReport } from "./charge";
import type { ChargeSets } from "./charge-set";
import { ExpiryHeap } from "./expiry-heap";
import { IdMaker, seqOf } from "./reservation-id";
import {
  EXPIRES,
  FLAGS,
  FREE,
  ID,
  OPEN,
  R,
  SEQ,
  SIZE,
  W,
  WALKED,
  copyPlace,
  places,
  releaseCharges,
  viewPlace,
  writeCharges,
} from "./record-places";
import type { CANCELLED, Places, Reserved, SETTLED } from "./record-places";

export type { Reserved } from "./record-places";

export { CANCELLED, OPEN, SETTLED } from "./record-places";

/** The longest a reservation id may be, in UTF-16 code units. */
export const MAX_RESERVATION_ID = 256;

/** Records past expiry dropped each time a reservation is made. */
const EXPIRE_STEP = 2;

/** The ring's first length, when an engine first reserves. */
const FIRST = 64;
/** Places past the ring an engine first makes for records moved out of it. */
const FIRST_MOVED = 16;

/** What a reservation made answered: an atomic report, its id, what happened and when it expires. */
export type ReserveCode = "reserved" | "replayed" | "refused" | "duplicate_id" | "reservation_limit";

/**
 * What {@link QuotaEngine.reserve} answered: the charge set's report, as `checkAtomic` gives it,
 * and the reservation's id, what happened and when it expires.
 *
 * | code | committed | means |
 * | --- | --- | --- |
 * | `"reserved"` | yes | every charge fit and was charged; settle or cancel it by `id` |
 * | `"replayed"` | yes | an open reservation has this id and these charges: nothing charged again; `decisions` is empty (the first answer had them) |
 * | `"refused"` | no | a charge did not fit (see `failedIndex` and `decisions`), nothing was charged |
 * | `"duplicate_id"` | no | a reservation with this id exists with other charges, or was settled or cancelled; `decisions` is empty, `retryAfter` `Infinity` |
 * | `"reservation_limit"` | no | `maxReservations` reservations are open; `decisions` is empty, `retryAfter` 0 (unknown) |
 */
export interface ReserveReport extends AtomicReport {
  /** The reservation's id: the caller's, or one made for it (`#` and a number); `""` when none was given or made. */
  readonly id: string;
  /** What happened; see the table above. */
  readonly code: ReserveCode;
  /**
   * Milliseconds from the caller's `now` until the reservation expires, settled as reserved; 0
   * when nothing is reserved under `id`.
   */
  readonly expiresAfter: number;
}

export class Reservations {
  // The records: the ring at places [0, #len), then those moved out of it, up to #places.length.
  #places: Places = places(0);
  #nums = this.#places.nums;
  #refs = this.#places.refs;
  /** The ring's length: a power of two, 0 before the first reserve. */
  #len = 0;
  #mask = 0;
  /** The longest the ring grows: a power of two, at least twice `max` (the records kept at most). */
  readonly #most: number;
  /** Places past the ring never used yet start here; those given back are in #movedFree. */
  #movedTop = 0;
  #movedFree: number[] = [];
  /** The place of each record moved out of the ring, by sequence number. */
  readonly #moved = new Map<number, number>();
  #made = 0;
  readonly #idMaker = new IdMaker();
  /** The sequence number of a caller's id's record. */
  readonly #named = new Map<string, number>();
  #kept = 0;
  #open = 0;
  // The records walked to expire in the order made (each expires no sooner than the one made
  // before it): the oldest kept one's number (#made + 1 when none is), and when the newest
  // expires. The others wait in #late.
  #next = 1;
  #last = -Infinity;
  readonly #late = new ExpiryHeap();
  // Tombstones' sequence numbers in the order they closed, a ring of at most `max`.
  #closed: number[] = [];
  #head = 0;
  #count = 0;

  /**
   * @param max - the most open reservations, and the most tombstones kept
   */
  constructor(readonly max: number) {
    let most = FIRST;
    while (most < 2 * max) most *= 2;
    this.#most = most;
  }

  /** Reservations open (made and not yet settled, cancelled or expired). */
  get open(): number {
    return this.#open;
  }

  // The place of a sequence number's record, if it is still kept; else -1.
  #slotOf(seq: number): number {
    if (this.#len === 0) return -1;
    const at = (seq & this.#mask) * W;
    if (this.#nums[at + SEQ] === seq && this.#nums[at + FLAGS] !== FREE) return seq & this.#mask;
    return this.#moved.size === 0 ? -1 : (this.#moved.get(seq) ?? -1);
  }

  /** The place of `id`'s reservation that has not expired at `t`, open or closed, or -1; one past expiry is dropped. */
  find(id: string, t: number): number {
    const seq = seqOf(id);
    let slot: number;
    if (seq < 0) {
      const named = this.#named.get(id);
      slot = named === undefined ? -1 : this.#slotOf(named);
    } else {
      slot = this.#slotOf(seq);
      if (slot >= 0 && this.#refs[slot * R + ID] !== undefined) slot = -1;
    }
    if (slot < 0 || t < this.#nums[slot * W + EXPIRES]) return slot;
    this.#drop(slot);
    return -1;
  }

  /** Where the reservation at `slot` stands. */
  status(slot: number): typeof OPEN | typeof SETTLED | typeof CANCELLED {
    return (this.#nums[slot * W + FLAGS] & 3) as typeof OPEN;
  }

  /** When the reservation at `slot` expires (the engine's instant, ms). */
  expiresAt(slot: number): number {
    return this.#nums[slot * W + EXPIRES];
  }

  /** What a settle reads of the reservation at `slot` (valid until the store next changes). */
  view(slot: number): Reserved {
    const id = (this.#refs[slot * R + ID] as string | undefined) ?? this.#idMaker.id(this.#nums[slot * W + SEQ]);
    return viewPlace(this.#nums, this.#refs, slot, id);
  }

  /** Whether the reservation at `slot` holds the `n` charges `sets` has just read (keys, limits, kinds, costs, in order). */
  holds(slot: number, n: number, sets: ChargeSets): boolean {
    if (this.#nums[slot * W + SIZE] !== n) return false;
    const v = this.view(slot);
    for (let i = 0; i < n; i++)
      if (
        v.key(i).id !== sets.idAt(i) ||
        v.limit(i) !== sets.nameAt(i) ||
        v.kind(i) !== sets.kindAt(i) ||
        v.cost(i) !== sets.costAt(i)
      )
        return false;
    return true;
  }

  /**
   * Whether another reservation may open at `t`: drops a few records past expiry (every one, when
   * the open ones are at `max`), then compares.
   */
  room(t: number): boolean {
    if (this.#late.size === 0) {
      // Every record walked in the order made (the usual case): the oldest ones due, in line.
      for (let n = 0; n < EXPIRE_STEP && this.#next <= this.#made; n++) {
        const p = this.#next & this.#mask;
        if (this.#nums[p * W + EXPIRES] > t) break;
        this.#drop(p);
      }
    } else this.expire(t, EXPIRE_STEP);
    if (this.#open < this.max) return true;
    this.expire(t, Infinity);
    return this.#open < this.max;
  }

  /**
   * Keeps the `n` charges `sets` has just committed as a reservation open until `expiresAt`, under
   * `id` or, when that is undefined, under an id made for it (`#` and its sequence number; a
   * caller's id may not start with `#`). Returns the id.
   */
  add(id: string | undefined, expiresAt: number, n: number, sets: ChargeSets): string {
    const seq = this.#made + 1;
    let p = seq & this.#mask;
    if (this.#len === 0 || this.#nums[p * W + FLAGS] !== FREE) p = this.#makeRoom(seq);
    const nums = this.#nums;
    const at = p * W;
    // #next is this number when no record is walked: the first one starts the walk anew.
    const walked = this.#next === seq || expiresAt >= this.#last;
    nums[at + EXPIRES] = expiresAt;
    nums[at + SEQ] = seq;
    nums[at + FLAGS] = walked ? OPEN + WALKED : OPEN;
    nums[at + SIZE] = n;
    writeCharges(nums, this.#refs, p, n, sets);
    // Written either way: a record dropped left its references at its place (see #drop).
    this.#refs[p * R + ID] = id;
    if (id !== undefined) this.#named.set(id, seq);
    this.#made = seq;
    this.#kept++;
    this.#open++;
    if (walked) this.#last = expiresAt;
    else this.#wait(seq, expiresAt);
    return id ?? this.#idMaker.id(seq);
  }

  // Frees the ring's place for `seq`: the ring made (or made twice as long, when half full), else
  // the record there, kept a ring's length of numbers, moved past the ring. Returns the place.
  #makeRoom(seq: number): number {
    if (this.#len === 0) this.#layout(FIRST, 0);
    else if (this.#kept >= this.#len >> 1 && this.#len < this.#most)
      this.#layout(2 * this.#len, this.#places.length - this.#len);
    const p = seq & this.#mask;
    if (this.#nums[p * W + FLAGS] === FREE) return p;
    let q = this.#movedFree.length > 0 ? (this.#movedFree.pop() as number) : -1;
    if (q < 0) {
      if (this.#movedTop === this.#places.length)
        this.#layout(this.#len, Math.max(FIRST_MOVED, 2 * (this.#places.length - this.#len)));
      q = this.#movedTop++;
    }
    const nums = this.#nums;
    const held = nums[p * W + SEQ];
    const flags = nums[p * W + FLAGS];
    copyPlace(this.#places, p, this.#places, q);
    this.#moved.set(held, q);
    releaseCharges(nums, this.#refs, p);
    this.#refs[p * R + ID] = undefined;
    nums[p * W + FLAGS] = FREE;
    if (flags >= WALKED) {
      // Past the ring it is no longer walked: it waits in the heap.
      nums[q * W + FLAGS] = flags - WALKED;
      this.#wait(held, nums[q * W + EXPIRES]);
      if (held === this.#next) this.#advance();
    }
    return p;
  }

  // Every record laid anew: a ring of `len` places, then `moved` places past it. Records in the
  // ring keep a place in a ring as long or longer (their numbers differ modulo the old length, so
  // modulo the new); records past it come back to the ring where their place is free.
  #layout(len: number, moved: number): void {
    const old = this.#places;
    const next = places(len + moved);
    const mask = len - 1;
    this.#moved.clear();
    this.#movedFree = [];
    let top = len;
    for (let p = 0; p < old.length; p++) {
      if (old.nums[p * W + FLAGS] === FREE) continue;
      const seq = old.nums[p * W + SEQ];
      let q = seq & mask;
      if (next.nums[q * W + FLAGS] !== FREE) {
        q = top++;
        this.#moved.set(seq, q);
      }
      copyPlace(old, p, next, q);
    }
    this.#places = next;
    this.#nums = next.nums;
    this.#refs = next.refs;
    this.#len = len;
    this.#mask = mask;
    this.#movedTop = top;
  }

  // Puts `seq`, expiring at `at`, in the heap; the heap anew from the records kept once most of
  // its entries are of records gone (and it is long beside the ring, so rebuilding stays cheap).
  #wait(seq: number, at: number): void {
    const late = this.#late;
    late.push(seq, at);
    if (late.size > 64 && late.size > 2 * this.#kept && late.size > this.#len >> 3) {
      const nums = this.#nums;
      const kept: number[] = [];
      for (let p = 0; p < this.#movedTop; p++) {
        const flags = nums[p * W + FLAGS];
        if (flags !== FREE && flags < WALKED) kept.push(p);
      }
      kept.sort((a, b) => nums[a * W + EXPIRES] - nums[b * W + EXPIRES]);
      late.fill(
        kept.map((p) => nums[p * W + SEQ]),
        kept.map((p) => nums[p * W + EXPIRES]),
      );
    }
  }

  // #next, the walked record at it gone: on to the next walked record kept, or #made + 1.
  #advance(): void {
    const nums = this.#nums;
    const mask = this.#mask;
    let seq = this.#next + 1;
    for (; seq <= this.#made; seq++) {
      const at = (seq & mask) * W;
      if (nums[at + SEQ] === seq && nums[at + FLAGS] >= WALKED) break;
    }
    this.#next = seq;
  }

  /** Marks the reservation at `slot` settled or cancelled: a tombstone until it expires, its charges let go. */
  close(slot: number, status: typeof SETTLED | typeof CANCELLED): void {
    const nums = this.#nums;
    nums[slot * W + FLAGS] = status + (nums[slot * W + FLAGS] >= WALKED ? WALKED : 0);
    this.#open--;
    releaseCharges(nums, this.#refs, slot);
    const seq = nums[slot * W + SEQ];
    const ring = this.#closed;
    if (this.#count === this.max) {
      // The oldest tombstone makes room, if it is still kept (it may have expired since).
      const oldest = this.#slotOf(ring[this.#head]);
      if (oldest >= 0) this.#drop(oldest);
      ring[this.#head] = seq;
      this.#head = (this.#head + 1) % this.max;
      return;
    }
    if (this.#count === ring.length) {
      // Twice as long (at most `max`), its entries from the oldest on.
      const next = new Array<number>(Math.min(this.max, Math.max(16, ring.length * 2)));
      for (let i = 0; i < this.#count; i++) next[i] = ring[(this.#head + i) % ring.length];
      this.#closed = next;
      this.#head = 0;
    }
    this.#closed[(this.#head + this.#count) % this.#closed.length] = seq;
    this.#count++;
  }

  /**
   * Drops up to `budget` records whose expiry is at or before `t`, the earliest first: an open one
   * is settled as reserved (its charges stand), a tombstone is forgotten. Returns how many open
   * ones expired.
   */
  expire(t: number, budget: number): number {
    let expired = 0;
    const late = this.#late;
    for (let n = 0; n < budget; n++) {
      // The walk's oldest record, unless the heap's first expires before it (no Infinity here:
      // a sentinel would box every instant read).
      let slot = -1;
      const next = this.#next;
      if (next <= this.#made) {
        const head = next & this.#mask;
        const at = this.#nums[head * W + EXPIRES];
        if (at <= t && (late.size === 0 || at <= late.first())) slot = head;
      }
      if (slot < 0) {
        if (late.size === 0 || late.first() > t) break;
        slot = this.#slotOf(late.pop());
        if (slot < 0) continue; // gone already
      }
      if ((this.#nums[slot * W + FLAGS] & 3) === OPEN) expired++;
      this.#drop(slot);
    }
    return expired;
  }

  /** Forgets every reservation (their numbers are never used again). */
  clear(): void {
    this.#places = places(0);
    this.#nums = this.#places.nums;
    this.#refs = this.#places.refs;
    this.#len = 0;
    this.#mask = 0;
    this.#movedTop = 0;
    this.#movedFree = [];
    this.#moved.clear();
    this.#named.clear();
    this.#kept = 0;
    this.#open = 0;
    this.#next = this.#made + 1;
    this.#last = -Infinity;
    this.#late.clear();
    this.#closed = [];
    this.#head = 0;
    this.#count = 0;
  }

  // Frees `slot`: its reservation forgotten, its sequence number never to find it again.
  #drop(slot: number): void {
    const nums = this.#nums;
    const at = slot * W;
    const flags = nums[at + FLAGS];
    if (flags === FREE) return;
    // Its references stay until a record takes the place (a ring's length of reservations later
    // at most, or a layout): what the ring holds is bounded by its length, as the ring is, and a
    // reserve that drops one record then writes one pays to let go of nothing.
    if ((flags & 3) === OPEN) this.#open--;
    const id = this.#refs[slot * R + ID];
    if (id !== undefined) this.#named.delete(id as string);
    nums[at + FLAGS] = FREE;
    this.#kept--;
    const seq = nums[at + SEQ];
    if (slot >= this.#len) {
      this.#moved.delete(seq);
      this.#movedFree.push(slot);
    } else if (seq === this.#next) this.#advance();
  }
}
