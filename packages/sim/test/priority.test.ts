// Traffic with priorities: each call carries its key's priority, and a run records offered
// calls, refusals and goodput for each priority apart, summing to the run's own totals.
import { describe, expect, it } from "vitest";
import { keys, latency, policy, simulate, traffic } from "@tideward/sim";
import type { Traffic } from "@tideward/sim";
import { STARTS } from "./helpers";

const mixed = (): Traffic =>
  traffic.merge(
    traffic.priority("critical", traffic.poisson({ rate: 50, keys: keys.single("user") })),
    traffic.priority(
      "sheddable",
      traffic.poisson({ rate: 150, keys: keys.uniform({ count: 3, prefix: "prefetch-" }) }),
    ),
    traffic.poisson({ rate: 20, keys: keys.single("other") }),
  );

describe.each(STARTS)("a run of traffic with priorities (start %s)", (start) => {
  const run = simulate({
    seed: 3,
    start,
    duration: 20_000,
    step: 1_000,
    traffic: mixed(),
    backend: { latency: latency.fixed(20), workers: 2, queue: 10 },
    client: { deadline: 500 },
    policies: [policy.gate(3)],
  });

  it("records each priority apart, the parts summing to the run's totals", () => {
    const by = run.summary.byPriority;
    expect(by).toBeDefined();
    expect(Object.keys(by ?? {}).sort()).toEqual(["(none)", "critical", "sheddable"]);
    const sum = (f: "calls" | "refused" | "goodput") => Object.values(by ?? {}).reduce((a, p) => a + p[f], 0);
    expect(sum("calls")).toBe(run.summary.calls);
    expect(sum("refused")).toBe(run.summary.refused);
    expect(sum("goodput")).toBe(run.summary.goodput);
    // Sheddable calls arrive three times as often as critical ones (Poisson, 20 s).
    const ratio = (by?.sheddable.calls ?? 0) / (by?.critical.calls ?? 1);
    expect(ratio).toBeGreaterThan(2.5);
    expect(ratio).toBeLessThan(3.5);
    for (const p of Object.values(by ?? {})) expect(p.goodputRate).toBe(p.calls > 0 ? p.goodput / p.calls : null);
  });

  it("has series per priority: offered summing to the run's per bucket, goodput counted where each call arrived", () => {
    const s = run.series.byPriority ?? {};
    const total = (xs: readonly number[]) => xs.reduce((a, x) => a + x, 0);
    for (let b = 0; b < run.series.t.length; b++)
      expect(Object.values(s).reduce((a, p) => a + p.offered[b], 0)).toBe(run.series.offered[b]);
    // Every call arrives within the run, so its goodput is in a bucket, the drain's included.
    expect(total(Object.values(s).map((p) => total(p.goodput)))).toBe(run.summary.goodput);
    expect(total(run.series.goodput)).toBeLessThan(run.summary.goodput);
    // A bucket's goodput is of the calls that arrived in it: never more than arrived.
    for (const p of Object.values(s)) p.goodput.forEach((g, b) => expect(g).toBeLessThanOrEqual(p.offered[b]));
  });
});

describe("traffic.priority", () => {
  it("gives every key of the stream its level, and a merge keeps each part's", () => {
    const t = mixed();
    expect([0, 1, 2, 3, 4].map((i) => t.keys.priority?.(i))).toEqual([
      "critical",
      "sheddable",
      "sheddable",
      "sheddable",
      undefined,
    ]);
    expect(traffic.poisson({ rate: 1 }).keys.priority).toBe(undefined);
    expect(traffic.merge(traffic.poisson({ rate: 1 })).keys.priority).toBe(undefined);
  });

  it("leaves a run of traffic without priorities as it was: no per-priority record", () => {
    const r = simulate({ seed: 1, duration: 2_000, traffic: traffic.poisson({ rate: 10 }) });
    expect("byPriority" in r.summary).toBe(false);
    expect("byPriority" in r.series).toBe(false);
  });

  it.each([
    [-1, RangeError, "traffic.priority level must be a level from 0 to 65535 or a level's name, got -1"],
    [1.5, RangeError, "traffic.priority level must be a level from 0 to 65535 or a level's name, got 1.5"],
    ["", RangeError, 'traffic.priority level must be a name of 1 to 64 characters, got ""'],
    [null, TypeError, "traffic.priority level must be a level's number or name, got null"],
  ] as const)("refuses the level %j", (level, type, message) => {
    expect(() => traffic.priority(level as never, traffic.poisson({ rate: 1 }))).toThrow(type);
    expect(() => traffic.priority(level as never, traffic.poisson({ rate: 1 }))).toThrow(message);
  });

  it("refuses a run whose keys give more distinct priorities than it records, naming the one too many", () => {
    const many: Traffic = {
      ...traffic.poisson({ rate: 2_000, keys: keys.uniform({ count: 1_000_000 }) }),
      keys: { count: 1_000_000, name: (i) => `k${i}`, priority: (i) => i % 1_000 },
    };
    expect(() => simulate({ seed: 1, duration: 1_000, traffic: many })).toThrow(
      /more than 64 distinct priorities \(the 65th is "\d+"\)/,
    );
  });

  it("names a priority function that answers what is not a priority, or throws", () => {
    const bad = (priority: (i: number) => never): Traffic => ({
      ...traffic.poisson({ rate: 100 }),
      keys: { count: 1, name: () => "k", priority },
    });
    expect(() => simulate({ seed: 1, duration: 1_000, traffic: bad(() => -2 as never) })).toThrow(
      /the traffic's keys priority\(0\) must be a level from 0 to 65535 or a level's name, got -2/,
    );
    expect(() =>
      simulate({
        seed: 1,
        duration: 1_000,
        traffic: bad(() => {
          throw new Error("boom");
        }),
      }),
    ).toThrow(/boom/);
  });
});
