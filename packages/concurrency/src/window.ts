import { check } from "@tideward/time/internal";
import type { Span } from "@tideward/time";

/**
 * The constants of a sample window: a plain readonly record. A {@link Limiter} given one folds
 * the calls that finish within a window into one sample for its algorithm — their mean round
 * trip, the most calls in flight any of them found, and whether any was dropped — so the limit
 * moves once a window rather than once a call.
 */
export interface SampleWindow {
  /** The shortest a window lasts, in milliseconds. @defaultValue 1000 */
  readonly min: Span;
  /** The longest a window lasts, in milliseconds, at least `min`. @defaultValue 1000 */
  readonly max: Span;
  /**
   * The fewest calls a window must hold to count, a whole number from 1: a window with fewer is
   * thrown away (too few round trips to average). @defaultValue 10
   */
  readonly size: number;
}

/**
 * The preset, Netflix `WindowedLimit`'s constants: a window lasts twice its least round trip,
 * held between 1 000 and 1 000 ms (so one second), and counts once it holds 10 calls.
 */
export const sampleWindow: SampleWindow = Object.freeze({ min: 1_000, max: 1_000, size: 10 });

/** The most calls a window may be asked to hold: past any real traffic in a window. */
const MAX_SIZE = 2 ** 24;
const KNOWN = ["min", "max", "size"] as const;

/**
 * Lays `policy` over the preset and checks every field, once.
 *
 * @throws TypeError when `policy` is not an object, names a field `SampleWindow` does not have
 *   (with the closest it does), or a field is not a number; RangeError when `min` is not above
 *   0, `max` is under `min` or not finite, or `size` is not a whole number from 1 to 2^24
 */
export function resolveWindow(policy: Partial<SampleWindow>): SampleWindow {
  const p = { ...sampleWindow, ...check.options(policy, KNOWN, "Limiter window") };
  const min = check.positive(p.min, "SampleWindow min (ms)");
  const max = check.finite(p.max, "SampleWindow max (ms)");
  if (max < min)
    throw new RangeError(`SampleWindow max (ms) must be at least min (${min}), got ${check.describe(max)}`);
  const size = check.integer(p.size, "SampleWindow size", 1);
  if (size > MAX_SIZE) throw new RangeError(`SampleWindow size must be at most ${MAX_SIZE} (2^24), got ${size}`);
  return Object.freeze({ min, max, size });
}

/**
 * The window being filled, as a limiter keeps it: a few numbers, reset in place, so folding a
 * call in allocates nothing. @internal
 */
export class Samples {
  readonly #min: number;
  readonly #max: number;
  readonly #size: number;
  // When the window being filled closes (ms); -Infinity before the first call, so the first
  // finish opens the first window.
  #end = -Infinity;
  #count = 0;
  #timed = 0;
  #sum = 0;
  #least = Infinity;
  #inflight = 0;
  #dropped = false;

  /** The closed window's sample, read right after {@link Samples.add} answered true. */
  rtt = Number.NaN;
  inflight = 0;
  dropped = false;

  constructor(window: SampleWindow) {
    this.#min = window.min;
    this.#max = window.max;
    this.#size = window.size;
  }

  /**
   * Folds in a call that finished at `end` (ms) after `rtt` ms (NaN when unknown), having found
   * `inflight` in flight, dropped or not. Answers true when that closed a window that counts:
   * its sample is then in `rtt` (the mean of the known round trips, NaN when none was known),
   * `inflight` (the most found) and `dropped` (whether any was).
   */
  add(rtt: number, inflight: number, dropped: boolean, end: number): boolean {
    this.#count++;
    if (rtt > 0 && rtt < Infinity) {
      this.#timed++;
      this.#sum += rtt;
      if (rtt < this.#least) this.#least = rtt;
    }
    if (inflight > this.#inflight) this.#inflight = inflight;
    if (dropped) this.#dropped = true;
    if (!(end > this.#end)) return false;
    // The window closes: the next one lasts twice its least round trip, within [min, max].
    const twice = this.#least * 2;
    this.#end = end + (twice < this.#min ? this.#min : twice > this.#max ? this.#max : twice);
    const ready = this.#count >= this.#size;
    if (ready) {
      this.rtt = this.#timed > 0 ? this.#sum / this.#timed : Number.NaN;
      this.inflight = this.#inflight;
      this.dropped = this.#dropped;
    }
    this.#count = 0;
    this.#timed = 0;
    this.#sum = 0;
    this.#least = Infinity;
    this.#inflight = 0;
    this.#dropped = false;
    return ready;
  }
}
