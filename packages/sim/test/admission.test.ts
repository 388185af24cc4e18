import { describe, expect, it } from "vitest";
import { FixedLimit, Limiter, Priorities, Queue } from "@tideward/concurrency";
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

  it("runs admit's concurrency limit, a limiter made for each run, each request at its key's priority", () => {
    const mixed = traffic.merge(
      traffic.priority("user", traffic.poisson({ rate: 150, keys: keys.single("user") })),
      traffic.priority("prefetch", traffic.poisson({ rate: 300, keys: keys.single("prefetch") })),
    );
    const limiter = () =>
      new Limiter(new FixedLimit(8), {
        priorities: new Priorities({ levels: ["user", "prefetch"], shares: [0.5, 0.5], fallback: "user" }),
      });
    let made = 0;
    const run = (spec: ReturnType<typeof policy.admission>) =>
      simulate({ ...base, duration: 5_000, traffic: mixed, backend: { latency: latency.fixed(40) }, policies: [spec] });
    const viaAdmit = run(policy.admission({ limit: () => (made++, limiter()) }));
    const viaStage = run(policy.stage("limit", () => ({ limit: limiter() }), { name: "admission" }));
    expect(made).toBe(1);
    // The same decisions as the limit's stage on its own: prefetch held to its half of the places.
    expect(viaAdmit.series.admitted).toEqual(viaStage.series.admitted);
    expect(viaAdmit.summary.refusedBy).toEqual(viaStage.summary.refusedBy);
    expect(viaAdmit.summary.refusedBy["admission/reserved"]).toBeGreaterThan(0);
    const by = viaAdmit.summary.byPriority ?? {};
    expect(by.prefetch.refused / by.prefetch.calls).toBeGreaterThan(2 * (by.user.refused / by.user.calls));
  });

  it("names bad options when the spec is made", () => {
    expect(() => policy.admission({ gate: 0 })).toThrow(/gate/);
    expect(() => policy.admission({ limts: [] } as never)).toThrow(/did you mean "limits"/);
    expect(() => policy.admission({ limt: () => undefined } as never)).toThrow(/did you mean "limit"/);
    expect(() => policy.admission({ limit: new Limiter(new FixedLimit(2)) } as never)).toThrow(
      /^policy\.admission limit must be a function of the run's context making a Limiter \(each run makes its own\), got /,
    );
    expect(() => policy.admission({ wait: new Queue() } as never)).toThrow(/^policy\.admission wait: /);
    expect(() => policy.admission({ priority: {} } as never)).toThrow(/admit priority/);
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
