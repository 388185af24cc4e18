// One definition of the time to recover (`recovery`), read by every scenario: the first bucket
// at or after a trouble's end from which goodput held at 90 % of the calls offered for the hold,
// every bucket of it with calls and within the run; else the rest of the run, never negative.
import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { catalogue, failures, herdRecovery, knobArbitrary, latency, recovery, simulate, traffic } from "@tideward/sim";
import type { RunResult } from "@tideward/sim";
import { STARTS } from "./helpers";

/** A run of `rate` calls a second for `seconds`, failing every call over `[from, to)` ms, in one-second buckets. */
function outage(start: number, rate: number, seconds: number, from: number, to: number, deadline?: number): RunResult {
  return simulate({
    start,
    duration: seconds * 1_000,
    step: 1_000,
    traffic: traffic.constant({ rate }),
    backend: { latency: latency.fixed(5), failures: failures.outage({ from, to }) },
    ...(deadline === undefined ? {} : { client: { deadline } }),
  });
}

/** The definition, written out from the series as the documentation states it. */
function byHand(r: RunResult, after: number, hold: number): { recovered: boolean; seconds: number } {
  const { t, offered, goodput } = r.series;
  const n = Math.ceil(hold / r.step);
  const good = (i: number) => i < t.length && t[i] < r.duration && offered[i] > 0 && goodput[i] >= 0.9 * offered[i];
  for (let i = 0; i < t.length; i++)
    if (t[i] >= after && t[i] < r.duration && Array.from({ length: n }, (_, j) => good(i + j)).every(Boolean))
      return { recovered: true, seconds: (t[i] - after) / 1_000 };
  return { recovered: false, seconds: Math.max(0, r.duration - after) / 1_000 };
}

describe.each(STARTS)("recovery (start %s)", (start) => {
  it("is the first bucket from the trouble's end from which goodput held for the hold", () => {
    const r = outage(start, 100, 60, 10_000, 20_500);
    // The bucket from 20 s still fails half its calls; from 21 s every call succeeds.
    expect(recovery(r, { after: 20_500 })).toEqual({ recovered: true, seconds: 0.5 });
    expect(recovery(r, { after: 20_500, hold: 5_000 })).toEqual({ recovered: true, seconds: 0.5 });
    expect(recovery(r, { after: 0 })).toEqual({ recovered: true, seconds: 0 });
  });

  it("counts calls answered within their deadline, not calls that merely ended", () => {
    // Calls answered after 5 ms, past a deadline of 4 ms: every call ends (given up), none is goodput.
    const r = outage(start, 100, 30, 10_000, 20_000, 4);
    expect(r.summary.gaveUp).toBe(r.summary.calls);
    expect(recovery(r, { after: 20_000 })).toEqual({ recovered: false, seconds: 10 });
  });

  it("takes a bucket with no calls offered as not recovered", () => {
    // One call every 3 s: two of every three buckets are empty.
    const r = outage(start, 1 / 3, 60, 0, 0);
    expect(recovery(r, { after: 0 })).toEqual({ recovered: true, seconds: 0 });
    expect(recovery(r, { after: 0, hold: 2_000 })).toEqual({ recovered: false, seconds: 60 });
  });

  it("needs the whole hold within the run, and is never negative", () => {
    const r = outage(start, 100, 30, 0, 27_000);
    expect(recovery(r, { after: 27_000, hold: 3_000 })).toEqual({ recovered: true, seconds: 0 });
    expect(recovery(r, { after: 27_000, hold: 4_000 })).toEqual({ recovered: false, seconds: 3 });
    expect(recovery(r, { after: 40_000 })).toEqual({ recovered: false, seconds: 0 });
  });

  it("is what the definition written out from the series gives, for any trouble and hold", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 30_000 }),
        fc.integer({ min: 0, max: 20_000 }),
        fc.integer({ min: 0, max: 40_000 }),
        fc.integer({ min: 1, max: 8_000 }),
        fc.constantFrom(1, 50, 200),
        (from, length, after, hold, rate) => {
          const r = outage(start, rate, 30, from, from + length);
          expect(recovery(r, { after, hold })).toEqual(byHand(r, after, hold));
        },
      ),
      { numRuns: 60 },
    );
  });
});

describe("recovery in the scenarios", () => {
  it("herd-recovery's outage ending past its run reads 'never' and 0 s, not -1 s", () => {
    const r = herdRecovery.run({ outageTo: 600, duration: 10 });
    expect(r.report).not.toMatch(/-\d/);
    expect(r.report).toContain("goodput had not come back by the end of the run");
    for (const id of ["budget", "rigid", "none"]) {
      expect(r.figures[`${id}.recovered`]).toBe(0);
      expect(r.figures[`${id}.recoverySeconds`]).toBe(0);
    }
    expect(r.tables[0].rows.map((row) => row[4])).toEqual(["never", "never", "never"]);
  });

  it("herd-recovery states each run's recovery as the definition gives it, held for five seconds", () => {
    const knobs = herdRecovery.knobs.map((k) =>
      k.name === "rate" ? { ...k, max: 400 } : k.name === "duration" ? { ...k, max: 60 } : k,
    );
    fc.assert(
      fc.property(knobArbitrary(fc, knobs) as fc.Arbitrary<Record<string, number>>, (params) => {
        fc.pre(params.outageTo >= params.outageFrom);
        const r = herdRecovery.run(params);
        r.runs.forEach((run, i) => {
          const id = ["budget", "rigid", "none"][i];
          const want = recovery(run, { after: params.outageTo * 1_000, hold: 5_000 });
          expect(r.figures[`${id}.recoverySeconds`]).toBe(want.seconds);
          expect(r.figures[`${id}.recovered`]).toBe(want.recovered ? 1 : 0);
          expect(r.tables[0].rows[i][4]).toBe(want.recovered ? `${want.seconds.toFixed(1)} s` : "never");
        });
      }),
      { numRuns: 15 },
    );
  });

  it("every scenario's first table states a recovery as seconds or 'never' (or '–' with no trouble to recover from)", () => {
    for (const s of catalogue) {
      const table = s.run(s.name === "breaker-outage" ? { spreadSeeds: 0 } : {}).tables[0];
      const col = table.columns.indexOf("back to 90 % goodput after");
      if (col < 0) continue;
      for (const row of table.rows) expect(String(row[col])).toMatch(/^(\d+(\.\d)? s|never|–)$/);
    }
  });
});

it("recovery refuses what is not a run or a time, naming it", () => {
  const r = outage(0, 10, 10, 0, 0);
  expect(() => recovery(null as never, { after: 0 })).toThrow(/^recovery run must be a run's result .+, got null$/);
  expect(() => recovery(r, { after: Number.NaN })).toThrow(/^recovery after \(ms\) must be a finite number, got NaN$/);
  expect(() => recovery(r, { after: 0, hold: 0 })).toThrow(/^recovery hold \(ms\) must be above 0, got 0$/);
  expect(() => recovery(r, { after: 0, hodl: 1 } as never)).toThrow(/did you mean "hold"/);
});
