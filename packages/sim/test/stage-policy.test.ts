// policy.stage: any stage of the guard's pipeline as a policy, with no code of its own — here the
// adaptive concurrency limit, which the guard and admit gained as one stage module — built anew
// for each run, at clocks near 0 and near Date.now().
import { describe, expect, it } from "vitest";
import { FixedLimit, Limiter } from "@tideward/concurrency";
import { latency, policy, simulate, traffic } from "@tideward/sim";
import type { PolicyContext } from "@tideward/sim";

function context(start: number): PolicyContext {
  return { start, random: () => 0.5, keys: 1, keyName: String, cpu: () => 0 };
}

describe.each([0, 1_700_000_000_000.375])("policy.stage, the clock at %d", (t0) => {
  it("runs the concurrency limit stage: a place a call until it settles or is released", () => {
    const a = policy.stage("limit", () => ({ limit: new Limiter(new FixedLimit(2)) })).create(context(t0));
    expect(a.side).toBe("server");
    const first = a.admit(t0, 0, 1);
    const second = a.admit(t0 + 1, 0, 1);
    expect(first).not.toBeUndefined();
    expect(second).not.toBeUndefined();
    expect(a.admit(t0 + 2, 0, 1)).toBeUndefined();
    expect(a.stats?.()).toEqual({ "tideward.concurrency.limit": 2, "tideward.concurrency.in_flight": 2 });
    a.settle(first, t0 + 3, true);
    a.release?.(second, t0 + 3);
    expect(a.stats?.()["tideward.concurrency.in_flight"]).toBe(0);
    expect(a.admit(t0 + 4, 0, 1)).not.toBeUndefined();
  });

  it("refuses in a run past its limit, a fresh limiter each run, the same run for the same seed", () => {
    let made = 0;
    const limit = policy.stage("limit", () => {
      made++;
      return { limit: new Limiter(new FixedLimit(3)) };
    });
    const run = () =>
      simulate({
        start: t0,
        seed: 5,
        duration: 5_000,
        traffic: traffic.poisson({ rate: 100 }),
        backend: { latency: latency.fixed(50) },
        policies: [limit],
      });
    const r = run();
    // About five calls in flight at once against three places.
    expect(r.summary.refusedBy.limit).toBeGreaterThan(50);
    expect(r.summary.admitted).toBeGreaterThan(200);
    expect(r.policies[0].stats).toEqual({ "tideward.concurrency.limit": 3, "tideward.concurrency.in_flight": 0 });
    expect(run()).toEqual(r);
    expect(made).toBe(2);
  });

  it("names a kind the guard has no stage of, and a side its stage does not stand on", () => {
    expect(() => policy.stage("limits", () => ({}))).toThrow(
      /^policy\.stage kind must be one of .*"limit".*, got "limits"$/,
    );
    expect(() => policy.stage("rate", () => ({}), { side: "server" })).toThrow(
      'policy.stage side: a stage of kind "rate" stands on no server side',
    );
  });
});
