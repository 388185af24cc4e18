// The tuner's arithmetic under Node.js: its grid stays on the knobs' own grids and inside their
// ranges, its front is exactly the points no other beats, its link reads back what it wrote, and
// "copy as options" maps a knob to the guard's option in the guard's units.
import fc from "fast-check";
import { scenario } from "@tideward/sim";
import { describe, expect, it } from "vitest";
import { simMetas, simScenarios } from "../../src/sim-catalogue";
import { coerce } from "../../src/state";
import {
  costOf,
  front,
  grid,
  guardOptions,
  optionsText,
  readTuner,
  sweepable,
  tunerChanges,
  writeTuner,
} from "../../src/tuner-model";
import type { Point } from "../../src/tuner-model";

const point = (goodput: number, load: number, i: number): Point => ({
  params: { k: i },
  runs: [{ label: "tideward", goodput, load, peak: load, wasted: 0, recover: null }],
});

describe("the tuner", () => {
  it("draws the front through exactly the points that no other beats on goodput and cost", () => {
    const pts = fc.array(fc.tuple(fc.integer({ min: 0, max: 100 }), fc.integer({ min: 0, max: 50 })), {
      minLength: 1,
      maxLength: 30,
    });
    fc.assert(
      fc.property(pts, (xs) => {
        const all = xs.map(([g, c], i) => point(g, c, i));
        const best = front(all, 0, "load");
        const g = (p: Point): number => p.runs[0]?.goodput ?? 0;
        const c = (p: Point): number => costOf(p, 0, "load") ?? 0;
        const beats = (a: Point, b: Point): boolean => g(a) >= g(b) && c(a) <= c(b) && (g(a) > g(b) || c(a) < c(b));
        // On the front: beaten by none. Off it: beaten by one, or the same as one on it.
        for (const p of best) expect(all.some((q) => beats(q, p))).toBe(false);
        for (const p of all.filter((q) => !best.includes(q)))
          expect(all.some((q) => beats(q, p)) || best.some((q) => g(q) === g(p) && c(q) === c(p))).toBe(true);
        // By rising cost and rising goodput.
        for (let i = 1; i < best.length; i++) {
          expect(c(best[i])).toBeGreaterThan(c(best[i - 1]));
          expect(g(best[i])).toBeGreaterThan(g(best[i - 1]));
        }
      }),
      { numRuns: 200 },
    );
  });

  it("sweeps every scenario's knobs only over values the scenario takes, on the grid its view shows", () => {
    for (const meta of simMetas) {
      const s = scenario(meta.name);
      const page = simScenarios.find((p) => p.id === meta.name);
      const knobs = sweepable(meta);
      expect(
        knobs.map((k) => k.name),
        meta.name,
      ).not.toContain("seed");
      for (const [x, y] of [
        [knobs[0], knobs[1]],
        [knobs.at(-1), undefined],
      ] as const) {
        if (x === undefined) continue;
        const t = readTuner(`of=${meta.name}&x=${x.name}&xn=4${y === undefined ? "" : `&y=${y.name}&yn=3`}`, simMetas);
        expect(readTuner(writeTuner(t), simMetas)).toEqual(t);
        const points = grid(t, simMetas);
        expect(points.length).toBeLessThanOrEqual(y === undefined ? 4 : 12);
        expect(points.length).toBeGreaterThanOrEqual(y === undefined ? 2 : 4);
        for (const p of points) {
          expect(() => s?.resolve(p), JSON.stringify(p)).not.toThrow();
          for (const [name, v] of Object.entries(p)) {
            const k = page?.knobs.find((kk) => kk.key === name);
            if (k === undefined) throw new Error(`no knob ${name}`);
            expect(coerce(k, String(v)), `${meta.name}.${name}`).toBe(v);
          }
        }
      }
    }
  });

  it("holds a hand-edited link to what the scenario has: an unknown scenario, knob or cost, a range past the knob's, too many points", () => {
    const t = readTuner("of=nope&x=nope&x0=-5&x1=1e9&xn=50&cost=nope&run=abc", simMetas);
    // Without a scenario it can use, the first with a knob that is a guard option, and that knob.
    const isOption = (m: (typeof simMetas)[number], name: string): boolean =>
      guardOptions(m, 0, { [name]: 1 }) !== undefined;
    const first = simMetas.find((m) => sweepable(m).some((k) => isOption(m, k.name))) ?? simMetas[0];
    if (first === undefined) throw new Error("no scenarios");
    expect(t.of).toBe(first.name);
    expect(sweepable(first).map((k) => k.name)).toContain(t.x);
    expect(isOption(first, t.x)).toBe(true);
    expect(t.xn).toBe(9);
    expect(t.cost).toBe("load");
    expect(t.run).toBe(0);
    const k = sweepable(first).find((kk) => kk.name === t.x);
    expect(t.x0).toBeGreaterThanOrEqual(k?.min ?? 0);
    expect(t.x1).toBeLessThanOrEqual(k?.max ?? 0);
    // And says so, naming each field, what the link said and what is used.
    const said = tunerChanges("of=nope&x=nope&x0=-5&x1=1e9&xn=50&cost=nope&run=abc", t);
    expect(said).toEqual([
      `of=nope: not one the tuner can use, so ${t.of} is used.`,
      `x=nope: not one the tuner can use, so ${t.x} is used.`,
      `x0=-5: not one the tuner can use, so ${t.x0} is used.`,
      `x1=1e9: not one the tuner can use, so ${t.x1} is used.`,
      "xn=50: not one the tuner can use, so 9 is used.",
      "cost=nope: not one the tuner can use, so load is used.",
      "run=abc: not one the tuner can use, so 0 is used.",
    ]);
    expect(tunerChanges(writeTuner(t), t)).toEqual([]);
    // The second knob is never the first, and both together stay within thirty points.
    const both = readTuner(`of=${first.name}&x=${t.x}&y=${t.x}`, simMetas);
    expect(both.y).toBe("");
    const many = readTuner(`of=${first.name}&x=${t.x}&xn=9&y=seed&yn=9`, simMetas);
    expect(many.y).toBe(""); // the seed is not swept
  });

  it("copies tideward's run as guard options in the guard's units, and a baseline's as the simulator's run alone", () => {
    const meta = {
      name: "made-up",
      title: "Made up",
      summary: "",
      knobs: [
        { kind: "number", name: "k", label: "k", doc: "", default: 1.5, min: 1, max: 3, step: 0.05 },
        { kind: "number", name: "probe", label: "probe", doc: "", default: 1, min: 0.1, max: 10, step: 0.1, unit: "s" },
        { kind: "number", name: "base", label: "base", doc: "", default: 100, min: 1, max: 1_000, step: 1, unit: "ms" },
        { kind: "number", name: "ratio", label: "ratio", doc: "", default: 0.2, min: 0, max: 1, step: 0.05 },
        { kind: "number", name: "rate", label: "rate", doc: "", default: 100, min: 1, max: 1_000, step: 1 },
      ],
    } as const;
    const params = { k: 2, probe: 0.3, base: 50, ratio: 0.1, rate: 200 };
    expect(guardOptions(meta, 0, params)).toEqual({
      breaker: { k: 2, probe: 300 },
      retry: { base: 50 },
      budget: { ratio: 0.1 },
    });
    expect(guardOptions(meta, 1, params)).toBeUndefined();
    const p: Point = { params, runs: [{ label: "tideward", goodput: 90, load: 10, peak: 12, wasted: 0, recover: 1 }] };
    const text = optionsText(meta, 0, p);
    expect(text).toContain("guard(fn, { breaker: { k: 2, probe: 300 }, retry: { base: 50 }, budget: { ratio: 0.1 } })");
    expect(text).toContain(
      'scenario("made-up").run({ k: 2, probe: 0.3, base: 50, ratio: 0.1, rate: 200 }, { start: 0 })',
    );
    expect(optionsText(meta, 1, { ...p, runs: [...p.runs, { ...p.runs[0], label: "classic" }] })).not.toContain(
      "guard(",
    );
  });
});
