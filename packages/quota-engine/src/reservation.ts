// The reservations of one engine: each a record of what a reserved charge set charged (its keys,
// limits, kinds and costs, and for a window the window it was counted in), its id and the instant
// it expires. A reservation whose id the engine made (`#` and a sequence number) is found by that
// number in a ring, as long as it is one of the latest reserved (the ring grows, up to `max`,
// before it would drop an open one); older open ones, and the caller's own ids, are found in Maps.
// A tombstone of the engine's own id is forgotten when its place in the ring is taken, so after
// at least as many later reservations as the ring is long (1 024 at first, up to `max`).
// Why not one Map of ids: a string key set and deleted per reservation cost as much as half a
// charge set; the ring costs an array write. Records expire in the order of the instant they
// expire, a few per reservation made (as keys are swept), so memory follows the reservations in
// use. A settled or cancelled record stays, emptied, as a tombstone until it expires, so that a
// second settle says what happened: at most `max` tombstones are kept, the oldest forgotten first.
import type { AtomicReport } from "./charge";
import type { QuotaKey } from "./key";

/** The longest a reservation id may be, in UTF-16 code units. */
export const MAX_RESERVATION_ID = 256;

/** Entries a reservation keeps per charge, in `parts`: the key, the limit's name, the kind, the cost, the window's end. */
export const PART_STRIDE = 5;

/** Where a reservation stands. */
export const OPEN = 0;
export const SETTLED = 1;
export const CANCELLED = 2;
/** Dropped from the records: expired, or a tombstone forgotten. */
const GONE = 3;
type Status = typeof OPEN | typeof SETTLED | typeof CANCELLED | typeof GONE;

/** Records past expiry dropped each time a reservation is made. */
const EXPIRE_STEP = 2;

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

/** One reservation as the engine keeps it. */
export class Reservation {
  /** Where it stands: open, settled, cancelled (a tombstone), or gone. */
  status: Status = OPEN;

  constructor(
    readonly id: string,
    /** The number the engine made its id from, or 0 for a caller's id. */
    readonly seq: number,
    /** The engine's instant (ms) at which it expires: from then on it is settled as reserved. */
    readonly expiresAt: number,
    /** Per charge, {@link PART_STRIDE} entries: key, limit name, kind, cost, the window's end (0 for other kinds). */
    public parts: unknown[],
  ) {}

  /** How many charges it holds. */
  get size(): number {
    return this.parts.length / PART_STRIDE;
  }

  /** The key of charge `i`. */
  key(i: number): QuotaKey {
    return this.parts[i * PART_STRIDE] as QuotaKey;
  }

  /** The limit named by charge `i`. */
  limit(i: number): string {
    return this.parts[i * PART_STRIDE + 1] as string;
  }
}

const EMPTY: unknown[] = [];

/** The ring's first length (at most): the latest reservations an engine finds by number without growing it. */
const FIRST_RING = 1_024;

/** The sequence number of an id the engine made (`#` and up to 15 digits), or -1. */
function seqOf(id: string): number {
  const n = id.length;
  if (n < 2 || n > 16 || id.charCodeAt(0) !== 35) return -1;
  let seq = 0;
  for (let i = 1; i < n; i++) {
    const digit = id.charCodeAt(i) - 48;
    if (digit < 0 || digit > 9) return -1;
    seq = seq * 10 + digit;
  }
  return seq;
}

export class Reservations {
  // Records the engine named, by sequence number: at `seq & mask`, or in `#older` once a later one
  // took that place while it was still open.
  #ring: (Reservation | undefined)[];
  #mask: number;
  readonly #older = new Map<number, Reservation>();
  // Records the caller named.
  readonly #named = new Map<string, Reservation>();
  /** Records kept, open or tombstones. */
  #kept = 0;
  #open = 0;
  // Every record by the instant it expires, closed and forgotten ones included until their turn
  // comes. Most arrive in that order (one time to live, a clock that does not step back), and wait
  // in a queue; the others in a binary min-heap. Both are rebuilt from the records when more than
  // half of what they hold is stale, so they hold a few times `max` at most.
  #queue: Reservation[] = [];
  #first = 0;
  #heap: Reservation[] = [];
  // Tombstones of named records in the order they closed, a ring of at most `max`: past it the
  // oldest is forgotten. (The engine's own ids are forgotten as the ring of numbers turns.)
  #closed: (Reservation | undefined)[] = [];
  #head = 0;
  #count = 0;
  #made = 0;

  /**
   * @param max - the most open reservations, and the most tombstones kept
   */
  constructor(readonly max: number) {
    this.#ring = new Array<Reservation | undefined>(this.#firstRing());
    this.#mask = this.#ring.length - 1;
  }

  // The ring's first length: FIRST_RING, or the largest power of two within `max` if less.
  #firstRing(): number {
    let n = 1;
    while (n * 2 <= Math.min(FIRST_RING, this.max)) n *= 2;
    return n;
  }

  /** Reservations open (made and not yet settled, cancelled or expired). */
  get open(): number {
    return this.#open;
  }

  /** The record of `id` that has not expired at `t`, open or closed; a record past expiry is dropped. */
  find(id: string, t: number): Reservation | undefined {
    const seq = seqOf(id);
    let r: Reservation | undefined;
    if (seq < 0) r = this.#named.get(id);
    else {
      r = this.#ring[seq & this.#mask];
      if (r === undefined || r.seq !== seq) r = this.#older.get(seq);
      if (r !== undefined && r.id !== id) r = undefined; // "#01" is not "#1"
    }
    if (r === undefined || t < r.expiresAt) return r;
    this.#drop(r);
    return undefined;
  }

  /**
   * Whether another reservation may open at `t`: drops a few records past expiry (every one, when
   * the open ones are at `max`), then compares.
   */
  room(t: number): boolean {
    if (this.#due(t)) this.expire(t, EXPIRE_STEP);
    if (this.#open < this.max) return true;
    this.expire(t, Infinity);
    return this.#open < this.max;
  }

  // Whether a record waits whose expiry is at or before `t`.
  #due(t: number): boolean {
    const queue = this.#queue;
    return (
      (this.#first < queue.length && queue[this.#first].expiresAt <= t) ||
      (this.#heap.length > 0 && this.#heap[0].expiresAt <= t)
    );
  }

  /**
   * Keeps a reservation of `parts` open until `expiresAt`, under `id` or, when that is undefined,
   * under an id made for it: `#` and a number, never one in use (the number only grows, and a
   * caller's id may not start with `#`).
   */
  add(id: string | undefined, expiresAt: number, parts: unknown[], t: number): Reservation {
    let r: Reservation;
    if (id === undefined) {
      const seq = ++this.#made;
      r = new Reservation(`#${seq}`, seq, expiresAt, parts);
      this.#place(r, t);
    } else {
      r = new Reservation(id, 0, expiresAt, parts);
      this.#named.set(id, r);
    }
    this.#kept++;
    this.#open++;
    const waiting = this.#queue.length - this.#first + this.#heap.length;
    if (waiting > 64 && waiting > 2 * this.#kept) this.#rebuild();
    const queue = this.#queue;
    if (this.#first === queue.length || queue[queue.length - 1].expiresAt <= r.expiresAt) queue.push(r);
    else this.#push(r);
    return r;
  }

  // Puts a record the engine named in the ring. The record in its place goes: forgotten if it is
  // a tombstone or has expired; if it is open, the ring grows (up to `max`) or, at `max`, it moves
  // to the Map of older ones.
  #place(r: Reservation, t: number): void {
    for (;;) {
      const at = r.seq & this.#mask;
      const held = this.#ring[at];
      if (held === undefined || held.status === GONE) {
        this.#ring[at] = r;
        return;
      }
      if (held.status !== OPEN || !(t < held.expiresAt)) {
        this.#drop(held);
        this.#ring[at] = r;
        return;
      }
      if (this.#ring.length * 2 > this.max) {
        this.#ring[at] = r;
        this.#older.set(held.seq, held);
        return;
      }
      this.#growRing();
    }
  }

  // The ring twice as long, every record at its place by the longer mask.
  #growRing(): void {
    const old = this.#ring;
    const ring = new Array<Reservation | undefined>(old.length * 2);
    const mask = ring.length - 1;
    for (const r of old) if (r !== undefined && r.status !== GONE) ring[r.seq & mask] = r;
    this.#ring = ring;
    this.#mask = mask;
  }

  /** Marks `r` settled or cancelled: it stays as a tombstone until it expires, emptied. */
  close(r: Reservation, status: typeof SETTLED | typeof CANCELLED): void {
    r.status = status;
    r.parts = EMPTY;
    this.#open--;
    if (r.seq !== 0) {
      // Forgotten as the ring turns, or at once if it was moved out of it.
      if (this.#ring[r.seq & this.#mask] !== r) this.#drop(r);
      return;
    }
    if (this.#count === this.max) {
      // The oldest tombstone makes room (if it is still kept: it may have expired since).
      const ring = this.#closed;
      this.#drop(ring[this.#head] as Reservation);
      ring[this.#head] = r;
      this.#head = (this.#head + 1) % this.max;
      return;
    }
    if (this.#count === this.#closed.length) this.#grow();
    const ring = this.#closed;
    ring[(this.#head + this.#count) % ring.length] = r;
    this.#count++;
  }

  /**
   * Drops up to `budget` records whose expiry is at or before `t`: an open one is settled as
   * reserved (its charges stand), a tombstone is forgotten. Returns how many open ones expired.
   */
  expire(t: number, budget: number): number {
    let expired = 0;
    for (let n = 0; n < budget; n++) {
      const queue = this.#queue;
      const heap = this.#heap;
      const early = this.#first < queue.length ? queue[this.#first] : undefined;
      const top = heap.length > 0 ? heap[0] : undefined;
      let r: Reservation;
      if (early !== undefined && early.expiresAt <= t && (top === undefined || early.expiresAt <= top.expiresAt)) {
        r = early;
        queue[this.#first++] = EXPIRED;
        // Taken from the front: once that is most of the array, the rest moves to its start.
        if (this.#first === queue.length) {
          queue.length = 0;
          this.#first = 0;
        } else if (this.#first >= 1024 && 2 * this.#first >= queue.length) {
          queue.copyWithin(0, this.#first);
          queue.length -= this.#first;
          this.#first = 0;
        }
      } else if (top !== undefined && top.expiresAt <= t) r = this.#pop();
      else break;
      if (r.status === OPEN) expired++;
      this.#drop(r);
    }
    return expired;
  }

  /** Forgets every reservation. */
  clear(): void {
    this.#ring = new Array<Reservation | undefined>(this.#firstRing());
    this.#mask = this.#ring.length - 1;
    this.#older.clear();
    this.#named.clear();
    this.#kept = 0;
    this.#open = 0;
    this.#queue = [];
    this.#first = 0;
    this.#heap = [];
    this.#closed = [];
    this.#head = 0;
    this.#count = 0;
  }

  // Drops `r` from the records, if it is still kept (a record dropped is marked gone).
  #drop(r: Reservation): void {
    if (r.status === GONE) return;
    if (r.seq === 0) this.#named.delete(r.id);
    else if (this.#ring[r.seq & this.#mask] === r) this.#ring[r.seq & this.#mask] = undefined;
    else this.#older.delete(r.seq);
    if (r.status === OPEN) this.#open--;
    this.#kept--;
    r.status = GONE;
    r.parts = EMPTY;
  }

  // The ring of tombstones, twice as long (at most `max`), its entries from the oldest on.
  #grow(): void {
    const ring = this.#closed;
    const next = new Array<Reservation | undefined>(Math.min(this.max, Math.max(16, ring.length * 2)));
    for (let i = 0; i < this.#count; i++) next[i] = ring[(this.#head + i) % ring.length];
    this.#closed = next;
    this.#head = 0;
  }

  #push(r: Reservation): void {
    const h = this.#heap;
    let i = h.length;
    h.push(r);
    while (i > 0) {
      const up = (i - 1) >> 1;
      if (h[up].expiresAt <= r.expiresAt) break;
      h[i] = h[up];
      i = up;
    }
    h[i] = r;
  }

  #pop(): Reservation {
    const heap = this.#heap;
    const top = heap[0];
    const last = heap.pop() as Reservation;
    const n = heap.length;
    if (n > 0) {
      let i = 0;
      for (;;) {
        let child = 2 * i + 1;
        if (child >= n) break;
        if (child + 1 < n && heap[child + 1].expiresAt < heap[child].expiresAt) child++;
        if (heap[child].expiresAt >= last.expiresAt) break;
        heap[i] = heap[child];
        i = child;
      }
      heap[i] = last;
    }
    return top;
  }

  // The queue and the heap anew from the records kept: one sorted array is both in order and a heap.
  #rebuild(): void {
    const kept: Reservation[] = [...this.#named.values(), ...this.#older.values()];
    for (const r of this.#ring) if (r !== undefined && r.status !== GONE) kept.push(r);
    this.#queue = kept.sort((a, b) => a.expiresAt - b.expiresAt);
    this.#first = 0;
    this.#heap = [];
  }
}

// A queue's place once its record has been taken out.
const EXPIRED = new Reservation("", 0, -Infinity, EMPTY);
EXPIRED.status = GONE;
