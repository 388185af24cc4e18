import { describe, expect, it } from "vitest";
import { failures, latency, stream } from "@tideward/sim";
import { moments } from "./helpers";

const N = 200_000;
const draw = (d: { sample: (r: () => number) => number }, seed = 1): number[] => {
  const r = stream(seed, "test");
  return Array.from({ length: N }, () => d.sample(r));
};
const quantile = (xs: number[], q: number): number => [...xs].sort((a, b) => a - b)[Math.floor(q * (xs.length - 1))];

describe("latency distributions", () => {
  it("fixed and uniform stay where they say", () => {
    expect(new Set(draw(latency.fixed(7))).size).toBe(1);
    const u = draw(latency.uniform(10, 30));
    expect(u.reduce((a, b) => Math.min(a, b))).toBeGreaterThanOrEqual(10);
    expect(u.reduce((a, b) => Math.max(a, b))).toBeLessThan(30);
    expect(Math.abs(moments(u).mean - 20)).toBeLessThan(5 * Math.sqrt(400 / 12 / N));
  });

  it("exponential: mean and standard deviation both the mean, median mean · ln 2", () => {
    const e = draw(latency.exponential(20));
    const m = moments(e);
    expect(Math.abs(m.mean - 20)).toBeLessThan(5 * (20 / Math.sqrt(N)));
    expect(Math.abs(Math.sqrt(m.variance) - 20)).toBeLessThan(0.5);
    expect(Math.abs(quantile(e, 0.5) - 20 * Math.LN2)).toBeLessThan(0.3);
  });

  it("log-normal: the median as given, the mean median · e^(σ²/2), the tail as σ says", () => {
    const d = latency.logNormal({ median: 15, sigma: 0.6 });
    const x = draw(d);
    expect(d.mean).toBeCloseTo(15 * Math.exp(0.18), 12);
    expect(Math.abs(quantile(x, 0.5) - 15) / 15).toBeLessThan(0.01);
    expect(Math.abs(moments(x).mean - d.mean) / d.mean).toBeLessThan(0.01);
    // The 99th percentile of a log-normal is median · e^(2.326 σ).
    expect(Math.abs(quantile(x, 0.99) - 15 * Math.exp(2.326 * 0.6)) / (15 * Math.exp(2.326 * 0.6))).toBeLessThan(0.03);
  });

  it("bimodal: the slow share as given, the mean the mixture's", () => {
    const d = latency.bimodal({ fast: latency.fixed(10), slow: latency.fixed(500), share: 0.05 });
    const x = draw(d);
    const slow = x.filter((v) => v === 500).length / N;
    expect(Math.abs(slow - 0.05)).toBeLessThan(5 * Math.sqrt((0.05 * 0.95) / N));
    expect(d.mean).toBeCloseTo(0.95 * 10 + 0.05 * 500, 12);
  });

  it("say what is wrong with their input", () => {
    expect(() => latency.exponential(-1)).toThrow(/exponential mean must be 0 or more, got -1/);
    expect(() => latency.logNormal({ median: 0 })).toThrow(/median must be above 0/);
    expect(() => latency.logNormal({ median: 1, sigmaa: 1 } as never)).toThrow(/did you mean "sigma"/);
    expect(() => latency.uniform(5, 1)).toThrow(/max must be at least min/);
    expect(() => latency.bimodal({ fast: latency.fixed(1), slow: "slow" as never })).toThrow(
      /bimodal slow must be a number or a distribution/,
    );
  });
});

describe("failure schedules", () => {
  it("a base rate with windows laid over it, the later window winning", () => {
    const s = failures.schedule(
      [
        { from: 10, to: 30, rate: 0.5 },
        { from: 20, to: 25, rate: 1 },
      ],
      0.01,
    );
    expect([0, 9.99, 10, 19, 20, 24.9, 25, 29, 30, 1e9].map((t) => s.rate(t))).toEqual([
      0.01, 0.01, 0.5, 0.5, 1, 1, 0.5, 0.5, 0.01, 0.01,
    ]);
    expect(failures.outage({ from: 5, to: 6 }).rate(5.5)).toBe(1);
    expect(failures.brownout({ from: 5, to: 6 }).rate(5.5)).toBe(0.4);
    expect(() => failures.outage({ from: 6, to: 5 })).toThrow(/to \(ms\) must be at least from/);
    expect(() => failures.constant(1.5)).toThrow(/between 0 and 1/);
  });
});
