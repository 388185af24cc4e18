import { describe, expect, it } from "vitest";
import { slowBackend } from "@tideward/sim";
import { STARTS } from "./helpers";

// The slowdown runs 30–110 s; 120 s leaves ten to recover in.
const SHORT = { duration: 120 };
const IDS = ["guard", "retries", "none", "budget", "sre", "classic"];

describe.each(STARTS)("slow backend (start %s)", (start) => {
  const r = slowBackend.run(SHORT, { start });
  const f = r.figures;

  it("runs the guard's default first, on the same calls as the rest, and every answer in time counts once", () => {
    expect(r.runs[0].label).toMatch(/^guard default/);
    for (const run of r.runs) {
      expect(run.series.offered).toEqual(r.runs[0].series.offered);
      expect(run.summary.goodput).toBeLessThanOrEqual(run.summary.completed);
    }
    expect(f.capacityAtPeak).toBeCloseTo((50 * 1_000) / 1_500, 9);
  });

  it("states no one capacity, which falls as the backend slows, and sets no load against one", () => {
    expect(f.capacity).toBeUndefined();
    expect(f.capacityAtStart).toBe((50 * 1_000) / 20);
    for (const row of r.tables[0].rows) expect(String(row[3]), String(row[0])).toMatch(/^\d+\/s$/);
  });

  it("retries with no policy pile onto the slowing backend; the guard's default asks it for less and answers more in time", () => {
    expect(f["retries.backendWhileSlow"]).toBeGreaterThan(1.5 * f["guard.backendWhileSlow"]);
    expect(f["guard.goodputWhileSlow"]).toBeGreaterThan(f["retries.goodputWhileSlow"]);
    expect(f["guard.wasted"]).toBeLessThan(f["retries.wasted"] / 3);
    for (const id of ["retries", "budget", "sre", "classic"])
      expect(f["guard.goodputRate"]).toBeGreaterThan(f[`${id}.goodputRate`]);
  });

  it("not retrying at all is the baseline that wins on goodput here, and the report says so", () => {
    expect(f["none.goodputRate"]).toBeGreaterThan(f["guard.goodputRate"]);
    expect(r.report).toContain("not retrying at all wins");
  });

  it("while the service time is past the deadline nothing answers in time", () => {
    const s = r.runs[0].series;
    // 95–110 s: service averages 1.5 s against a 1 s deadline on 50 workers: few answers in time.
    for (const id of IDS) {
      const run = r.runs[IDS.indexOf(id)].series;
      const good = run.goodput.slice(95, 110).reduce((a, b) => a + b, 0);
      const offered = run.offered.slice(95, 110).reduce((a, b) => a + b, 0);
      expect(good / offered).toBeLessThan(0.5);
    }
    expect(s.t[95]).toBe(95_000);
  });
});

describe("slow backend: knobs", () => {
  it("a backend that never slows past a tenth of the deadline answers nearly every call in time, whatever the policy", () => {
    const f = slowBackend.run({ duration: 60, peak: 100 }).figures;
    for (const id of IDS) expect(f[`${id}.goodputRate`]).toBeGreaterThan(0.97);
  });
});
