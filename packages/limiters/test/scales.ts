// The clock magnitudes every property runs at: readings near 0 (simulations, ManualClock),
// near performance.now() (a process up for a second to a day: 10^3 to 10^8 ms, fractional) and
// near Date.now() or performance.timeOrigin + performance.now() (10^12 to 10^13 ms, fractional,
// where one float step is 2^-12 to 2^-9 ms).
import fc from "fast-check";

/** A clock's starting reading, by scale. */
export const scales: readonly (readonly [name: string, origin: fc.Arbitrary<number>])[] = [
  ["a clock near 0", fc.constant(0)],
  ["a performance.now() clock", fc.double({ min: 1e3, max: 1e8, noNaN: true })],
  ["a Date.now() clock", fc.double({ min: 1e12, max: 1e13, noNaN: true })],
];

/** The same, with whole-millisecond origins (Date.now() itself is whole), for exact-boundary properties. */
export const wholeScales: readonly (readonly [name: string, origin: fc.Arbitrary<number>])[] = [
  ["a clock near 0", fc.constant(0)],
  ["a performance.now() clock", fc.integer({ min: 1_000, max: 100_000_000 })],
  ["a Date.now() clock", fc.integer({ min: 1e12, max: 1e13 })],
];

const double = new Float64Array(1);
const bits = new BigInt64Array(double.buffer);

/** The double just below `x` (for x above 0 or below it alike). */
export function before(x: number): number {
  if (x === 0) return -Number.MIN_VALUE;
  double[0] = x;
  bits[0] += x > 0 ? -1n : 1n;
  return double[0];
}

/** The distance from `x` to the next double above it: one float step at `x`'s magnitude. */
export function step(x: number): number {
  double[0] = Math.abs(x);
  bits[0] += 1n;
  return double[0] - Math.abs(x);
}

/**
 * Whether a caller at `now` can land on instant `x` by adding some wait to its clock: near 0 with
 * a large wait, the sums `now + w` skip some doubles, and a limiter can only be asked to land on
 * the first one that is reachable.
 */
export function reachable(now: number, x: number): boolean {
  const w = x - now;
  return [w, before(w), -before(-w)].some((c) => c >= 0 && now + c === x);
}
