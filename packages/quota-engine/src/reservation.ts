// The reservations of one engine: for each, what its charge set charged (the keys, limits, kinds
// and costs, and for a window the end of the window it was counted in), its id and the instant it
// expires, kept in typed arrays by slot, up to four charges inline. Every reservation has a
// sequence number, counted up; the engine makes its own ids from it (`#` and the number), and a
// ring of slots indexed by that number finds the slot, with no Map (one that must leave the ring
// while still kept, because later numbers wrapped round onto its place, moves to a Map).
//
// Why not an object a reservation, in a Map by id: a reserve then allocates a record, its charges
// and a Map entry, and stores young objects into long-lived arrays, which the young-generation
// collector must then trace and copy; together they cost as much as the charge set itself. Here a
// reserve writes numbers and references the engine holds anyway, and allocates nothing but its id.
//
// Records expire in the order of the instant they expire (a queue, for the ones that arrive in
// that order, and a heap for the others), a few per reservation made (as keys are swept), so
// memory follows the reservations in use. A settled or cancelled reservation stays as a tombstone
// until it expires, so that a second settle says what happened: at most `max` tombstones are
// kept, the oldest forgotten first. Slots are at most `2 · max`: the open ones and the tombstones.
import type { AtomicReport } from "./charge";
import type { ChargeSets } from "./charge-set";
import type { QuotaKey } from "./key";
import { ExpiryQueue } from "./expiry-queue";
import { IdMaker, seqOf } from "./reservation-id";
import type { Kind } from "./kinds";

/** The longest a reservation id may be, in UTF-16 code units. */
export const MAX_RESERVATION_ID = 256;

/** Where a reservation stands. */
export const OPEN = 0;
export const SETTLED = 1;
export const CANCELLED = 2;
/** A free slot: no reservation (expired, forgotten, or never used). */
const FREE = 3;

/** Records past expiry dropped each time a reservation is made. */
const EXPIRE_STEP = 2;

/** Charges kept inline in a slot; a larger set keeps the rest in an array of its own. */
const INLINE = 4;
/** Numbers a charge keeps: its kind, its cost, its window's end. */
const NUMS = 3;
/** Slots an engine starts with when it first reserves, and the ring's first length. */
const FIRST = 64;

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

/** A reservation's charges, read in place: inline up to INLINE, then from its own array. */
class View implements Reserved {
  constructor(
    readonly id: string,
    readonly size: number,
    readonly at: number,
    readonly keys: readonly (QuotaKey | undefined)[],
    readonly names: readonly (string | undefined)[],
    readonly nums: Float64Array,
    readonly more: readonly unknown[] | undefined,
  ) {}

  key(i: number): QuotaKey {
    return (i < INLINE ? this.keys[this.at + i] : (this.more as unknown[])[(i - INLINE) * 5]) as QuotaKey;
  }

  limit(i: number): string {
    return (i < INLINE ? this.names[this.at + i] : (this.more as unknown[])[(i - INLINE) * 5 + 1]) as string;
  }

  kind(i: number): Kind {
    return (i < INLINE ? this.nums[(this.at + i) * NUMS] : (this.more as unknown[])[(i - INLINE) * 5 + 2]) as Kind;
  }

  cost(i: number): number {
    return (
      i < INLINE ? this.nums[(this.at + i) * NUMS + 1] : (this.more as unknown[])[(i - INLINE) * 5 + 3]
    ) as number;
  }

  end(i: number): number {
    return (
      i < INLINE ? this.nums[(this.at + i) * NUMS + 2] : (this.more as unknown[])[(i - INLINE) * 5 + 4]
    ) as number;
  }
}

export class Reservations {
  #cap = 0;
  /** Slots ever used: every slot from here on is free and untouched. */
  #top = 0;
  #free: number[] = [];
  #expires = new Float64Array(0);
  /** The sequence number of each slot's reservation. */
  #seqs = new Float64Array(0);
  #made = 0;
  readonly #idMaker = new IdMaker();
  // The slot (+ 1; 0 for none) of each kept reservation, at its sequence number & mask; a kept
  // one whose place later numbers took is in `#older`.
  #ring = new Int32Array(0);
  #mask = -1;
  readonly #older = new Map<number, number>();
  #status = new Uint8Array(0);
  #sizes = new Int32Array(0);
  // The charges, INLINE a slot: keys and limit names, and NUMS numbers each.
  #keys: (QuotaKey | undefined)[] = [];
  #names: (string | undefined)[] = [];
  #nums = new Float64Array(0);
  // A larger set's charges past INLINE, five entries each (key, name, kind, cost, end).
  #more: (unknown[] | undefined)[] = [];
  // A caller's id, by slot (undefined for the engine's own); and the slot, by a caller's id.
  #ids: (string | undefined)[] = [];
  readonly #named = new Map<string, number>();
  #kept = 0;
  #open = 0;
  // Sequence numbers and expiry instants waiting their turn; entries whose reservation has gone
  // are skipped (and rebuilt away once they are most of it).
  readonly #waiting = new ExpiryQueue();
  // Tombstones' sequence numbers in the order they closed, a ring of at most `max`.
  #closed: number[] = [];
  #head = 0;
  #count = 0;

  /**
   * @param max - the most open reservations, and the most tombstones kept
   */
  constructor(readonly max: number) {}

  /** Reservations open (made and not yet settled, cancelled or expired). */
  get open(): number {
    return this.#open;
  }

  // The slot of a sequence number, if its reservation is still kept; else -1.
  #slotOf(seq: number): number {
    const slot = this.#ring.length === 0 ? -1 : this.#ring[seq & this.#mask] - 1;
    if (slot >= 0 && this.#seqs[slot] === seq && this.#status[slot] !== FREE) return slot;
    return this.#older.get(seq) ?? -1;
  }

  // Puts `slot` in the ring at its number. The kept reservation whose place that is goes to
  // `#older` if the ring is as long as it may be, else the ring grows (twice as long) first.
  #place(slot: number, seq: number): void {
    for (;;) {
      const at = seq & this.#mask;
      const held = this.#ring.length === 0 ? -1 : this.#ring[at] - 1;
      if (held < 0 || this.#status[held] === FREE || this.#seqs[held] === seq) {
        if (this.#ring.length > 0) {
          this.#ring[at] = slot + 1;
          return;
        }
      } else if (this.#ring.length >= 2 * this.max) {
        this.#older.set(this.#seqs[held], held);
        this.#ring[at] = slot + 1;
        return;
      }
      // Twice as long (FIRST at first), every kept slot at its place by the longer mask.
      const ring = new Int32Array(this.#ring.length === 0 ? FIRST : this.#ring.length * 2);
      const mask = ring.length - 1;
      for (let s = 0; s < this.#top; s++)
        if (this.#status[s] !== FREE && !this.#older.has(this.#seqs[s])) ring[this.#seqs[s] & mask] = s + 1;
      this.#ring = ring;
      this.#mask = mask;
    }
  }

  /** The slot of `id`'s reservation that has not expired at `t`, open or closed, or -1; one past expiry is dropped. */
  find(id: string, t: number): number {
    const seq = seqOf(id);
    let slot: number;
    if (seq < 0) slot = this.#named.get(id) ?? -1;
    else {
      slot = this.#slotOf(seq);
      if (slot >= 0 && this.#ids[slot] !== undefined) slot = -1;
    }
    if (slot < 0 || t < this.#expires[slot]) return slot;
    this.#drop(slot);
    return -1;
  }

  /** Where the reservation in `slot` stands. */
  status(slot: number): typeof OPEN | typeof SETTLED | typeof CANCELLED {
    return this.#status[slot] as typeof OPEN;
  }

  /** When the reservation in `slot` expires (the engine's instant, ms). */
  expiresAt(slot: number): number {
    return this.#expires[slot];
  }

  /** What a settle reads of the reservation in `slot` (valid until the store next changes). */
  view(slot: number): Reserved {
    const id = this.#ids[slot] ?? this.#idMaker.id(this.#seqs[slot]);
    return new View(id, this.#sizes[slot], slot * INLINE, this.#keys, this.#names, this.#nums, this.#more[slot]);
  }

  /** Whether the reservation in `slot` holds the `n` charges `sets` has just read (keys, limits, kinds, costs, in order). */
  holds(slot: number, n: number, sets: ChargeSets): boolean {
    if (this.#sizes[slot] !== n) return false;
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
    if (this.#waiting.due(t)) this.expire(t, EXPIRE_STEP);
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
    const slot = this.#take();
    this.#status[slot] = OPEN;
    this.#expires[slot] = expiresAt;
    this.#sizes[slot] = n;
    const keys = this.#keys;
    const names = this.#names;
    const nums = this.#nums;
    const at = slot * INLINE;
    const inline = n < INLINE ? n : INLINE;
    for (let i = 0; i < inline; i++) {
      keys[at + i] = sets.keyAt(i);
      names[at + i] = sets.nameAt(i);
      const x = (at + i) * NUMS;
      nums[x] = sets.kindAt(i);
      nums[x + 1] = sets.costAt(i);
      nums[x + 2] = sets.endAt(i);
    }
    if (n > INLINE) {
      const more = new Array<unknown>((n - INLINE) * 5);
      for (let i = INLINE, x = 0; i < n; i++, x += 5) {
        more[x] = sets.keyAt(i);
        more[x + 1] = sets.nameAt(i);
        more[x + 2] = sets.kindAt(i);
        more[x + 3] = sets.costAt(i);
        more[x + 4] = sets.endAt(i);
      }
      this.#more[slot] = more;
    }
    if (id !== undefined) {
      this.#ids[slot] = id;
      this.#named.set(id, slot);
    }
    this.#kept++;
    this.#open++;
    const seq = ++this.#made;
    this.#seqs[slot] = seq;
    this.#place(slot, seq);
    const waiting = this.#waiting;
    if (waiting.size > 64 && waiting.size > 2 * this.#kept) this.#rebuild();
    waiting.push(seq, expiresAt);
    return id ?? this.#idMaker.id(seq);
  }

  // A free slot: one given back, or the next never used (the arrays twice as long if need be).
  #take(): number {
    if (this.#free.length > 0) return this.#free.pop() as number;
    if (this.#top === this.#cap) this.#grow();
    return this.#top++;
  }

  #grow(): void {
    const cap = this.#cap === 0 ? FIRST : this.#cap * 2;
    const grown = <T extends Float64Array | Uint8Array | Int32Array>(old: T, make: (n: number) => T, per = 1): T => {
      const next = make(cap * per);
      next.set(old);
      return next;
    };
    this.#expires = grown(this.#expires, (n) => new Float64Array(n));
    this.#seqs = grown(this.#seqs, (n) => new Float64Array(n));
    this.#status = grown(this.#status, (n) => new Uint8Array(n).fill(FREE));
    this.#sizes = grown(this.#sizes, (n) => new Int32Array(n));
    this.#nums = grown(this.#nums, (n) => new Float64Array(n), INLINE * NUMS);
    this.#keys.length = cap * INLINE;
    this.#names.length = cap * INLINE;
    this.#more.length = cap;
    this.#ids.length = cap;
    this.#cap = cap;
  }

  /** Marks the reservation in `slot` settled or cancelled: a tombstone until it expires, its charges let go. */
  close(slot: number, status: typeof SETTLED | typeof CANCELLED): void {
    this.#status[slot] = status;
    this.#open--;
    this.#release(slot);
    const seq = this.#seqs[slot];
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
   * Drops up to `budget` records whose expiry is at or before `t`: an open one is settled as
   * reserved (its charges stand), a tombstone is forgotten. Returns how many open ones expired.
   */
  expire(t: number, budget: number): number {
    let expired = 0;
    for (let n = 0; n < budget; n++) {
      const seq = this.#waiting.take(t);
      if (seq < 0) break;
      const slot = this.#slotOf(seq);
      if (slot < 0) continue; // gone already
      if (this.#status[slot] === OPEN) expired++;
      this.#drop(slot);
    }
    return expired;
  }

  /** Forgets every reservation. */
  clear(): void {
    for (let slot = 0; slot < this.#top; slot++) if (this.#status[slot] !== FREE) this.#drop(slot);
    this.#waiting.clear();
    this.#closed = [];
    this.#head = 0;
    this.#count = 0;
  }

  // Lets go of the references a slot's charges hold.
  #release(slot: number): void {
    const at = slot * INLINE;
    const n = this.#sizes[slot] < INLINE ? this.#sizes[slot] : INLINE;
    for (let i = 0; i < n; i++) {
      this.#keys[at + i] = undefined;
      this.#names[at + i] = undefined;
    }
    this.#more[slot] = undefined;
  }

  // Frees `slot`: its reservation forgotten, its sequence number never to find it again.
  #drop(slot: number): void {
    const status = this.#status[slot];
    if (status === FREE) return;
    if (status === OPEN) {
      this.#open--;
      this.#release(slot);
    }
    const id = this.#ids[slot];
    if (id !== undefined) {
      this.#named.delete(id);
      this.#ids[slot] = undefined;
    }
    const seq = this.#seqs[slot];
    if (this.#ring[seq & this.#mask] === slot + 1) this.#ring[seq & this.#mask] = 0;
    else this.#older.delete(seq);
    this.#status[slot] = FREE;
    this.#kept--;
    this.#free.push(slot);
  }

  // The waiting entries anew from the reservations kept, in the order they expire.
  #rebuild(): void {
    const kept: number[] = [];
    for (let slot = 0; slot < this.#top; slot++) if (this.#status[slot] !== FREE) kept.push(slot);
    kept.sort((a, b) => this.#expires[a] - this.#expires[b]);
    this.#waiting.fill(
      kept.map((slot) => this.#seqs[slot]),
      kept.map((slot) => this.#expires[slot]),
    );
  }
}
