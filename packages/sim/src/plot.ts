import { check } from "@tideward/time/internal";

/** A level to read a plot's lines against: a budget's rate, a capacity, an empty bucket. */
export interface PlotMark {
  /** What the level is, for a legend: `"model budget (7000 tokens/s)"`. */
  readonly label: string;
  /** In the plot's unit. */
  readonly value: number;
}

/**
 * A quantity a scenario measures over each of its runs beyond the runs' own series (tokens served
 * a second, a budget's level): what the scenario is about, for a page to plot over the runs'
 * buckets, a line a run, beside the levels it is read against.
 */
export interface Plot {
  /** Its name within the scenario, short and stable: `"tokens"`. */
  readonly id: string;
  /** What it shows, in words. */
  readonly title: string;
  /** The unit of its values and marks: `"tokens/s"`. */
  readonly unit: string;
  /** A line per run, in the runs' order: a value per bucket of the run's series (`series.t`), `null` where there is none. */
  readonly runs: readonly (readonly (number | null)[])[];
  /** Levels to read the lines against. @defaultValue none */
  readonly marks?: readonly PlotMark[];
}

/** `value` checked as the plots of a scenario's outcome over `buckets` (each run's), or a TypeError naming the field. */
export function checkPlots(value: unknown, buckets: readonly number[], what: string): void {
  if (!Array.isArray(value))
    throw new TypeError(`${what} plots must be an array of plots, got ${check.describe(value)}`);
  const seen = new Set<string>();
  Array.from(value as readonly unknown[], (v, i) => {
    const at = `${what} plots[${i}]`;
    const p = v as Partial<Plot> | null;
    if (p === null || typeof p !== "object")
      throw new TypeError(`${at} must be a plot ({ id, title, unit, runs }), got ${check.describe(v)}`);
    for (const field of ["id", "title", "unit"] as const)
      if (typeof p[field] !== "string")
        throw new TypeError(`${at} ${field} must be text, got ${check.describe(p[field])}`);
    if (seen.has(p.id as string)) throw new TypeError(`${what} has two plots named ${JSON.stringify(p.id)}`);
    seen.add(p.id as string);
    const runs: unknown = p.runs;
    if (!Array.isArray(runs) || runs.length !== buckets.length)
      throw new TypeError(
        `${at} runs must be an array of ${buckets.length} lines, one a run, got ${check.describe(runs)}`,
      );
    Array.from(runs as readonly unknown[], (line, j) => {
      if (!Array.isArray(line) || line.length !== buckets[j])
        throw new TypeError(
          `${at} runs[${j}] must be an array of ${buckets[j]} values, one a bucket of the run, got ${check.describe(line)}`,
        );
      Array.from(line as readonly unknown[], (x, k) => {
        if (x !== null && (typeof x !== "number" || !Number.isFinite(x)))
          throw new TypeError(`${at} runs[${j}][${k}] must be a finite number or null, got ${check.describe(x)}`);
      });
    });
    const marks: unknown = p.marks;
    if (marks === undefined) return;
    if (!Array.isArray(marks))
      throw new TypeError(`${at} marks must be an array of { label, value }, got ${check.describe(marks)}`);
    Array.from(marks as readonly unknown[], (m, j) => {
      const x = m as Partial<PlotMark> | null;
      if (x === null || typeof x !== "object" || typeof x.label !== "string")
        throw new TypeError(`${at} marks[${j}] must be { label, value }, got ${check.describe(m)}`);
      if (typeof x.value !== "number" || !Number.isFinite(x.value))
        throw new TypeError(`${at} marks[${j}] value must be a finite number, got ${check.describe(x.value)}`);
    });
  });
}
