import { describe, expect, it } from "vitest";
import { breakerOutage } from "@tideward/sim";
import { STARTS } from "./helpers";

describe.each(STARTS)("breaker under an outage (start %s)", (start) => {
  const r = breakerOutage.run({}, { start });
  const f = r.figures;

  it("runs tideward's breaker, the classic one and none on the same calls", () => {
    expect(r.runs.map((x) => x.label)).toEqual(["tideward breaker", "classic breaker", "no breaker"]);
    expect(r.runs[1].series.offered).toEqual(r.runs[0].series.offered);
    expect(r.runs[2].series.offered).toEqual(r.runs[0].series.offered);
  });

  it("both breakers spare the dead backend; without one, every call reaches it", () => {
    expect(f["none.reachedDuringOutage"]).toBe(1);
    expect(f["tideward.reachedDuringOutage"]).toBeLessThan(0.2);
    expect(f["classic.reachedDuringOutage"]).toBeLessThan(0.05);
    // tideward keeps probing: more of the outage's calls reach the backend than the classic breaker's single probes.
    expect(f["tideward.reachedDuringOutage"]).toBeGreaterThan(f["classic.reachedDuringOutage"]);
  });

  it("what tideward lets through comes in the outage's first seconds, then about a probe a second", () => {
    const s = r.runs[0].series;
    const during = (from: number, to: number) => s.backendLoad.slice(from, to).reduce((a, b) => a + b, 0);
    expect(during(60, 70)).toBeGreaterThan(0.8 * during(60, 120));
    expect(during(80, 120)).toBeLessThanOrEqual(2 * 40);
  });

  it("after the outage, tideward's refusals fade over about a window; the classic breaker waits for a probe", () => {
    // The window is ten seconds: within about two of them tideward's calls succeed again.
    expect(f["tideward.recoverySeconds"]).toBeGreaterThan(0);
    expect(f["tideward.recoverySeconds"]).toBeLessThanOrEqual(20);
    // The classic breaker closes on the first probe after the outage: within its open time.
    expect(f["classic.recoverySeconds"]).toBeLessThanOrEqual(5);
    expect(f["none.recoverySeconds"]).toBe(0);
  });

  it("states its figures in the report", () => {
    expect(r.report).toContain("tideward breaker");
    expect(r.report).toContain("classic breaker");
    expect(r.report).toContain(`${(Math.round(f["tideward.reachedDuringOutage"] * 1_000) / 10).toFixed(1)} %`);
    expect(r.report).toContain(`within ${f["tideward.recoverySeconds"]} s`);
    expect(r.tables[0].rows).toHaveLength(3);
  });
});

describe("scenario parameters", () => {
  it("lays parameters over the defaults and checks them against their knobs", () => {
    expect(breakerOutage.resolve({ rate: 50 })).toMatchObject({ rate: 50, seed: 1, outageFrom: 60 });
    expect(() => breakerOutage.resolve({ rat: 50 })).toThrow(/no knob "rat"; did you mean "rate"/);
    expect(() => breakerOutage.resolve({ rate: 0 })).toThrow(/rate must be between 10 and 5000, got 0/);
    expect(() => breakerOutage.resolve({ threshold: 2.5 })).toThrow(/whole number/);
    expect(() => breakerOutage.run({ outageFrom: 100, outageTo: 50 })).toThrow(/outageTo/);
  });

  it("is plain JSON in and out", () => {
    const r = breakerOutage.run({ duration: 60, outageFrom: 10, outageTo: 20 });
    expect(JSON.parse(JSON.stringify(r))).toEqual(r);
    expect(JSON.parse(JSON.stringify(breakerOutage.knobs))).toEqual(breakerOutage.knobs);
  });

  it("the same seed reproduces the run; another seed does not", () => {
    const a = breakerOutage.run({ duration: 60, outageFrom: 10, outageTo: 20, seed: 3 });
    const b = breakerOutage.run({ duration: 60, outageFrom: 10, outageTo: 20, seed: 3 });
    const c = breakerOutage.run({ duration: 60, outageFrom: 10, outageTo: 20, seed: 4 });
    expect(b.runs.map((x) => x.summary.hash)).toEqual(a.runs.map((x) => x.summary.hash));
    expect(c.runs[0].summary.hash).not.toBe(a.runs[0].summary.hash);
  });
});
