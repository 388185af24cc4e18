import { check } from "@tideward/time/internal";
import type { Span } from "@tideward/time";
import { IndexHeap, edgeAt } from "./heap";

/** A stretch of a run during which calls fail at `rate`: offsets in milliseconds from the run's start. */
export interface FailureWindow {
  /** When it begins, in milliseconds after the run's start (inclusive). */
  readonly from: Span;
  /** When it ends, in milliseconds after the run's start (exclusive). */
  readonly to: Span;
  /** The share of calls that fail in it, in [0, 1]. */
  readonly rate: number;
}

/**
 * How often a backend's calls fail, over the run: a base rate and windows laid over it (a later
 * window wins where two overlap). Offsets are from the run's start, so one schedule serves a run
 * starting at 0 and one starting at `Date.now()`.
 */
export class FailureSchedule {
  /** The share of calls that fail outside every window, in [0, 1]. */
  readonly base: number;
  /** The windows, as given. */
  readonly windows: readonly FailureWindow[];
  // Breakpoints: from each `edges[i]` (ms after start) on, the rate is `rates[i]`.
  readonly #edges: Float64Array;
  readonly #rates: Float64Array;

  /**
   * @throws RangeError naming the field for a rate outside [0, 1], a negative or non-finite
   *   offset, or a window that ends before it begins; TypeError for windows that are not an array
   */
  constructor(base = 0, windows: readonly FailureWindow[] = []) {
    this.base = check.between(base, 0, 1, "FailureSchedule base rate");
    const checked = checkWindows(windows, "FailureSchedule windows", (i) => `FailureSchedule window ${i}`);
    this.windows = Object.freeze(checked);
    const cuts = [...new Set([0, ...checked.flatMap((w) => [w.from, w.to])])].sort((a, b) => a - b);
    this.#edges = Float64Array.from(cuts);
    this.#rates = sweep(cuts, checked, this.base);
  }

  /** The share of calls failing `offset` milliseconds after the run's start, in [0, 1]. */
  rate(offset: number): number {
    return this.#rates[edgeAt(this.#edges, offset)];
  }

  /** The schedule in words, for reports. */
  get label(): string {
    const parts = this.windows.map((w) => `${Math.round(w.rate * 100)}% from ${w.from} to ${w.to} ms`);
    return parts.length === 0
      ? `${Math.round(this.base * 100)}%`
      : `${Math.round(this.base * 100)}%, then ${parts.join(", ")}`;
  }
}

/** `windows` checked, frozen; `list` names the array in messages and `item(i)` its window `i`. */
function checkWindows(windows: unknown, list: string, item: (i: number) => string): FailureWindow[] {
  if (!Array.isArray(windows))
    throw new TypeError(
      `${list} must be an array of windows such as { from: 0, to: 1000, rate: 1 }, got ${check.describe(windows)}`,
    );
  // Every index, holes included (map would skip them, and leave holes for the sweep to trip on).
  return Array.from(windows as readonly unknown[], (w, i) => {
    const name = item(i);
    if (w === undefined)
      throw new TypeError(`${name} must be a window such as { from: 0, to: 1000, rate: 1 }, got undefined`);
    const o = check.options(w as FailureWindow, ["from", "to", "rate"], name);
    const from = check.nonNegative(given(o.from, `${name} from (ms)`), `${name} from (ms)`);
    const to = check.nonNegative(given(o.to, `${name} to (ms)`), `${name} to (ms)`);
    if (to < from) throw new RangeError(`${name} to (ms) must be at least from (${from}), got ${to}`);
    return Object.freeze({ from, to, rate: check.between(given(o.rate, `${name} rate`), 0, 1, `${name} rate`) });
  });
}

/** `value`, or a TypeError saying the field `what` is missing. */
function given(value: unknown, what: string): unknown {
  if (value === undefined) throw new TypeError(`${what} is missing`);
  return value;
}

/**
 * The rate from each of `cuts` (ascending) on: that of the last window covering it, or `base`.
 * A sweep with a heap of the windows begun, latest on top; ended ones are dropped as they surface.
 */
function sweep(cuts: readonly number[], windows: readonly FailureWindow[], base: number): Float64Array {
  const byFrom = windows.map((_, i) => i).sort((a, b) => windows[a].from - windows[b].from || a - b);
  const begun = new IndexHeap((a, b) => a > b);
  const rates = new Float64Array(cuts.length);
  let next = 0;
  for (let c = 0; c < cuts.length; c++) {
    const at = cuts[c];
    while (next < byFrom.length && windows[byFrom[next]].from <= at) begun.push(byFrom[next++]);
    while (begun.size > 0 && windows[begun.top].to <= at) begun.pop();
    rates[c] = begun.size > 0 ? windows[begun.top].rate : base;
  }
  return rates;
}

/** Calls never fail. */
export const none: FailureSchedule = new FailureSchedule(0);

/** A share `rate` of calls fails, all through the run. */
export function constant(rate: number): FailureSchedule {
  return new FailureSchedule(rate);
}

/** Options of {@link outage} and {@link brownout}. */
export interface OutageOptions {
  /** When it begins, in milliseconds after the run's start. */
  readonly from: Span;
  /** When it ends, in milliseconds after the run's start. */
  readonly to: Span;
  /** The share of calls failing during it, in [0, 1]. @defaultValue 1 for an outage, 0.4 for a brown-out */
  readonly rate?: number;
  /** The share failing the rest of the time, in [0, 1]. @defaultValue 0 */
  readonly base?: number;
}

/** Every call fails (or `rate` of them) from `from` to `to` ms after the start. */
export function outage(options: OutageOptions): FailureSchedule {
  return stretch(options, "outage", 1);
}

/** A share of calls (40 % by default) fails from `from` to `to` ms after the start: a degraded backend. */
export function brownout(options: OutageOptions): FailureSchedule {
  return stretch(options, "brownout", 0.4);
}

/** An outage or brown-out, its fields checked under the name the user called (`what`). */
function stretch(options: OutageOptions, what: string, rate: number): FailureSchedule {
  if (options === undefined) throw new TypeError(`failures.${what} needs options such as { from: 0, to: 1000 }`);
  const o = check.options(options, ["from", "to", "rate", "base"], `failures.${what}`);
  const [w] = checkWindows([{ from: o.from, to: o.to, rate: check.or(o.rate, rate) }], "", () => `failures.${what}`);
  return new FailureSchedule(check.between(check.or(o.base, 0), 0, 1, `failures.${what} base`), [w]);
}

/** A base rate with any number of windows laid over it. */
export function schedule(windows: readonly FailureWindow[], base = 0): FailureSchedule {
  // Checked here first so that messages name what the user called.
  checkWindows(windows, "failures.schedule windows", (i) => `failures.schedule windows[${i}]`);
  return new FailureSchedule(check.between(base, 0, 1, "failures.schedule base"), windows);
}
