import { check } from "@tideward/time/internal";
import type { Span } from "@tideward/time";
import { EVENT_LIMIT } from "./clock-range";
import { IndexHeap, edgeAt } from "./heap";

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

interface Checked {
  readonly from: number;
  readonly to: number;
  readonly factor: number;
  readonly left: number;
}

/**
 * Fills `factor` and `workers` for each of `cuts` (ascending) from the dips covering it, sweeping
 * once: the fewest workers from a heap of the dips begun (ended ones dropped as they surface),
 * the factor as the product of the stretching dips in force, taken in the order the dips were
 * given so that it rounds as a plain product would. Only overlapping stretches cost more than
 * their own edges.
 */
function sweep(
  cuts: readonly number[],
  dips: readonly Checked[],
  all: number,
  factor: Float64Array,
  workers: Float64Array,
): void {
  const order = (key: (d: Checked) => number): number[] =>
    dips.map((_, i) => i).sort((a, b) => key(dips[a]) - key(dips[b]) || a - b);
  const byFrom = order((d) => d.from);
  const byTo = order((d) => d.to);
  const fewest = new IndexHeap((a, b) => dips[a].left < dips[b].left);
  // The stretching dips in force, ascending by index.
  const stretching: number[] = [];
  let begin = 0;
  let end = 0;
  for (let c = 0; c < cuts.length; c++) {
    const at = cuts[c];
    for (; begin < byFrom.length && dips[byFrom[begin]].from <= at; begin++) {
      const i = byFrom[begin];
      if (dips[i].left < all) fewest.push(i);
      if (dips[i].factor !== 1) stretching.splice(firstAtLeast(stretching, i), 0, i);
    }
    // A dip ends at a cut it began at or before: begun above, if not earlier.
    for (; end < byTo.length && dips[byTo[end]].to <= at; end++) {
      const i = byTo[end];
      if (dips[i].factor !== 1) stretching.splice(firstAtLeast(stretching, i), 1);
    }
    while (fewest.size > 0 && dips[fewest.top].to <= at) fewest.pop();
    workers[c] = fewest.size > 0 ? dips[fewest.top].left : all;
    let f = 1;
    for (const i of stretching) f *= dips[i].factor;
    factor[c] = f;
  }
}

/** Where `v` goes in ascending `list`. */
function firstAtLeast(list: readonly number[], v: number): number {
  let lo = 0;
  let hi = list.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (list[mid] < v) lo = mid + 1;
    else hi = mid;
  }
  return lo;
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

  /** @param start - the run's start, ms: each dip's edges must lie within ±2^44 ms of the epoch from it */
  constructor(dips: readonly Dip[], workers: number, what: string, start = 0) {
    if (!Array.isArray(dips)) throw new TypeError(`${what} must be an array of dips, got ${check.describe(dips)}`);
    // Every index, holes included (map would skip them, and leave holes for the sweep to trip on).
    const checked = Array.from(dips as readonly unknown[], (d, i) => {
      if (d === undefined)
        throw new TypeError(`${what}[${i}] must be a dip such as { from: 0, to: 1000, latency: 2 }, got undefined`);
      const o = check.options(d as Dip, ["from", "to", "latency", "workers"], `${what}[${i}]`);
      const from = check.nonNegative(o.from, `${what}[${i}] from (ms)`);
      const to = check.nonNegative(o.to, `${what}[${i}] to (ms)`);
      if (to < from) throw new RangeError(`${what}[${i}] to (ms) must be at least from (${from}), got ${to}`);
      // Its edges are events of the run (where the workers change, the queue is looked at).
      for (const [field, at] of [
        ["from", from],
        ["to", to],
      ] as const)
        if (!(start + at <= EVENT_LIMIT))
          throw new RangeError(
            `${what}[${i}] ${field} (ms) must lie within ${EVENT_LIMIT} ms (2^44) of the epoch from the run's start, as far as a run's events may reach: start ${start} + ${at} is past it`,
          );
      const factor = check.positive(check.or(o.latency, 1), `${what}[${i}] latency (a factor)`);
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
    this.#factor = new Float64Array(cuts.length);
    this.#workers = new Float64Array(cuts.length);
    sweep(cuts, checked, workers, this.#factor, this.#workers);
    this.stretches = checked.some((d) => d.factor !== 1);
  }

  #index(offset: number): number {
    return edgeAt(this.edges, offset);
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
