// The state of every key of one limit and one algorithm: a Map from the key's id to a slot, and
// the slots' numbers side by side in one Float64Array (`stride` numbers a slot, so a key's state
// sits in one cache line). Freed slots are reused before the array grows; it never shrinks.
//
// A key object remembers the slot it was last found at (key.ts), and `ids` records which id
// each slot holds, so a check with a key the caller reuses confirms that hint with one read of
// `ids` beside the read of `data`, instead of a Map lookup: at a million keys every step of a
// lookup (the id's hash, the bucket, the entry, a colliding key) is a cache miss.
//
// Idle keys are dropped by a sweep that walks the Map with a live iterator, a few entries per
// call: Map iterators survive insertions, deletions and rehashing, so the sweep resumes in
// insertion order wherever it stopped and never stops the world.
import { cacheSlot, cachedSlot } from "./key";
import type { QuotaKey } from "./key";
import { STRIDE, idle } from "./kinds";
import type { Kind } from "./kinds";
import type { Rule } from "./rule";

const FIRST_SLOTS = 64;

export class SlotTable {
  readonly map = new Map<string, number>();
  /** The id each slot holds, by slot; undefined for a free slot. Grows with `data`. */
  ids: (string | undefined)[] = new Array<string | undefined>(FIRST_SLOTS);
  readonly stride = STRIDE;
  data: Float64Array;
  #free: Int32Array = new Int32Array(0);
  #freeCount = 0;
  #top = 0;
  #cursor: IterableIterator<[string, number]> | undefined;

  constructor(
    readonly kind: Kind,
    readonly rule: Rule,
  ) {
    this.data = new Float64Array(FIRST_SLOTS * STRIDE);
  }

  /** The slot of `key`, or undefined when it has no state here. */
  find(key: QuotaKey): number | undefined {
    const id = key.id;
    const hint = cachedSlot(key);
    if (hint >= 0 && hint < this.ids.length && this.ids[hint] === id) return hint;
    const slot = this.map.get(id);
    if (slot !== undefined) cacheSlot(key, slot);
    return slot;
  }

  /** A slot for `key`, which must not be in the table yet. */
  add(key: QuotaKey): number {
    const slot = this.insert(key.id);
    cacheSlot(key, slot);
    return slot;
  }

  /** A slot for `id`, which must not be in the table yet. */
  insert(id: string): number {
    let slot: number;
    if (this.#freeCount > 0) slot = this.#free[--this.#freeCount];
    else {
      slot = this.#top++;
      if ((slot + 1) * this.stride > this.data.length) {
        const grown = new Float64Array(this.data.length * 2);
        grown.set(this.data);
        this.data = grown;
        // Sized exactly, as the data are (pushing would leave up to half again spare).
        const ids = new Array<string | undefined>(this.ids.length * 2);
        for (let i = 0; i < slot; i++) ids[i] = this.ids[i];
        this.ids = ids;
      }
    }
    this.map.set(id, slot);
    this.ids[slot] = id;
    return slot;
  }

  /** Forgets `id`, whose slot is `slot`, and keeps the slot for reuse. */
  remove(id: string, slot: number): void {
    this.map.delete(id);
    this.ids[slot] = undefined;
    if (this.#freeCount === this.#free.length) {
      const grown = new Int32Array(Math.max(16, this.#free.length * 2));
      grown.set(this.#free);
      this.#free = grown;
    }
    this.#free[this.#freeCount++] = slot;
  }

  /**
   * Examines up to `budget` entries from where the last sweep stopped, dropping those idle at
   * `t`. Returns how many it dropped; `visited` says how many it examined, and `passed` whether
   * it reached the end of the table (the next sweep starts a new pass).
   */
  sweep(t: number, budget: number): number {
    const rule = this.rule;
    const kind = this.kind;
    const data = this.data;
    const stride = this.stride;
    let dropped = 0;
    let visited = 0;
    this.passed = false;
    const cursor = (this.#cursor ??= this.map.entries());
    while (visited < budget) {
      const step: IteratorResult<[string, number]> = cursor.next();
      if (step.done === true) {
        this.#cursor = undefined;
        this.passed = true;
        break;
      }
      visited++;
      const [id, slot] = step.value;
      const at = slot * stride;
      if (idle(kind, rule, data[at], data[at + 1], t)) {
        this.remove(id, slot);
        dropped++;
      }
    }
    this.visited = visited;
    return dropped;
  }

  /** Whether a sweep pass is under way (the next sweep resumes mid-table). */
  get midway(): boolean {
    return this.#cursor !== undefined;
  }

  /** How many entries the last {@link SlotTable.sweep} examined. */
  visited = 0;
  /** Whether the last {@link SlotTable.sweep} reached the end of the table. */
  passed = false;
}
