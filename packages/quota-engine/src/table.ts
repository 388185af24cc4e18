// The state of every key of one limit and one algorithm, in typed arrays: each key has a slot
// (two numbers, the amount and the instant of algorithms.ts, side by side in `data`, so a key's
// state sits in one cache line), and an open-addressing hash index maps the key's id to its slot.
// Freed slots are reused before the arrays grow; they never shrink.
//
// Why not a Map from id to slot: keys that come and go (a client back after its bucket refilled)
// cost a lookup that misses, an insertion and, once the key is idle again, a deletion per visit,
// and a Map pays for each in hashing the string, chaining and rehashing. Here the id's hash is
// computed once, when its QuotaKey is made (key.ts); a lookup is a probe or two in an Int32Array
// and a deletion shifts the next few entries back (linear probing, no tombstones), nothing
// allocated either way.
//
// A key object also remembers the slot it was last found at, with the table's identity (a token)
// and its stamp at the time. The stamp changes whenever the table frees a slot, the only way a
// slot can come to hold another key's state, so while it stands a hint that carries it is the
// key's slot: a check with a key the caller reuses reads its state and nothing else (at a million
// keys, reading `ids` to confirm the hint was a cache miss of its own). A hint from before a slot
// was freed is confirmed by one read of `ids`, and otherwise the key is looked up.
//
// Idle keys are dropped by a sweep that walks the slots by index, a few per call, resuming where
// it stopped: it reads the typed array in order and allocates nothing.
import { idle } from "./algorithms";
import { cacheSlot, cachedAge, cachedFor, cachedSlot, hashId, keyHash } from "./key";
import type { QuotaKey } from "./key";
import type { Kind } from "./kinds";
import type { Rule } from "./rule";

const FIRST_SLOTS = 64;

/** A table's stamp stays below this (a small integer); reaching it, the table takes a new token. */
const STAMP_LIMIT = 2 ** 30;

/** Numbers of state per slot, every kind alike: the amount, then the instant. */
export const STRIDE = 2;

export class SlotTable {
  /** The id each slot holds, by slot; undefined for a free slot. Grows with `data`. */
  ids: (string | undefined)[] = new Array<string | undefined>(FIRST_SLOTS);
  /** Slot `s` keeps its amount at `data[2s]` and its instant at `data[2s + 1]`. */
  data = new Float64Array(FIRST_SLOTS * STRIDE);
  /** Keys with state here. */
  size = 0;
  // Each slot's id hash (hashId), so that probing and shifting never read a string.
  #hashes = new Int32Array(FIRST_SLOTS);
  // The hash index: slot + 1 at a key's position, 0 where empty; a power of two long, at most half
  // full, so a probe ends within a few steps.
  #index = new Int32Array(2 * FIRST_SLOTS);
  #mask = 2 * FIRST_SLOTS - 1;
  #free = new Int32Array(16);
  #freeCount = 0;
  /** Slots ever used: every slot from here on is free and untouched. */
  #top = 0;
  /** The next slot a sweep examines. */
  #cursor = 0;
  // This table's identity for the hints keys keep, and its stamp: see the top of this file.
  #token: object = {};
  #stamp = 0;

  /**
   * @param stampLimit - the stamp stays below this; reaching it, the table takes a new token (a
   *   small integer, so that a key's copy of it stays one; smaller only in tests of the turn)
   * @param slots - the slots to start with, a power of two (an override's table holds one key)
   */
  constructor(
    readonly kind: Kind,
    /** The limit's numbers: replaced with it when the limit is. */
    public rule: Rule,
    readonly stampLimit = STAMP_LIMIT,
    slots = FIRST_SLOTS,
  ) {
    // Replaced, not initialised otherwise: every table's fields keep one layout for the hot path.
    if (slots !== FIRST_SLOTS) {
      this.ids = new Array<string | undefined>(slots);
      this.data = new Float64Array(slots * STRIDE);
      this.#hashes = new Int32Array(slots);
      this.#index = new Int32Array(2 * slots);
      this.#mask = 2 * slots - 1;
      this.#free = new Int32Array(slots);
    }
  }

  /** The slot of `key`, or -1 when it has no state here. */
  find(key: QuotaKey): number {
    const hint = cachedSlot(key);
    return cachedFor(key, this.#token, this.#stamp) ? hint : this.#confirm(key, hint);
  }

  // The slot of `key`, whose hint is from another table or from before a slot here was freed. The
  // hint is read (one read of `ids`) only if it is this table's and fewer slots were freed since
  // than twice the table holds: after that many its slot has most likely been given to another
  // key, as it has for a key that comes back after its state was dropped, and reading it would be
  // cache misses for nothing (the slot, and the other key's id to compare) before the lookup. A
  // hint is never needed for a right answer: the lookup finds any key.
  #confirm(key: QuotaKey, hint: number): number {
    const id = key.id;
    const recent = cachedAge(key, this.#token, this.#stamp) < 2 * this.#top;
    const slot = recent && this.ids[hint] === id ? hint : this.#lookup(id, keyHash(key));
    if (slot >= 0) cacheSlot(key, slot, this.#token, this.#stamp);
    return slot;
  }

  /** The slot of the key whose id is `id`, or -1. */
  slotOf(id: string): number {
    return this.#lookup(id, hashId(id));
  }

  #lookup(id: string, hash: number): number {
    const index = this.#index;
    const mask = this.#mask;
    for (let at = hash & mask; ; at = (at + 1) & mask) {
      const entry = index[at];
      if (entry === 0) return -1;
      if (this.#hashes[entry - 1] === hash && this.ids[entry - 1] === id) return entry - 1;
    }
  }

  /** A slot for `key`, which must not be in the table yet. */
  add(key: QuotaKey): number {
    const slot = this.#insert(key.id, keyHash(key));
    cacheSlot(key, slot, this.#token, this.#stamp);
    return slot;
  }

  /** A slot for `id`, which must not be in the table yet. */
  insert(id: string): number {
    return this.#insert(id, hashId(id));
  }

  #insert(id: string, hash: number): number {
    let slot: number;
    if (this.#freeCount > 0) slot = this.#free[--this.#freeCount];
    else {
      slot = this.#top++;
      if (slot === this.#hashes.length) this.#growSlots();
    }
    this.ids[slot] = id;
    this.#hashes[slot] = hash;
    if (++this.size * 2 > this.#index.length) this.#reindex(this.#index.length * 2);
    else this.#place(slot, hash);
    return slot;
  }

  // Puts `slot` at the first empty position from its hash on.
  #place(slot: number, hash: number): void {
    const index = this.#index;
    const mask = this.#mask;
    let at = hash & mask;
    while (index[at] !== 0) at = (at + 1) & mask;
    index[at] = slot + 1;
  }

  // Twice the slots, sized exactly (pushing would leave up to half again spare).
  #growSlots(): void {
    const n = this.#hashes.length * 2;
    const data = new Float64Array(n * STRIDE);
    data.set(this.data);
    this.data = data;
    const hashes = new Int32Array(n);
    hashes.set(this.#hashes);
    this.#hashes = hashes;
    const ids = new Array<string | undefined>(n);
    for (let i = 0; i < this.#top; i++) ids[i] = this.ids[i];
    this.ids = ids;
  }

  // A new index of `length` positions holding every slot in use.
  #reindex(length: number): void {
    this.#index = new Int32Array(length);
    this.#mask = length - 1;
    for (let slot = 0; slot < this.#top; slot++)
      if (this.ids[slot] !== undefined) this.#place(slot, this.#hashes[slot]);
  }

  /** Forgets the key at `slot` and keeps the slot for reuse. */
  remove(slot: number): void {
    const index = this.#index;
    const mask = this.#mask;
    let hole = this.#hashes[slot] & mask;
    while (index[hole] !== slot + 1) hole = (hole + 1) & mask;
    // Shift back every later entry of the run that may not sit past the hole, so that a probe
    // from any of their hashes still meets them before an empty position.
    for (let at = (hole + 1) & mask; index[at] !== 0; at = (at + 1) & mask) {
      const entry = index[at];
      if (((at - (this.#hashes[entry - 1] & mask)) & mask) >= ((at - hole) & mask)) {
        index[hole] = entry;
        hole = at;
      }
    }
    index[hole] = 0;
    this.ids[slot] = undefined;
    this.size--;
    // Every hint taken before this moment may name this slot: none is trusted unread any more.
    if (++this.#stamp === this.stampLimit) {
      this.#stamp = 0;
      this.#token = {};
    }
    if (this.#freeCount === this.#free.length) {
      const grown = new Int32Array(this.#free.length * 2);
      grown.set(this.#free);
      this.#free = grown;
    }
    this.#free[this.#freeCount++] = slot;
  }

  /** Calls `f` with every key's id and slot, in slot order. */
  each(f: (id: string, slot: number) => void): void {
    for (let slot = 0; slot < this.#top; slot++) {
      const id = this.ids[slot];
      if (id !== undefined) f(id, slot);
    }
  }

  /**
   * Examines up to `budget` slots from where the last sweep stopped, dropping the keys idle at
   * `t`. Returns how many it dropped; `visited` says how many slots it examined (free ones
   * included), and `passed` whether it reached the end of the table (the next sweep starts a new
   * pass from the first slot).
   */
  sweep(t: number, budget: number): number {
    const { rule, kind, data, ids } = this;
    const top = this.#top;
    const start = this.#cursor;
    const end = top - start < budget ? top : start + budget;
    let dropped = 0;
    for (let slot = start; slot < end; slot++) {
      if (ids[slot] !== undefined && idle(kind, rule, data[slot * STRIDE], data[slot * STRIDE + 1], t)) {
        this.remove(slot);
        dropped++;
      }
    }
    this.visited = end - start;
    this.passed = end >= top;
    this.#cursor = this.passed ? 0 : end;
    return dropped;
  }

  /** Whether a sweep pass is under way (the next sweep resumes mid-table). */
  get midway(): boolean {
    return this.#cursor !== 0;
  }

  /** How many slots the last {@link SlotTable.sweep} examined. */
  visited = 0;
  /** Whether the last {@link SlotTable.sweep} reached the end of the table. */
  passed = false;
}
