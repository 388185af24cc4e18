// Each scenario's report, and the claims it makes, checked against the runs it made.
import { describe, expect, it } from "vitest";
import { catalogue, quotaBursts, retryAmplification, shedderRamp, sweep } from "@tideward/sim";
import { STARTS } from "./helpers";

// A Date.now()-scale start on a whole second, so aligned periods open where they do at 0.
const EPOCH = 1_723_456_789_000;

describe("the catalogue", () => {
  it("names every scenario once, documents it, and gives every knob a default within its range", () => {
    const names = catalogue.map((s) => s.name);
    expect(new Set(names).size).toBe(names.length);
    for (const s of catalogue) {
      expect(s.title.length).toBeGreaterThan(0);
      expect(s.summary.length).toBeGreaterThan(100);
      expect(s.knobs[0].name).toBe("seed");
      for (const k of s.knobs) {
        expect(k.doc.length).toBeGreaterThan(0);
        if (k.kind === "number" || k.kind === "integer") {
          expect(k.min).toBeLessThanOrEqual(k.default);
          expect(k.default).toBeLessThanOrEqual(k.max);
        }
      }
      expect(s.resolve()).toEqual(s.defaults);
    }
  });
});

describe.each([0, EPOCH])("shedder under rising load (start %s)", (start) => {
  const r = shedderRamp.run({}, { start });
  const f = r.figures;

  it("below capacity the shedder refuses nothing; it starts only once the server is hot and busy", () => {
    expect(f["shedder.firstRefusalLoad"]).toBeGreaterThan(0.9 * f.capacity);
    expect(f["none.firstRefusalLoad"]).toBe(0);
  });

  it("at the peak its goodput within the deadline is near capacity; unshed, the server is busy answering callers who have gone", () => {
    expect(f["shedder.peakGoodput"]).toBeGreaterThan(0.8 * f.capacity);
    expect(f["none.peakGoodput"]).toBeLessThan(0.05 * f.capacity);
    // The unshed server is not idle: it serves about its capacity, all of it too late.
    expect(f["none.peakSuccesses"]).toBeGreaterThan(0.95 * f.capacity);
    expect(f["none.wasted"]).toBeGreaterThan(1_000);
    expect(f["shedder.wasted"]).toBe(0);
    expect(f["shedder.peakP99"]).toBeLessThan(500);
    expect(f["shedder.peakRefused"]).toBeGreaterThan(0.1);
  });

  it("leads its table with goodput within the deadline, and states its figures in the report", () => {
    expect(r.tables[0].columns[1]).toBe("goodput within the deadline");
    expect(r.report).toContain(
      `with the shedder ${Math.round(f["shedder.peakGoodput"])} calls a second were answered within`,
    );
    expect(r.tables[0].rows.map((row) => row[0])).toEqual(["tideward shedder", "no shedder"]);
  });

  it("says every unshed answer came late only when none came in time: at a lower peak, what share did", () => {
    expect(r.report).toContain("each waited behind a queue of");
    const lower = shedderRamp.run({ to: 480 }, { start });
    const g = lower.figures;
    expect(g["none.peakGoodput"]).toBeGreaterThan(0.5 * g.capacity);
    expect(lower.report).not.toContain("each waited");
    const late = 1 - g["none.peakGoodput"] / g["none.peakSuccesses"];
    expect(lower.report).toContain(`${(Math.round(late * 1_000) / 10).toFixed(1)} % of them waited behind a queue`);
  });

  it("a caller who waits for ever counts the unshed server's late answers as goodput", () => {
    const patient = shedderRamp.run({ deadline: 600, duration: 60 }, { start }).figures;
    expect(patient["none.peakGoodput"]).toBeGreaterThan(0.9 * patient.capacity);
  });
});

describe.each([0, EPOCH])("three quotas on bursty traffic (start %s)", (start) => {
  const r = quotaBursts.run({}, { start });

  it("gives the burst table: 21 / 20 / 40 for every burst, labelled", () => {
    expect(r.tables[0].columns).toEqual([
      "burst",
      "bucket (20/s, burst 20)",
      "sliding (20 in any 1 s)",
      "period (20 a second, aligned)",
    ]);
    expect(r.tables[0].rows).toEqual([
      [0, 21, 20, 40],
      [1, 21, 20, 40],
      [2, 21, 20, 40],
      [3, 21, 20, 40],
    ]);
    expect(r.report).toContain("bucket passed 21 of the first burst");
    expect(r.report).toMatch(/0 +21 +20 +40/);
  });

  it("without aligned periods the period counts the burst as one: 20", () => {
    const unaligned = quotaBursts.run({ align: false }, { start });
    expect(unaligned.tables[0].rows.map((row) => row[3])).toEqual([20, 20, 20, 20]);
  });
});

describe.each(STARTS)("retry amplification (start %s)", (start) => {
  const r = retryAmplification.run({}, { start });
  const f = r.figures;

  it("without a budget each call costs what the geometric series says; the budget caps it", () => {
    expect(Math.abs(f["unbounded.amplification"] - f.expectedAmplification) / f.expectedAmplification).toBeLessThan(
      0.03,
    );
    expect(Math.abs(f["unbounded.successRate"] - f.expectedSuccess)).toBeLessThan(0.02);
    expect(f["budget.amplification"]).toBeLessThanOrEqual(1.2 + 1e-9);
    expect(f["none.amplification"]).toBe(1);
    expect(f["budget.successRate"]).toBeGreaterThan(f["none.successRate"]);
    expect(f["budget.successRate"]).toBeLessThan(f["unbounded.successRate"]);
  });

  it("leads with goodput and backend load: unbounded retries win goodput where failures ignore load, the budget spares the backend", () => {
    expect(r.tables[0].columns.slice(1, 5)).toEqual([
      "goodput within the deadline",
      "goodput",
      "backend load",
      "calls wasted",
    ]);
    expect(f["unbounded.goodputRate"]).toBeGreaterThan(f["budget.goodputRate"]);
    expect(f["budget.goodputRate"]).toBeGreaterThan(f["none.goodputRate"]);
    expect(f["unbounded.backendPerSecond"]).toBeGreaterThan(f["budget.backendPerSecond"]);
    expect(f["budget.backendPerSecond"]).toBeGreaterThan(f["none.backendPerSecond"]);
    // With no deadline, every success counts: goodput is the success rate.
    expect(f["unbounded.goodputRate"]).toBeCloseTo(f["unbounded.successRate"], 12);
    expect(r.report).toContain("retries without a budget win on goodput");
  });

  it("states its figures in the report", () => {
    expect(r.report).toContain(
      `cost the backend ${f["unbounded.amplification"].toFixed(2)} attempts (theory: ${f.expectedAmplification.toFixed(2)})`,
    );
  });

  it("a sweep of the failure rate: amplification grows with it, the budget's stays capped", () => {
    const s = sweep(retryAmplification, "failureRate", { from: 0, to: 0.9, steps: 4, params: { duration: 20 }, start });
    expect(s.values).toEqual([0, 0.3, 0.6, 0.9]);
    expect(s.labels).toEqual(["retries with a budget", "retries, no budget", "no retries"]);
    const unbounded = s.amplification[1] as number[];
    for (let i = 1; i < unbounded.length; i++) expect(unbounded[i]).toBeGreaterThan(unbounded[i - 1]);
    expect(unbounded[3]).toBeGreaterThan(3);
    for (const a of s.amplification[0] as number[]) expect(a).toBeLessThanOrEqual(1.2 + 1e-9);
    expect(s.successRate[2][0]).toBe(1);
    expect(JSON.parse(JSON.stringify(s))).toEqual(s);
  });
});

describe("sweep input", () => {
  it("names a knob that is not there or not a number", () => {
    expect(() => sweep(retryAmplification, "failurerate")).toThrow(/did you mean "failureRate"/);
    expect(() => sweep(quotaBursts, "align")).toThrow(/boolean, not a number/);
    expect(() => sweep(retryAmplification, "failureRate", { to: 2 })).toThrow(/between 0 and 1/);
  });
});
