import { Bucket } from "@tideward/limiters";
import { check } from "@tideward/time/internal";
import type { Span } from "@tideward/time";
import { Flow, atRest, checkBytes, checkLimit, fits, keyBytes, make, rebase, size, take, wait } from "./limits";
import type { Checked, Limit, Limiter } from "./limits";

/** What {@link Admission.setOverride} gives one key for one limit: any of its quota and window. */
export interface LimitOverride {
  /** Units per window for this key, a whole number from 1. @defaultValue the limit's */
  readonly quota?: number;
  /** The window for this key, in milliseconds. @defaultValue the limit's */
  readonly window?: Span;
}

/** One key's overrides: the fields given per limit name, and the limits the key is held to. */
interface Own {
  readonly fields: Map<string, LimitOverride>;
  limits: readonly Checked[];
}

/**
 * Per-key limiters in process, kept in a `Map` bounded by `maxKeys`. A key whose limiters are
 * all back at rest (a full bucket, an empty window) is dropped when the sweep reaches it, which
 * changes no answer; past `maxKeys` the least recently added key is dropped even if not at rest,
 * which forgives that client's recent use (so size `maxKeys` above the clients active at once).
 *
 * The limits may change while it runs (replaced, removed, overridden for one key): every key's
 * state is then re-based at once, in one pass over the keys (see {@link rebase}).
 */
export class KeyedLimits {
  /** The limits every key without an override is held to: a new array whenever they change. */
  limits: readonly Checked[];
  /** The limits of the key charged last: {@link KeyedLimits.limits}, or the key's own with its overrides. */
  current: readonly Checked[];
  readonly #maxKeys: number;
  readonly #maxBytes: number;
  #map = new Map<string, Limiter[]>();
  readonly #own = new Map<string, Own>();

  constructor(limits: readonly Checked[], maxKeys: number, maxBytes: number) {
    this.limits = this.current = limits;
    this.#maxKeys = maxKeys;
    this.#maxBytes = maxBytes;
  }

  /** Keys with state. */
  get size(): number {
    return this.#map.size;
  }

  /** Keys with an override. */
  get overrides(): number {
    return this.#own.size;
  }

  /** The limits `key` is held to. */
  limitsOf(key: string): readonly Checked[] {
    return this.#own.size === 0 ? this.limits : (this.#own.get(key)?.limits ?? this.limits);
  }

  #get(key: string, now: number, limits: readonly Checked[]): Limiter[] {
    let set = this.#map.get(key);
    if (set === undefined) {
      this.#sweep(now);
      set = limits.map((l) => make(l, now));
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
    const limits = (this.current = this.limitsOf(key));
    const set = this.#get(key, now, limits);
    let retry = -1;
    const only = set.length === 1 ? set[0] : undefined;
    if (only instanceof Bucket || only instanceof Flow) {
      // One token limiter: its own take is the check and the charge at once.
      if (!(commit ? only.take(now, cost) : only.peek(now, cost))) {
        retry = only.next(now, cost);
        violated.push(limits[0].name);
        reset[0] = retry;
      } else reset[0] = -1;
    } else {
      for (let i = 0; i < set.length; i++) {
        reset[i] = -1;
        if (!fits(set[i], now, cost)) {
          const w = wait(set[i], now, cost);
          reset[i] = w;
          if (w > retry) retry = w;
          violated.push(limits[i].name);
        }
      }
      if (retry < 0 && commit) for (const x of set) take(x, now, cost);
    }
    for (let i = 0; i < set.length; i++) {
      const x = set[i];
      remaining[i] =
        x instanceof Bucket ? x.rateLimit(now).remaining : x instanceof Flow ? x.remaining(now) : x.left(now);
      // Marked -1 above unless it refused: the wait for one unit more, or none when whole.
      if (reset[i] < 0) reset[i] = remaining[i] < limits[i].quota ? wait(x, now, remaining[i] + 1) : 0;
    }
    return retry;
  }

  /** The index of the limit named `name`. @throws RangeError naming `what`, the limits there are and the nearest */
  #index(name: unknown, what: string): number {
    const names = this.limits.map((l) => l.name);
    const i = typeof name === "string" ? names.indexOf(name) : -1;
    if (i >= 0) return i;
    const near = typeof name === "string" ? check.closest(name, names) : undefined;
    throw new RangeError(
      `${what} ${check.describe(name)} is not one of admit's limits (${names.map((n) => JSON.stringify(n)).join(", ") || "none left"})${near === undefined ? "" : `; did you mean ${JSON.stringify(near)}?`}`,
    );
  }

  /** `base` with `fields` over limit `i`'s quota and window, checked under `path`. */
  #merged(base: readonly Checked[], fields: Map<string, LimitOverride>, now: number, path: string): Checked[] {
    return base.map((l) => {
      const f = fields.get(l.name);
      if (f === undefined) return l;
      const merged = { name: l.name, quota: f.quota ?? l.quota, window: f.window ?? l.window, kind: l.kind };
      return checkLimit(merged, path, now, l.kind);
    });
  }

  /** Every key's state moved from `before(key)` to its limits now, at `now`; `drop` an index to remove. */
  #rebaseAll(before: (key: string) => readonly Checked[], now: number, drop: number): void {
    for (const [key, set] of this.#map) {
      const was = before(key);
      const limits = this.limitsOf(key);
      if (drop >= 0) set.splice(drop, 1);
      for (let i = 0; i < set.length; i++) {
        const from = was[i < drop || drop < 0 ? i : i + 1];
        const to = limits[i];
        if (from.quota !== to.quota || from.window !== to.window) set[i] = rebase(set[i], to, now);
      }
    }
  }

  /**
   * Replaces the limit of `given.name` at `now` (its kind when `given` leaves it out), every key's
   * state re-based; an override of it keeps its own fields over the new limit.
   * @throws TypeError/RangeError naming the field and the value (nothing changes)
   */
  replace(given: unknown, now: number): void {
    const what = "admit replaceLimit limit";
    if (typeof given !== "object" || given === null) checkLimit(given, what, now);
    const name = (given as Partial<Limit>).name;
    const i = this.#index(name, `${what}.name`);
    const old = this.limits[i];
    const next = checkLimit(given, what, now, old.kind);
    if (next.kind !== old.kind)
      throw new TypeError(
        `${what}.kind ${JSON.stringify(next.kind)} is not the limit's kind (${JSON.stringify(old.kind)}): a key's state does not carry over between algorithms`,
      );
    const limits = this.limits.map((l, j) => (j === i ? next : l));
    checkBytes(limits, this.#maxKeys, this.#maxBytes, "admit replaceLimit: the limits would");
    // Every override re-checked over the new limit before anything changes: refused whole.
    const own = new Map<string, readonly Checked[]>();
    for (const [key, o] of this.#own) {
      const mine = this.#merged(limits, o.fields, now, `${what} (under the override of key ${JSON.stringify(key)})`);
      this.#checkKey(mine, key, what);
      own.set(key, mine);
    }
    const was = new Map([...this.#own].map(([key, o]) => [key, o.limits]));
    const before = this.limits;
    this.limits = this.current = limits;
    for (const [key, mine] of own) (this.#own.get(key) as Own).limits = mine;
    this.#rebaseAll((key) => was.get(key) ?? before, now, -1);
  }

  /**
   * Removes the limit named `name`: every key's state of it, and every override of it, go with it.
   * @throws RangeError when there is no limit of that name (nothing changes)
   */
  remove(name: unknown, now: number): void {
    const i = this.#index(name, "admit removeLimit name");
    const gone = this.limits[i].name;
    const was = new Map([...this.#own].map(([key, o]) => [key, o.limits]));
    const before = this.limits;
    this.limits = this.current = this.limits.filter((_, j) => j !== i);
    for (const [key, o] of this.#own) {
      o.fields.delete(gone);
      if (o.fields.size === 0) this.#own.delete(key);
      else o.limits = o.limits.filter((_, j) => j !== i);
    }
    this.#rebaseAll((key) => was.get(key) ?? before, now, i);
  }

  /** Throws unless a key held to `limits` fits the bytes a key may hold (`maxBytes / maxKeys`). */
  #checkKey(limits: readonly Checked[], key: string, what: string): void {
    const bytes = keyBytes(limits);
    if (bytes * this.#maxKeys > this.#maxBytes)
      throw new RangeError(
        `${what} would have key ${JSON.stringify(key.length > 40 ? `${key.slice(0, 40)}…` : key)} hold up to ${bytes} B, past what a key may hold (maxBytes / maxKeys: ${size(this.#maxBytes / this.#maxKeys)})`,
      );
  }

  /**
   * Gives `key` its own quota or window for the limit named `name` at `now` (set again, the
   * fields replace the ones before), its state re-based.
   * @throws TypeError/RangeError naming the field and the value (nothing changes)
   */
  override(key: string, name: unknown, fields: unknown, now: number): void {
    const what = "admit setOverride";
    const i = this.#index(name, `${what} limit`);
    const limit = this.limits[i].name;
    const f = check.options(fields as LimitOverride, ["quota", "window"], `${what} fields`);
    const given: LimitOverride = {
      ...(f.quota === undefined ? {} : { quota: f.quota }),
      ...(f.window === undefined ? {} : { window: f.window }),
    };
    const o = this.#own.get(key);
    if (o === undefined && this.#own.size >= this.#maxKeys)
      throw new RangeError(`${what}: ${this.#maxKeys} keys have overrides already, the most maxKeys allows`);
    const all = new Map(o?.fields);
    all.set(limit, given);
    const mine = this.#merged(this.limits, all, now, `${what} fields`);
    this.#checkKey(mine, key, what);
    this.#move(key, o?.limits ?? this.limits, mine, now);
    this.#own.set(key, { fields: all, limits: mine });
  }

  /**
   * Takes away `key`'s override of the limit named `name` at `now`: its state re-based onto the limit.
   * @throws RangeError when there is no such limit, or the key has no override of it (nothing changes)
   */
  unoverride(key: string, name: unknown, now: number): void {
    const what = "admit removeOverride";
    const limit = this.limits[this.#index(name, `${what} limit`)].name;
    const o = this.#own.get(key);
    if (o === undefined || !o.fields.has(limit))
      throw new RangeError(`${what}: key ${JSON.stringify(key)} has no override of ${JSON.stringify(limit)}`);
    const all = new Map(o.fields);
    all.delete(limit);
    const mine = all.size === 0 ? this.limits : this.#merged(this.limits, all, now, what);
    this.#move(key, o.limits, mine, now);
    if (all.size === 0) this.#own.delete(key);
    else this.#own.set(key, { fields: all, limits: mine });
  }

  /** `key`'s state, if it has any, moved from `from` to `to` at `now`. */
  #move(key: string, from: readonly Checked[], to: readonly Checked[], now: number): void {
    const set = this.#map.get(key);
    if (set === undefined) return;
    for (let i = 0; i < set.length; i++)
      if (from[i].quota !== to[i].quota || from[i].window !== to[i].window) set[i] = rebase(set[i], to[i], now);
  }
}
