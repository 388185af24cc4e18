// The float grid instants live on, and the bounds inside which every limiter keeps its promises.
//
// A clock reading near Date.now() (about 2^40.6 ms) is a double whose neighbours are 2^-12 ms
// apart, so `now + wait` lands on that grid, not on the real number. Every wait a limiter answers
// is therefore an instant found on the grid first (the earliest instant at which its own test
// passes) and then turned into the wait that reaches it in the caller's own arithmetic.

import { above } from "@tideward/time/internal";

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

// The float-grid helpers live in @tideward/time, which a deadline's remaining time needs too.
export { above, below, until } from "@tideward/time/internal";

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
