// The reservations of one engine: each a record of what a reserved charge set charged (its keys,
// limits, kinds and costs, and for a window the window it was counted in), its id and the instant
// it expires. Records are found by id in a Map; they expire through a binary heap ordered by that
// instant, a few per reservation made (as keys are swept), so memory follows the reservations in
// use. A settled or cancelled record stays, emptied, as a tombstone until it expires, so that a
// second settle says what happened; at most `max` tombstones are kept, the oldest forgotten first.
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
 * | `"replayed"` | yes | an open reservation has this id and these charges: its first answer again, nothing charged |
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
    /** The engine's instant (ms) at which it expires: from then on it is settled as reserved. */
    readonly expiresAt: number,
    /** Per charge, {@link PART_STRIDE} entries: key, limit name, kind, cost, the window's end (0 for other kinds). */
    public parts: unknown[],
    /** Its first answer, for a repeat with the same id and charges; dropped when it closes. */
    public report: ReserveReport | undefined,
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

export class Reservations {
  readonly #records = new Map<string, Reservation>();
  #open = 0;
  // Every record by the instant it expires (a binary min-heap), closed ones and forgotten ones
  // included until their turn comes; rebuilt when more than half of it is stale.
  #heap: Reservation[] = [];
  // Tombstones in the order they closed, a ring of at most `max`: past it the oldest is forgotten.
  #closed: (Reservation | undefined)[] = [];
  #head = 0;
  #count = 0;
  #made = 0;

  /**
   * @param max - the most open reservations, and the most tombstones kept
   */
  constructor(readonly max: number) {}

  /** Reservations open (made and not yet settled, cancelled or expired). */
  get open(): number {
    return this.#open;
  }

  /** The record of `id` that has not expired at `t`, open or closed; a record past expiry is dropped. */
  find(id: string, t: number): Reservation | undefined {
    const r = this.#records.get(id);
    if (r === undefined || t < r.expiresAt) return r;
    this.#drop(r);
    return undefined;
  }

  /**
   * Whether another reservation may open at `t`: drops a few records past expiry (every one, when
   * the open ones are at `max`), then compares.
   */
  room(t: number): boolean {
    this.expire(t, EXPIRE_STEP);
    if (this.#open < this.max) return true;
    this.expire(t, Infinity);
    return this.#open < this.max;
  }

  /** An id for a reservation the caller named none for: `#` and a number, not in use. */
  makeId(): string {
    let id = `#${++this.#made}`;
    while (this.#records.has(id)) id = `#${++this.#made}`;
    return id;
  }

  /** Keeps `r`, open. */
  add(r: Reservation): void {
    this.#records.set(r.id, r);
    this.#open++;
    this.#push(r);
  }

  /** Marks `r` settled or cancelled: it stays as a tombstone until it expires, emptied. */
  close(r: Reservation, status: typeof SETTLED | typeof CANCELLED): void {
    r.status = status;
    r.parts = EMPTY;
    r.report = undefined;
    this.#open--;
    if (this.#count === this.max) {
      // The oldest tombstone makes room (if it is still kept: it may have expired since).
      const ring = this.#closed;
      const oldest = ring[this.#head] as Reservation;
      if (this.#records.get(oldest.id) === oldest) this.#drop(oldest);
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
    const heap = this.#heap;
    let expired = 0;
    for (let n = 0; n < budget && heap.length > 0 && heap[0].expiresAt <= t; n++) {
      const r = this.#pop();
      if (this.#records.get(r.id) !== r) continue; // forgotten already
      if (r.status === OPEN) expired++;
      this.#drop(r);
    }
    return expired;
  }

  /** Forgets every reservation. */
  clear(): void {
    this.#records.clear();
    this.#open = 0;
    this.#heap = [];
    this.#closed = [];
    this.#head = 0;
    this.#count = 0;
  }

  #drop(r: Reservation): void {
    if (this.#records.get(r.id) === r) this.#records.delete(r.id);
    if (r.status === OPEN) this.#open--;
    r.status = GONE;
    r.parts = EMPTY;
    r.report = undefined;
  }

  // The ring, twice as long (at most `max`), its entries from the oldest on.
  #grow(): void {
    const ring = this.#closed;
    const next = new Array<Reservation | undefined>(Math.min(this.max, Math.max(16, ring.length * 2)));
    for (let i = 0; i < this.#count; i++) next[i] = ring[(this.#head + i) % ring.length];
    this.#closed = next;
    this.#head = 0;
  }

  #push(r: Reservation): void {
    const heap = this.#heap;
    // Stale entries (records dropped before their turn) past half the heap: rebuild from the kept ones.
    if (heap.length > 64 && heap.length > 2 * this.#records.size) this.#rebuild();
    let i = this.#heap.length;
    this.#heap.push(r);
    const h = this.#heap;
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

  #rebuild(): void {
    const kept = [...this.#records.values()].sort((a, b) => a.expiresAt - b.expiresAt);
    this.#heap = kept; // a sorted array is a heap
  }
}
