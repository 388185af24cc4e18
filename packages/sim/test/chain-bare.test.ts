// Without invariants, the chain runs a tideward breaker's and bucket's stages bare: the pipeline
// calls them directly, each entered at its place (nothing spent last). With invariants, each is
// asked through a stage of the chain's own that checks and counts it. The two must decide, and
// report, alike: in either order, at clocks near 0 and near Date.now().
import { describe, expect, it } from "vitest";
import { latency, policy, simulate, traffic } from "@tideward/sim";

describe.each([0, 1_700_000_000_000.375])("a breaker and a bucket run bare, the clock at %d", (start) => {
  it.each([
    ["the bucket first", () => [policy.bucket(150, { burst: 5 }), policy.breaker()]],
    ["the breaker first", () => [policy.breaker(), policy.bucket(150, { burst: 5 })]],
  ])("decide as when the chain checks them, %s", (_order, policies) => {
    const run = (invariants: boolean) =>
      simulate({
        start,
        seed: 7,
        duration: 3_000,
        invariants,
        traffic: traffic.poisson({ rate: 400 }),
        backend: { latency: latency.fixed(5), failures: 0.6 },
        policies: policies(),
      });
    const bare = run(false);
    const checked = run(true);
    // Both refuse a share of the calls: the breaker throttles a failing backend, the bucket runs dry.
    expect(bare.summary.refusedBy).toEqual(checked.summary.refusedBy);
    expect(bare.summary.refusedBy.breaker).toBeGreaterThan(20);
    expect(bare.summary.refusedBy.bucket).toBeGreaterThan(20);
    expect(bare.summary.hash).toBe(checked.summary.hash);
    expect(bare.summary).toEqual(checked.summary);
    expect(bare.policies).toEqual(checked.policies);
    expect(bare.policies.find((p) => p.name === "breaker")?.stats.ratio).toBeGreaterThan(0);
  });
});
