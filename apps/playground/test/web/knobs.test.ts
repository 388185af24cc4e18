// Whatever a control allows, the run answers: every knob at its lowest and at its highest (the
// others at their defaults) gives an outcome with finite figures, never an error on the page.
import { describe, expect, it } from "vitest";
import { scenarios } from "../../src/catalogue";
import { allFigures } from "../../src/model";
import { runs } from "../../src/runs";
import { defaults } from "../../src/state";

describe("every knob at either end of its range", () => {
  for (const scenario of scenarios) {
    const run = runs[scenario.id];
    it(
      `${scenario.id}: runs, with a finite figure for every cell and a line for every chart`,
      { timeout: 120_000 },
      () => {
        if (run === undefined) throw new Error(`no run for ${scenario.id}`);
        for (const knob of scenario.knobs) {
          const ends = knob.kind === "select" ? knob.options.map((o) => o.value) : [knob.min, knob.max];
          for (const value of ends) {
            const outcome = run({ ...defaults(scenario), [knob.key]: value });
            const where = `${scenario.id} with ${knob.key} = ${value}`;
            for (const f of allFigures(outcome))
              expect(Number.isFinite(f.value), `${where}: ${f.label} is ${f.value}`).toBe(true);
            for (const chart of outcome.charts) {
              expect(chart.series.length, where).toBeGreaterThan(0);
              for (const s of chart.series)
                expect(s.values.length, `${where}: ${chart.id} / ${s.label}`).toBe(chart.x.values.length);
            }
          }
        }
      },
    );
  }
});
