// A name the user chose (a refusal reason, a policy's stat, a knob, a limit's unit) is a field of
// its own wherever it keys a record: "__proto__" never sets a prototype, "constructor" or
// "toString" never reads an inherited method, and the field survives JSON and structuredClone
// (the playground posts results from a worker).
import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { knobArbitrary, policy, simulate, toCsv, traffic } from "@tideward/sim";
import type { Knob, PolicySpec, RunResult } from "@tideward/sim";
import { parseLimit } from "@tideward/sim/cli";
import { STARTS } from "./helpers";

const NAMES: readonly string[] = ["__proto__", "constructor", "toString", "hasOwnProperty", "valueOf"];

/** A policy called `name` that refuses every other attempt under its name, and reports `stats`. */
function halving(name: string, stats: () => Record<string, number>): PolicySpec {
  return {
    name,
    create: () => {
      let n = 0;
      return {
        name,
        side: "client",
        reason: name,
        admit: () => (n++ % 2 === 0 ? true : undefined),
        settle: () => {},
        stats,
      };
    },
  };
}

describe.each(STARTS)("names that are Object.prototype's (start %s)", (start) => {
  const run = (name: string): RunResult =>
    simulate({
      start,
      duration: 2_000,
      step: 500,
      traffic: traffic.constant({ rate: 10 }),
      policies: [policy.bucket(5, { name })],
    });

  it.each(NAMES)("a refusal reason %j keeps its count, in the summary, the series and the CSV", (name) => {
    const r = run(name);
    expect(r.summary.refused).toBeGreaterThan(0);
    for (const copy of [r, structuredClone(r), JSON.parse(JSON.stringify(r)) as RunResult]) {
      expect(Object.keys(copy.summary.refusedBy)).toEqual([name]);
      expect(Object.hasOwn(copy.summary.refusedBy, name)).toBe(true);
      expect(copy.summary.refusedBy[name]).toBe(r.summary.refused);
      expect(Object.keys(copy.series.refusedBy)).toEqual([name]);
      expect(copy.series.refusedBy[name]).toEqual(r.series.refused);
      expect(Object.getPrototypeOf(copy.series.refusedBy[name])).toBe(Array.prototype);
    }
    const lines = toCsv(r).trimEnd().split("\n");
    const header = lines[0].split(",");
    const column = header.indexOf(`refused:${name}`);
    expect(column).toBe(header.indexOf("refused") + 1);
    expect(lines.slice(1).map((l) => Number(l.split(",")[column]))).toEqual(r.series.refused);
  });

  it("a reason absent from a run reads undefined, not an inherited function", () => {
    const r = run("bucket");
    for (const name of NAMES) {
      expect(r.summary.refusedBy[name]).toBeUndefined();
      expect(r.series.refusedBy[name]).toBeUndefined();
    }
  });

  it("a policy's stats keep a stat named like them", () => {
    // JSON.parse makes "__proto__" an own field, as a policy reading its stats from JSON would.
    const own = JSON.parse('{"__proto__": 3, "constructor": 4, "toString": 5}') as Record<string, number>;
    const r = simulate({
      start,
      duration: 1_000,
      traffic: traffic.constant({ rate: 10 }),
      policies: [halving("odd", () => own)],
    });
    const stats = r.policies[0].stats;
    expect(Object.keys(stats)).toEqual(["__proto__", "constructor", "toString"]);
    expect(Object.keys(own).map((k) => stats[k])).toEqual([3, 4, 5]);
    expect(JSON.parse(JSON.stringify(stats))).toEqual(own);
    expect(Object.keys(structuredClone(stats))).toEqual(["__proto__", "constructor", "toString"]);
  });
});

describe("knobs and units named like Object.prototype's", () => {
  it("knobArbitrary draws a knob named __proto__ or constructor as a field of its own", () => {
    const knobs: Knob[] = NAMES.map((name, i) => ({
      kind: "integer",
      name,
      label: name,
      doc: "",
      default: i,
      min: i,
      max: i,
      step: 1,
    }));
    for (const params of fc.sample(knobArbitrary(fc, knobs), 5)) {
      const record = params as Record<string, number>;
      expect(Object.keys(record)).toEqual([...NAMES]);
      NAMES.forEach((name, i) => expect([name, Object.hasOwn(record, name), record[name]]).toEqual([name, true, i]));
    }
  });

  it.each(["100/constructor", "100/__proto__", "100/__proto__s"])(
    "parseLimit(%j) is an unknown unit, not a span read off Object",
    (text) => {
      expect(() => parseLimit(text)).toThrow(/^cannot read the limit's unit "(constructor|__proto__s?)": use ms, s/);
    },
  );
});
