// Each scenario's report, and the claims it makes, checked against the runs it made.
import { describe, expect, it } from "vitest";
import fc from "fast-check";
import {
  catalogue,
  defineScenario,
  knobArbitrary,
  quotaBursts,
  retryAmplification,
  seedKnob,
  shedderRamp,
  simulate,
  sweep,
  traffic,
} from "@tideward/sim";
import type { RunResult } from "@tideward/sim";
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

describe.each([0, EPOCH])("quota-bursts over every knob in range (start %s)", (start) => {
  it("draws each burst as the spike it is: a burst's calls in the few buckets it lasts, not spread over its row", () => {
    const r = quotaBursts.run({}, { start });
    for (const run of r.runs) {
      // The first burst of 40 calls lasts 58.5 ms: its admissions fall in one or two 40 ms buckets.
      const first = run.series.admitted.slice(0, 50);
      expect(first.filter((n) => n > 0).length, run.label).toBeLessThanOrEqual(2);
      // So the busiest bucket, as a rate, is far above the run's mean rate.
      expect(run.summary.peakBackendLoad, run.label).toBeGreaterThan(
        (10 * run.summary.backendLoad * 1_000) / run.duration,
      );
    }
  });

  it("bursts longer than their period run into each other: every call is offered, the rows say they are stretches of time", () => {
    const r = quotaBursts.run({ spacing: 60 }, { start });
    // Forty calls 60 ms apart last 2 340 ms, past the next burst at 2 000: five rows of 2 s hold them all.
    expect(r.runs.map((run) => run.summary.calls)).toEqual([160, 160, 160]);
    expect(r.tables[0].title).toMatch(/^calls admitted in each 2000 ms of the run, .* running into each other;/);
    expect(r.tables[0].columns[0]).toBe("2000 ms");
    expect(r.tables[0].rows).toHaveLength(5);
    expect(r.report).toContain("bucket passed 18 in the first 2000 ms");
  });

  it("any knobs run, offering every call of every burst, and admitting no more than the rows offered", () => {
    // The load narrowed (it is the slow part), the shapes drawn over their whole range.
    const knobs = quotaBursts.knobs.map((k) =>
      k.name === "size" ? { ...k, max: 200 } : k.name === "bursts" ? { ...k, max: 8 } : k,
    );
    fc.assert(
      fc.property(knobArbitrary(fc, knobs) as fc.Arbitrary<Record<string, number>>, (params) => {
        const r = quotaBursts.run(params, { start });
        // Each row is recorded in whole buckets, so a run's course shows every burst.
        const slices = r.runs[0].series.t.length / r.tables[0].rows.length;
        expect(Number.isInteger(slices)).toBe(true);
        r.runs.forEach((run, i) => {
          expect(run.summary.calls).toBe(params.size * params.bursts);
          expect(r.tables[0].rows.length * slices).toBe(run.series.t.length);
          // The rows are the run's admissions, every one of them, each in the row it happened in.
          expect(r.tables[0].rows.reduce((a, row) => a + Number(row[i + 1]), 0)).toBe(run.summary.admitted);
        });
        const offered = (k: number): number =>
          r.runs[0].series.offered.slice(k * slices, (k + 1) * slices).reduce((a, b) => a + b, 0);
        r.tables[0].rows.forEach((row, k) =>
          row.slice(1).forEach((admitted) => expect(admitted).toBeLessThanOrEqual(offered(k))),
        );
      }),
      { numRuns: 40 },
    );
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

describe("sweep over scenarios whose runs are odd", () => {
  /** A scenario of one integer knob `n` from 1 to 3 whose runs are `runs(n)`. */
  const odd = (name: string, runs: (n: number) => readonly unknown[]) =>
    defineScenario<{ seed: number; n: number }>({
      name,
      title: name,
      summary: "",
      knobs: [seedKnob, { kind: "integer", name: "n", label: "n", doc: "", default: 1, min: 1, max: 3, step: 1 }],
      run: (p) => ({ runs: runs(p.n) as RunResult[], figures: {}, report: "" }),
    });
  /** A run labelled `label` of `rate` calls a second for a second. */
  const one = (label: string, rate: number) =>
    simulate({ label, duration: 1_000, traffic: traffic.constant({ rate }) });

  it("a run that is not one is refused by its index, in run and so in sweep", () => {
    const nulls = odd("nulls", () => [one("a", 10), null]);
    const expected =
      /^scenario nulls run outcome runs\[1\] must be a run \(what simulate returns: label, duration, series, summary\), got null$/;
    expect(() => nulls.run()).toThrow(expected);
    expect(() => sweep(nulls, "n")).toThrow(expected);
    // An array with a hole at 1, as `[a, , b]` would be.
    const holed = (): unknown[] => {
      const runs: unknown[] = [one("a", 10)];
      runs[2] = one("b", 10);
      return runs;
    };
    expect(() => odd("holes", holed).run()).toThrow(/runs\[1\] must be a run .+, got undefined$/);
  });

  it.each([
    ["more runs as the knob grows", (n: number) => Array.from({ length: n }, (_, i) => one(`r${i}`, 10 * (i + 1)))],
    [
      "fewer runs as the knob grows",
      (n: number) => Array.from({ length: 4 - n }, (_, i) => one(`r${i}`, 10 * (i + 1))),
    ],
  ])("%s: each run followed by its label, null where a value lacks it", (_, runs) => {
    const s = sweep(odd("changing", runs), "n", { steps: 3 });
    expect(s.labels).toEqual(["r0", "r1", "r2"]);
    // Run r_i offers 10·(i + 1) calls a second wherever it is, and is there when runs(n) holds it.
    s.labels.forEach((_, i) =>
      s.values.forEach((n, j) => {
        const there = runs(n).length > i;
        expect(s.backendLoad[i][j]).toBe(there ? 10 * (i + 1) : null);
        expect(s.successRate[i][j]).toBe(there ? 1 : null);
        expect(s.amplification[i][j]).toBe(there ? 1 : null);
        expect(s.refusalRate[i][j]).toBe(there ? 0 : null);
      }),
    );
  });

  it("two runs with one label at one value are refused, naming the label and the value", () => {
    const twins = odd("twins", (n) => [one("a", 10), one(n === 2 ? "a" : "b", 10)]);
    expect(() => sweep(twins, "n", { steps: 3 })).toThrow(
      /^sweep: scenario twins has two runs labelled "a" at n 2: a sweep follows each run by its label$/,
    );
  });
});
