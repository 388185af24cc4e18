// Whatever a control allows, the run answers: every knob of the page's own scenarios at its
// lowest and at its highest (the others at their defaults) gives an outcome with finite figures,
// never an error on the page. The simulator's scenarios are checked at their knobs' ends by the
// simulator's own tests; here, that the page's controls stay inside those knobs.
import { describe, expect, it } from "vitest";
import { scenario as simScenario } from "@tideward/sim";
import { pageScenarios } from "../../src/catalogue";
import { allFigures } from "../../src/model";
import type { Outcome } from "../../src/model";
import { runs } from "../../src/runs";
import { simScenarios } from "../../src/sim-catalogue";
import { coerce, defaults } from "../../src/state";

/** A count of one in the plural ("1 calls"), anywhere in the text a run gives the page. */
const onePlural =
  /(?<![\d.,])1 (calls|clients|workers|keys|tokens|requests|bursts|runs|attempts|failures|buckets|users|retries|points)\b/;

/** Every sentence and label of an outcome: notes, chart titles and lines, table captions, columns and rows. */
function texts(o: Outcome): string[] {
  return [
    ...o.notes,
    ...o.charts.flatMap((c) => [c.title, c.x.label, c.y.label, ...c.series.map((s) => s.label)]),
    ...o.tables.flatMap((t) => [t.caption, ...t.columns, ...t.rows.map((r) => r.label)]),
    ...allFigures(o).map((f) => f.label),
  ];
}

describe("every knob at either end of its range", () => {
  for (const scenario of pageScenarios) {
    const run = runs[scenario.id];
    it(
      `${scenario.id}: runs, with a finite figure for every cell, a line for every chart, and no "1 calls"`,
      // The guard's ends take about 30 s on two quiet cores and four times that at a load of 19.
      { timeout: 300_000 },
      () => {
        if (run === undefined) throw new Error(`no run for ${scenario.id}`);
        for (const knob of scenario.knobs) {
          const ends = knob.kind === "select" ? knob.options.map((o) => o.value) : [knob.min, knob.max];
          for (const value of ends) {
            const outcome = run({ ...defaults(scenario), [knob.key]: value });
            const where = `${scenario.id} with ${knob.key} = ${value}`;
            for (const f of allFigures(outcome))
              expect(Number.isFinite(f.value), `${where}: ${f.label} is ${f.value}`).toBe(true);
            for (const text of texts(outcome)) expect(text, where).not.toMatch(onePlural);
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

describe("the simulator's knobs as the page's controls", () => {
  it("offer only values the scenario accepts, its default among them, on a grid the control and a link agree on", () => {
    for (const page of simScenarios) {
      const sim = simScenario(page.id);
      if (sim === undefined) throw new Error(`no scenario ${page.id}`);
      expect(page.knobs.map((k) => k.key)).toEqual(sim.knobs.map((k) => k.name));
      for (const knob of page.knobs) {
        const own = sim.knobs.find((k) => k.name === knob.key);
        const where = `${page.id}.${knob.key}`;
        expect(knob.label, where).toBe(own?.label);
        if (knob.kind === "select") {
          expect(coerce(knob, String(knob.value)), where).toBe(knob.value);
          continue;
        }
        if (own?.kind !== "number" && own?.kind !== "integer") throw new Error(`${where} is a ${own?.kind}`);
        expect(knob.min, where).toBeGreaterThanOrEqual(own.min);
        expect(knob.max, where).toBeLessThanOrEqual(own.max);
        expect(knob.max - knob.min, `${where} keeps most of its range`).toBeGreaterThanOrEqual(
          own.max - own.min - own.step,
        );
        expect(coerce(knob, String(own.default)), `${where}: the default is on the grid`).toBe(own.default);
        // Either end, and a value beyond each, is one the scenario accepts.
        for (const v of [knob.min, knob.max, own.min - 1, own.max + 1]) {
          const held = coerce(knob, String(v));
          expect(() => sim.resolve({ [knob.key]: held }), `${where} = ${String(held)}`).not.toThrow();
        }
      }
    }
  });
});
