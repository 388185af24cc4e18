// "Copy as test": a vitest file that replays a run through @tideward/sim and asserts the
// figures the page showed. Counts are asserted exactly, fractions to the decimals shown.
import { importsFor } from "./code.ts";
import { allFigures, formatValue } from "./model.ts";
import type { Figure, Outcome, Scenario } from "./model.ts";

function assertion(f: Figure): string {
  const label = JSON.stringify(f.unit === "" ? f.label : `${f.label} (${f.unit})`);
  const exact = f.digits === 0 && Number.isInteger(f.value);
  const check = exact ? `toBe(${f.value})` : `toBeCloseTo(${f.value}, ${f.digits})`;
  return `  expect(${f.expr}, ${label}).${check}; // the page shows ${formatValue(f)}`;
}

/** The vitest source replaying `outcome` of `scenario`, linked from `hash` (the page's URL state). */
export function toSnippet(scenario: Scenario, outcome: Outcome, hash: string): string {
  const { body, asserts = [] } = outcome.replay;
  const figures = allFigures(outcome);
  const imports = importsFor([...body, ...figures.map((f) => f.expr)]);
  return [
    `// ${scenario.title}, replayed from the tideward playground (${hash}).`,
    `import { expect, it } from "vitest";`,
    ...imports,
    ``,
    `it(${JSON.stringify(`${scenario.title}: the figures the playground showed`)}, () => {`,
    ...body.map((line) => `  ${line}`),
    ...figures.map(assertion),
    ...asserts.map((line) => `  ${line}`),
    `});`,
    ``,
  ].join("\n");
}

/** The file name "copy as test" suggests. */
export function snippetName(scenario: Pick<Scenario, "id">): string {
  return `${scenario.id}.playground.test.ts`;
}
