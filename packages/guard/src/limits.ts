import { Bucket, Gcra, Period, Sliding } from "@tideward/limiters";
import { check } from "@tideward/time/internal";
import type { Span } from "@tideward/time";
import { policyName } from "./ratelimit-fields";

/** Which limiter a per-key {@link Limit} runs. */
export type LimitKind = "bucket" | "sliding" | "period" | "gcra";

/**
 * A per-key limit for {@link admit}: `quota` units per `window` for each client key, advertised
 * as `RateLimit-Policy: "name";q=quota;w=window`.
 *
 * | kind | admits |
 * | --- | --- |
 * | `"bucket"` | bursts up to `quota`, refilled at `quota` per `window` (a `Bucket`) |
 * | `"gcra"` | the same rate and burst, kept as one instant (a `Gcra`) |
 * | `"sliding"` | at most `quota` in any `window`-long stretch, exactly (a `Sliding`) |
 * | `"period"` | at most `quota` per fixed `window` opened by the first request (a `Period`) |
 */
export interface Limit {
  /** The policy's name in the fields: printable ASCII. */
  readonly name: string;
  /** Units per window, a whole number from 1. */
  readonly quota: number;
  /** The window, in milliseconds, above 0 (advertised in whole seconds, rounded up). */
  readonly window: Span;
  /** @defaultValue "bucket" */
  readonly kind?: LimitKind;
}

type Limiter = Bucket | Gcra | Sliding | Period;

interface Checked {
  readonly name: string;
  readonly quota: number;
  readonly window: number;
  readonly kind: LimitKind;
}

/** Checks the limits once, at construction. */
export function checkLimits(limits: unknown, owner: string): readonly Checked[] {
  if (!Array.isArray(limits))
    throw new TypeError(
      `${owner} limits must be an array of { name, quota, window, kind }, got ${check.describe(limits)}`,
    );
  const seen = new Set<string>();
  return limits.map((l: unknown, i) => {
    const o = check.options(l as Limit, ["name", "quota", "window", "kind"], `${owner} limits[${i}]`);
    const name = policyName(o.name, `${owner} limits[${i}].name`);
    if (seen.has(name)) throw new RangeError(`${owner} limits[${i}].name ${JSON.stringify(name)} is used twice`);
    seen.add(name);
    const kind = o.kind ?? "bucket";
    if (kind !== "bucket" && kind !== "sliding" && kind !== "period" && kind !== "gcra") {
      throw new TypeError(
        `${owner} limits[${i}].kind must be "bucket", "sliding", "period" or "gcra", got ${check.describe(kind)}`,
      );
    }
    return Object.freeze({
      name,
      quota: check.integer(o.quota, `${owner} limits[${i}].quota`, 1),
      window: check.positive(o.window, `${owner} limits[${i}].window (ms)`),
      kind,
    });
  });
}

function make(l: Checked, now: number): Limiter {
  switch (l.kind) {
    case "bucket":
      return new Bucket((l.quota * 1_000) / l.window, { burst: l.quota, now });
    case "gcra":
      return new Gcra((l.quota * 1_000) / l.window, { burst: l.quota });
    case "sliding":
      return new Sliding(l.quota, l.window);
    case "period":
      return new Period(l.quota, l.window);
  }
}

function fits(x: Limiter, now: number, cost: number): boolean {
  if (x instanceof Bucket || x instanceof Gcra) return x.peek(now, cost);
  return x.left(now) >= cost;
}

function take(x: Limiter, now: number, cost: number): void {
  if (x instanceof Bucket || x instanceof Gcra) x.take(now, cost);
  else for (let i = 0; i < cost; i++) x.take(now);
}

/** Milliseconds until `cost` would fit; for the windows, until the first unit frees. */
function wait(x: Limiter, now: number, cost: number): number {
  if (x instanceof Bucket || x instanceof Gcra) return x.next(now, cost);
  return cost > x.quota ? Infinity : x.next(now);
}

/** Whether a limiter is back to a fresh one's state, so dropping it changes no answer. */
function atRest(x: Limiter, now: number): boolean {
  return x.rateLimit(now).reset === 0;
}

/**
 * Per-key limiters in process, kept in a `Map` bounded by `maxKeys`. A key whose limiters are
 * all back at rest (a full bucket, an empty window) is dropped when the sweep reaches it, which
 * changes no answer; past `maxKeys` the least recently added key is dropped even if not at rest,
 * which forgives that client's recent use (so size `maxKeys` above the clients active at once).
 */
export class KeyedLimits {
  readonly limits: readonly Checked[];
  readonly #maxKeys: number;
  #map = new Map<string, Limiter[]>();

  constructor(limits: readonly Checked[], maxKeys: number) {
    this.limits = limits;
    this.#maxKeys = maxKeys;
  }

  /** Keys with state. */
  get size(): number {
    return this.#map.size;
  }

  #get(key: string, now: number): Limiter[] {
    let set = this.#map.get(key);
    if (set === undefined) {
      this.#sweep(now);
      set = this.limits.map((l) => make(l, now));
      this.#map.set(key, set);
    }
    return set;
  }

  // A bounded step of a clock sweep from the oldest key: drop what is at rest, give the rest a
  // second chance at the back, and past maxKeys drop the oldest regardless.
  #sweep(now: number): void {
    const map = this.#map;
    let budget = 2;
    for (const [key, set] of map) {
      if (budget-- === 0) break;
      map.delete(key);
      if (!set.every((x) => atRest(x, now))) map.set(key, set);
    }
    while (map.size >= this.#maxKeys) {
      const oldest = map.keys().next();
      if (oldest.done === true) break;
      map.delete(oldest.value);
    }
  }

  /**
   * Charges `cost` to every limit of `key` at `now`, or to none: all are checked first, then all
   * are taken. Writes each policy's remaining units and reset (ms) into `remaining` and `reset`
   * (in the order of the limits), and the names of the refused ones into `violated`.
   *
   * @returns milliseconds until the refused ones would admit (the longest), or -1 when admitted
   */
  charge(
    key: string,
    now: number,
    cost: number,
    remaining: Float64Array,
    reset: Float64Array,
    violated: string[],
  ): number {
    const set = this.#get(key, now);
    let retry = -1;
    const only = set.length === 1 ? set[0] : undefined;
    if (only instanceof Bucket || only instanceof Gcra) {
      // One token limiter: its own take is the check and the charge at once.
      if (!only.take(now, cost)) {
        retry = only.next(now, cost);
        violated.push(this.limits[0].name);
      }
    } else {
      for (let i = 0; i < set.length; i++) {
        if (!fits(set[i], now, cost)) {
          const w = wait(set[i], now, cost);
          if (w > retry) retry = w;
          violated.push(this.limits[i].name);
        }
      }
      if (retry < 0) for (const x of set) take(x, now, cost);
    }
    for (let i = 0; i < set.length; i++) {
      const x = set[i];
      const r = x.rateLimit(now);
      remaining[i] = r.remaining;
      // With nothing left, "until more quota" is the next unit, which is also the Retry-After.
      reset[i] = r.remaining === 0 ? wait(x, now, 1) : r.reset;
    }
    return retry;
  }
}
