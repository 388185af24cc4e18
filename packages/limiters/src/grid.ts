// The float grid instants live on, and the bounds inside which every limiter keeps its promises.
//
// A clock reading near Date.now() (about 2^40.6 ms) is a double whose neighbours are 2^-12 ms
// apart, so `now + wait` lands on that grid, not on the real number. Every wait a limiter answers
// is therefore an instant found on the grid first (the earliest instant at which its own test
// passes) and then turned into the wait that reaches it in the caller's own arithmetic.

/**
 * The largest clock reading, in milliseconds either side of 0, that the limiters accept: 2^45 ms,
 * about 1 115 years either side of 1970. Near it one float step is 2^-7 ms; near `Date.now()`
 * today (below 2^41 until 2039) it is 2^-12 ms.
 */
export const MAX_INSTANT = 2 ** 45;

/** The longest span a limiter is configured with (a period, a window, a refill), in ms: 2^44, about 557 years. */
export const MAX_SPAN = 2 ** 44;

/**
 * The shortest period or window, in ms: 2^-4 (62.5 µs). A span is honoured to within half a float
 * step of the clock reading it starts at, so at the edge of {@link MAX_INSTANT} this span is kept
 * to 1/32 of its length, and near `Date.now()` today to 1/512.
 */
export const MIN_SPAN = 2 ** -4;

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
 * The first double after `lo` at which `ok` holds, given that it fails at `lo`, holds somewhere
 * above, and never fails again once it holds (a limiter's test, as time passes). Gallops up, then
 * halves back. Only for the rare case where an estimate is more than one step short.
 */
export function firstAfter(lo: number, ok: (s: number) => boolean): number {
  let step = above(lo) - lo;
  let hi = lo + step;
  while (!ok(hi)) {
    if (hi === Infinity) return Infinity;
    lo = hi;
    step *= 2;
    hi = lo + step;
    if (!(hi > lo)) hi = above(lo);
  }
  for (;;) {
    const mid = lo + (hi - lo) / 2;
    if (!(mid > lo && mid < hi)) return hi;
    if (ok(mid)) hi = mid;
    else lo = mid;
  }
}

/**
 * The wait from the caller's `now` until `instant`, in ms, as the caller will add it: `now + wait`
 * in floating point lands on `instant` (or, where no double wait lands there exactly, on the
 * first double after it), so the limiter's own test passes there and not a float step sooner;
 * 0 when `instant` is at or before `from` — the instant the limiter reads `now` as (`now` itself,
 * or its latest reading when the clock stepped back). `Infinity` stays `Infinity`.
 */
export function until(now: number, from: number, instant: number): number {
  if (!(instant > from)) return 0;
  // Exact whenever `now` and `instant` are within a factor of two of each other (Sterbenz): then
  // the sum lands on the instant and nothing more is done.
  const wait = instant - now;
  // `+`: the rare call's result as a raw double, so the common answer is not boxed (see formulas.ts).
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
