// The CPU reading a backend hands the shedder is smoothed as LoadSampler smooths it (about 4.9 s),
// which is what the shedder's threshold is a level of: at a steady 75 % of capacity it refuses
// nothing. A reading smoothed over 250 ms (the old default) crosses 900 ‰ from noise and sheds.
import { describe, expect, it } from "vitest";
import { latency, policy, simulate, traffic } from "@tideward/sim";
import { STARTS } from "./helpers";

// 200 calls a second of capacity, as one, four or forty workers.
const servers = [
  { workers: 1, service: 5 },
  { workers: 4, service: 20 },
  { workers: 40, service: 200 },
] as const;

describe.each(STARTS)("policy.shedder at a steady 75 %% of capacity (start %s)", (start) => {
  const at75 = (workers: number, service: number, seed: number, cpuSmoothing?: number) =>
    simulate({
      start,
      seed,
      duration: 60_000,
      traffic: traffic.poisson({ rate: 150 }),
      backend: {
        latency: latency.exponential(service),
        workers,
        ...(cpuSmoothing === undefined ? {} : { cpuSmoothing }),
      },
      policies: [policy.shedder()],
    });

  it.each(servers)("refuses nothing on the backend's default CPU reading (%o)", ({ workers, service }) => {
    for (const seed of [1, 2, 3]) {
      const r = at75(workers, service, seed);
      expect(r.summary.calls).toBeGreaterThan(8_500);
      expect(r.summary.refused).toBe(0);
      expect(r.summary.successRate).toBe(1);
    }
  });

  it("refuses a share of calls on a reading smoothed over 250 ms: the signal, not the shedder, was wrong", () => {
    const r = at75(40, 200, 1, 250);
    const share = r.summary.refused / r.summary.calls;
    expect(share).toBeGreaterThan(0.03);
    expect(share).toBeLessThan(0.1);
  });
});
