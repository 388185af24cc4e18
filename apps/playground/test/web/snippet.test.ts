// "Copy as test" must hand a user a test that passes: for every scenario, at its defaults and
// with a knob moved, the generated snippet is written out and run in a vitest of its own.
import { describe, expect, it } from "vitest";
import { scenarios } from "../../src/catalogue";
import type { Params, Scenario } from "../../src/model";
import { runs } from "../../src/runs";
import { snippetName, toSnippet } from "../../src/snippet";
import { defaults, hashFor } from "../../src/state";
import { runSnippets } from "./page";

/** The scenario's defaults with its first numeric knob (after any seed) moved a few steps up. */
function moved(scenario: Scenario): Params {
  const p: Record<string, number | string> = { ...defaults(scenario) };
  const knob = scenario.knobs.find((k) => k.kind !== "select" && k.key !== "seed");
  if (knob !== undefined && knob.kind !== "select") p[knob.key] = Math.min(knob.max, knob.value + 3 * knob.step);
  p.seed = 7;
  return p;
}

describe("copy as test", () => {
  it(
    "writes, for every scenario at its defaults and moved, a vitest file that replays the run through @tideward/sim and passes",
    { timeout: 180_000 },
    () => {
      const files = scenarios.flatMap((scenario) => {
        const run = runs[scenario.id];
        if (run === undefined) throw new Error(`no run for scenario ${scenario.id}`);
        return [defaults(scenario), moved(scenario)].map((params, i) => {
          const outcome = run(params);
          const code = toSnippet(scenario, outcome, hashFor(scenario, params));
          expect(code).toContain('from "@tideward/sim"');
          expect(code.match(/expect\(/g)?.length ?? 0).toBeGreaterThan(0);
          return { name: snippetName(scenario).replace(".playground.", i === 0 ? ".defaults." : ".moved."), code };
        });
      });
      const result = runSnippets("snippets", files);
      expect(result.failed, result.output).toBe(0);
      expect(result.passed, result.output).toBe(files.length);
    },
  );
});
