import { Bucket, Gcra, MAX_SLIDING_QUOTA, Period, Sliding } from "@tideward/limiters";
import {
  MAX_COUNT,
  above,
  firstAfter,
  gcraFits,
  gcraLead,
  gcraReady,
  gcraRest,
  gcraWhole,
  slackOf,
  spanProblem,
  until,
  windowCount,
  windowEnd,
  windowFits,
} from "@tideward/limiters/math";
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
 * | `"gcra"` | the same rate and burst, kept as one instant (a GCRA flow, as a `Gcra` answers) | about 190 B |
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

  /** This window under a new quota and length at `now`: its count kept, closing when it would have or a new window after `now`, whichever is sooner. */
  rebased(quota: number, window: number, now: number): Fixed {
    const next = new Fixed(quota, window);
    if (now < this.#end) {
      const latest = windowEnd(now, window, false);
      next.#used = this.#used;
      next.#end = latest < this.#end ? latest : this.#end;
    }
    return next;
  }
}

/**
 * A GCRA flow for one key, on `@tideward/limiters/math`'s formulas (a `Gcra`'s own, which it
 * answers alike): its theoretical arrival time kept as the latest admission and how far ahead of
 * it the flow then was, which a change of limit re-bases exactly (a `Gcra` reads it back only as
 * an absolute instant, rounded near `Date.now()`).
 */
export class Flow {
  readonly burst: number;
  readonly interval: number;
  readonly #tau: number;
  readonly #reach: number;
  readonly #slack: number;
  #at = -Infinity;
  #ahead = 0;

  constructor(quota: number, window: number) {
    // As a Gcra of rate quota per window computes its interval, to the bit.
    this.interval = 1_000 / ((quota * 1_000) / window);
    this.burst = quota;
    this.#tau = quota * this.interval;
    this.#slack = slackOf(quota) * this.interval;
    this.#reach = this.#tau + this.#slack;
  }

  take(now: number, n: number): boolean {
    const at = this.#at;
    const lead = gcraLead(at, this.#ahead, now);
    if (n > this.burst || !gcraFits(lead, n, this.interval, this.#reach)) return false;
    const from = now >= at ? lead : this.#ahead;
    const ahead = from + n * this.interval;
    // At least one float step on, for a cost that a long lead would round away.
    this.#ahead = ahead === from && n > 0 ? above(from) : ahead;
    if (now >= at) this.#at = now;
    return true;
  }

  peek(now: number, n: number): boolean {
    return n <= this.burst && gcraFits(gcraLead(this.#at, this.#ahead, now), n, this.interval, this.#reach);
  }

  next(now: number, n: number): number {
    if (n > this.burst) return Infinity;
    return until(now, now, gcraReady(this.#at, this.#ahead, now, n, this.interval, this.#tau, this.#reach));
  }

  remaining(now: number): number {
    return gcraWhole(gcraLead(this.#at, this.#ahead, now), this.interval, this.burst, this.#slack);
  }

  rateLimit(now: number): { reset: number } {
    return { reset: until(now, now, gcraRest(this.#at, this.#ahead, now)) };
  }

  /** This flow under a new quota and window at `now`: as far ahead of `now` as it was, at most the new burst's worth. */
  rebased(quota: number, window: number, now: number): Flow {
    const next = new Flow(quota, window);
    const lead = gcraLead(this.#at, this.#ahead, now);
    if (lead > 0) {
      next.#at = now;
      next.#ahead = lead < next.#tau ? lead : next.#tau;
    }
    return next;
  }
}

export type Limiter = Bucket | Flow | Sliding | Fixed;

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

export function make(l: Omit<Checked, "bytes">, now: number): Limiter {
  switch (l.kind) {
    case "bucket":
      return new Bucket((l.quota * 1_000) / l.window, { burst: l.quota, now });
    case "gcra":
      return new Flow(l.quota, l.window);
    case "sliding":
      return new Sliding(l.quota, l.window);
    case "period":
      return new Fixed(l.quota, l.window);
  }
}

/**
 * Checks one limit, naming `path` in every error: a limit that would throw at a request is
 * refused here. `kind` is `fallback` when left out.
 */
export function checkLimit(l: unknown, path: string, now: number, fallback: LimitKind = "bucket"): Checked {
  if (l === undefined) throw new TypeError(`${path} must be a limit { name, quota, window, kind }, got undefined`);
  const o = check.options(l as Limit, ["name", "quota", "window", "kind"], path);
  const name = policyName(o.name, `${path}.name`);
  const kind = o.kind ?? fallback;
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
    else if (kind === "gcra") new Gcra((quota * 1_000) / window, { burst: quota });
    else if (kind !== "sliding") make(limit, now);
  } catch (e) {
    throw new RangeError(`${path} cannot be kept: ${(e as Error).message}`, { cause: e });
  }
  const bytes = LIMITER_BYTES[kind] + (kind === "sliding" ? 8 * quota : 0);
  return Object.freeze({ ...limit, bytes });
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
    const checked = checkLimit(l, path, now);
    if (seen.has(checked.name)) throw new RangeError(`${path}.name ${JSON.stringify(checked.name)} is used twice`);
    seen.add(checked.name);
    return checked;
  });
}

/** A byte count for a message: `37.3 GiB`. */
export function size(bytes: number): string {
  const units = ["B", "KiB", "MiB", "GiB", "TiB"];
  let n = bytes;
  let u = 0;
  while (n >= 1_024 && u < units.length - 1) {
    n /= 1_024;
    u++;
  }
  return `${u === 0 ? n : n.toFixed(1)} ${units[u]}`;
}

/**
 * Refuses limits that `maxKeys` keys could not hold within `maxBytes`, before anything is
 * allocated, saying what they would hold and which limit holds the most.
 * @throws RangeError naming `what`
 */
export function checkBytes(limits: readonly Checked[], maxKeys: number, maxBytes: number, what: string): void {
  if (limits.length === 0) return;
  const perKey = keyBytes(limits);
  if (perKey * maxKeys <= maxBytes) return;
  const big = limits.reduce((a, b) => (b.bytes > a.bytes ? b : a));
  const which = `limits[${limits.indexOf(big)}] ${JSON.stringify(big.name)}, ${big.kind === "sliding" ? `a sliding window of quota ${big.quota} (8 B a unit)` : `a ${big.kind}`}, ${big.bytes} B`;
  throw new RangeError(
    `${what} hold up to ${perKey} B a key (${which}); at maxKeys ${maxKeys} that is ${size(perKey * maxKeys)}, past maxBytes (${size(maxBytes)}): lower maxKeys to ${Math.floor(maxBytes / perKey)} or less, lower the quota, or raise maxBytes`,
  );
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
export function wait(x: Limiter, now: number, n: number): number {
  if (x instanceof Bucket || x instanceof Flow) return x.next(now, n);
  if (x instanceof Sliding) return n === 1 ? x.next(now) : slidingWait(x, now, n);
  return x.wait(now, n);
}

export function fits(x: Limiter, now: number, cost: number): boolean {
  if (x instanceof Bucket || x instanceof Flow) return x.peek(now, cost);
  if (x instanceof Fixed) return x.fits(now, cost);
  return x.left(now) >= cost;
}

export function take(x: Limiter, now: number, cost: number): void {
  if (x instanceof Sliding) {
    // A stamp a unit: at most the quota's (2^24) for one request, since it fit.
    for (let i = 0; i < cost; i++) x.take(now);
  } else x.take(now, cost);
}

/** Whether a limiter is back to a fresh one's state, so dropping it changes no answer. */
export function atRest(x: Limiter, now: number): boolean {
  return x instanceof Fixed ? x.atRest(now) : x.rateLimit(now).reset === 0;
}

/**
 * A key's limiter moved from its limit to `to` (same kind) at `now`, as the quota engine re-bases
 * a key's state: a bucket keeps its level, clamped to the new quota; a GCRA flow stays as far
 * ahead of `now` as it was, at most the new burst's worth; a fixed window keeps its count and
 * closes when it would have, or a new window after `now` if that is sooner; a sliding window keeps
 * its events still inside the new window, each counted at the instant of the newest (never
 * earlier than it came, so nothing is forgiven). A limiter at rest is a fresh one under `to`.
 */
export function rebase(x: Limiter, to: Omit<Checked, "bytes">, now: number): Limiter {
  if (atRest(x, now)) return make(to, now);
  if (x instanceof Fixed || x instanceof Flow) return x.rebased(to.quota, to.window, now);
  const next = make(to, now);
  if (next instanceof Bucket) {
    const level = (x as Bucket).tokens(now);
    if (level < to.quota) next.take(now, to.quota - level);
  } else if (next instanceof Sliding) {
    const old = x as Sliding;
    const used = old.quota - old.left(now);
    // The newest event's instant, from when it falls out of the old window.
    const at = Math.min(now, now + old.rateLimit(now).reset - old.window);
    for (let i = 0; i < used && i < to.quota; i++) next.take(at);
  }
  return next;
}
