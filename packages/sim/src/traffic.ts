import { check } from "@tideward/time/internal";
import type { Random, Span } from "@tideward/time";
import { distribution } from "./distribution";
import type { Distribution } from "./distribution";
import { single } from "./keys";
import type { KeyModel } from "./keys";

/** What a traffic model is opened with: the run's bounds and a random stream of its own. */
export interface TrafficContext {
  /** The clock reading the run starts at, in milliseconds. */
  readonly start: number;
  /** The clock reading traffic stops at, in milliseconds (exclusive). */
  readonly end: number;
  /** Draws in [0, 1) for this traffic alone. */
  readonly random: Random;
}

/**
 * A stream of arrivals, read one at a time: {@link Arrivals.next} moves to the next one and
 * returns its time; {@link Arrivals.key} and {@link Arrivals.cost} then describe it.
 */
export interface Arrivals {
  /** Moves to the next arrival and returns its time in milliseconds (never earlier than the last), or `Infinity` once the stream has ended. */
  next(): number;
  /** The key (an index into the model's keys) of the arrival `next` returned last. */
  readonly key: number;
  /** The cost of that arrival (1 unless the model says otherwise). */
  readonly cost: number;
}

/** The keys a traffic model's calls come from. */
export interface KeyTable {
  /** How many keys. */
  readonly count: number;
  /** The text of key `i`. */
  readonly name: (i: number) => string;
  /**
   * The priority of key `i`'s calls (a level's number or name: see `traffic.priority`; `undefined`
   * for a key whose calls give none), when the traffic has priorities: a run then records each
   * priority's calls apart. @defaultValue none
   */
  readonly priority?: (i: number) => number | string | undefined;
}

/**
 * A traffic model: a description of arrivals that can be opened any number of times, each
 * time giving the same stream for the same random draws. It holds no state of its own.
 */
export interface Traffic {
  /** What it is, for reports: `"poisson(500/s)"`. */
  readonly label: string;
  /** The keys its calls come from. */
  readonly keys: KeyTable;
  /** A fresh stream of arrivals for one run. */
  open(context: TrafficContext): Arrivals;
}

/** What every traffic model built from a rate accepts besides its rate. */
export interface StreamOptions {
  /** Who makes the calls. @defaultValue one key, `"key-0"` */
  readonly keys?: KeyModel;
  /** Each call's cost: a number, or a distribution to draw it from. @defaultValue 1 */
  readonly cost?: number | Distribution;
  /** When the stream begins, in milliseconds after the run's start. @defaultValue 0 */
  readonly at?: Span;
  /** When it ends, in milliseconds after the run's start; the run's end caps it. @defaultValue the run's end */
  readonly until?: Span;
}

/** How arrivals are spaced around a rate: evenly, or as a Poisson process (exponential gaps). */
export type Process = "even" | "poisson";

export const STREAM_FIELDS = ["keys", "cost", "at", "until"] as const;

/** Stream options, checked. @internal */
export interface Resolved {
  readonly keys: KeyModel;
  readonly cost: Distribution | undefined;
  readonly fixedCost: number;
  readonly at: number;
  readonly until: number;
}

/** Checks the options every stream shares. @internal */
export function resolveStream(o: Partial<StreamOptions>, what: string): Resolved {
  const keys = o.keys === undefined ? single() : o.keys;
  if (typeof keys !== "object" || keys === null || typeof keys.pick !== "function") {
    throw new TypeError(
      `${what} keys must be a key model (keys.single, keys.uniform, keys.zipf), got ${check.describe(keys)}`,
    );
  }
  const at = check.nonNegative(check.or(o.at, 0), `${what} at (ms)`);
  const until = o.until === undefined ? Infinity : check.nonNegative(o.until, `${what} until (ms)`);
  if (until < at) throw new RangeError(`${what} until (ms) must be at least at (${at}), got ${until}`);
  const cost = o.cost === undefined ? 1 : o.cost;
  const d = typeof cost === "number" ? undefined : distribution(cost, `${what} cost`);
  return {
    keys,
    cost: d,
    fixedCost: typeof cost === "number" ? check.nonNegative(cost, `${what} cost`) : 0,
    at,
    until,
  };
}

/**
 * The arrivals of a rate-driven model: the next time comes from `gap`, and each arrival picks a
 * key and a cost. Shared by every model below, so the key and cost logic lives once.
 */
export class Stream implements Arrivals {
  key = 0;
  cost = 1;
  #t: number;
  readonly #end: number;
  readonly #random: Random;
  readonly #keys: KeyModel;
  readonly #costs: Distribution | undefined;
  readonly #many: boolean;
  readonly #gap: (t: number, random: Random) => number;

  constructor(
    r: Resolved,
    context: TrafficContext,
    gap: (t: number, random: Random) => number,
    first: (t: number, random: Random) => number,
  ) {
    this.#random = context.random;
    this.#keys = r.keys;
    this.#many = r.keys.count > 1;
    this.#costs = r.cost;
    this.cost = r.fixedCost;
    this.#end = Math.min(context.end, context.start + r.until);
    this.#gap = gap;
    this.#t = first(context.start + r.at, context.random);
  }

  next(): number {
    const t = this.#t;
    if (!(t < this.#end)) return (this.#t = Infinity);
    this.#t = this.#gap(t, this.#random);
    if (this.#many) this.key = this.#keys.pick(this.#random);
    if (this.#costs !== undefined) this.cost = this.#costs.sample(this.#random);
    return t;
  }
}

/** Keys are kept in 32-bit integers. */
const MAX_KEYS = 2 ** 31 - 1;

/**
 * Checks a traffic model handed to a run (its keys and label), returning its key count; `whose`
 * names it in messages. @internal
 */
export function checkTraffic(traffic: Traffic, whose = "the traffic's"): number {
  const keys = traffic.keys;
  if (keys === null || typeof keys !== "object")
    throw new TypeError(
      `${whose} keys must be a key table (an object with count and name), got ${check.describe(keys)}`,
    );
  const count = keys.count;
  if (typeof count !== "number" || !Number.isInteger(count) || count < 1 || count > MAX_KEYS)
    throw new RangeError(
      `${whose} keys count must be a whole number from 1 to 2 147 483 647, got ${check.describe(count)}`,
    );
  if (typeof keys.name !== "function")
    throw new TypeError(`${whose} keys name must be a function, got ${check.describe(keys.name)}`);
  if (keys.priority !== undefined && typeof keys.priority !== "function")
    throw new TypeError(
      `${whose} keys priority must be a function of the key, or left out, got ${check.describe(keys.priority)}`,
    );
  if (typeof traffic.label !== "string")
    throw new TypeError(`${whose} label must be text, got ${check.describe(traffic.label)}`);
  return count;
}

/** A traffic model from its label, keys and opener. @internal */
export function model(label: string, keys: KeyTable, open: (context: TrafficContext) => Arrivals): Traffic {
  return Object.freeze({ label, keys, open });
}
