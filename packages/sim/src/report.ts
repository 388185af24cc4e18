import type { RunResult } from "./result";
import type { Outcome, Table } from "./scenario";

/** A share as a percentage with one decimal: `"4.1 %"`; `"–"` for none. */
export function percent(x: number | null): string {
  return x === null || !Number.isFinite(x) ? "–" : `${(Math.round(x * 1_000) / 10).toFixed(1)} %`;
}

/** A number rounded to `digits` decimals, as text; `"–"` for none. */
export function num(x: number | null, digits = 0): string {
  if (x === null || !Number.isFinite(x)) return "–";
  const f = 10 ** digits;
  return (Math.round(x * f) / f).toFixed(digits);
}

/** A table as aligned plain text: the first column left-aligned, the rest right-aligned. */
export function textTable(table: Table): string {
  const cells = [table.columns.map(String), ...table.rows.map((r) => r.map(String))];
  const widths = table.columns.map((_, j) => cells.reduce((w, r) => Math.max(w, (r[j] ?? "").length), 0));
  const line = (r: readonly string[]): string =>
    r
      .map((c, j) => (j === 0 ? c.padEnd(widths[j]) : c.padStart(widths[j])))
      .join("  ")
      .trimEnd();
  return [table.title, ...cells.map(line)].join("\n");
}

/**
 * A scenario's outcome with one table: its report is the table as text, a blank line, then
 * `reading`, the sentence that says what the figures show.
 */
export function outcome(
  runs: readonly RunResult[],
  table: Table,
  figures: Readonly<Record<string, number>>,
  reading: string,
): Outcome {
  return { runs, tables: [table], figures, report: [textTable(table), "", reading].join("\n") };
}

/** The sum of `values[i]` over the buckets whose start `t[i]` (ms) is in `[from, to)`. */
export function sumBetween(t: readonly number[], values: readonly number[], from: number, to: number): number {
  let s = 0;
  for (let i = 0; i < t.length; i++) if (t[i] >= from && t[i] < to) s += values[i];
  return s;
}
