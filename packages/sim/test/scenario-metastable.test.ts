import { describe, expect, it } from "vitest";
import { metastableOverload } from "@tideward/sim";
import { STARTS } from "./helpers";

// 70 s: the 10 s trigger from 30 s, then 30 s to recover in.
const SHORT = { duration: 70 };

describe.each(STARTS)("metastable overload (start %s)", (start) => {
  const r = metastableOverload.run(SHORT, { start });
  const f = r.figures;

  it("runs the guard's default first and the rest on the same calls, with the capacity in its figures", () => {
    expect(r.runs[0].label).toMatch(/^guard default/);
    expect(f.capacity).toBe(200);
    for (const run of r.runs) {
      expect(run.series.offered).toEqual(r.runs[0].series.offered);
      const s = run.summary;
      expect(s.goodput).toBeLessThanOrEqual(s.completed);
      expect(s.admitted + s.refused).toBe(s.attempts);
      expect(s.backendLoad).toBeLessThanOrEqual(s.admitted);
    }
  });

  it("with retries and no policy it never recovers; without retries it does: the retries hold the overload", () => {
    expect(f["retries.recovered"]).toBe(0);
    expect(f["retries.goodputAfter"]).toBeLessThan(15);
    // Three times the offered load reaches the backend, most of it attempts nobody waits for.
    expect(f["retries.backendPerSecond"]).toBeGreaterThan(1.5 * f.capacity);
    expect(f["retries.wasted"]).toBeGreaterThan(10 * f["guard.wasted"]);
    expect(f["none.recovered"]).toBe(1);
  });

  it("the guard's default recovers within 10 s of the trigger's end, sooner than the sre breaker and the budget alone", () => {
    expect(f["guard.recovered"]).toBe(1);
    expect(f["guard.recoverySeconds"]).toBeLessThanOrEqual(10);
    expect(f["sre.recoverySeconds"]).toBeGreaterThan(f["guard.recoverySeconds"]);
    expect(f["budget.recoverySeconds"]).toBeGreaterThan(f["guard.recoverySeconds"] + 10);
    expect(f["guard.goodputRate"]).toBeGreaterThan(f["retries.goodputRate"] + 0.3);
  });

  it("at 75 % of capacity, before the trigger, the shedder refuses nothing", () => {
    expect(f["shedder.refusedBeforeTrigger"]).toBe(0);
    const s = r.runs.find((run) => run.label === "retries, shedder")?.series;
    if (s === undefined) throw new Error("no shedder run");
    expect(s.refused.slice(0, 30).every((n) => n === 0)).toBe(true);
  });

  it("says which never recovered in the report", () => {
    expect(r.report).toContain("never came back");
    expect(r.tables[0].rows.find((row) => row[0] === "retries, no policy")).toContain("never");
  });
});

describe("metastable overload: knobs", () => {
  it("a backend that drops expired work lets the budget recover within a few seconds, where serving it took tens", () => {
    const served = metastableOverload.run(SHORT).figures;
    const dropped = metastableOverload.run({ ...SHORT, abandoned: "drop" }).figures;
    expect(dropped["budget.recovered"]).toBe(1);
    expect(dropped["budget.recoverySeconds"]).toBeLessThanOrEqual(3);
    expect(dropped["budget.recoverySeconds"]).toBeLessThan(served["budget.recoverySeconds"]);
    expect(dropped["retries.wasted"]).toBeLessThan(served["retries.wasted"]);
  });

  it("with no trigger nothing tips over, retries or not", () => {
    const calm = metastableOverload.run({ duration: 40, triggerLength: 0 }).figures;
    for (const id of ["guard", "retries", "none", "budget", "sre", "client", "classic", "shedder"]) {
      expect(calm[`${id}.goodputRate`]).toBeGreaterThan(0.97);
      expect(calm[`${id}.recovered`]).toBe(1);
    }
  });

  it("names the policy slowest to recover as the figures rank them: the budget alone at the defaults, the sre breaker at a lighter load", () => {
    const slowest = (r: ReturnType<typeof metastableOverload.run>): string => {
      const f = r.figures;
      const ids = ["guard", "budget", "sre", "client", "classic", "shedder"];
      const at = (id: string): number => (f[`${id}.recovered`] === 1 ? f[`${id}.recoverySeconds`] : Infinity);
      return ids.reduce((a, b) => (at(b) > at(a) ? b : a));
    };
    const defaults = metastableOverload.run();
    expect(slowest(defaults)).toBe("budget");
    expect(defaults.report).toContain("The budget alone is the slowest policy to recover here");
    const lighter = metastableOverload.run({ rate: 120 });
    expect(slowest(lighter)).toBe("sre");
    expect(lighter.report).not.toContain("The budget alone is the slowest");
    expect(lighter.report).toContain(
      `The slowest policy to recover here is the sre breaker (${lighter.figures["sre.recoverySeconds"]} s after the trigger)`,
    );
  });
});

describe("metastable overload: the adaptive limits", () => {
  const at = (f: Record<string, number>, id: string): number =>
    f[`${id}.recovered`] === 1 ? f[`${id}.recoverySeconds`] : Infinity;

  it.each([1, 2, 3])(
    "Gradient2 behind the guard's default recovers at least as soon as the shedder (seed %i)",
    (seed) => {
      const f = metastableOverload.run({ ...SHORT, seed }).figures;
      expect(at(f, "guard+gradient2")).toBeLessThanOrEqual(at(f, "shedder"));
      // The limit keeps the backend from being asked for far past its capacity.
      expect(f["guard+gradient2.backendPerSecond"]).toBeLessThan(f.capacity);
    },
  );

  it.each([1, 2, 3])(
    "Vegas behind the guard's default recovers at least as soon as the shedder, its samples a second's calls (seed %i)",
    (seed) => {
      const f = metastableOverload.run({ ...SHORT, seed }).figures;
      expect(at(f, "guard+vegas")).toBeLessThanOrEqual(at(f, "shedder"));
      // Sampled a call at a time it read the spread of service times as queueing and refused
      // hundreds of calls at steady load; a second's mean round trip does not.
      expect(f["shedder.refusedBeforeTrigger"]).toBe(0);
      expect(f["guard+vegas.refusedBeforeTrigger"]).toBeLessThan(0.001 * f.capacity * 30);
    },
  );
});
