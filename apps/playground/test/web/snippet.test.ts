// "Copy as test" must hand a user a test that passes: for every scenario of the page's own, at
// its defaults and with a knob moved, the generated snippet is written out and run in a vitest of
// its own. The simulator's scenarios' tests, as the page wrote them, are replayed by page.test.ts;
// here, that one of them fails when what it asserts is not what ran.
import { describe, expect, it } from "vitest";
import { guardScenario, pageScenarios } from "../../src/catalogue";
import type { Params, Scenario } from "../../src/model";
import { runs } from "../../src/runs";
import { simOutcome } from "../../src/runs/sim";
import { simScenarios } from "../../src/sim-catalogue";
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
      const files = pageScenarios.flatMap((scenario) => {
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

  it(
    "the guard's test replays @tideward/guard's admission as the page ran it, a simulator scenario's replays scenario(name).run, and each fails when what it asserts differs from the run",
    { timeout: 180_000 },
    () => {
      // The guard's own knobs moved: another limiter kind, a wider gate, a hotter shedder, more skew.
      const params = {
        ...defaults(guardScenario),
        "limit.kind": "gcra",
        "limit.quota": 12,
        gate: 20,
        "shed.cpu": 800,
        exponent: 1.4,
        seed: 11,
      };
      const outcome = runs.guard?.(params);
      if (outcome === undefined) throw new Error("no run for the guard scenario");
      const code = toSnippet(guardScenario, outcome, hashFor(guardScenario, params));
      expect(code).toContain("policy.admission(");
      expect(code).toContain('kind: "gcra"');
      expect(code).toContain("keys.zipf(");
      expect(code).toMatch(/import \{ keys, latency, policy, simulate, traffic \} from "@tideward\/sim";/);
      // The same test with the rate refusals it asserts off by one: it must fail.
      const rate = outcome.tables[0]?.rows.flatMap((r) => r.cells).find((c) => c.id === "guarded.rate");
      if (rate === undefined) throw new Error("no rate refusals figure");
      expect(rate.value).toBeGreaterThan(0);
      const wrong = toSnippet(
        guardScenario,
        {
          ...outcome,
          tables: outcome.tables.map((t) => ({
            ...t,
            rows: t.rows.map((r) => ({
              ...r,
              cells: r.cells.map((c) => (c === rate ? { ...c, value: c.value + 1 } : c)),
            })),
          })),
        },
        hashFor(guardScenario, params),
      );
      // A simulator scenario's test, moved off its defaults, and the same with its report off by a word.
      const sim = simScenarios[0];
      if (sim === undefined) throw new Error("the simulator has no scenarios");
      const simParams = { ...defaults(sim), seed: 3 };
      const simRun = simOutcome(sim.id, simParams);
      const simCode = toSnippet(sim, simRun, hashFor(sim, simParams));
      expect(simCode).toMatch(/import \{ scenario \} from "@tideward\/sim";/);
      expect(simCode).toContain(`s.run({ seed: 3 }, { start: 0 });`);
      const report = simRun.report ?? "";
      const simWrong = toSnippet(
        sim,
        {
          ...simRun,
          replay: {
            ...simRun.replay,
            asserts: simRun.replay.asserts?.map((a) =>
              a.replace(JSON.stringify(report), JSON.stringify(`${report} (not so)`)),
            ),
          },
        },
        hashFor(sim, simParams),
      );
      expect(simWrong).not.toBe(simCode);
      const result = runSnippets("guard-snippets", [
        { name: "guard.right.test.ts", code },
        { name: "guard.wrong.test.ts", code: wrong },
        { name: "sim.right.test.ts", code: simCode },
        { name: "sim.wrong.test.ts", code: simWrong },
      ]);
      expect(result.passed, result.output).toBe(2);
      expect(result.failed, result.output).toBe(2);
      expect(result.output).toMatch(/sim\.wrong\.test\.ts/);
      expect(result.output).toMatch(/guard\.wrong\.test\.ts/);
      expect(result.output).toMatch(/refused by the per-key limit \(rate\)/);
    },
  );
});
