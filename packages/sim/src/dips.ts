import { check } from "@tideward/time/internal";
import type { Span } from "@tideward/time";

/**
 * A stretch of a run during which the backend is degraded: its service times stretched, or
 * some of its workers gone. The trigger of a metastable failure: it tips the backend into
 * overload, and whether the overload outlasts it is what the policies decide.
 */
export interface Dip {
  /** When it begins, in milliseconds after the run's start (inclusive). */
  readonly from: Span;
  /** When it ends, in milliseconds after the run's start (exclusive). */
  readonly to: Span;
  /** Service times are multiplied by this during it, above 0: 2 is a latency spike that halves capacity. @defaultValue 1 */
  readonly latency?: number;
  /** Workers left during it, a whole number from 0 up to the backend's `workers`: a capacity dip. @defaultValue all of them */
  readonly workers?: number;
}

/**
 * The dips of a backend as breakpoints: from each edge on, a service-time factor and a number
 * of workers. Where dips overlap, their factors multiply and the fewest workers win.
 */
export class DipSchedule {
  /** The offsets (ms after the start) where something changes, ascending, the first 0. */
  readonly edges: Float64Array;
  readonly #factor: Float64Array;
  readonly #workers: Float64Array;
  /** Whether any dip stretches service times. */
  readonly stretches: boolean;

  constructor(dips: readonly Dip[], workers: number, what: string) {
    if (!Array.isArray(dips)) throw new TypeError(`${what} must be an array of dips, got ${check.describe(dips)}`);
    const checked = dips.map((d: Dip, i) => {
      const o = check.options(d, ["from", "to", "latency", "workers"], `${what}[${i}]`);
      const from = check.nonNegative(o.from, `${what}[${i}] from (ms)`);
      const to = check.nonNegative(o.to, `${what}[${i}] to (ms)`);
      if (to < from) throw new RangeError(`${what}[${i}] to (ms) must be at least from (${from}), got ${to}`);
      const factor = check.positive(o.latency ?? 1, `${what}[${i}] latency (a factor)`);
      let left = workers;
      if (o.workers !== undefined) {
        if (workers === Infinity)
          throw new RangeError(`${what}[${i}] workers needs a backend with a number of workers to take them from`);
        left = check.integer(o.workers, `${what}[${i}] workers`, 0);
        if (left > workers)
          throw new RangeError(`${what}[${i}] workers must be at most the backend's ${workers}, got ${left}`);
      }
      return { from, to, factor, left };
    });
    const cuts = [...new Set([0, ...checked.flatMap((d) => [d.from, d.to])])].sort((a, b) => a - b);
    this.edges = Float64Array.from(cuts);
    this.#factor = Float64Array.from(cuts, (at) =>
      checked.reduce((f, d) => (at >= d.from && at < d.to ? f * d.factor : f), 1),
    );
    this.#workers = Float64Array.from(cuts, (at) =>
      checked.reduce((w, d) => (at >= d.from && at < d.to ? Math.min(w, d.left) : w), workers),
    );
    this.stretches = checked.some((d) => d.factor !== 1);
  }

  #index(offset: number): number {
    const edges = this.edges;
    let i = edges.length - 1;
    while (i > 0 && edges[i] > offset) i--;
    return i;
  }

  /** The service-time factor `offset` ms after the start. */
  factor(offset: number): number {
    return this.#factor[this.#index(offset)];
  }

  /** The workers available from edge number `edge` on. */
  workersAt(edge: number): number {
    return this.#workers[edge];
  }

  /** The workers available `offset` ms after the start. */
  workers(offset: number): number {
    return this.#workers[this.#index(offset)];
  }
}
