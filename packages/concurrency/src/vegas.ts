import { check, read } from "@tideward/time/internal";
import { ADOPT, MAX_LIMIT, STATE, bounds, clamp, log10Step } from "./bounds";

/**
 * The constants of the Vegas limit: a plain readonly record. Build one by laying fields over the
 * preset, `{ ...vegas, max: 500 }`, or hand `new VegasLimit` just the fields that differ.
 *
 * `alpha`, `beta` and `threshold` are multiples of the limit's step `s = max(1, floor(log10
 * limit))` (1 under 100 places, 2 under 1000, …), as Netflix's functions of the limit are.
 */
export interface Vegas {
  /** The limit to start from, in places (whole calls in flight). @defaultValue 20 */
  readonly initial: number;
  /** The least the limit falls to, in places. @defaultValue 1 */
  readonly min: number;
  /** The most the limit rises to, in places (at most 2^24). @defaultValue 1000 */
  readonly max: number;
  /**
   * How far the limit moves towards each new estimate, from over 0 to 1: 1 takes the estimate
   * whole. @defaultValue 1
   */
  readonly smoothing: number;
  /** Under `alpha × s` queued calls the limit grows by `s`. @defaultValue 3 */
  readonly alpha: number;
  /** Over `beta × s` queued calls the limit shrinks by `s`. @defaultValue 6 */
  readonly beta: number;
  /** At or under `threshold × s` queued calls the limit grows by `beta × s`. @defaultValue 1 */
  readonly threshold: number;
  /**
   * The no-load round trip is re-measured every `probe × limit × jitter` samples, `jitter` in
   * `[0.5, 1)`. @defaultValue 30
   */
  readonly probe: number;
  /**
   * Where this instance's probe jitter starts, in `[0, 1)`: the jitters are
   * `0.5 + 0.5 × frac(seed + k × 0.618…)` for the k-th probe, deterministic. Give each instance
   * its own (`Math.random()` at start-up) so a fleet does not probe in step. @defaultValue 0
   */
  readonly seed: number;
  /**
   * Opt-in, a share from 0 to 1: how much of the excess queue one sample drains. Over `beta × s`
   * queued calls the limit falls to `estimate − max(s, drain × (queue − alpha × s))`: 1 goes
   * straight to the calls in service plus `alpha × s`; 0 is the preset's one step `s`, however
   * long the queue. @defaultValue 0
   */
  readonly drain: number;
  /**
   * Opt-in, a share from 0 to 1: how much of itself the limit may grow by in one sample while
   * little queues. From the third sample in a row under `alpha × s` queued calls, on a sample that
   * found the limit full and not on a probe's own baseline, the limit rises by `max(step, grow × estimate × room²)`, `room = (alpha
   * × s − queue) / (alpha × s)` and `step` the preset's (`beta × s` or `s`); 0 is the preset's
   * step alone. @defaultValue 0
   */
  readonly grow: number;
}

/**
 * The preset, Netflix `VegasLimit`'s constants: from 20 places, at most 1000, alpha 3, beta 6,
 * threshold 1 (times the limit's log10 step), no smoothing, a probe every 30 × limit samples
 * (times a jitter in [0.5, 1)); `drain` and `grow` 0, the source's fixed steps.
 */
export const vegas: Vegas = Object.freeze({
  initial: 20,
  min: 1,
  max: 1_000,
  smoothing: 1,
  alpha: 3,
  beta: 6,
  threshold: 1,
  probe: 30,
  seed: 0,
  drain: 0,
  grow: 0,
});

const KNOWN = [
  "initial",
  "min",
  "max",
  "smoothing",
  "alpha",
  "beta",
  "threshold",
  "probe",
  "seed",
  "drain",
  "grow",
] as const;
/** 1/φ: successive multiples modulo 1 spread as evenly as any sequence can. */
const GOLDEN = 0.6180339887498949;
/** Samples in a row under alpha before the one that may leap by `grow`: one or two read so by chance at the limit. */
const CALM = 2;

function resolveVegas(policy: Partial<Vegas> | undefined): Vegas {
  if (policy === undefined) return vegas;
  const p = { ...vegas, ...check.options(policy, KNOWN, "VegasLimit", "policy") };
  const smoothing = check.finite(p.smoothing, "Vegas smoothing");
  if (!(smoothing > 0 && smoothing <= 1))
    throw new RangeError(`Vegas smoothing must be above 0 and at most 1, got ${check.describe(smoothing)}`);
  const threshold = check.nonNegative(p.threshold, "Vegas threshold");
  const alpha = check.nonNegative(p.alpha, "Vegas alpha");
  const beta = check.nonNegative(p.beta, "Vegas beta");
  if (alpha < threshold)
    throw new RangeError(`Vegas alpha must be at least threshold (${threshold}), got ${check.describe(alpha)}`);
  if (beta < alpha) throw new RangeError(`Vegas beta must be at least alpha (${alpha}), got ${check.describe(beta)}`);
  const probe = check.finite(p.probe, "Vegas probe");
  if (!(probe >= 1 && probe <= MAX_LIMIT))
    throw new RangeError(`Vegas probe must be from 1 to ${MAX_LIMIT}, got ${check.describe(probe)}`);
  const seed = check.finite(p.seed, "Vegas seed");
  if (seed < 0 || seed >= 1)
    throw new RangeError(`Vegas seed must be 0 or more and under 1, got ${check.describe(seed)}`);
  const drain = share(p.drain, "drain");
  const grow = share(p.grow, "grow");
  return Object.freeze({ ...bounds(p, "Vegas"), smoothing, alpha, beta, threshold, probe, seed, drain, grow });
}

/** A share from 0 to 1, checked. */
function share(value: number, name: string): number {
  const x = check.finite(value, `Vegas ${name}`);
  if (!(x >= 0 && x <= 1)) throw new RangeError(`Vegas ${name} must be from 0 to 1, got ${check.describe(x)}`);
  return x;
}

/** The jitter of the k-th probe: in `[0.5, 1)`. */
function jitter(seed: number, k: number): number {
  const x = seed + k * GOLDEN;
  return 0.5 + 0.5 * (x - Math.floor(x));
}

/** What a {@link VegasLimit} has learned. */
export interface VegasState {
  /** The estimate the limit is the whole part of, in places (fractions are normal). */
  readonly estimate: number;
  /** The no-load round trip, in milliseconds; null before the first sample. */
  readonly noLoad: number | null;
  /** Samples since the last probe. */
  readonly count: number;
  /** Probes made so far (where the jitter sequence stands). */
  readonly probes: number;
}

/**
 * A delay-based limit: TCP Vegas's queue estimate from the no-load round trip.
 *
 * It keeps `noLoad`, the least round trip seen since the last probe. For each finished call with
 * round trip `rtt` that does not set a new `noLoad`:
 * - `queue = ceil(estimate × (1 − noLoad / rtt))`, the calls waiting rather than being served;
 * - a drop: `estimate − s`; a call that found under half the estimate in flight: no change;
 * - `queue ≤ threshold × s`: `estimate + beta × s` (nothing queues: grow fast);
 * - `queue < alpha × s`: `estimate + s`; `queue > beta × s`: `estimate − s`; between: no change;
 * - opt-in, for a limit that settles in a few samples rather than a step a sample: with `drain`
 *   a long queue is drained in proportion, `estimate − max(s, drain × (queue − alpha × s))`, and
 *   with `grow` a third sample in a row under `alpha × s` that found the limit full grows by up
 *   to `grow × estimate`
 *   (see {@link Vegas.grow});
 * - the result is held to `[min, max]` and smoothed: `estimate = (1 − smoothing) × estimate +
 *   smoothing × result`. The limit is its whole part.
 *
 * When the backend's real no-load round trip drifts up (a slower dependency, a bigger payload),
 * `noLoad` stays at the old low value, so every call reads as queued and the limit shrinks, until
 * the next probe. The probe is passive: after `probe × limit × jitter` samples the next round trip
 * is taken as the new `noLoad`, whatever the load — it refuses nothing, but a probe taken under
 * load sets `noLoad` too high and the limit then grows past what the backend serves without
 * queueing, until a lower round trip is seen. A round trip of 0 ms (a clock too coarse to see
 * the call) is no sample: it would read as no queue at all.
 *
 * @example
 * const limit = new VegasLimit({ initial: 10 });
 * limit.sample(10, 10, false); // the first round trip: the no-load baseline, 10 ms
 * limit.sample(10, 10, false); // no queue (0 ≤ 1): grows by beta × 1
 * limit.limit; // 16
 * limit.sample(20, 16, false); // queue = ceil(16 × (1 − 10/20)) = 8 > 6: shrinks by 1
 * limit.limit; // 15
 */
export class VegasLimit {
  /** The policy in force: the `vegas` preset with the fields given at construction laid over it. */
  readonly policy: Vegas;
  readonly #p: Vegas;
  #estimate: number;
  #noLoad = 0;
  #count = 0;
  #probes = 0;
  #jitter: number;
  // Whether the baseline in force is a probe's own round trip (no lower one seen since).
  #probing = false;
  // Samples in a row under alpha, up to CALM: `grow`'s leap waits for CALM before the one it takes.
  #calm = 0;

  /**
   * A Vegas limit at the policy's `initial`, with no baseline yet.
   *
   * @param policy - fields laid over the {@link vegas} preset; checked here, once
   * @throws TypeError when `policy` is not an object, names an unknown field (with the closest
   *   known one) or a field is not a number; RangeError when `min`, `max` or `initial` is not a
   *   whole number in `1 ≤ min ≤ initial ≤ max ≤ 2^24`, `smoothing` is outside `(0, 1]`, the
   *   step multiples are negative or not `threshold ≤ alpha ≤ beta`, `probe` is outside
   *   `[1, 2^24]`, `seed` outside `[0, 1)`, or `drain` or `grow` outside `[0, 1]`
   */
  constructor(policy?: Partial<Vegas>) {
    const p = resolveVegas(policy);
    this.policy = p;
    this.#p = p;
    this.#estimate = p.initial;
    this.#jitter = jitter(p.seed, 0);
  }

  /** Which algorithm this is, as snapshots name it. */
  get kind(): "vegas" {
    return "vegas";
  }

  /** The limit in force, in places: the whole part of the estimate, from `min` to `max`. */
  get limit(): number {
    return Math.floor(this.#estimate);
  }

  /** The estimate the limit is the whole part of, in places. */
  get estimate(): number {
    return this.#estimate;
  }

  /** The no-load round trip in use, in milliseconds; NaN before the first sample. */
  get noLoad(): number {
    return this.#noLoad === 0 ? Number.NaN : this.#noLoad;
  }

  /**
   * Whether the limit is measuring its no-load round trip: true from a probe until a lower round
   * trip replaces the probe's as the baseline. Vegas's probe is passive — it holds no places back,
   * so a refusal made while this is true is a refusal at the limit, counted apart only to tell
   * what probing costs (a probe taken under load raises the baseline, and so the limit). Not
   * kept in a snapshot: a restored limit is not probing.
   */
  get probing(): boolean {
    return this.#probing;
  }

  /**
   * Folds one finished call in.
   *
   * @param rtt - how long it took, in milliseconds; a round trip that is not a number above 0
   *   is unknown: then a drop still shrinks the estimate, and a pass is no sample
   * @param inflight - how many calls were in flight when it was let in, itself included; a
   *   value that is not a number reads as 0 (no growth)
   * @param dropped - whether it was dropped (timed out, refused downstream, overloaded)
   */
  sample(rtt: number, inflight: number, dropped: boolean): void {
    const drop = dropped === true;
    if (typeof rtt === "number" && rtt > 0 && rtt < Infinity) {
      const p = this.#p;
      if (this.#jitter * p.probe * this.#estimate <= ++this.#count) {
        // The probe: this round trip is the new baseline, whatever the load.
        this.#jitter = jitter(p.seed, ++this.#probes);
        this.#count = 0;
        this.#noLoad = rtt;
        this.#probing = true;
        return;
      }
      if (this.#noLoad === 0 || rtt < this.#noLoad) {
        this.#noLoad = rtt;
        this.#probing = false;
        return;
      }
      this.#update(rtt, typeof inflight === "number" ? inflight : 0, drop);
    } else if (drop) {
      this.#update(Number.NaN, 0, true);
    }
  }

  #update(rtt: number, inflight: number, drop: boolean): void {
    const p = this.#p;
    const estimate = this.#estimate;
    const s = log10Step(estimate);
    const calm = this.#calm;
    this.#calm = 0;
    let next: number;
    if (drop) next = estimate - s;
    else if (inflight * 2 < estimate) return;
    else {
      const queue = Math.ceil(estimate * (1 - this.#noLoad / rtt));
      const alpha = p.alpha * s;
      if (queue <= p.threshold * s || queue < alpha) {
        // The leap waits for a third sample in a row under alpha, for a sample that found the
        // limit full (one that does not bind has nothing to leap for, and would only drift up
        // faster) and for a baseline that is not a probe's own (taken under load, it reads as no
        // queue); it shrinks with the square of the room left, so a queue near alpha (as noise at
        // the limit reads now and then) moves the limit by little.
        this.#calm = calm < CALM ? calm + 1 : CALM;
        const step = queue <= p.threshold * s ? p.beta * s : s;
        const room = alpha > 0 ? Math.max(0, alpha - queue) / alpha : 1;
        const leap = calm >= CALM && !this.#probing && inflight >= Math.floor(estimate);
        next = estimate + (leap ? Math.max(step, p.grow * estimate * room * room) : step);
      } else if (queue > p.beta * s) next = estimate - Math.max(s, p.drain * (queue - alpha));
      else return;
    }
    next = clamp(next, p.min, p.max);
    this.#estimate = clamp((1 - p.smoothing) * estimate + p.smoothing * next, p.min, p.max);
  }

  /** @internal The learned state, for a snapshot. */
  [STATE](): VegasState {
    return {
      estimate: this.#estimate,
      noLoad: this.#noLoad === 0 ? null : this.#noLoad,
      count: this.#count,
      probes: this.#probes,
    };
  }

  /** @internal Takes learned state from a snapshot (already checked). */
  [ADOPT](state: VegasState): void {
    this.#estimate = state.estimate;
    this.#noLoad = state.noLoad ?? 0;
    this.#count = state.count;
    this.#probes = state.probes;
    this.#jitter = jitter(this.#p.seed, state.probes);
    this.#probing = false;
  }
}

/** Reads a {@link VegasState} from a snapshot, within `policy`'s bounds. */
export function readVegas(value: unknown, path: string, policy: Vegas): VegasState {
  const r = read.record(value, path, ["estimate", "noLoad", "count", "probes"]);
  const estimate = read.within(r.estimate, `${path}.estimate`, policy.min, policy.max);
  let noLoad: number | null = null;
  if (r.noLoad !== null) {
    noLoad = read.within(r.noLoad, `${path}.noLoad`, 0, Number.MAX_VALUE);
    if (noLoad === 0) read.fail(`${path}.noLoad`, "must be above 0 ms (or null before the first sample), got 0");
  }
  // A probe resets the count once it reaches probe × limit × jitter, jitter under 1.
  const most = Math.ceil(policy.probe * policy.max);
  return {
    estimate,
    noLoad,
    count: read.whole(r.count, `${path}.count`, 0, most),
    probes: read.whole(r.probes, `${path}.probes`, 0, Number.MAX_SAFE_INTEGER),
  };
}
