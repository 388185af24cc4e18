// A token bucket of one number: the instant it is full again, F (GCRA's theoretical arrival time
// for a bucket, each token `tick = window / refill` ms of refill), kept as a whole number of grid steps
// of 2^-7 ms. One number, an exact integer, is what a store can keep as an integer (Redis holds it
// inside the value's object, with no allocation of its own), and the in-process engine keeps the
// same number, so that both decide alike bit for bit.
//
// Why a grid, and why only some limits: one absolute instant cannot hold a span finer than its
// own float step (2^-12 ms near Date.now(), 2^-7 ms at 2^45), so a bucket whose tick is not a
// whole number of steps would round at every charge, and the roundings would add up over a burst.
// When the tick is a whole number of grid steps, every F is on the grid and `F + cost · tick` is
// exact below 2^46 ms; only the first charge after rest rounds (`t + cost · tick`, down onto the
// grid: the bucket may count up to 2^-7 ms more refill than the exact one, once), and a tick of at
// least two steps keeps "from rest exactly ⌊capacity⌋ pass back to back" exact. Other limits keep
// tokens and the instant they were counted, two numbers, as before.

/** Grid steps a millisecond: a bucket's "full again at" instant is a whole number of 2^-7 ms. */
export const GRID = 128;

/** The least tick (ms a token) a bucket of one number may have: two grid steps. */
export const LEAST_TICK = 2 / GRID;

/** The most a bucket of one number may hold in time (`capacity · tick`, ms), so that F stays below 2^46 ms, where F · GRID is an exact integer. */
export const MOST_DEPTH = 2 ** 44;

/** Whether a bucket refilling a token every `tick` ms up to `capacity` keeps one number of state. */
export function oneNumber(tick: number, capacity: number): boolean {
  const steps = tick * GRID;
  return steps === Math.floor(steps) && tick >= LEAST_TICK && capacity * tick <= MOST_DEPTH;
}

/**
 * `t + lead` rounded down onto the grid: the instant a bucket charged to `lead` ms ahead of `t`
 * is full again. Down, so that rounding never refuses what the exact sum would pass; and when the
 * sum itself rounded up onto a grid point, one step down, so that F is never after the exact
 * `t + lead`. Exact when `t` and `lead` are on the grid.
 */
export function fullAt(t: number, lead: number): number {
  let f = Math.floor((t + lead) * GRID) / GRID;
  if (f - t > lead) f = (f * GRID - 1) / GRID;
  return f;
}
