import { describe, expect, it } from "vitest";
import { herdBackoff, herdRecovery, quotaAtomic, sweep } from "@tideward/sim";
import { STARTS } from "./helpers";

describe.each(STARTS)("backoff and the herd (start %s)", (start) => {
  const r = herdBackoff.run({}, { start });
  const f = r.figures;

  it("runs the same herd once per jitter, the guard's default first", () => {
    expect(r.runs.map((x) => x.label)).toEqual(["spread 0.2", "rigid", "full", "equal", "decorrelated"]);
    for (const x of r.runs) expect(x.series.offered).toEqual(r.runs[0].series.offered);
    expect(r.runs[0].summary.calls).toBe(1_000);
  });

  it("rigid backoff keeps the herd in step; every jitter spreads it", () => {
    for (const j of ["full", "equal", "decorrelated"]) expect(f[`${j}.peakLoad`]).toBeLessThan(f["rigid.peakLoad"] / 5);
    expect(f["spread 0.2.peakLoad"]).toBeLessThan(f["rigid.peakLoad"] / 2);
  });

  it("at its defaults every jitter takes fewer attempts than rigid, ends sooner, and loses no client", () => {
    for (const j of ["spread 0.2", "full", "equal", "decorrelated"]) {
      expect(f[`${j}.attemptsPerClient`]).toBeLessThan(f["rigid.attemptsPerClient"]);
      expect(f[`${j}.doneBy`]).toBeGreaterThan(0);
      expect(f[`${j}.doneBy`]).toBeLessThan(f["rigid.doneBy"] / 2);
      expect(f[`${j}.gaveUp`]).toBeLessThan(f["rigid.gaveUp"] / 10);
    }
    expect(f["rigid.gaveUp"]).toBeGreaterThan(0);
  });

  it("when the retries come: rigid retries come in a few waves, full jitter's spread over many buckets", () => {
    const retries = (label: string) => r.runs.find((x) => x.label === label)?.series.retries ?? [];
    // The share of its retries in its ten busiest 100 ms buckets.
    const top = (label: string) => {
      const xs = [...retries(label)].sort((a, b) => b - a);
      return xs.slice(0, 10).reduce((a, b) => a + b, 0) / xs.reduce((a, b) => a + b, 0);
    };
    expect(top("rigid")).toBeGreaterThan(0.85);
    expect(top("full")).toBeLessThan(0.7);
  });

  it("tells the whole run's peak apart from the one after recovery: the busiest 100 ms comes while the backend is down, and the report says so", () => {
    for (const x of r.runs) {
      // The summary's peak (the busiest bucket of the whole run) is one of the two the table prints.
      expect(x.summary.peakBackendLoad, x.label).toBe(Math.max(f[`${x.label}.peakDown`], f[`${x.label}.peakLoad`]));
      expect(f[`${x.label}.peakDown`], x.label).toBeGreaterThan(f[`${x.label}.peakLoad`]);
    }
    expect(r.tables[0].columns).toContain("peak backend load while down");
    expect(r.report).toContain(
      `The busiest 100 ms of every run comes while the backend is down (${f["full.peakDown"]}/s with full jitter, ${f["rigid.peakDown"]}/s rigid)`,
    );
    // The scenario reads off charts the page draws: retries sent each 100 ms, no histogram.
    expect(herdBackoff.summary).not.toMatch(/histogram/);
    expect(herdBackoff.summary).toContain("retries sent, each 100 ms");
    // With no outage there is no peak while down, and no sentence about one.
    const none = herdBackoff.run({ recovery: 0 }, { start });
    expect(none.report).not.toContain("while the backend is down (");
  });

  it("states its figures in the report", () => {
    expect(r.report).toContain(
      `${f["rigid.peakLoad"]} calls/s hit the recovering backend at once, against ${Math.round(f["full.peakLoad"])}/s with full jitter`,
    );
  });

  it("a sweep of the herd's size", () => {
    const s = sweep(herdBackoff, "clients", { from: 100, to: 2_000, steps: 3, params: { duration: 20 }, start });
    expect(s.values).toEqual([100, 1_050, 2_000]);
    expect(s.backendLoad[0][2]).toBeGreaterThan(s.backendLoad[0][0] as number);
  });
});

describe("backoff and the herd: knobs", () => {
  it("a backend that can take the whole wave at once serves rigid clients on their first try after it recovers", () => {
    const big = herdBackoff.run({ workers: 1_000, queue: 1_000, duration: 10 }).figures;
    expect(big["rigid.gaveUp"]).toBe(0);
    // Six attempts to reach 3.1 s (0, 0.1, 0.3, 0.7, 1.5, 3.1 s), the last one served.
    expect(big["rigid.attemptsPerClient"]).toBe(6);
  });
});

describe.each(STARTS)("a thundering herd after recovery (start %s)", (start) => {
  const r = herdRecovery.run({}, { start });
  const f = r.figures;

  it("without a budget the outage's retries multiply the load on the failing backend", () => {
    expect(f["rigid.loadDuringOutage"]).toBeGreaterThan(3 * 500);
    expect(f["budget.loadDuringOutage"]).toBeLessThanOrEqual(1.2 * 500 * 1.1);
    expect(f["none.loadDuringOutage"]).toBeLessThan(560);
  });

  it("and hold the recovered backend down (a metastable failure); with jitter and a budget it recovers at once", () => {
    expect(f["rigid.loadAfterRecovery"]).toBeGreaterThan(f.capacity);
    // Never back: the rest of the run after the outage (60 s − 20 s).
    expect(f["rigid.recovered"]).toBe(0);
    expect(f["rigid.recoverySeconds"]).toBe(40);
    expect(f["budget.recovered"]).toBe(1);
    expect(f["budget.recoverySeconds"]).toBeGreaterThanOrEqual(0);
    expect(f["budget.recoverySeconds"]).toBeLessThan(2);
    expect(f["rigid.successRate"]).toBeLessThan(0.5);
    expect(f["budget.successRate"]).toBeGreaterThan(0.8);
  });

  it("states its figures in the report", () => {
    expect(r.report).toContain("had not served 90 % again by the end of the run");
    expect(r.report).toContain(`${Math.round(f["rigid.loadDuringOutage"])} calls/s`);
  });
});

describe.each(STARTS)("a tenant's budget charged atomically (start %s)", (start) => {
  const r = quotaAtomic.run({}, { start });
  const f = r.figures;

  it("the atomic charge wastes nothing; every budget refuses some calls", () => {
    expect(r.runs[0].policies[0].stats.wasted).toBe(0);
    for (const d of ["user", "tenant", "model"]) expect(f[`atomic.refusedBy.${d}`]).toBeGreaterThan(0);
  });

  it("charged one after another, tokens go to calls a later budget refuses, and fewer calls get through", () => {
    expect(f["sequential.wasted.model"]).toBeGreaterThan(0.1 * f.modelBudget);
    expect(f["sequential.wasted.tenant"]).toBeGreaterThan(0);
    expect(f["sequential.admitted"]).toBeLessThan(0.9 * f["atomic.admitted"]);
    expect(r.runs[1].series.offered).toEqual(r.runs[0].series.offered);
  });

  it("charged user first, the busy users' calls stop at their own budget and nothing is wasted on the model", () => {
    const userFirst = quotaAtomic.run({ order: "user-first" }, { start });
    expect(userFirst.figures["sequential.wasted.model"]).toBe(0);
    expect(userFirst.figures["sequential.wasted.user"]).toBeGreaterThan(0);
  });

  it("states its figures in the report", () => {
    expect(r.report).toContain(`${f["sequential.wasted.model"]} model tokens`);
    expect(r.tables[0].columns).toContain("tokens charged for nothing");
  });
});
