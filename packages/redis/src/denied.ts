// A bounded cache of refused keys: a key refused for `cost` with `retryAfter` r stays refused
// for any cost at least as large until r has passed, whatever other instances do (they can only
// take more), so answering from here is exact. Bounded: at the ceiling the oldest entry goes
// (upstash's cache is an unbounded Map).

interface Entry {
  /** On the monotonic clock (ms): when the refusal ends. */
  readonly until: number;
  readonly cost: number;
  readonly remaining: number;
  /** The store's resetAfter, counted from `at`. */
  readonly reset: number;
  readonly at: number;
}

/** Refused keys until their retry instant, at most `size` of them. */
export class DeniedCache {
  readonly size: number;
  readonly #map = new Map<string, Entry>();

  constructor(size: number) {
    this.size = size;
  }

  /** How many entries are held (expired ones included until met). */
  get count(): number {
    return this.#map.size;
  }

  /** Remembers that `key` was refused `cost` at `at` for `retryAfter` ms. */
  add(key: string, at: number, cost: number, remaining: number, retryAfter: number, reset: number): void {
    if (this.size === 0 || !(retryAfter > 0) || retryAfter === Infinity) return;
    const map = this.#map;
    map.delete(key);
    if (map.size >= this.size) {
      const oldest = map.keys().next();
      if (oldest.done !== true) map.delete(oldest.value);
    }
    map.set(key, { until: at + retryAfter, cost, remaining, reset, at });
  }

  /** The entry refusing `cost` for `key` at `now`, if one is in force. */
  get(key: string, now: number, cost: number): Entry | undefined {
    const entry = this.#map.get(key);
    if (entry === undefined) return undefined;
    if (now >= entry.until) {
      this.#map.delete(key);
      return undefined;
    }
    return cost >= entry.cost ? entry : undefined;
  }

  /** Forgets `key` (after it was admitted). */
  delete(key: string): void {
    this.#map.delete(key);
  }
}
