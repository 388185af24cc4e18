import { describe, expect, it } from "vitest";
import { keys, latency, policy, simulate, traffic } from "@tideward/sim";
import { STARTS } from "./helpers";

describe.each(STARTS)("@tideward/guard's admission as a policy (start %s)", (start) => {
  const load = traffic.poisson({ rate: 300, keys: keys.zipf({ count: 50, prefix: "client-" }) });
  const base = {
    start,
    duration: 20_000,
    traffic: load,
    backend: { latency: latency.exponential(30), workers: 6, queue: 100 },
  };

  it("admits exactly what the same per-key bucket does on its own", () => {
    const viaGuard = simulate({
      ...base,
      policies: [policy.admission({ limits: [{ name: "api", quota: 10, window: 1_000 }] })],
      invariants: true,
    });
    const direct = simulate({ ...base, policies: [policy.bucket(10, { perKey: true })] });
    expect(viaGuard.summary.admitted).toBe(direct.summary.admitted);
    expect(viaGuard.summary.refusedBy["admission/rate"]).toBe(direct.summary.refusedBy.bucket);
    expect(viaGuard.series.admitted).toEqual(direct.series.admitted);
  });

  it("sheds on the backend's CPU, gates concurrency, limits keys, in that order; its gate's held checked at every step", () => {
    const r = simulate({
      ...base,
      traffic: traffic.poisson({ rate: 600, keys: keys.zipf({ count: 50, prefix: "client-" }) }),
      policies: [
        policy.admission({
          shedder: { cpu: 800 },
          gate: 8,
          limits: [{ name: "api", quota: 20, window: 1_000, kind: "sliding" }],
        }),
      ],
      invariants: true,
    });
    const by = r.summary.refusedBy;
    expect(by["admission/rate"]).toBeGreaterThan(0);
    expect((by["admission/gate"] ?? 0) + (by["admission/shed"] ?? 0)).toBeGreaterThan(0);
    expect(r.policies[0].side).toBe("server");
  });

  it("names bad options when the spec is made", () => {
    expect(() => policy.admission({ gate: 0 })).toThrow(/gate/);
    expect(() => policy.admission({ limts: [] } as never)).toThrow(/did you mean "limits"/);
  });

  it("bounds a run's keys by the run's own maxBytes, as they appear, not admit's every-key-at-once bound", () => {
    // A million keys at 852 B each would be past admit's own 256 MiB default; the run sees 50.
    const limits = [{ name: "api", quota: 10, window: 1_000 }];
    const r = simulate({ ...base, policies: [policy.admission({ limits, maxKeys: 1_000_000 })] });
    expect(r.summary.admitted).toBeGreaterThan(0);
    // A user's own maxBytes still holds.
    expect(() => policy.admission({ limits, maxKeys: 1_000_000, maxBytes: 2 ** 20 })).toThrow(/maxBytes/);
    // And the run's ceiling still refuses keys it cannot hold.
    const many = traffic.poisson({ rate: 2_000, keys: keys.uniform({ count: 100_000, prefix: "k-" }) });
    expect(() =>
      simulate({
        ...base,
        traffic: many,
        maxBytes: 2 ** 20,
        policies: [policy.admission({ limits, maxKeys: 1_000_000 })],
      }),
    ).toThrow(/maxBytes/);
  });
});
