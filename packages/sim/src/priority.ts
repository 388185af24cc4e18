// Traffic with priorities: every call of a key carries its key's priority (a user-initiated
// call is critical, a prefetch sheddable), and a run that has them records goodput, refusals
// and calls offered for each priority apart.
import { check } from "@tideward/time/internal";
import type { Budget } from "./memory";
import { formatCount, own } from "./memory";
import { checkTraffic, model } from "./traffic";
import type { KeyTable, Traffic } from "./traffic";

/**
 * How important a call is: a level's number (0 the most important, as `@tideward/concurrency`'s
 * `Priorities` number them) or a level's name (`"critical"`, `"sheddable"`).
 */
export type Priority = number | string;

/** How a run's record names the calls that give no priority. */
export const NO_PRIORITY = "(none)";
/** The longest priority name: names become fields of the result and refusal labels. */
const MAX_NAME = 64;
/** The most distinct priorities a run records apart: each costs four counters a bucket. */
export const MAX_PRIORITIES = 64;
/** What a priority adds to every bucket: four counters during the run, and their arrays in the result. */
const PRIORITY_BYTES = 64;
/** Keys up to this many have their priority class kept in an array; more, in a map of the keys that call. */
const DENSE_KEYS = 65_536;
/** What a key's class costs in the map, bytes. */
const MAPPED_KEY_BYTES = 48;

/** `value` checked to be a priority, or a `TypeError`/`RangeError` naming `what`. */
export function checkPriority(value: unknown, what: string): Priority {
  if (typeof value === "number") {
    if (!(Number.isInteger(value) && value >= 0 && value <= 0xffff))
      throw new RangeError(`${what} must be a level from 0 to 65535 or a level's name, got ${check.describe(value)}`);
    return value;
  }
  if (typeof value === "string") {
    if (value.length === 0 || value.length > MAX_NAME)
      throw new RangeError(`${what} must be a name of 1 to ${MAX_NAME} characters, got ${check.describe(value)}`);
    return value;
  }
  throw new TypeError(`${what} must be a level's number or name, got ${check.describe(value)}`);
}

/**
 * `model`'s calls, every one at `level`: a user-initiated stream at `"critical"`, a prefetch
 * stream at `"sheddable"`. Merge such streams (`traffic.merge`) for traffic of mixed priorities;
 * each part keeps its own keys, and so its own priority. A run of traffic with priorities
 * records offered calls, refusals and goodput for each priority (`series.byPriority`,
 * `summary.byPriority`).
 *
 * @example
 * const mixed = traffic.merge(
 *   traffic.priority("critical", traffic.poisson({ rate: 100, keys: keys.single("user") })),
 *   traffic.priority("sheddable", traffic.poisson({ rate: 300, keys: keys.single("prefetch") })),
 * );
 * mixed.keys.priority?.(1); // "sheddable"
 * @throws TypeError or RangeError when `level` is not a whole number from 0 to 65535 or a name
 *   of 1 to 64 characters, or `model` is not a traffic model
 */
export function priority(level: Priority, traffic: Traffic): Traffic {
  const p = checkPriority(level, "traffic.priority level");
  if (typeof traffic?.open !== "function")
    throw new TypeError(`traffic.priority traffic must be a traffic model, got ${check.describe(traffic)}`);
  checkTraffic(traffic, "traffic.priority traffic's");
  const keys: KeyTable = Object.freeze({ count: traffic.keys.count, name: traffic.keys.name, priority: () => p });
  return model(`${traffic.label} at ${JSON.stringify(p)}`, keys, (context) => traffic.open(context));
}

/**
 * Per priority, each bucket's counts: what `series.byPriority` holds. Goodput and successes are
 * counted in the bucket the call arrived in (the run's own `series.goodput`, in the one it ended
 * in), so over any stretch `goodput / offered` is the share of the same calls answered in time.
 */
export interface PrioritySeries {
  /** Calls that arrived (first attempts). */
  readonly offered: readonly number[];
  /** Attempts a policy refused, in the bucket of the refusal. */
  readonly refused: readonly number[];
  /** Calls that arrived in the bucket and ended in a success within their caller's deadline. */
  readonly goodput: readonly number[];
  /** Calls that arrived in the bucket and ended in a success, in time or not. */
  readonly completed: readonly number[];
}

/** Per priority, the run's totals: what `summary.byPriority` holds. */
export interface PrioritySummary {
  readonly calls: number;
  readonly refused: number;
  readonly goodput: number;
  readonly completed: number;
  /** `goodput / calls`, or `null` with no calls. */
  readonly goodputRate: number | null;
}

const OFFERED = 0;
const REFUSED = 1;
const GOODPUT = 2;
const COMPLETED = 3;

/**
 * The recorder's part for traffic with priorities: each key's class (its priority, looked up
 * once, when its first call arrives) and each class's counters per bucket. @internal
 */
export class PriorityRecord {
  readonly #priority: (i: number) => unknown;
  readonly #budget: Budget;
  readonly #buckets: number;
  readonly #names: string[] = [];
  readonly #index = new Map<string, number>();
  readonly #counts: Float64Array[][] = [];
  readonly #totals: Float64Array[] = [];
  readonly #dense: Int16Array | undefined;
  readonly #sparse: Map<number, number> | undefined;

  /** Keeps classes for `keys` keys whose priorities `priority` gives, over `buckets` buckets. */
  constructor(priority: (i: number) => unknown, keys: number, buckets: number, budget: Budget) {
    this.#priority = priority;
    this.#budget = budget;
    this.#buckets = buckets;
    if (keys <= DENSE_KEYS) {
      budget.reserve(keys * 2, `simulate: the priority of each of the traffic's ${formatCount(keys)} keys`);
      this.#dense = new Int16Array(keys).fill(-1);
    } else this.#sparse = new Map();
  }

  /** The class of `key`, looked up (and registered) on its first call: may throw, naming the traffic's priority. */
  classOf(key: number): number {
    const dense = this.#dense;
    if (dense !== undefined) {
      const c = dense[key];
      return c >= 0 ? c : (dense[key] = this.#lookUp(key));
    }
    const sparse = this.#sparse as Map<number, number>;
    const c = sparse.get(key);
    if (c !== undefined) return c;
    this.#budget.reserve(
      MAPPED_KEY_BYTES,
      `simulate: the priority of key ${key} (the traffic has over ${formatCount(DENSE_KEYS)} keys)`,
    );
    const found = this.#lookUp(key);
    sparse.set(key, found);
    return found;
  }

  #lookUp(key: number): number {
    const given = this.#priority(key);
    const name =
      given === undefined ? NO_PRIORITY : String(checkPriority(given, `the traffic's keys priority(${key})`));
    const known = this.#index.get(name);
    if (known !== undefined) return known;
    if (this.#names.length >= MAX_PRIORITIES)
      throw own(
        new RangeError(
          `the traffic's keys have more than ${MAX_PRIORITIES} distinct priorities (the ${MAX_PRIORITIES + 1}th is ${JSON.stringify(name)}): a run records at most ${MAX_PRIORITIES} apart`,
        ),
      );
    this.#budget.reserve(
      (this.#buckets + 1) * PRIORITY_BYTES,
      `simulate: priority ${JSON.stringify(name)} over ${formatCount(this.#buckets)} buckets`,
    );
    const i = this.#names.length;
    this.#names.push(name);
    this.#index.set(name, i);
    this.#counts.push(Array.from({ length: 4 }, () => new Float64Array(this.#buckets + 1)));
    this.#totals.push(new Float64Array(4));
    return i;
  }

  /** A call of `key` arrived in bucket `b`. */
  offer(b: number, key: number): void {
    this.#add(this.classOf(key), OFFERED, b);
  }

  /** An attempt of `key` was refused in bucket `b`. */
  refuse(b: number, key: number): void {
    this.#add(this.classOf(key), REFUSED, b);
  }

  /** A call of `key` that arrived in bucket `b` ended in a success; `inTime`: within its deadline. */
  done(b: number, key: number, inTime: boolean): void {
    const c = this.classOf(key);
    this.#add(c, COMPLETED, b);
    if (inTime) this.#add(c, GOODPUT, b);
  }

  #add(c: number, what: number, b: number): void {
    this.#counts[c][what][b]++;
    this.#totals[c][what]++;
  }

  /** Each priority's series, in the order they were first seen. */
  series(): Record<string, PrioritySeries> {
    const n = this.#buckets;
    const out = Object.create(null) as Record<string, PrioritySeries>;
    const list = (a: Float64Array): number[] => Array.from(a.subarray(0, n));
    this.#names.forEach((name, c) => {
      const k = this.#counts[c];
      out[name] = {
        offered: list(k[OFFERED]),
        refused: list(k[REFUSED]),
        goodput: list(k[GOODPUT]),
        completed: list(k[COMPLETED]),
      };
    });
    return out;
  }

  /** Each priority's totals, the drain included. */
  summary(): Record<string, PrioritySummary> {
    const out = Object.create(null) as Record<string, PrioritySummary>;
    this.#names.forEach((name, c) => {
      const t = this.#totals[c];
      out[name] = {
        calls: t[OFFERED],
        refused: t[REFUSED],
        goodput: t[GOODPUT],
        completed: t[COMPLETED],
        goodputRate: t[OFFERED] > 0 ? t[GOODPUT] / t[OFFERED] : null,
      };
    });
    return out;
  }
}
