// The guard scenario's run under Node.js: what the page shows must be what @tideward/guard's
// admission did to the traffic, next to the same traffic without the per-key limit and with no
// policy at all.
import { describe, expect, it } from "vitest";
import { guardScenario } from "../../src/catalogue";
import { allFigures } from "../../src/model";
import type { Outcome, Params } from "../../src/model";
import { guard } from "../../src/runs/guard";
import { defaults } from "../../src/state";

/** The figures of an outcome by id. */
function shown(outcome: Outcome): Record<string, number> {
  return Object.fromEntries(allFigures(outcome).map((f) => [f.id, f.value]));
}

const base: Params = defaults(guardScenario);
const at = (p: Partial<Record<string, number | string>>): Params => ({ ...base, ...p }) as Params;

describe("Guard in front of a server", () => {
  const outcome = guard(base);
  const f = shown(outcome);

  it("offers the same calls to all three runs; no policy refuses nothing and queues every call", () => {
    expect(f.offered).toBeGreaterThan(10_000);
    expect(f["unprotected.admitted"]).toBe(f.offered);
    for (const reason of ["shed", "gate", "rate"]) expect(f[`unprotected.${reason}`]).toBe(0);
    expect(f["unprotected.success"]).toBe(100);
  });

  it("at its defaults the guard refuses by each of its three reasons, and they add up to what it did not admit", () => {
    for (const reason of ["shed", "gate", "rate"]) expect(f[`guarded.${reason}`], reason).toBeGreaterThan(0);
    expect(f["guarded.admitted"] + f["guarded.shed"] + f["guarded.gate"] + f["guarded.rate"]).toBe(f.offered);
    // Without the per-key limit nothing is refused for rate, and what is left of the load is shed or gated.
    expect(f["unlimited.rate"]).toBe(0);
    expect(f["unlimited.admitted"] + f["unlimited.shed"] + f["unlimited.gate"]).toBe(f.offered);
  });

  it("the per-key limit holds the heaviest key down: its share of admissions falls below its share of the calls offered", () => {
    expect(f.topOffered).toBeGreaterThan(10); // Zipf s 1.1 over 1 000 keys: key 0 offers about a sixth
    expect(f["unprotected.topShare"]).toBeCloseTo(f.topOffered, 6);
    expect(f["guarded.topShare"]).toBeLessThan(f["unlimited.topShare"] - 3);
    // The shedder and the gate refuse without regard to the key: the heaviest key keeps about its share.
    expect(Math.abs(f["unlimited.topShare"] - f.topOffered)).toBeLessThan(2);
  });

  it("the p99 of admitted calls stays near the service time behind the guard, and runs away with no policy", () => {
    expect(f["guarded.p99"]).toBeLessThan(500);
    expect(f["unprotected.p99"]).toBeGreaterThan(10 * f["guarded.p99"]);
    // The gate bounds calls in flight at every instant, so every bucket's mean too.
    expect(f["guarded.peakInFlight"]).toBeLessThanOrEqual(Number(base.gate));
    expect(f["unlimited.peakInFlight"]).toBeLessThanOrEqual(Number(base.gate));
    expect(f["unprotected.peakInFlight"]).toBeGreaterThan(Number(base.gate));
  });

  it("plots every series over the same time axis, and refusals by reason that sum to the guard's refusals", () => {
    const ids = outcome.charts.map((c) => c.id);
    expect(ids).toEqual(["admitted", "refused", "flight", "latency", "cpu"]);
    const refused = outcome.charts.find((c) => c.id === "refused");
    if (refused === undefined) throw new Error("no refused chart");
    expect(refused.series.map((s) => s.label)).toEqual(["refused: shed", "refused: gate", "refused: rate"]);
    // Per second at one-second buckets: the plotted points are the counts.
    const plotted = refused.series.map((s) => s.values.reduce<number>((a, b) => a + (b ?? 0), 0));
    expect(plotted).toEqual([f["guarded.shed"], f["guarded.gate"], f["guarded.rate"]]);
  });

  it("a tighter per-key limit refuses more for rate and shrinks the heaviest key's share; a wider gate refuses less at the gate", () => {
    const tight = shown(guard(at({ "limit.quota": 5 })));
    expect(tight.offered).toBe(f.offered);
    expect(tight["guarded.rate"]).toBeGreaterThan(f["guarded.rate"]);
    expect(tight["guarded.topShare"]).toBeLessThan(f["guarded.topShare"]);
    // The other two runs do not have the limit: a change to it leaves them as they were.
    expect(tight["unlimited.admitted"]).toBe(f["unlimited.admitted"]);
    expect(tight["unprotected.p99"]).toBe(f["unprotected.p99"]);
    const wide = shown(guard(at({ gate: 1_000 })));
    expect(wide["guarded.gate"]).toBeLessThan(f["guarded.gate"]);
  });

  it("the heaviest key's admissions stay within the bucket's bound: its burst plus its refill over the run", () => {
    const quota = 10;
    const window = 2_000;
    const o = guard(at({ "limit.quota": quota, "limit.window": window, peak: 2_000 }));
    const g = shown(o);
    const seconds = (Number(base.ramp) + Number(base.hold) + Number(base.after)) * 1_000;
    const bound = quota + (quota * seconds) / window;
    expect((g["guarded.topShare"] / 100) * g["guarded.admitted"]).toBeLessThanOrEqual(bound + 1e-9);
    expect((g["unlimited.topShare"] / 100) * g["unlimited.admitted"]).toBeGreaterThan(bound);
  });

  it.each(["bucket", "gcra", "sliding", "period"])(
    "with the simulator checking every step, the gate and a %s per-key limit hold, and the run is the same",
    (kind) => {
      // A tight limit on a load far past capacity, so both bounds are pressed.
      const p = at({ "limit.kind": kind, "limit.quota": 5, "limit.window": 500, peak: 1_500 });
      const checked = guard(p, { invariants: true });
      expect(shown(checked)).toEqual(shown(guard(p)));
      expect(shown(checked)["guarded.rate"]).toBeGreaterThan(0);
      expect(shown(checked)["guarded.gate"]).toBeGreaterThan(0);
    },
  );

  it("uniform keys (s = 0) have no heavy key; the same knobs give the same figures, another seed others", () => {
    const flat = shown(guard(at({ exponent: 0 })));
    expect(flat.topOffered).toBeLessThan(1);
    expect(shown(guard(base))).toEqual(f);
    expect(shown(guard(at({ seed: 2 }))).offered).not.toBe(f.offered);
  });
});
