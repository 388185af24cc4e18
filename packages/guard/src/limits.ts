import { Bucket, Gcra, MAX_SLIDING_QUOTA, Period, Sliding } from "@tideward/limiters";
import { MAX_COUNT, firstAfter, spanProblem, until, windowCount, windowEnd, windowFits } from "@tideward/limiters/math";
import { check } from "@tideward/time/internal";
import type { Span } from "@tideward/time";
import { policyName } from "./ratelimit-fields";

/** Which limiter a per-key {@link Limit} runs. */
export type LimitKind = "bucket" | "sliding" | "period" | "gcra";

/**
 * A per-key limit for {@link admit}: `quota` units per `window` for each client key, advertised
 * as `RateLimit-Policy: "name";q=quota;w=window`.
 *
 * | kind | admits | memory a key |
 * | --- | --- | --- |
 * | `"bucket"` | bursts up to `quota`, refilled at `quota` per `window` (a `Bucket`) | about 180 B |
 * | `"gcra"` | the same rate and burst, kept as one instant (a `Gcra`) | about 190 B |
 * | `"sliding"` | at most `quota` in any `window`-long stretch, exactly (a `Sliding`) | about 280 B + 8 B × `quota` |
 * | `"period"` | at most `quota` per fixed `window` opened by the first request (a `Period`'s count) | about 100 B |
 */
export interface Limit {
  /** The policy's name in the fields: 1 to 256 characters of printable ASCII. */
  readonly name: string;
  /** Units per window, a whole number from 1 (at most 2^24 for a sliding window). */
  readonly quota: number;
  /** The window, in milliseconds, from 2^-4 to 2^44 (advertised in whole seconds, rounded up). */
  readonly window: Span;
  /** @defaultValue "bucket" */
  readonly kind?: LimitKind;
}

/**
 * A fixed window for one key: the units counted in the open window and the instant it ends, on
 * `@tideward/limiters/math`'s window formulas (a `Period`'s own, as the quota engine keeps its
 * windows), so that a request of any cost is one step: a `Period` counts one unit a `take`.
 */
class Fixed {
  readonly quota: number;
  readonly #window: number;
  #used = 0;
  #end = -Infinity;

  constructor(quota: number, window: number) {
    this.quota = quota;
    this.#window = window;
  }

  left(now: number): number {
    return this.quota - windowCount(this.#used, this.#end, now);
  }

  fits(now: number, n: number): boolean {
    return windowFits(windowCount(this.#used, this.#end, now), n, this.quota);
  }

  take(now: number, n: number): void {
    if (now >= this.#end) {
      this.#end = windowEnd(now, this.#window, false);
      this.#used = 0;
    }
    this.#used += n;
  }

  /** Until `n` units fit: 0 when they do, the window's end when it is open, never past the quota. */
  wait(now: number, n: number): number {
    if (n > this.quota) return Infinity;
    return this.fits(now, n) ? 0 : until(now, now, this.#end);
  }

  atRest(now: number): boolean {
    return now >= this.#end;
  }
}

type Limiter = Bucket | Gcra | Sliding | Fixed;

/** A {@link Limit} checked, with what one key's limiter of it costs in memory. */
export interface Checked {
  readonly name: string;
  readonly quota: number;
  readonly window: number;
  readonly kind: LimitKind;
  /** Bytes one key's limiter of this limit holds, about (V8 on 64 bits). */
  readonly bytes: number;
}

/** The most policies one admission advertises: each is a member of two fields on every response. */
export const MAX_LIMITS = 16;

/** The longest client key {@link admit} keeps state for, in UTF-16 code units. */
export const MAX_KEY = 256;

/** `cost` when it is a whole number of units from 1. @throws RangeError naming `what` and the value */
export function wholeCost(cost: unknown, what: string): number {
  if (typeof cost === "number" && Number.isSafeInteger(cost) && cost >= 1) return cost;
  throw new RangeError(`${what} must be a whole number from 1, got ${check.describe(cost)}`);
}

// What a key costs beyond its limiters, measured on Node 20 (64 bits): the Map's entry, the
// array of limiters, and the key's string at its longest (two bytes a code unit).
const KEY_BYTES = 160 + 2 * MAX_KEY;
const LIMITER_BYTES: Readonly<Record<LimitKind, number>> = { bucket: 180, gcra: 190, period: 100, sliding: 280 };

/** Bytes one key's state holds at most, for these limits. */
export function keyBytes(limits: readonly Checked[]): number {
  let bytes = KEY_BYTES;
  for (const l of limits) bytes += l.bytes;
  return bytes;
}

function make(l: Omit<Checked, "bytes">, now: number): Limiter {
  switch (l.kind) {
    case "bucket":
      return new Bucket((l.quota * 1_000) / l.window, { burst: l.quota, now });
    case "gcra":
      return new Gcra((l.quota * 1_000) / l.window, { burst: l.quota });
    case "sliding":
      return new Sliding(l.quota, l.window);
    case "period":
      return new Fixed(l.quota, l.window);
  }
}

/** Checks the limits once, at construction: a limit that would throw at a request is refused here. */
export function checkLimits(limits: unknown, owner: string, now: number): readonly Checked[] {
  if (!Array.isArray(limits))
    throw new TypeError(
      `${owner} limits must be an array of { name, quota, window, kind }, got ${check.describe(limits)}`,
    );
  if (limits.length > MAX_LIMITS)
    throw new RangeError(
      `${owner} limits must be at most ${MAX_LIMITS} policies (every response carries a member of each), got ${limits.length}`,
    );
  const seen = new Set<string>();
  // Array.from, not map: a hole is read (and refused by its index), not skipped.
  return Array.from(limits, (l: unknown, i) => {
    const path = `${owner} limits[${i}]`;
    if (l === undefined) throw new TypeError(`${path} must be a limit { name, quota, window, kind }, got undefined`);
    const o = check.options(l as Limit, ["name", "quota", "window", "kind"], path);
    const name = policyName(o.name, `${path}.name`);
    if (seen.has(name)) throw new RangeError(`${path}.name ${JSON.stringify(name)} is used twice`);
    seen.add(name);
    const kind = o.kind ?? "bucket";
    if (kind !== "bucket" && kind !== "sliding" && kind !== "period" && kind !== "gcra") {
      throw new TypeError(`${path}.kind must be "bucket", "sliding", "period" or "gcra", got ${check.describe(kind)}`);
    }
    const quota = check.integer(o.quota, `${path}.quota`, 1);
    const most = kind === "sliding" ? MAX_SLIDING_QUOTA : MAX_COUNT;
    if (quota > most)
      throw new RangeError(
        kind === "sliding"
          ? `${path}.quota must be at most ${most} for a sliding window (2^24 stamps, 8 B each), got ${quota}`
          : `${path}.quota must be at most ${most} (2^53 − 1), got ${quota}`,
      );
    const window = check.positive(o.window, `${path}.window (ms)`);
    const problem = spanProblem(window);
    if (problem !== undefined) throw new RangeError(`${path}.window (ms) ${problem}`);
    const limit = { name, quota, window, kind };
    // Every other check its limiter makes, made once here (a sliding ring is not allocated for it).
    try {
      if (kind === "period") new Period(quota, window);
      else if (kind !== "sliding") make(limit, now);
    } catch (e) {
      throw new RangeError(`${path} cannot be kept: ${(e as Error).message}`, { cause: e });
    }
    const bytes = LIMITER_BYTES[kind] + (kind === "sliding" ? 8 * quota : 0);
    return Object.freeze({ ...limit, bytes });
  });
}

/** Milliseconds until a sliding window has room for `n` at `now`; `Infinity` past its quota. */
function slidingWait(x: Sliding, now: number, n: number): number {
  if (n > x.quota) return Infinity;
  if (x.left(now) >= n) return 0;
  // Room only grows as stamps fall out, and is whole once the newest has: the first instant with
  // room for n is found by the window's own count, so `take` at `now + wait` agrees with it.
  return until(
    now,
    now,
    firstAfter(now, (t) => x.left(t) >= n),
  );
}

/** Milliseconds until `n` units fit, 0 when they do now, `Infinity` when they never can. */
function wait(x: Limiter, now: number, n: number): number {
  if (x instanceof Bucket || x instanceof Gcra) return x.next(now, n);
  if (x instanceof Sliding) return n === 1 ? x.next(now) : slidingWait(x, now, n);
  return x.wait(now, n);
}

function fits(x: Limiter, now: number, cost: number): boolean {
  if (x instanceof Bucket || x instanceof Gcra) return x.peek(now, cost);
  if (x instanceof Fixed) return x.fits(now, cost);
  return x.left(now) >= cost;
}

function take(x: Limiter, now: number, cost: number): void {
  if (x instanceof Sliding) {
    // A stamp a unit: at most the quota's (2^24) for one request, since it fit.
    for (let i = 0; i < cost; i++) x.take(now);
  } else x.take(now, cost);
}

/** Whether a limiter is back to a fresh one's state, so dropping it changes no answer. */
function atRest(x: Limiter, now: number): boolean {
  return x instanceof Fixed ? x.atRest(now) : x.rateLimit(now).reset === 0;
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
   * are taken. Writes each policy's remaining units into `remaining` and, into `reset`, the
   * milliseconds until more quota is available: for a policy that refused, until the request's
   * cost fits (what `Retry-After` says); for any other, until one unit more than it has (0 when
   * it is whole). The names of the refused ones go into `violated`. With `commit` false nothing
   * is taken, and the figures are the state as it is.
   *
   * @returns milliseconds until the refused ones would all admit (the longest wait), or -1 when admitted
   */
  charge(
    key: string,
    now: number,
    cost: number,
    remaining: Float64Array,
    reset: Float64Array,
    violated: string[],
    commit: boolean,
  ): number {
    const set = this.#get(key, now);
    let retry = -1;
    const only = set.length === 1 ? set[0] : undefined;
    if (only instanceof Bucket || only instanceof Gcra) {
      // One token limiter: its own take is the check and the charge at once.
      if (!(commit ? only.take(now, cost) : only.peek(now, cost))) {
        retry = only.next(now, cost);
        violated.push(this.limits[0].name);
        reset[0] = retry;
      } else reset[0] = -1;
    } else {
      for (let i = 0; i < set.length; i++) {
        reset[i] = -1;
        if (!fits(set[i], now, cost)) {
          const w = wait(set[i], now, cost);
          reset[i] = w;
          if (w > retry) retry = w;
          violated.push(this.limits[i].name);
        }
      }
      if (retry < 0 && commit) for (const x of set) take(x, now, cost);
    }
    for (let i = 0; i < set.length; i++) {
      const x = set[i];
      remaining[i] =
        x instanceof Bucket ? x.rateLimit(now).remaining : x instanceof Gcra ? x.remaining(now) : x.left(now);
      // Marked -1 above unless it refused: the wait for one unit more, or none when whole.
      if (reset[i] < 0) reset[i] = remaining[i] < this.limits[i].quota ? wait(x, now, remaining[i] + 1) : 0;
    }
    return retry;
  }
}
