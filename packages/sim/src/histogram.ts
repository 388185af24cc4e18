// Log-linear bins read straight off a float's bits: 32 bins per power of two (the exponent and
// the top five bits of the mantissa), so a value lands within 1/64 (1.6 %) of its bin's middle.
// From 2^-10 ms (about a microsecond) to 2^44 ms (past the ±2^43 ms a run's clock may reach);
// anything below lands in the lowest bin, anything above in an overflow bin read as the max.
const SUB = 5;
const LOW = 1023 - 10;
const HIGH = 1023 + 44;
/** The bin past the last power of two: values too large to bin (and Infinity, NaN). */
const OVER = (HIGH - LOW) << SUB;
/** How many bins a {@link Histogram} has. */
export const BINS = OVER + 1;

const float = new Float64Array(1);
const words = new Uint32Array(float.buffer);

/** The bin `x` (ms, 0 or more) falls in. */
export function binOf(x: number): number {
  float[0] = x;
  const hi = words[1];
  const e = (hi >>> 20) & 0x7ff;
  if (e < LOW) return 0;
  if (e >= HIGH) return OVER;
  return ((e - LOW) << SUB) | ((hi >>> (20 - SUB)) & ((1 << SUB) - 1));
}

/** The middle of bin `i`, in ms. */
export function middle(i: number): number {
  const e = (i >> SUB) + LOW - 1023;
  const m = i & ((1 << SUB) - 1);
  return 2 ** e * (1 + (m + 0.5) / (1 << SUB));
}

/**
 * Counts of values in log-linear bins: quantiles within 1.6 %, a fixed 14 KB whatever the count,
 * and adding a value costs a few bit operations. Tracks the bins it has touched so reading and
 * clearing a sparse one costs only that range.
 */
export class Histogram {
  readonly #counts = new Float64Array(BINS);
  #lo = BINS;
  #hi = -1;
  /** Values added. */
  count = 0;
  /** Their sum (exact, not binned). */
  sum = 0;
  /** The largest value added (exact), or 0. */
  max = 0;

  add(x: number): void {
    this.addTo(binOf(x), x);
  }

  /** Adds `x`, whose bin (from {@link binOf}) is `i`. */
  addTo(i: number, x: number): void {
    this.#counts[i]++;
    if (i < this.#lo) this.#lo = i;
    if (i > this.#hi) this.#hi = i;
    this.count++;
    this.sum += x;
    if (x > this.max) this.max = x;
  }

  /** The `q`-quantile (q in [0, 1]) as the middle of its bin, or `null` with no values. */
  quantile(q: number): number | null {
    if (this.count === 0) return null;
    const rank = Math.max(1, Math.ceil(q * this.count));
    let seen = 0;
    const counts = this.#counts;
    for (let i = this.#lo; i <= this.#hi; i++) {
      seen += counts[i];
      if (seen >= rank) return i === OVER ? this.max : Math.min(middle(i), this.max);
    }
    return this.max;
  }

  /** Several quantiles in one pass; `out[j]` gets quantile `qs[j]` (ascending), or `null`. */
  quantiles(qs: readonly number[], out: (number | null)[]): void {
    if (this.count === 0) {
      for (let j = 0; j < qs.length; j++) out[j] = null;
      return;
    }
    const counts = this.#counts;
    let seen = 0;
    let j = 0;
    let rank = Math.max(1, Math.ceil(qs[0] * this.count));
    for (let i = this.#lo; i <= this.#hi && j < qs.length; i++) {
      seen += counts[i];
      while (j < qs.length && seen >= rank) {
        out[j++] = i === OVER ? this.max : Math.min(middle(i), this.max);
        if (j < qs.length) rank = Math.max(1, Math.ceil(qs[j] * this.count));
      }
    }
    while (j < qs.length) out[j++] = this.max;
  }

  clear(): void {
    if (this.#hi >= this.#lo) this.#counts.fill(0, this.#lo, this.#hi + 1);
    this.#lo = BINS;
    this.#hi = -1;
    this.count = 0;
    this.sum = 0;
    this.max = 0;
  }
}
