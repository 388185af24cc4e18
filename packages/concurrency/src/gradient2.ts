import { check, read } from "@tideward/time/internal";
import { ADOPT, MAX_LIMIT, STATE, STEP, bounds, clamp } from "./bounds";

/**
 * The constants of the Gradient2 limit: a plain readonly record. Build one by laying fields over
 * the preset, `{ ...gradient2, max: 500 }`, or hand `new Gradient2Limit` just the fields that
 * differ.
 */
export interface Gradient2 {
  /** The limit to start from, in places (whole calls in flight). @defaultValue 20 */
  readonly initial: number;
  /** The least the limit falls to, in places. @defaultValue 20 */
  readonly min: number;
  /** The most the limit rises to, in places (at most 2^24). @defaultValue 200 */
  readonly max: number;
  /**
   * How far the limit moves towards each new estimate, from over 0 to 1: 0.2 takes a fifth of
   * the way. @defaultValue 0.2
   */
  readonly smoothing: number;
  /** The places the limit may grow by while round trips stay low (a queue it allows). @defaultValue 4 */
  readonly queue: number;
  /**
   * How many samples the long-term round trip averages over (its exponential weight is
   * `2 / (long + 1)`). @defaultValue 600
   */
  readonly long: number;
  /**
   * How much longer than the long-term round trip a call may take before the limit shrinks, at
   * least 1: 1.5 lets round trips grow by half. @defaultValue 1.5
   */
  readonly tolerance: number;
}

/**
 * The preset, Netflix `Gradient2Limit`'s constants: from 20 places, between 20 and 200,
 * smoothing 0.2, a queue of 4, a long-term average over 600 samples, a tolerance of 1.5.
 */
export const gradient2: Gradient2 = Object.freeze({
  initial: 20,
  min: 20,
  max: 200,
  smoothing: 0.2,
  queue: 4,
  long: 600,
  tolerance: 1.5,
});

const KNOWN = ["initial", "min", "max", "smoothing", "queue", "long", "tolerance"] as const;
/** The first samples the long-term round trip is a plain mean of, before the exponential weight takes over. */
const WARMUP = 10;
/** A long-term round trip over twice the latest one is cut by this each sample: recovery from a long overload. */
const DECAY = 0.95;

function resolveGradient2(policy: Partial<Gradient2> | undefined): Gradient2 {
  if (policy === undefined) return gradient2;
  const p = { ...gradient2, ...check.options(policy, KNOWN, "Gradient2Limit", "policy") };
  const smoothing = check.finite(p.smoothing, "Gradient2 smoothing");
  if (!(smoothing > 0 && smoothing <= 1))
    throw new RangeError(`Gradient2 smoothing must be above 0 and at most 1, got ${check.describe(smoothing)}`);
  const queue = check.nonNegative(p.queue, "Gradient2 queue");
  if (queue > MAX_LIMIT) throw new RangeError(`Gradient2 queue must be at most ${MAX_LIMIT}, got ${queue}`);
  const long = check.integer(p.long, "Gradient2 long (samples)", 1);
  const tolerance = check.finite(p.tolerance, "Gradient2 tolerance");
  if (tolerance < 1) throw new RangeError(`Gradient2 tolerance must be at least 1, got ${check.describe(tolerance)}`);
  return Object.freeze({ ...bounds(p, "Gradient2"), smoothing, queue, long, tolerance });
}

/** What a {@link Gradient2Limit} has learned. */
export interface Gradient2State {
  /** The estimate the limit is the whole part of, in places (fractions are normal). */
  readonly estimate: number;
  /** The long-term round trip, in milliseconds; null before the first sample. */
  readonly long: number | null;
  /** Samples folded into the long-term round trip, up to the 10 of its plain-mean start. */
  readonly count: number;
}

/**
 * A delay-based limit that compares a long-term round trip with the latest one: Netflix's
 * Gradient2.
 *
 * For each finished call with round trip `rtt`:
 * - `long` is an exponential average of round trips (a plain mean of the first 10, then weight
 *   `2 / (policy.long + 1)`); when `long / rtt > 2`, `long` is cut by 5 % afterwards, so it
 *   comes back down quickly once a long overload ends;
 * - a call that found under half the estimate in flight changes nothing more (the server is not
 *   the bottleneck);
 * - `gradient = clamp(tolerance × long / rtt, 0.5, 1)`: 1 while round trips stay within the
 *   tolerance, down to 0.5 as they grow;
 * - `estimate = (1 − smoothing) × estimate + smoothing × (estimate × gradient + queue)`, held to
 *   `[min, max]`. The limit is its whole part.
 *
 * It has no fixed baseline: `long` follows the round trips it sees, so when the backend's min-RTT
 * drifts up, `long` drifts with it (over some `policy.long` samples) and the limit settles back
 * rather than staying cut. The price is that a slow build-up of queueing is accepted as the new
 * normal at the same pace. It probes by adding `queue` places each sample while the gradient is 1
 * (a steady growth of about `smoothing × queue` a sample); it refuses nothing to measure. A drop
 * counts only through its round trip (the source reads no drop flag), and a round trip of 0 ms
 * (a clock too coarse to see the call) is no sample.
 *
 * @example
 * const limit = new Gradient2Limit({ initial: 50, min: 1 });
 * limit.sample(10, 50, false); // long = 10; gradient 1: 50 × 0.8 + (50 + 4) × 0.2
 * limit.estimate; // 50.8
 * limit.sample(40, 50, false); // long = 25; gradient = max(0.5, 1.5 × 25 / 40) ≈ 0.94
 * limit.limit; // 50
 */
export class Gradient2Limit {
  /** The policy in force: the `gradient2` preset with the fields given at construction laid over it. */
  readonly policy: Gradient2;
  readonly #p: Gradient2;
  readonly #weight: number;
  #estimate: number;
  #long = 0;
  #count = 0;

  /**
   * A Gradient2 limit at the policy's `initial`, with no long-term round trip yet.
   *
   * @param policy - fields laid over the {@link gradient2} preset; checked here, once
   * @throws TypeError when `policy` is not an object, names an unknown field (with the closest
   *   known one) or a field is not a number; RangeError when `min`, `max` or `initial` is not a
   *   whole number in `1 ≤ min ≤ initial ≤ max ≤ 2^24`, `smoothing` is outside `(0, 1]`, `queue`
   *   is negative or over 2^24, `long` is not a whole number of at least 1 or `tolerance` is
   *   under 1
   */
  constructor(policy?: Partial<Gradient2>) {
    const p = resolveGradient2(policy);
    this.policy = p;
    this.#p = p;
    this.#weight = 2 / (p.long + 1);
    this.#estimate = p.initial;
  }

  /** Which algorithm this is, as snapshots name it. */
  get kind(): "gradient2" {
    return "gradient2";
  }

  /** The limit in force, in places: the whole part of the estimate, from `min` to `max`. */
  get limit(): number {
    return Math.floor(this.#estimate);
  }

  /** The estimate the limit is the whole part of, in places. */
  get estimate(): number {
    return this.#estimate;
  }

  /** The long-term round trip, in milliseconds; NaN before the first sample. */
  get long(): number {
    return this.#count === 0 ? Number.NaN : this.#long;
  }

  /** Always false: Gradient2's long-term round trip follows every sample, so it never probes for a baseline (see `VegasLimit.probing`). */
  get probing(): false {
    return false;
  }

  /**
   * Folds one finished call in.
   *
   * @param rtt - how long it took, in milliseconds; a round trip that is not a number above 0
   *   is no sample, a drop included
   * @param inflight - how many calls were in flight when it was let in, itself included; a
   *   value that is not a number reads as 0 (no change)
   * @param _dropped - read by the other algorithms; Gradient2 reads only the round trip
   */
  sample(rtt: number, inflight: number, _dropped?: boolean): void {
    if (!(typeof rtt === "number" && rtt > 0 && rtt < Infinity)) return;
    const p = this.#p;
    const estimate = this.#estimate;
    let long: number;
    if (this.#count < WARMUP) long = this.#long + (rtt - this.#long) / ++this.#count;
    else long = this.#long * (1 - this.#weight) + rtt * this.#weight;
    // The cut applies to what is kept; this sample's gradient uses the average before it.
    this.#long = long / rtt > 2 ? long * DECAY : long;
    if (!(typeof inflight === "number" && inflight >= estimate / 2)) return;
    const ratio = (p.tolerance * long) / rtt;
    const gradient = ratio < 0.5 ? 0.5 : ratio > 1 ? 1 : ratio;
    const next = estimate * (1 - p.smoothing) + (estimate * gradient + p.queue) * p.smoothing;
    this.#estimate = clamp(next, p.min, p.max);
  }

  /** @internal {@link Gradient2Limit.sample} as its limiter takes it, answering the limit after it. */
  [STEP](rtt: number, inflight: number, dropped: boolean): number {
    this.sample(rtt, inflight, dropped);
    return this.limit;
  }

  /** @internal The learned state, for a snapshot. */
  [STATE](): Gradient2State {
    return { estimate: this.#estimate, long: this.#count === 0 ? null : this.#long, count: this.#count };
  }

  /** @internal Takes learned state from a snapshot (already checked). */
  [ADOPT](state: Gradient2State): void {
    this.#estimate = state.estimate;
    this.#long = state.long ?? 0;
    this.#count = state.count;
  }
}

/** Reads a {@link Gradient2State} from a snapshot, within `policy`'s bounds. */
export function readGradient2(value: unknown, path: string, policy: Gradient2): Gradient2State {
  const r = read.record(value, path, ["estimate", "long", "count"]);
  const estimate = read.within(r.estimate, `${path}.estimate`, policy.min, policy.max);
  const count = read.whole(r.count, `${path}.count`, 0, WARMUP);
  if ((r.long === null) !== (count === 0))
    read.fail(
      `${path}.long`,
      `must be null exactly when count is 0, got ${check.describe(r.long)} with count ${count}`,
    );
  let long: number | null = null;
  if (r.long !== null) {
    long = read.within(r.long, `${path}.long`, 0, Number.MAX_VALUE);
    if (long === 0) read.fail(`${path}.long`, "must be above 0 ms, got 0");
  }
  return { estimate, long, count };
}
