import { describe, expect, it } from "vitest";
import { seededRandom } from "@tideward/time";

describe("seededRandom", () => {
  it("gives the same sequence for the same seed and another for another seed", () => {
    const a = seededRandom(42);
    const b = seededRandom(42);
    const c = seededRandom(43);
    const xs = Array.from({ length: 100 }, a);
    expect(Array.from({ length: 100 }, b)).toEqual(xs);
    const ys = Array.from({ length: 100 }, c);
    expect(ys.filter((y, i) => y === xs[i]).length).toBe(0);
  });

  it("draws in [0, 1), uniformly enough", () => {
    const draw = seededRandom(7);
    const n = 200_000;
    const bins = new Array<number>(20).fill(0);
    let sum = 0;
    let outside = 0;
    for (let i = 0; i < n; i++) {
      const x = draw();
      if (!(x >= 0 && x < 1)) outside++;
      sum += x;
      bins[Math.floor(x * 20)] += 1;
    }
    expect(outside).toBe(0);
    // Mean of U(0,1) is 1/2 with standard error 1/sqrt(12n) ≈ 0.00065; allow six of them.
    expect(Math.abs(sum / n - 0.5)).toBeLessThan(0.004);
    // Each of 20 bins expects 10,000 with standard deviation ≈ 97; allow six of them.
    for (const count of bins) expect(Math.abs(count - n / 20)).toBeLessThan(600);
    // Chi-square with 19 degrees of freedom: 43.8 is the 0.1% tail.
    const chi = bins.reduce((acc, c) => acc + (c - n / 20) ** 2 / (n / 20), 0);
    expect(chi).toBeLessThan(43.8);
  });

  it("rejects a NaN or infinite seed", () => {
    expect(() => seededRandom(Number.NaN)).toThrow(/seededRandom seed must be a finite number, got NaN/);
    expect(() => seededRandom(Infinity)).toThrow(RangeError);
  });
});
