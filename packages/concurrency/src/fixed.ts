import { check, read } from "@tideward/time/internal";
import { ADOPT, MAX_LIMIT, STATE } from "./bounds";

/** What a {@link FixedLimit} has learned: nothing. */
export type FixedState = Record<string, never>;

/**
 * A limit that never moves: a static concurrency gate, for a {@link Limiter} whose priorities
 * and queue are wanted without the adaptation (or as the baseline the adaptive ones are
 * compared with).
 *
 * @example
 * const limit = new FixedLimit(8);
 * limit.sample(5_000, 8, true); // a drop: still 8
 * limit.limit; // 8
 */
export class FixedLimit {
  readonly #limit: number;

  /**
   * @param limit - how many calls may be in flight: a whole number from 1 to 2^24
   * @throws TypeError when `limit` is not a number; RangeError when it is not a whole number
   *   from 1 to 2^24
   */
  constructor(limit: number) {
    const n = check.integer(limit, "FixedLimit limit", 1);
    if (n > MAX_LIMIT) throw new RangeError(`FixedLimit limit must be at most ${MAX_LIMIT} (2^24), got ${n}`);
    this.#limit = n;
  }

  /** Which algorithm this is, as snapshots name it. */
  get kind(): "fixed" {
    return "fixed";
  }

  /** The limit, in places. */
  get limit(): number {
    return this.#limit;
  }

  /** The limit as a number: the same as {@link FixedLimit.limit}. */
  get estimate(): number {
    return this.#limit;
  }

  /** Always false: a fixed limit measures nothing (see `VegasLimit.probing`). */
  get probing(): false {
    return false;
  }

  /** Does nothing: a fixed limit learns nothing from a finished call. */
  sample(_rtt: number, _inflight: number, _dropped?: boolean): void {}

  /** @internal The learned state, for a snapshot. */
  [STATE](): FixedState {
    return {};
  }

  /** @internal Takes learned state from a snapshot (already checked). */
  [ADOPT](_state: FixedState): void {}
}

/** Reads a {@link FixedState} from a snapshot: an empty record. */
export function readFixed(value: unknown, path: string): FixedState {
  read.record(value, path, []);
  return {};
}
