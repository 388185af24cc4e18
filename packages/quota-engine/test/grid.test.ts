// A bucket of one number keeps the instant it is full again as a whole number of 2^-7 ms, so that
// a store can hold it as an integer and read back the very same double. These pin the encoding:
// every instant `fullAt` makes is on the grid, its integer of steps is exact and reads back to
// the bit through decimal text (what Redis does with it), and it is never after the exact sum.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { limitSpec, perSecond } from "@tideward/quota-engine";
import { Rule } from "@tideward/quota-engine/internal";
import { GRID, fullAt, oneNumber } from "../src/grid";

// Exact rationals of doubles, to compare sums without rounding.
const exact = (x: number): [bigint, bigint] => {
  // Every double is m · 2^e; scale by 2^1100 so that the numerator is an integer.
  const scale = 1100;
  const [m, e] = decompose(x);
  return [m * 2n ** BigInt(e + scale), 2n ** BigInt(scale)];
};
function decompose(x: number): [bigint, number] {
  if (x === 0) return [0n, 0];
  let e = 0;
  let m = x;
  while (!Number.isInteger(m)) {
    m *= 2;
    e--;
  }
  return [BigInt(m), e];
}

const clocks: [string, fc.Arbitrary<number>][] = [
  ["near 0", fc.double({ min: -1e6, max: 1e6, noNaN: true })],
  ["near Date.now()", fc.double({ min: 1.6e12, max: 1.9e12, noNaN: true })],
  ["across the whole clock range (±2^45 ms)", fc.double({ min: -(2 ** 45), max: 2 ** 45, noNaN: true })],
];
const leads = fc.oneof(
  fc.double({ min: 0, max: 1e6, noNaN: true }),
  fc.integer({ min: 0, max: 2 ** 20 }).map((n) => n / GRID),
  fc.double({ min: 0, max: 2 ** 44, noNaN: true }),
);

describe.each(clocks)("fullAt, on a clock %s", (_, clock) => {
  it("property: on the grid, an exact integer of steps that reads back to the bit through its decimal", () => {
    fc.assert(
      fc.property(clock, leads, (t, lead) => {
        const f = fullAt(t, lead);
        const steps = f * GRID;
        expect(Number.isSafeInteger(steps)).toBe(true);
        // As Redis keeps it: printed as a decimal integer, read back as a double, scaled back.
        const text = BigInt(steps).toString();
        expect(Number(text) / GRID).toBe(f);
        expect(Number(text)).toBe(steps);
      }),
      { numRuns: 300 },
    );
  });

  it("property: never ahead of t by more than lead, as the engine measures it, and less than a step and a float step behind", () => {
    fc.assert(
      fc.property(clock, leads, (t, lead) => {
        const f = fullAt(t, lead);
        // The engine's own reading of the bucket right after the charge: F − t, in floats.
        expect(f - t <= lead).toBe(true);
        const [fn, d] = exact(f);
        const [tn] = exact(t);
        const [ln] = exact(lead);
        // Behind the exact sum by less than one grid step and two float steps of the sum.
        const ulp = 2 ** (Math.floor(Math.log2(Math.abs(t + lead) || 1)) - 52);
        const [un] = exact(ulp);
        expect(tn + ln - fn < d / BigInt(GRID) + 2n * un).toBe(true);
      }),
      { numRuns: 300 },
    );
  });
});

describe("which buckets keep one number", () => {
  it("those whose ms a token is a whole number of steps, at least two", () => {
    expect(new Rule(perSecond("a", 2)).oneNumber).toBe(true); // 500 ms a token
    expect(new Rule(perSecond("a", 1_000)).oneNumber).toBe(true); // 1 ms
    expect(new Rule(perSecond("a", 64_000)).oneNumber).toBe(true); // 2^-6 ms: two steps
    expect(new Rule(perSecond("a", 128_000)).oneNumber).toBe(false); // one step
    expect(new Rule(perSecond("a", 3)).oneNumber).toBe(false); // 333⅓ ms
    expect(new Rule(limitSpec({ name: "a", capacity: 100, refill: 1, window: 3_600_000 })).oneNumber).toBe(true);
    expect(oneNumber(1, 2 ** 44)).toBe(true);
    expect(oneNumber(1, 2 ** 44 + 1)).toBe(false); // deeper than 2^44 ms
  });
});
