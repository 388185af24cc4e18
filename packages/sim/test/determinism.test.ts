import { describe, expect, it } from "vitest";
import { failures, keys, latency, policy, simulate, traffic } from "@tideward/sim";
import type { SimulationOptions } from "@tideward/sim";
import { STARTS } from "./helpers";

function busy(start: number, seed: number): SimulationOptions {
  return {
    seed,
    start,
    duration: 30_000,
    traffic: traffic.merge(
      traffic.poisson({ rate: 300, keys: keys.zipf({ count: 100 }) }),
      traffic.bursts({ size: 50, spacing: 1, every: 7_000 }),
    ),
    backend: {
      latency: latency.logNormal({ median: 15, sigma: 0.6 }),
      failures: failures.brownout({ from: 20_000, to: 35_000 }),
      workers: 8,
      queue: 50,
    },
    client: {
      timeout: 60,
      retry: { backoff: { attempts: 3, base: 20 }, budget: { ratio: 0.2 } },
      hedge: { after: 60 },
    },
    policies: [policy.breaker(), policy.bucket(50, { perKey: true }), policy.shedder({ cpu: 800 }), policy.gate(12)],
  };
}

describe("determinism", () => {
  for (const start of STARTS) {
    it(`the same seed gives the same run, bit for bit (start ${start})`, () => {
      const a = simulate(busy(start, 42));
      const b = simulate(busy(start, 42));
      expect(a.summary.hash).toMatch(/^[0-9a-f]{16}$/);
      expect(b.summary.hash).toBe(a.summary.hash);
      expect(JSON.stringify(b)).toBe(JSON.stringify(a));
      // The run exercised every part: refusals of several kinds, retries, hedges, timeouts.
      expect(a.summary.retries).toBeGreaterThan(0);
      expect(a.summary.hedges).toBeGreaterThan(0);
      expect(a.summary.timedOut).toBeGreaterThan(0);
      expect(Object.keys(a.summary.refusedBy).length).toBeGreaterThanOrEqual(2);
    });

    it(`a different seed gives a different hash (start ${start})`, () => {
      const hashes = new Set([1, 2, 3, 4, 5].map((seed) => simulate(busy(start, seed)).summary.hash));
      expect(hashes.size).toBe(5);
    });
  }

  it("one changed decision changes the hash", () => {
    const base = { duration: 10_000, traffic: traffic.constant({ rate: 100 }) };
    const a = simulate({ ...base, policies: [policy.bucket(99.99, { burst: 1 })] });
    const b = simulate({ ...base, policies: [policy.bucket(100, { burst: 1 })] });
    expect(a.summary.refused).toBeGreaterThan(b.summary.refused);
    expect(a.summary.hash).not.toBe(b.summary.hash);
  });

  it("a policy and its baseline see the same traffic on the same seed", () => {
    const base = {
      seed: 9,
      duration: 30_000,
      traffic: traffic.poisson({ rate: 200 }),
      backend: { failures: failures.outage({ from: 10_000, to: 20_000 }) },
    };
    const a = simulate({ ...base, policies: [policy.breaker()] });
    const b = simulate({ ...base, policies: [policy.classicBreaker()] });
    expect(a.series.offered).toEqual(b.series.offered);
    expect(a.summary.hash).not.toBe(b.summary.hash);
  });
});
