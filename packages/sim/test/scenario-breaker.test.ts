import { describe, expect, it } from "vitest";
import { breakerOutage } from "@tideward/sim";
import { STARTS } from "./helpers";

describe.each(STARTS)("breaker under an outage (start %s)", (start) => {
  const r = breakerOutage.run({ spreadSeeds: 1 }, { start });
  const f = r.figures;
  const ids = ["tideward", "sre", "classic", "sampling", "opossum", "none"];

  it("runs the guard's default first, then the sre preset, the baselines and none, on the same calls", () => {
    expect(r.runs.map((x) => x.label)).toEqual([
      "tideward breaker (guard default)",
      "tideward breaker, sre preset",
      "consecutive breaker (cockatiel)",
      "sampling breaker (cockatiel)",
      "rolling-percentage breaker (opossum)",
      "no breaker",
    ]);
    for (const run of r.runs) expect(run.series.offered).toEqual(r.runs[0].series.offered);
    // What every run must add up to, whatever its breaker did.
    for (const run of r.runs) {
      const s = run.summary;
      expect(s.admitted + s.refused).toBe(s.attempts);
      expect(s.backendLoad).toBeLessThanOrEqual(s.admitted);
      expect(s.completed + s.gaveUp).toBe(s.calls);
      expect(s.goodput).toBe(s.completed);
    }
  });

  it("the guard's default meets the outage targets: ≤ 5 % of outage calls reach the backend, back within 2 s, refusals ≤ 2× the consecutive breaker's", () => {
    expect(f["tideward.reachedDuringOutage"]).toBeLessThanOrEqual(0.05);
    expect(f["tideward.recoverySeconds"]).toBeLessThanOrEqual(2);
    expect(f["tideward.refusedWhileUp"]).toBeLessThanOrEqual(2 * f["classic.refusedWhileUp"]);
    // Over the spread of outage ends, too.
    expect(f["tideward.spread.reached.max"]).toBeLessThanOrEqual(0.05);
    expect(f["tideward.spread.recovery.max"]).toBeLessThanOrEqual(2);
  });

  it("the consecutive breaker lets the fewest outage calls through, but its recovery hinges on where the outage ends", () => {
    for (const id of ids.filter((x) => x !== "classic")) {
      expect(f["classic.reachedDuringOutage"]).toBeLessThan(f[`${id}.reachedDuringOutage`]);
    }
    expect(f["none.reachedDuringOutage"]).toBe(1);
    // Moving the end by up to 4 s moves its refusals while up across most of an open period.
    expect(f["classic.spread.refusedWhileUp.max"]).toBeGreaterThan(5 * f["classic.spread.refusedWhileUp.min"]);
    expect(f["classic.spread.recovery.max"]).toBeGreaterThanOrEqual(4);
  });

  it("the sre preset's ten-second window lets more through and refuses for longer than the guard's default", () => {
    expect(f["sre.reachedDuringOutage"]).toBeGreaterThan(2 * f["tideward.reachedDuringOutage"]);
    expect(f["sre.recoverySeconds"]).toBeGreaterThan(f["tideward.recoverySeconds"] + 4);
    expect(f["sre.refusedWhileUp"]).toBeGreaterThan(5 * f["tideward.refusedWhileUp"]);
  });

  it("no breaker has the most goodput (a failure costs nothing here) and the most backend load", () => {
    for (const id of ids.slice(0, -1)) {
      expect(f["none.goodputRate"]).toBeGreaterThanOrEqual(f[`${id}.goodputRate`]);
      expect(f["none.backendPerSecond"]).toBeGreaterThan(f[`${id}.backendPerSecond`]);
    }
  });

  it("states its figures in the report and leads its table with goodput", () => {
    expect(r.report).toContain(`${(Math.round(f["tideward.reachedDuringOutage"] * 1_000) / 10).toFixed(1)} %`);
    expect(r.tables[0].columns[1]).toBe("goodput within the deadline");
    expect(r.tables[0].rows).toHaveLength(6);
    expect(r.tables[1].rows).toHaveLength(5);
  });
});

describe("breaker under an outage: knobs", () => {
  it("a shorter open time sends more outage calls to the backend and brings the baselines back sooner", () => {
    const base = { duration: 100, spreadSeeds: 0 };
    const long = breakerOutage.run({ ...base, openFor: 10 }).figures;
    const short = breakerOutage.run({ ...base, openFor: 1 }).figures;
    expect(short["classic.reachedDuringOutage"]).toBeGreaterThan(long["classic.reachedDuringOutage"]);
    expect(short["classic.recoverySeconds"]).toBeLessThanOrEqual(1);
    // The tideward runs do not read it.
    expect(short["tideward.reachedDuringOutage"]).toBe(long["tideward.reachedDuringOutage"]);
  });
});

describe("scenario parameters", () => {
  it("lays parameters over the defaults and checks them against their knobs", () => {
    expect(breakerOutage.resolve({ rate: 50 })).toMatchObject({ rate: 50, seed: 1, outageFrom: 40 });
    expect(() => breakerOutage.resolve({ rat: 50 })).toThrow(/no knob "rat"; did you mean "rate"/);
    expect(() => breakerOutage.resolve({ rate: 0 })).toThrow(/rate must be between 10 and 5000, got 0/);
    expect(() => breakerOutage.resolve({ threshold: 2.5 })).toThrow(/whole number/);
    expect(() => breakerOutage.run({ outageFrom: 100, outageTo: 50 })).toThrow(/outageTo/);
  });

  it("is plain JSON in and out", () => {
    const r = breakerOutage.run({ duration: 60, outageFrom: 10, outageTo: 20, spreadSeeds: 0 });
    expect(JSON.parse(JSON.stringify(r))).toEqual(r);
    expect(JSON.parse(JSON.stringify(breakerOutage.knobs))).toEqual(breakerOutage.knobs);
  });

  it("the same seed reproduces the run; another seed does not", () => {
    const a = breakerOutage.run({ duration: 60, outageFrom: 10, outageTo: 20, seed: 3, spreadSeeds: 0 });
    const b = breakerOutage.run({ duration: 60, outageFrom: 10, outageTo: 20, seed: 3, spreadSeeds: 0 });
    const c = breakerOutage.run({ duration: 60, outageFrom: 10, outageTo: 20, seed: 4, spreadSeeds: 0 });
    expect(b.runs.map((x) => x.summary.hash)).toEqual(a.runs.map((x) => x.summary.hash));
    expect(c.runs[0].summary.hash).not.toBe(a.runs[0].summary.hash);
  });
});
