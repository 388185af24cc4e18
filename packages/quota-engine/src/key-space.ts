// Which keys have state, and how many may: the ceiling (`maxKeys`), the sweeping that drops keys
// whose state has become a fresh key's, and the counts the health checks report. The state itself
// lives in the limits' slot tables (table.ts); this is what spans all of them.
import type { QuotaKey } from "./key";
import type { LimitState } from "./limit-state";
import type { SlotTable } from "./table";

/** What a {@link QuotaEngine.sweep} did. */
export interface SweepReport {
  /** Slots examined. */
  readonly visited: number;
  /** Idle keys dropped. */
  readonly dropped: number;
  /** Keys with state afterwards. */
  readonly keys: number;
  /** Reservations past their time to live dropped (each settled as reserved). */
  readonly expired: number;
}

/** Slots a sweep examines to make room when `maxKeys` is reached, before refusing. */
const RECLAIM_BUDGET = 256;

export class KeySpace {
  /** Keys with state, across every limit and algorithm. */
  keys = 0;
  /** Idle keys dropped by sweeping, ever. */
  dropped = 0;
  /** Keys refused for want of room (`key_limit`), ever. */
  refused = 0;
  /** Slots the last {@link KeySpace.sweep} examined. */
  visited = 0;
  // The table, by position among all tables, that the sweep works on.
  #turn = 0;

  constructor(
    readonly maxKeys: number,
    readonly sweepStep: number,
  ) {}

  /** Whether `more` new keys fit under `maxKeys`. */
  fits(more: number): boolean {
    return this.keys + more <= this.maxKeys;
  }

  /**
   * A slot in `table` for `key`, new to it, or -1 when `maxKeys` is reached and a bounded sweep
   * of every limit's tables at `t` frees no room (counted as refused).
   */
  add(table: SlotTable, key: QuotaKey, limits: ReadonlyMap<string, LimitState>, t: number): number {
    if (this.keys >= this.maxKeys) {
      this.reclaim(limits.values(), t);
      if (this.keys >= this.maxKeys) {
        this.refused++;
        return -1;
      }
    }
    return this.place(table, key);
  }

  /** A slot in `table` for `key`, new to it, room for it known. */
  place(table: SlotTable, key: QuotaKey): number {
    this.keys++;
    return table.add(key);
  }

  /** Sweeps a bounded number of slots at `t`, to make room under `maxKeys`. */
  reclaim(limits: Iterable<LimitState>, t: number): void {
    this.sweep(limits, t, RECLAIM_BUDGET);
  }

  /** The bounded sweep that follows a new key in `table`: `sweepStep` slots of that same table. */
  stepAfterAdd(table: SlotTable, t: number): void {
    if (this.sweepStep === 0) return;
    const dropped = table.sweep(t, this.sweepStep);
    this.keys -= dropped;
    this.dropped += dropped;
  }

  /**
   * Examines up to `budget` slots at `t`, resuming where the last sweep stopped and moving from
   * table to table, dropping keys whose state equals a fresh key's. Returns how many it dropped;
   * {@link KeySpace.visited} says how many slots it examined.
   */
  sweep(limits: Iterable<LimitState>, t: number, budget: number): number {
    const tables: SlotTable[] = [];
    for (const limit of limits) {
      for (const table of limit.tables) if (table !== undefined) tables.push(table);
      if (limit.overrides !== undefined)
        for (const o of limit.overrides.values())
          for (const table of o.tables) if (table !== undefined) tables.push(table);
    }
    let visited = 0;
    let dropped = 0;
    if (tables.length > 0) {
      // Each table at most once, plus the first again if it was resumed midway (to cover what came
      // before its cursor).
      const turns = tables.length + (tables[this.#turn % tables.length].midway ? 1 : 0);
      for (let turn = 0; turn < turns && visited < budget; turn++) {
        const table = tables[this.#turn % tables.length];
        dropped += table.sweep(t, budget - visited);
        visited += table.visited;
        if (table.passed) this.#turn = (this.#turn + 1) % tables.length;
      }
    }
    this.keys -= dropped;
    this.dropped += dropped;
    this.visited = visited;
    return dropped;
  }

  /** Forgets `keys` keys whose state went with a limit removed. */
  forget(keys: number): void {
    this.keys -= keys;
  }

  /** Takes on the key count of restored state, the sweep starting over. */
  restore(keys: number): void {
    this.keys = keys;
    this.#turn = 0;
  }
}
