// Means and spreads of the sweep's figures, and the table it prints them in.

/** A figure over many runs: its mean and the least and most any run gave. */
export interface Spread {
  readonly mean: number;
  readonly min: number;
  readonly max: number;
}

/** The mean, least and most of `values` (at least one). */
export function spread(values: readonly number[]): Spread {
  let total = 0;
  let min = Infinity;
  let max = -Infinity;
  for (const v of values) {
    total += v;
    if (v < min) min = v;
    if (v > max) max = v;
  }
  return { mean: total / values.length, min, max };
}

/** `s` as "mean (min–max)", each with `digits` decimals, scaled by `scale` (100 for a percentage). */
export function show(s: Spread, digits = 1, scale = 1): string {
  const f = (x: number): string => (x * scale).toFixed(digits);
  return s.min === s.max ? f(s.mean) : `${f(s.mean)} (${f(s.min)}–${f(s.max)})`;
}

/** Prints rows as a Markdown table, so the output pastes into a README as it is. */
export function table(columns: readonly string[], rows: readonly (readonly string[])[]): void {
  console.log(`| ${columns.join(" | ")} |`);
  console.log(`| ${columns.map(() => "---").join(" | ")} |`);
  for (const r of rows) console.log(`| ${r.join(" | ")} |`);
}
