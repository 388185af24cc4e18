// Whatever a control allows, the run answers: every knob at its lowest and at its highest (the
// others at their defaults) gives an outcome with finite figures, never an error on the page.
import { describe, expect, it } from "vitest";
import { scenarios } from "../../src/catalogue";
import { allFigures } from "../../src/model";
import type { Outcome } from "../../src/model";
import { runs } from "../../src/runs";
import { defaults } from "../../src/state";

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
  for (const scenario of scenarios) {
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
