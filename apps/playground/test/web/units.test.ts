import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { scenarios } from "../../src/sim-catalogue";
import { counted, unitAfter, withUnit } from "../../src/units";

describe("a number and its unit", () => {
  it("reads in the singular after exactly 1, the plural otherwise, and leaves symbols alone", () => {
    expect(withUnit("1", "calls")).toBe("1 call");
    expect(withUnit("2", "calls")).toBe("2 calls");
    expect(withUnit("0", "calls")).toBe("0 calls");
    expect(withUnit("1.0", "calls")).toBe("1.0 calls");
    expect(withUnit("1", "calls/s")).toBe("1 call/s");
    expect(withUnit("1", "runs each")).toBe("1 run each");
    expect(withUnit("1", "retries")).toBe("1 retry");
    expect(withUnit("1", "keys")).toBe("1 key");
    for (const symbol of ["ms", "s", "%", "‰", "", "class"]) expect(unitAfter("1", symbol)).toBe(symbol);
    expect(counted(1, "workers")).toBe("1 worker");
    expect(counted(12_000, "tokens")).toBe("12000 tokens");
  });

  it("gives every knob's unit a singular that is the plural less its s (or -ies less y), or the unit itself", () => {
    const units = new Set(scenarios.flatMap((s) => s.knobs.flatMap((k) => (k.kind === "select" ? [] : [k.unit]))));
    for (const unit of units) {
      const one = unitAfter("1", unit);
      expect([unit, unit.replace(/s(?=$|[\s/])/, ""), unit.replace(/ies(?=$|[\s/])/, "y")], unit).toContain(one);
      fc.assert(
        fc.property(fc.double({ min: -1e6, max: 1e6, noNaN: true }), (n) => {
          const shown = String(n);
          fc.pre(shown !== "1" && shown !== "-1");
          expect(withUnit(shown, unit)).toBe(unit === "" ? shown : `${shown} ${unit}`);
        }),
        { numRuns: 30 },
      );
    }
  });
});
