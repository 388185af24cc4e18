import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { guardScenario } from "../../src/catalogue";
import { scenarios } from "../../src/sim-catalogue";
import { toCsv } from "../../src/csv";
import type { Knob, Outcome, Params } from "../../src/model";
import { coerce, decode, defaults, encode, hashFor, parseHash, read, resolve } from "../../src/state";

/** A value a knob can take, drawn from its whole range. */
function arbitraryValue(knob: Knob): fc.Arbitrary<number | string> {
  if (knob.kind === "select") return fc.constantFrom(...knob.options.map((o) => o.value));
  const steps = Math.round((knob.max - knob.min) / knob.step);
  return fc.integer({ min: 0, max: steps }).map((i) => coerce(knob, String(knob.min + i * knob.step)) as number);
}

describe("the catalogue", () => {
  it("gives every scenario a unique id, and every knob a unique key, a label and a default in range", () => {
    expect(new Set(scenarios.map((s) => s.id)).size).toBe(scenarios.length);
    for (const s of scenarios) {
      expect(new Set(s.knobs.map((k) => k.key)).size, s.id).toBe(s.knobs.length);
      for (const k of s.knobs) {
        expect(k.label.length, `${s.id}.${k.key}`).toBeGreaterThan(0);
        if (k.kind === "select") expect(k.options.map((o) => o.value)).toContain(k.value);
        else {
          expect(k.value, `${s.id}.${k.key}`).toBeGreaterThanOrEqual(k.min);
          expect(k.value, `${s.id}.${k.key}`).toBeLessThanOrEqual(k.max);
          expect(coerce(k, String(k.value)), `${s.id}.${k.key} is on its grid`).toBe(k.value);
        }
        if (k.when !== undefined) {
          const by = s.knobs.find((o) => o.key === k.when?.key);
          expect(by?.kind, `${s.id}.${k.key} is used when a select is set`).toBe("select");
          if (by?.kind === "select") expect(by.options.map((o) => o.value)).toContain(k.when.is);
        }
      }
    }
  });
});

describe("the URL state", () => {
  it("reads back what it wrote, for any values of any scenario's knobs", () => {
    for (const scenario of scenarios) {
      const values = fc.record(Object.fromEntries(scenario.knobs.map((k) => [k.key, arbitraryValue(k)])));
      fc.assert(
        fc.property(values, (params: Params) => {
          const { id, query } = parseHash(hashFor(scenario, params));
          expect(id).toBe(scenario.id);
          expect(decode(scenario, query)).toEqual(params);
        }),
        { numRuns: 50 },
      );
    }
  });

  it("writes only the knobs that differ from their defaults", () => {
    const s = scenarios[0];
    if (s === undefined) throw new Error("no scenarios");
    expect(hashFor(s, defaults(s))).toBe(`#${s.id}`);
    const k = s.knobs.find((k) => k.kind === "range");
    if (k === undefined || k.kind !== "range") throw new Error("no range knob");
    expect(encode(s, { ...defaults(s), [k.key]: k.max })).toBe(`${encodeURIComponent(k.key)}=${k.max}`);
  });

  it("forgives an old or hand-edited link: unknown keys ignored, numbers held to range and grid, bad choices left at the default", () => {
    const read = decode(
      guardScenario,
      "limit.quota=100000&exponent=1.56&workers=abc&limit.kind=sideways&nonsense=1&gate=",
    );
    expect(read["limit.quota"]).toBe(1_000);
    expect(read.exponent).toBe(1.55);
    expect(read.workers).toBe(4);
    expect(read["limit.kind"]).toBe("bucket");
    expect(read.gate).toBe(8);
    expect(read).not.toHaveProperty("nonsense");
  });

  it("says what of a link it changed, naming the knob, what the link said and what is used", () => {
    const { params, changes } = read(
      guardScenario,
      "start=abc&peak=99999&ramp=-1&exponent=1.12&hold=35&nonsense=1&seed=",
    );
    expect(params).toMatchObject({ start: 100, peak: 5_000, ramp: 0, exponent: 1.1, hold: 35 });
    expect(changes.map((c) => c.said)).toEqual([
      "Load at the start (start=abc): not a number, so the default, 100 calls/s, is used.",
      "Load at the peak (peak=99999): above the most it goes to, so 5000 calls/s is used.",
      "Ramp lasts (ramp=-1): below the least it goes to, so 0 s is used.",
      "Skew: Zipf exponent s (exponent=1.12): not a step of 0.05 from 0, so 1.1 is used.",
      "Seed (seed=): empty, so the default, 1, is used.",
      "nonsense=1: Guard in front of a server has no such knob, so it is ignored.",
    ]);
    // A value the knob takes as written is no change, however it is spelled.
    expect(read(guardScenario, "peak=700&exponent=1.10&hold=035").changes).toEqual([]);
    expect(read(guardScenario, "peak=700&peak=800")).toMatchObject({
      params: { peak: 700 },
      changes: [{ said: "peak=800: peak is given more than once; the first is read." }],
    });
    expect(read(guardScenario, "limit.kind=sideways").changes.map((c) => c.said)).toEqual([
      "kind (limit.kind=sideways): not one of its choices, so the default, token bucket, is used.",
    ]);
  });

  it("opens the opening scenario (or the first) at its defaults for a scenario it does not have, and says so; an empty hash is no change", () => {
    const nope = resolve("#nope?rate=5", scenarios, "metastable-overload");
    const first = scenarios.find((s) => s.id === "metastable-overload");
    expect(nope.scenario.id).toBe(first?.id);
    expect(resolve("#nope", scenarios).scenario.id).toBe(scenarios[0]?.id);
    expect(nope.params).toEqual(defaults(nope.scenario));
    expect(nope.changes.map((c) => c.said)).toEqual([
      `#nope: there is no such scenario, so ${first?.title ?? ""} is shown at its defaults.`,
    ]);
    expect(resolve("", scenarios).changes).toEqual([]);
    expect(resolve("#guard?gate=20", scenarios)).toMatchObject({ scenario: { id: "guard" }, changes: [] });
  });

  it("parses a hash with or without a query", () => {
    expect(parseHash("#herd?clients=20")).toEqual({ id: "herd", query: "clients=20" });
    expect(parseHash("#herd")).toEqual({ id: "herd", query: "" });
    expect(parseHash("")).toEqual({ id: "", query: "" });
  });
});

describe("the CSV export", () => {
  it("has one header and a row per plotted point and per figure, quoting what needs it", () => {
    const outcome: Outcome = {
      charts: [
        {
          id: "c",
          title: "calls, per second",
          x: { label: "s", values: [0, 1] },
          y: { label: "calls" },
          series: [{ label: 'a "b"', values: [3, null] }],
        },
      ],
      figures: [{ id: "f", label: "refused", value: 0.25, unit: "%", digits: 2, expr: "x" }],
      tables: [
        {
          caption: "t",
          columns: ["row", "col"],
          rows: [{ label: "r", cells: [{ id: "g", label: "g", value: 7, unit: "", digits: 0, expr: "y" }] }],
        },
      ],
      notes: [],
      replay: { body: [] },
      simulated: { runs: 1, ms: 1, calls: 1 },
    };
    expect(toCsv(outcome).split("\n")).toEqual([
      "chart,series,x,value",
      '"calls, per second","a ""b""",0,3',
      '"calls, per second","a ""b""",1,',
      "figure,refused (%),,0.25",
      "figure,g,,7",
      "",
    ]);
  });
});
