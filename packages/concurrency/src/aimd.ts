import { check, read } from "@tideward/time/internal";
import type { Span } from "@tideward/time";
import { ADOPT, STATE, STEP, bounds, clamp } from "./bounds";

/**
 * The constants of additive increase, multiplicative decrease: a plain readonly record. Build one
 * by laying fields over the preset, `{ ...aimd, max: 500 }`, or hand `new AimdLimit` just the
 * fields that differ.
 */
export interface Aimd {
  /** The limit to start from, in places (whole calls in flight). @defaultValue 20 */
  readonly initial: number;
  /** The least the limit falls to, in places. @defaultValue 20 */
  readonly min: number;
  /** The most the limit rises to, in places (at most 2^24). @defaultValue 200 */
  readonly max: number;
  /** What a drop multiplies the limit by, rounded down: from 0.5 to under 1. @defaultValue 0.9 */
  readonly backoff: number;
  /** A call that took longer than this counts as a drop, in milliseconds. @defaultValue 5000 */
  readonly timeout: Span;
}

/**
 * The preset, Netflix `AIMDLimit`'s constants: from 20 places, between 20 and 200, times 0.9 on a
 * drop or a call slower than 5 s, one more place for each other call finished while at least half
 * the limit was in flight.
 */
export const aimd: Aimd = Object.freeze({ initial: 20, min: 20, max: 200, backoff: 0.9, timeout: 5_000 });

const KNOWN = ["initial", "min", "max", "backoff", "timeout"] as const;

/**
 * Lays `policy` over the preset and checks every field, once.
 *
 * @throws TypeError when `policy` is not an object, names a field `Aimd` does not have (with the
 *   closest it does), or a field is not a number; RangeError when a field is out of its range
 */
function resolveAimd(policy: Partial<Aimd> | undefined): Aimd {
  if (policy === undefined) return aimd;
  const p = { ...aimd, ...check.options(policy, KNOWN, "AimdLimit", "policy") };
  const backoff = check.finite(p.backoff, "Aimd backoff");
  if (backoff < 0.5 || backoff >= 1)
    throw new RangeError(`Aimd backoff must be 0.5 or more and under 1, got ${check.describe(backoff)}`);
  return Object.freeze({
    ...bounds(p, "Aimd"),
    backoff,
    timeout: check.positive(p.timeout, "Aimd timeout (ms)"),
  });
}

/** What an {@link AimdLimit} has learned: its limit. */
export interface AimdState {
  /** The limit, in places. */
  readonly limit: number;
}

/**
 * A loss-based limit: additive increase, multiplicative decrease, as TCP's congestion window.
 * It reads no latency, only whether calls were dropped (or took longer than `timeout`).
 *
 * For each finished call (a sample):
 * - a drop, or a round trip over `timeout`: `limit = max(min, floor(limit × backoff))`;
 * - otherwise, if the call found at least half the limit in flight (`inflight × 2 ≥ limit`):
 *   `limit = min(max, limit + 1)`; a call that found less leaves the limit alone, so an idle
 *   server's limit does not drift up.
 *
 * It probes by growing one place a call until something drops, so it keeps a little over the
 * backend's capacity in flight, then gives a tenth back. It has no round-trip baseline, so a
 * drifting min-RTT changes nothing, and it refuses nothing beyond its limit while it probes.
 *
 * @example
 * const limit = new AimdLimit({ initial: 10, min: 1 });
 * limit.sample(12, 10, false); // 12 ms, with 10 in flight: one more place
 * limit.limit; // 11
 * limit.sample(40, 11, true); // a drop: floor(11 × 0.9)
 * limit.limit; // 9
 */
export class AimdLimit {
  /** The policy in force: the `aimd` preset with the fields given at construction laid over it. */
  readonly policy: Aimd;
  // The policy's fields, copied: read on every sample.
  readonly #min: number;
  readonly #max: number;
  readonly #backoff: number;
  readonly #timeout: number;
  #limit: number;

  /**
   * An AIMD limit at the policy's `initial`.
   *
   * @param policy - fields laid over the {@link aimd} preset; checked here, once
   * @throws TypeError when `policy` is not an object, names an unknown field (with the closest
   *   known one) or a field is not a number; RangeError when `min`, `max` or `initial` is not a
   *   whole number in `1 ≤ min ≤ initial ≤ max ≤ 2^24`, `backoff` is outside `[0.5, 1)` or
   *   `timeout` is not above 0
   */
  constructor(policy?: Partial<Aimd>) {
    const p = resolveAimd(policy);
    this.policy = p;
    this.#min = p.min;
    this.#max = p.max;
    this.#backoff = p.backoff;
    this.#timeout = p.timeout;
    this.#limit = p.initial;
  }

  /** Which algorithm this is, as snapshots name it. */
  get kind(): "aimd" {
    return "aimd";
  }

  /** The limit in force, in places: a whole number from `min` to `max`. */
  get limit(): number {
    return this.#limit;
  }

  /** The limit as a number: the same as {@link AimdLimit.limit} (AIMD keeps whole places). */
  get estimate(): number {
    return this.#limit;
  }

  /** Always false: AIMD keeps no no-load round trip, so it never probes for one (see `VegasLimit.probing`). */
  get probing(): false {
    return false;
  }

  /**
   * Folds one finished call in.
   *
   * @param rtt - how long it took, in milliseconds; NaN (or anything that is not a number at or
   *   above 0) when unknown: then only a drop counts, and a pass is no sample
   * @param inflight - how many calls were in flight when it was let in, itself included; a
   *   value that is not a number reads as 0 (no growth)
   * @param dropped - whether it was dropped (timed out, refused downstream, overloaded)
   */
  sample(rtt: number, inflight: number, dropped: boolean): void {
    // A string is never compared as a number: it is no round trip and no count.
    this[STEP](
      typeof rtt === "number" ? rtt : Number.NaN,
      typeof inflight === "number" ? inflight : 0,
      dropped === true,
    );
  }

  /** @internal {@link AimdLimit.sample} of numbers and a boolean, answering the limit after it. */
  [STEP](rtt: number, inflight: number, dropped: boolean): number {
    const limit = this.#limit;
    let next: number;
    // NaN (unknown) is over no timeout and at or above no 0.
    if (dropped || rtt > this.#timeout) next = Math.floor(limit * this.#backoff);
    else if (rtt >= 0 && inflight * 2 >= limit) next = limit + 1;
    else return limit;
    return (this.#limit = clamp(next, this.#min, this.#max));
  }

  /** @internal The learned state, for a snapshot. */
  [STATE](): AimdState {
    return { limit: this.#limit };
  }

  /** @internal Takes learned state from a snapshot (already checked). */
  [ADOPT](state: AimdState): void {
    this.#limit = state.limit;
  }
}

/** Reads an {@link AimdState} from a snapshot, within `policy`'s bounds. */
export function readAimd(value: unknown, path: string, policy: Aimd): AimdState {
  const r = read.record(value, path, ["limit"]);
  return { limit: read.whole(r.limit, `${path}.limit`, policy.min, policy.max) };
}
