// A run as CSV, in long form (one value a row) so that charts with different x axes, the
// headline figures and the tables share one header and load as one frame anywhere.
import { allFigures } from "./model.ts";
import type { Outcome } from "./model.ts";

/** A CSV field, quoted when it holds a comma, a quote or a line break. */
function field(v: string | number | null): string {
  const s = v === null ? "" : String(v);
  return /[",\n\r]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

/** The run as CSV: `chart,series,x,value` for every plotted point, then `figure,<label>,,<value>` for every figure. */
export function toCsv(outcome: Outcome): string {
  const rows: (string | number | null)[][] = [["chart", "series", "x", "value"]];
  for (const chart of outcome.charts) {
    for (const s of chart.series) {
      chart.x.values.forEach((x, i) => rows.push([chart.title, s.label, x, s.values[i] ?? null]));
    }
  }
  for (const f of allFigures(outcome))
    rows.push(["figure", f.unit === "" ? f.label : `${f.label} (${f.unit})`, null, f.value]);
  return rows.map((r) => r.map(field).join(",")).join("\n") + "\n";
}
