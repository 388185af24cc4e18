import { check } from "@tideward/time/internal";
import type { Span } from "@tideward/time";

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
   *   offset, or a window that ends before it begins
   */
  constructor(base = 0, windows: readonly FailureWindow[] = []) {
    this.base = check.between(base, 0, 1, "FailureSchedule base rate");
    const checked = windows.map((w, i) => {
      const o = check.options(w, ["from", "to", "rate"], `FailureSchedule window ${i}`);
      const from = check.nonNegative(o.from, `FailureSchedule window ${i} from (ms)`);
      const to = check.nonNegative(o.to ?? Infinity, `FailureSchedule window ${i} to (ms)`);
      if (to < from)
        throw new RangeError(`FailureSchedule window ${i} to (ms) must be at least from (${from}), got ${to}`);
      return Object.freeze({ from, to, rate: check.between(o.rate, 0, 1, `FailureSchedule window ${i} rate`) });
    });
    this.windows = Object.freeze(checked);
    const cuts = [...new Set([0, ...checked.flatMap((w) => [w.from, w.to])])].sort((a, b) => a - b);
    this.#edges = Float64Array.from(cuts);
    this.#rates = Float64Array.from(cuts, (at) => {
      let r = this.base;
      for (const w of checked) if (at >= w.from && at < w.to) r = w.rate;
      return r;
    });
  }

  /** The share of calls failing `offset` milliseconds after the run's start, in [0, 1]. */
  rate(offset: number): number {
    const edges = this.#edges;
    // Few windows: a backwards scan from the end finds the breakpoint.
    let i = edges.length - 1;
    while (i > 0 && edges[i] > offset) i--;
    return this.#rates[i];
  }

  /** The schedule in words, for reports. */
  get label(): string {
    const parts = this.windows.map((w) => `${Math.round(w.rate * 100)}% from ${w.from} to ${w.to} ms`);
    return parts.length === 0
      ? `${Math.round(this.base * 100)}%`
      : `${Math.round(this.base * 100)}%, then ${parts.join(", ")}`;
  }
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
  const o = check.options(options, ["from", "to", "rate", "base"], "outage");
  return new FailureSchedule(o.base ?? 0, [{ from: o.from as number, to: o.to as number, rate: o.rate ?? 1 }]);
}

/** A share of calls (40 % by default) fails from `from` to `to` ms after the start: a degraded backend. */
export function brownout(options: OutageOptions): FailureSchedule {
  const o = check.options(options, ["from", "to", "rate", "base"], "brownout");
  return new FailureSchedule(o.base ?? 0, [{ from: o.from as number, to: o.to as number, rate: o.rate ?? 0.4 }]);
}

/** A base rate with any number of windows laid over it. */
export function schedule(windows: readonly FailureWindow[], base = 0): FailureSchedule {
  return new FailureSchedule(base, windows);
}
