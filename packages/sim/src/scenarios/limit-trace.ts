// A policy's concurrency limit over a run, sampled into fixed steps: what a scenario plots
// against the backend's true concurrency, and how it measures the time the limit takes to
// settle after a change. A scenario makes one per run and hands it to the policy it watches.

/** The limit a policy held over a run, one value a step. */
export class LimitTrace {
  /** The step, ms. */
  readonly step: number;
  readonly #start: number;
  readonly #values: Float64Array;
  // Refusals made while the limit was probing for its no-load round trip, per step.
  readonly #probing: Float64Array;
  // The last step written, so the steps nothing was noted in are filled forward on reading.
  #last = -1;
  #value = Number.NaN;

  /**
   * @param start - the run's start, ms
   * @param duration - the run's length, ms
   * @param step - the resolution, ms
   */
  constructor(start: number, duration: number, step: number) {
    this.step = step;
    this.#start = start;
    this.#values = new Float64Array(Math.max(1, Math.ceil(duration / step))).fill(Number.NaN);
    this.#probing = new Float64Array(this.#values.length);
  }

  /** A call was refused at `now` (ms) while the limit was probing for its no-load round trip. */
  refusedProbing(now: number): void {
    const i = Math.floor((now - this.#start) / this.step);
    if (i >= 0 && i < this.#probing.length) this.#probing[i]++;
  }

  /** How many calls were refused while probing in `[from, to)` ms after the start (by the steps they fell in). */
  probingRefusals(from: number, to: number): number {
    const a = Math.max(0, Math.ceil(from / this.step));
    const b = Math.min(this.#probing.length, Math.ceil(to / this.step));
    let n = 0;
    for (let i = a; i < b; i++) n += this.#probing[i];
    return n;
  }

  /** The limit was `limit` at `now` (ms): the last value noted in a step is its value. */
  note(now: number, limit: number): void {
    const i = Math.floor((now - this.#start) / this.step);
    if (i < 0 || i >= this.#values.length) return;
    if (i > this.#last) {
      // Steps with nothing noted keep the value before them.
      for (let j = this.#last + 1; j < i; j++) this.#values[j] = this.#value;
      this.#last = i;
    }
    this.#values[i] = limit;
    this.#value = limit;
  }

  /** The value at each step (NaN before the first note; filled forward after the last). */
  values(): number[] {
    const out = Array.from(this.#values);
    for (let j = this.#last + 1; j < out.length; j++) out[j] = this.#value;
    return out;
  }
}

/**
 * How long after `from` (ms) the limit `values` (one a `step` ms) came within `band` (0.2 for
 * ±20 %) of `truth` and stayed there until `to` (ms), for at least `hold` ms: seconds, or `null`
 * when it never did (a limit that enters the band only in the last moments has not settled).
 */
export function settleTime(
  values: readonly number[],
  step: number,
  from: number,
  to: number,
  truth: number,
  band: number,
  hold = 0,
): number | null {
  const first = Math.ceil(from / step);
  const last = Math.min(values.length, Math.ceil(to / step));
  const within = (v: number): boolean => v >= truth * (1 - band) && v <= truth * (1 + band);
  let since = -1;
  for (let i = first; i < last; i++) {
    if (within(values[i])) {
      if (since < 0) since = i;
    } else since = -1;
  }
  if (since < 0 || (last - since) * step < hold) return null;
  return Math.max(0, (since * step - from) / 1_000);
}
