// The tuner's arithmetic under Node.js: its grid stays on the knobs' own grids and inside their
// ranges, its front is exactly the points no other beats, its link reads back what it wrote, and
// "copy as options" maps a knob to the guard's option in the guard's units.
import fc from "fast-check";
import { runInNewContext } from "node:vm";
import { admit, guard } from "@tideward/guard";
import { scenario } from "@tideward/sim";
import { describe, expect, it } from "vitest";
import { simMetas, simScenarios } from "../../src/sim-catalogue";
import { coerce } from "../../src/state";
import {
  FIRST_POINTS,
  costOf,
  front,
  grid,
  guardOptions,
  optionsText,
  readTuner,
  sweepable,
  tunerChanges,
  values,
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

  it("starts every scenario's sweep, and any second knob, around the knob's default: evenly spaced points on its grid, the default among them, each a value the scenario takes", () => {
    for (const meta of simMetas) {
      const s = scenario(meta.name);
      const knobs = sweepable(meta);
      const first = readTuner(`of=${meta.name}`, simMetas);
      // A retry budget's scenario is tuned by its budget; else by a guard option where there is one.
      const x = knobs.find((k) => k.name === first.x);
      if (x === undefined) throw new Error(`${meta.name}: no knob ${first.x}`);
      if (meta.name === "retry-amplification" || meta.name === "herd-recovery") expect(x.name, meta.name).toBe("ratio");
      else if (knobs.some((k) => k.option !== undefined)) expect(x.option, `${meta.name}.${x.name}`).toBeDefined();
      for (const [k, n, from, to] of [
        [x, first.xn, first.x0, first.x1],
        ...knobs
          .filter((k) => k.name !== x.name)
          .map((y) => {
            const t = readTuner(`of=${meta.name}&y=${y.name}`, simMetas);
            return [y, t.yn, t.y0, t.y1] as const;
          }),
      ] as const) {
        const where = `${meta.name}.${k.name} from ${from} to ${to}`;
        expect(n, where).toBe(k === x ? FIRST_POINTS.x : FIRST_POINTS.y);
        const vs = values(k, from, to, n);
        // As many points as asked, evenly spaced, the default one of them where the range allows.
        expect(vs, where).toHaveLength(n);
        const gaps = new Set(vs.slice(1).map((v, i) => Number((v - (vs[i] ?? 0)).toPrecision(9))));
        expect(gaps.size, `${where}: ${vs.join(", ")}`).toBe(1);
        if (k.default - k.step * (n - 1) >= k.min && k.default + k.step * (n - 1) <= k.max)
          expect(vs, where).toContain(k.default);
        for (const v of vs) {
          if (k.kind === "integer") expect(Number.isInteger(v), `${where}: ${v}`).toBe(true);
          expect(() => s?.resolve({ [k.name]: v }), `${where}: ${v}`).not.toThrow();
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
    const knob = { kind: "number", label: "", doc: "", min: 0, max: 1_000, step: 0.05 } as const;
    const meta = {
      name: "made-up",
      title: "Made up",
      summary: "",
      knobs: [
        { ...knob, name: "k", default: 1.5, option: { path: "breaker.k" } },
        { ...knob, name: "probe", default: 1, unit: "s", option: { path: "breaker.probe", scale: 1_000 } },
        { ...knob, name: "base", default: 100, unit: "ms", option: { path: "retry.base" } },
        { ...knob, name: "ratio", default: 0.2, option: { path: "budget.ratio" } },
        // Named as a guard option is, but the scenario does not say it is one: no guessing.
        { ...knob, name: "timeout", default: 1, unit: "s" },
        { ...knob, name: "rate", default: 100 },
      ],
    } as const;
    const params = { k: 2, probe: 0.3, base: 50, ratio: 0.1, timeout: 2, rate: 200 };
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
      'scenario("made-up").run({ k: 2, probe: 0.3, base: 50, ratio: 0.1, timeout: 2, rate: 200 }, { start: 0 })',
    );
    expect(optionsText(meta, 1, { ...p, runs: [...p.runs, { ...p.runs[0], label: "classic" }] })).not.toContain(
      "guard(",
    );
  });

  it("copies every catalogue knob that is a guard option to the option it names: the guard takes it, and the knob moves it", () => {
    let seen = 0;
    for (const meta of simMetas) {
      for (const k of sweepable(meta)) {
        if (k.option === undefined) {
          expect(guardOptions(meta, 0, { [k.name]: k.default }, "guard"), `${meta.name}.${k.name}`).toBeUndefined();
          expect(guardOptions(meta, 0, { [k.name]: k.default }, "admit"), `${meta.name}.${k.name}`).toBeUndefined();
          continue;
        }
        seen++;
        const of = k.option.of ?? "guard";
        const other = k.default + k.step <= k.max ? k.default + k.step : k.default - k.step;
        const read = (v: number): number => {
          const o = guardOptions(meta, 0, { [k.name]: v }, of);
          // The option lands at its path, alone.
          let at: unknown = o;
          for (const field of k.option?.path.split(".") ?? []) {
            expect(Object.keys(at as object), `${meta.name}.${k.name}`).toEqual([field]);
            at = (at as Record<string, unknown>)[field];
          }
          // The guard knows the option there (it refuses an unknown name) and takes the value.
          if (of === "admit") expect(() => admit({ load: () => 0, ...o })).not.toThrow();
          else expect(() => guard(() => 0, o)).not.toThrow();
          // The text copied says the same.
          const text = optionsText(meta, 0, { params: { [k.name]: v }, runs: [] });
          const line = text.split("\n").find((l) => l.startsWith(of === "admit" ? "admit(" : "guard(fn, "));
          const copied = runInNewContext(`(${line?.replace(/^(admit\(|guard\(fn, )/, "").slice(0, -1) ?? ""})`, {
            load: "load",
          }) as Record<string, unknown>;
          expect(JSON.parse(JSON.stringify(copied))).toEqual(of === "admit" ? { load: "load", ...o } : o);
          return at as number;
        };
        const [a, b] = [read(k.default), read(other)];
        expect(a, `${meta.name}.${k.name}`).not.toBe(b);
        // In the same direction as the knob: no option counts down as its knob counts up.
        expect(Math.sign(b - a)).toBe(Math.sign(other - k.default));
        // The other function is not given it.
        expect(guardOptions(meta, 0, { [k.name]: k.default }, of === "admit" ? "guard" : "admit")).toBeUndefined();
      }
    }
    expect(seen).toBeGreaterThan(10);
    // The conversions: seconds to the guard's milliseconds, retries to the guard's attempts.
    const m = simMetas.find((x) => x.name === "metastable-overload");
    if (m === undefined) throw new Error("no metastable-overload");
    expect(guardOptions(m, 0, { timeout: 0.3, retries: 3, deadline: 5, capacity: 100 })).toEqual({
      timeout: 300,
      retry: { attempts: 4 },
      deadline: 5_000,
    });
  });

  it("copies a cap below the base as the base, as the backoff scenarios run it, and the guard takes it", () => {
    for (const name of ["herd-backoff", "contention-backoff"]) {
      const m = simMetas.find((x) => x.name === name);
      if (m === undefined) throw new Error(`no ${name}`);
      const o = guardOptions(m, 0, { base: 500, cap: 100 });
      expect(o, name).toEqual({ retry: { base: 500, cap: 500 } });
      expect(() => guard(() => 0, { ...o, retry: { ...(o?.["retry"] as object), attempts: 3 } })).not.toThrow();
      // A cap above the base is copied as it is.
      expect(guardOptions(m, 0, { base: 100, cap: 900 }), name).toEqual({ retry: { base: 100, cap: 900 } });
    }
  });
});
