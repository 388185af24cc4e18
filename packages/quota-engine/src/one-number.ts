// A token bucket of one number: the instant it is full again, F (GCRA's theoretical arrival time
// for a bucket, each token `tick = window / refill` ms of refill). One number is what a store can
// keep as one integer (Redis holds a decimal integer inside the value's object, with no allocation
// of its own), and the in-process engine keeps the same double, so both decide alike bit for bit.
//
// Only some limits keep one number. One absolute instant cannot hold a span finer than its own
// float step (2^-12 ms near Date.now()), so a bucket whose tick is not a whole number of such steps
// would round at every charge, and the roundings would add up over a burst. When the tick is a
// whole number of 2^-7 ms (at least the float step of every instant below 2^45 ms), `t + lead` of
// a charge is as exact as `t` itself: no rounding at all near Date.now() (but where a sum crosses a
// power of two, once in decades), a rounding of a float step of `t` near 0 (far below the slack).
// Other limits keep tokens and the instant they were counted, two numbers, as before.

/** Steps a millisecond of the grid a one-number bucket's tick must be on: 2^-7 ms. */
export const TICK_GRID = 128;

/** The most a bucket of one number may hold in time (`capacity · tick`, ms), so that F stays within 2^46 ms. */
export const MOST_DEPTH = 2 ** 44;

/** Whether a bucket refilling a token every `tick` ms up to `capacity` keeps one number of state. */
export function oneNumber(tick: number, capacity: number): boolean {
  const steps = tick * TICK_GRID;
  return steps === Math.floor(steps) && steps >= 1 && capacity * tick <= MOST_DEPTH;
}
