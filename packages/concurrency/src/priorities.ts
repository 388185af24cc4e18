import { check } from "@tideward/time/internal";

/**
 * How important a call is: a level's number, 0 being the most important, or a level's name.
 * A number that is not a whole level of the {@link Priorities} in use, a name it does not have,
 * and anything else (NaN, a symbol, an object) count as its least important level: a caller can
 * make its own call less important by mistake, never more.
 */
export type Priority = number | string;

/** Options of {@link Priorities}: how many levels there are, and what each keeps for itself. */
export interface PriorityOptions {
  /**
   * How many levels there are, or their names, most important first. At most
   * {@link Priorities.maxLevels}. A level is named by its number as text (`"0"`, `"1"`, …) when
   * no names are given. @defaultValue 1
   */
  readonly levels: number | readonly string[];
  /**
   * Per level, most important first: the share of the limit (from 0 to 1) held for that level
   * and the more important ones, which no less important call may take. The shares add up to 1
   * at most; what is left is open to every level. So a level may fill the limit up to
   * `1 − (the shares of the levels more important than it)`: the most important may fill all of
   * it, and as calls pile up the least important are refused first. @defaultValue an equal share
   * for each level
   */
  readonly shares: readonly number[];
  /** The level of a call that gives no priority: a number or a name. @defaultValue 0 */
  readonly fallback: Priority;
}

/** Why a call was refused a place: see {@link Refusal}. */
export type RefusalReason = "limit" | "reserved";

/**
 * A call that was not let in, and why: `"limit"` when the limit is full, `"reserved"` when there
 * are places left but they are held for more important levels. One frozen object per level and
 * reason, made once, so a refusal allocates nothing.
 */
export interface Refusal {
  /** Always false: a {@link Token}'s is true. */
  readonly ok: false;
  /** Why: the limit is full, or the places left are reserved for more important levels. */
  readonly reason: RefusalReason;
  /** The level the call was judged at (its priority, resolved). */
  readonly level: number;
}

const KNOWN = ["levels", "shares", "fallback"] as const;
/** The longest level name: names travel as metric labels and headers. */
const MAX_NAME = 64;
/**
 * @internal Shares are products of decimal fractions, which doubles store a little off (`1 − 0.9` is
 * 0.09999999999999998): a place counts when the product is within this of a whole one.
 */
export const SLACK = 1e-7;

/**
 * Priority levels and the share of a limit each keeps from the less important ones: one
 * definition that a {@link Limiter}, a {@link Queue} and `@tideward/shedder`'s `Shedder` read
 * alike.
 *
 * Level 0 is the most important. Level `p` may fill a limit `L` up to
 * `room(p) × L`, where `room(p) = 1 − (shares of levels 0 … p − 1)`: the most important level
 * may take every place, and the places a less important one may not take are kept for the more
 * important ones. So as calls pile up the least important are refused first, and a sheddable
 * call never takes the last places a critical one would need.
 *
 * Gotchas: the shares of the more important levels are kept whether or not those levels are
 * using them — a level never lends its places downwards, because a place lent is a place in
 * flight when its owner comes back for it. With `shares: [0.9, 0.1]` the second level never
 * holds more than a tenth of the limit, even when the first sends nothing.
 *
 * @example
 * const levels = new Priorities({ levels: ["live", "batch"], shares: [0.9, 0.1] });
 * levels.level("batch"); // 1
 * levels.level(7); // 1 — not a level: the least important
 * levels.places(levels.level("live"), 20); // 20
 * levels.places(levels.level("batch"), 20); // 2
 */
export class Priorities {
  /** The most levels a set may have: each costs a few small objects per set, and a lane per queue. */
  static readonly maxLevels = 1024;

  /** How many levels there are. */
  readonly count: number;
  /** The levels' names, most important first (their numbers as text when none were given). */
  readonly names: readonly string[];
  /** Each level's share, as given (or the equal default). */
  readonly shares: readonly number[];
  /** The level of a call that gives no priority. */
  readonly fallback: number;

  // Per level, the part of the limit (0–1) that level may fill.
  readonly #room: Float64Array;
  // Each name's level, in a record without a prototype: a string key reads at the cost of a
  // property (a Map's lookup allocated 16 bytes a call here), and no inherited name resolves.
  readonly #byName: Record<string, number | undefined>;
  readonly #full: readonly Refusal[];
  readonly #reserved: readonly Refusal[];

  /**
   * A set of levels, read once from `options` and checked.
   *
   * @throws TypeError when `options` is not an object, names an option there is not (with the
   *   closest known one), `levels` is neither a count nor an array of names, a name is not text,
   *   `shares` is not an array of numbers or `fallback` is neither a number nor a name;
   *   RangeError when `levels` is not a whole number from 1 to {@link Priorities.maxLevels}, a
   *   name is empty, longer than 64 characters or given twice, `shares` has a length other than
   *   the number of levels, a share is outside 0–1 or they add up to more than 1, or `fallback`
   *   is not one of the levels (each message names the option and the value)
   */
  constructor(options?: Partial<PriorityOptions>) {
    const o = check.options(options, KNOWN, "Priorities");
    const given: unknown = check.or(o.levels, 1);
    let names: string[];
    if (typeof given === "number") {
      const count = check.integer(given, "Priorities levels", 1);
      if (count > Priorities.maxLevels)
        throw new RangeError(`Priorities levels must be at most ${Priorities.maxLevels}, got ${count}`);
      names = Array.from({ length: count }, (_, i) => String(i));
    } else if (Array.isArray(given)) {
      // Read once, by index, before anything is checked: the length first, so a huge array is
      // refused before it is copied.
      const length = (given as unknown[]).length;
      if (length < 1 || length > Priorities.maxLevels)
        throw new RangeError(
          `Priorities levels must name from 1 to ${Priorities.maxLevels} levels, got ${length} names`,
        );
      const copy = Array.from({ length }, (_, i) => (given as unknown[])[i]);
      const seen = new Set<string>();
      copy.forEach((name, i) => {
        if (typeof name !== "string")
          throw new TypeError(`Priorities levels[${i}] must be a name (text), got ${check.describe(name)}`);
        if (name.length === 0 || name.length > MAX_NAME)
          throw new RangeError(
            `Priorities levels[${i}] must be a name of 1 to ${MAX_NAME} characters, got ${check.describe(name)}`,
          );
        if (seen.has(name)) throw new RangeError(`Priorities levels[${i}] names ${JSON.stringify(name)} twice`);
        seen.add(name);
      });
      names = copy as string[];
    } else {
      throw new TypeError(
        `Priorities levels must be a number of levels or an array of their names, got ${check.describe(given)}`,
      );
    }
    const count = names.length;
    this.count = count;
    this.names = Object.freeze(names);
    const byName = Object.create(null) as Record<string, number | undefined>;
    names.forEach((name, i) => (byName[name] = i));
    this.#byName = byName;

    const shares = readShares(o.shares, count);
    this.shares = Object.freeze(shares);
    const room = new Float64Array(count);
    // Summed from the least important up, so each level's room is its share plus what is below
    // it plus what nobody holds; level 0 may always fill the whole limit.
    const total = shares.reduce((a, b) => a + b, 0);
    let below = 1 - total;
    for (let i = count - 1; i > 0; i--) {
      below += shares[i];
      room[i] = below < 0 ? 0 : below > 1 ? 1 : below;
    }
    room[0] = 1;
    this.#room = room;

    const fallback: unknown = check.or(o.fallback, 0);
    if (typeof fallback === "number") {
      if (!Number.isInteger(fallback) || fallback < 0 || fallback >= count)
        throw new RangeError(
          `Priorities fallback must be a level from 0 to ${count - 1}, got ${check.describe(fallback)}`,
        );
      this.fallback = fallback;
    } else if (typeof fallback === "string") {
      const level = this.#byName[fallback];
      if (level === undefined)
        throw new RangeError(
          `Priorities fallback must name a level (${names.map((n) => JSON.stringify(n)).join(", ")}), got ${JSON.stringify(fallback)}`,
        );
      this.fallback = level;
    } else {
      throw new TypeError(`Priorities fallback must be a level's number or name, got ${check.describe(fallback)}`);
    }

    this.#full = Object.freeze(
      names.map((_, level) => Object.freeze({ ok: false, reason: "limit", level }) as Refusal),
    );
    this.#reserved = Object.freeze(
      names.map((_, level) => Object.freeze({ ok: false, reason: "reserved", level }) as Refusal),
    );
    Object.freeze(this);
  }

  /**
   * The level of `priority`: itself when it is a whole level, the level of that name when it is
   * one, {@link Priorities.fallback} when it is `undefined`, and the least important level for
   * anything else. Never throws, allocates nothing.
   */
  level(priority: Priority | undefined): number {
    if (typeof priority === "number") {
      // `| 0` also turns -0 into 0; a fraction, NaN or ±Infinity fails the comparison.
      return (priority | 0) === priority && priority >= 0 && priority < this.count ? priority | 0 : this.count - 1;
    }
    if (priority === undefined) return this.fallback;
    if (typeof priority === "string") {
      const level = this.#byName[priority];
      return level === undefined ? this.count - 1 : level;
    }
    return this.count - 1;
  }

  /** The name of `level` (a level's number, as from {@link Priorities.level}). */
  name(level: number): string {
    return this.names[this.level(level)];
  }

  /**
   * The part of a limit (0–1) that calls at `level` may fill: 1 for level 0, then 1 less the
   * shares of the levels more important than it.
   */
  room(level: number): number {
    return this.#room[this.level(level)];
  }

  /**
   * How many places of a limit of `limit` places calls at `level` may fill, together with every
   * call already in: `room(level) × limit` rounded down (a place counts when the product is
   * within 10^-7 of a whole one, so `0.1 × 10` is 1 place however the double rounds).
   */
  places(level: number, limit: number): number {
    if (level === 0) return limit;
    return Math.floor(limit * this.#room[this.level(level)] + SLACK);
  }

  /** @internal The refusal for a call at `level` (already resolved) for `reason`: made once. */
  refusal(level: number, reason: RefusalReason): Refusal {
    return reason === "limit" ? this.#full[level] : this.#reserved[level];
  }
}

function readShares(value: unknown, count: number): number[] {
  if (value === undefined) return Array.from({ length: count }, () => 1 / count);
  if (!Array.isArray(value))
    throw new TypeError(`Priorities shares must be an array of numbers, got ${check.describe(value)}`);
  const length = (value as unknown[]).length;
  if (length !== count)
    throw new RangeError(`Priorities shares must have one share for each of the ${count} levels, got ${length}`);
  const shares = Array.from({ length }, (_, i) => (value as unknown[])[i]);
  let sum = 0;
  shares.forEach((share, i) => {
    const n = check.between(share, 0, 1, `Priorities shares[${i}]`);
    sum += n;
  });
  // A little over 1 is the rounding of shares that were meant to add up to 1.
  if (sum > 1 + 1e-9)
    throw new RangeError(`Priorities shares must add up to 1 at most, got ${shares.join(" + ")} = ${sum}`);
  return shares as number[];
}

/**
 * Google's four criticalities, most important first: `critical_plus`, `critical`,
 * `sheddable_plus`, `sheddable` (levels 0 to 3). A call that gives none is `critical`, as in
 * Google's RPC stack.
 *
 * Their shares, 0.1 / 0.1 / 0.2 / 0.6, are a starting point rather than anyone's published
 * constants: `sheddable` may fill 60 % of the limit, `sheddable_plus` 80 %, `critical` 90 % and
 * `critical_plus` all of it — so a fifth of the limit is never taken by sheddable work (Stripe
 * reports keeping 20 % of capacity for critical traffic).
 */
export const criticality: Priorities = new Priorities({
  levels: ["critical_plus", "critical", "sheddable_plus", "sheddable"],
  shares: [0.1, 0.1, 0.2, 0.6],
  fallback: "critical",
});

/** One level: every call alike, as a limiter without priorities has it. */
export const single: Priorities = new Priorities();
