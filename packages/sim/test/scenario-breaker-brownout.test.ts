import { describe, expect, it } from "vitest";
import { breakerBrownout } from "@tideward/sim";
import { STARTS } from "./helpers";

// A 30 s brownout in a minute, so the suite stays quick.
const SHORT = { from: 10, to: 40, duration: 60 };
const BREAKERS = ["tideward", "sre", "classic", "sampling", "opossum"];

describe.each(STARTS)("breaker under a brownout (start %s)", (start) => {
  const r = breakerBrownout.run(SHORT, { start });
  const f = r.figures;

  it("runs the guard's default first, on the same calls as the baselines, and shows both costs of a failure", () => {
    expect(r.runs[0].label).toBe("tideward breaker (guard default)");
    expect(r.runs).toHaveLength(6);
    for (const run of r.runs) expect(run.series.offered).toEqual(r.runs[0].series.offered);
    expect(r.tables).toHaveLength(2);
    expect(f.capacity).toBe(400);
  });

  it("when a failure costs nothing, no breaker has the most goodput; the guard's default (k 2) does not throttle at 40 %", () => {
    for (const id of BREAKERS) {
      expect(f["nothing.none.goodput"]).toBeGreaterThanOrEqual(f[`nothing.${id}.goodput`]);
      expect(f["nothing.none.goodputRetried"]).toBeGreaterThanOrEqual(f[`nothing.${id}.goodputRetried`]);
      // Every policy gets the same successes per backend call: 0.6, the share that succeeds.
      expect(f[`nothing.${id}.goodputPerBackendCall`]).toBeGreaterThan(0.55);
      expect(f[`nothing.${id}.goodputPerBackendCall`]).toBeLessThan(0.65);
    }
    // A window of 750 ms past half failing now and then refuses a call or two: within 1 %.
    expect(f["nothing.tideward.goodput"]).toBeGreaterThan(0.99 * f["nothing.none.goodput"]);
    // The sre preset's k 1.5 throttles: 1.5 × 0.6 < 1.
    expect(f["nothing.sre.goodput"]).toBeLessThan(0.95 * f["nothing.none.goodput"]);
  });

  it("when a failure holds the backend's capacity, the guard's default has more goodput than no breaker and every baseline", () => {
    for (const id of [...BREAKERS.slice(1), "none"]) {
      expect(f["capacity.tideward.goodput"]).toBeGreaterThan(f[`capacity.${id}.goodput`]);
    }
    expect(f["capacity.tideward.goodput"]).toBeGreaterThan(1.2 * f["capacity.none.goodput"]);
    // Without a breaker the failures keep the workers busy: more than with the guard's.
    expect(f["capacity.none.busy"]).toBeGreaterThan(f["capacity.tideward.busy"]);
  });
});

describe("breaker under a brownout: knobs", () => {
  it("past half the calls failing, the guard's default throttles too, and loses goodput when failures are free", () => {
    const r = breakerBrownout.run({ ...SHORT, failing: 0.6, cost: "nothing" });
    const f = r.figures;
    expect(f["nothing.tideward.goodput"]).toBeLessThan(0.95 * f["nothing.none.goodput"]);
    // The chosen cost comes first: its lead figures are the free case's, and it has no capacity.
    expect(f["tideward.goodputRate"]).toBeCloseTo(f["nothing.tideward.goodput"] / r.runs[0].summary.calls, 12);
    expect(f.capacity).toBeUndefined();
    expect(r.tables[0].title).toContain("costs nothing");
  });
});
