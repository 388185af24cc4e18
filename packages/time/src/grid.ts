// The float grid clock readings live on: the neighbouring doubles of a reading, and the wait that
// lands a caller's `now + wait` on an instant. A reading near Date.now() (about 2^40.6 ms) is a
// double whose neighbours are 2^-12 ms apart, so `now + wait` lands on that grid, not on the real
// number: a deadline's remaining time and every limiter's wait are turned into the wait that
// reaches their instant in the caller's own arithmetic.

// A double's bits as two 32-bit words, to step to a neighbouring double exactly. Typed arrays use
// the platform's byte order, so which word holds the low half is found once.
const double = new Float64Array(1);
const words = new Uint32Array(double.buffer);
const LOW = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1 ? 0 : 1;
const HIGH = 1 - LOW;

/** The next double above `x` (NaN and Infinity stay as they are). */
export function above(x: number): number {
  if (!(x < Infinity)) return x;
  if (x === 0) return Number.MIN_VALUE;
  double[0] = x;
  if (x > 0) {
    if (words[LOW] === 0xffffffff) {
      words[LOW] = 0;
      words[HIGH] += 1;
    } else words[LOW] += 1;
  } else if (words[LOW] === 0) {
    words[LOW] = 0xffffffff;
    words[HIGH] -= 1;
  } else words[LOW] -= 1;
  return double[0];
}

/** The next double below `x`. */
export function below(x: number): number {
  return -above(-x);
}

/**
 * The wait from the caller's `now` until `instant`, in ms, as the caller will add it: `now + wait`
 * in floating point lands on `instant` (or, where no double wait lands there exactly, on the
 * first double after it), so a test of the reading against the instant passes there and not a
 * float step sooner; 0 when `instant` is at or before `from` — the instant the caller's state reads
 * `now` as (`now` itself, or its latest reading when the clock stepped back). `Infinity` stays
 * `Infinity`.
 */
export function until(now: number, from: number, instant: number): number {
  if (!(instant > from)) return 0;
  // Exact whenever `now` and `instant` are within a factor of two of each other (Sterbenz): then
  // the sum lands on the instant and nothing more is done.
  const wait = instant - now;
  // `+`: the rare call's result as a raw double, so V8 does not box the common answer into a heap
  // number to share a tagged representation with it.
  return now + wait === instant || instant === Infinity ? wait : +landing(now, instant, wait);
}

// The rare path of `until`: a wait as large as the reading itself, whose sum can round either way.
function landing(now: number, instant: number, wait: number): number {
  while (now + wait < instant) wait = above(wait);
  for (let i = 0; i < 8 && now + wait > instant; i++) {
    const less = below(wait);
    if (now + less < instant) break;
    wait = less;
  }
  return wait;
}
