// Type tests: vitest's typecheck runs tsc over them (they never run); each test fails on a type
// error inside it, and an `@ts-expect-error` that stops being an error is one.
import { describe, expectTypeOf, test } from "vitest";
import {
  breakerOutage,
  defineScenario,
  isInvariantError,
  knobArbitrary,
  policy,
  simulate,
  traffic,
} from "@tideward/sim";
import type {
  InvariantError,
  Knob,
  KnobValue,
  PolicySpec,
  RunResult,
  Scenario,
  ScenarioResult,
  Summary,
} from "@tideward/sim";

describe("simulate", () => {
  test("takes traffic and policies, and answers a RunResult with a summary", () => {
    const run = simulate({
      duration: 60_000,
      traffic: traffic.poisson({ rate: 100 }),
      policies: [policy.breaker({ k: 2 })],
    });
    expectTypeOf(run).toEqualTypeOf<RunResult>();
    expectTypeOf(run.summary).toEqualTypeOf<Summary>();
    expectTypeOf(run.summary.successRate).toEqualTypeOf<number | null>();
    expectTypeOf(run.summary.refusedBy).toEqualTypeOf<Readonly<Record<string, number>>>();
    expectTypeOf(policy.breaker).parameters.toExtend<[policy?: { k?: number }, ...unknown[]]>();
    expectTypeOf(policy.breaker()).toEqualTypeOf<PolicySpec>();
    // @ts-expect-error -- a run needs its traffic
    simulate({ duration: 60_000 });
    // @ts-expect-error -- not a breaker policy field
    policy.breaker({ threshold: 0.5 });
    // @ts-expect-error -- a result is read-only
    run.summary.calls = 0;
  });

  test("an invariant breach is an InvariantError", () => {
    const e: unknown = new Error("x");
    if (isInvariantError(e)) expectTypeOf(e).toEqualTypeOf<InvariantError>();
  });
});

describe("scenarios", () => {
  test("are defined with typed parameters and run with any partial record", () => {
    const s = defineScenario<{ rate: number; mode: string }>({
      name: "demo",
      title: "Demo",
      summary: "",
      knobs: [],
      run: (params, start) => {
        expectTypeOf(params.rate).toEqualTypeOf<number>();
        expectTypeOf(start).toEqualTypeOf<number>();
        return { runs: [], figures: {}, report: "" };
      },
    });
    expectTypeOf(s).toEqualTypeOf<Scenario>();
    expectTypeOf(breakerOutage.run({ seed: 1 })).toEqualTypeOf<ScenarioResult>();
    expectTypeOf<Knob["kind"]>().toEqualTypeOf<"number" | "integer" | "select" | "boolean">();
    expectTypeOf<KnobValue>().toEqualTypeOf<number | string | boolean>();
    // @ts-expect-error -- parameters are knob values: numbers, strings or booleans
    defineScenario<{ rate: number[] }>({
      name: "x",
      title: "x",
      summary: "",
      knobs: [],
      run: () => ({ runs: [], figures: {}, report: "" }),
    });
  });

  test("knobArbitrary answers the arbitrary type of the fast-check it is given", () => {
    type Arb = { readonly arb: true };
    const fc = {
      integer: (): Arb => ({ arb: true }),
      double: (): Arb => ({ arb: true }),
      constantFrom: (): Arb => ({ arb: true }),
      boolean: (): Arb => ({ arb: true }),
      record: (): Arb => ({ arb: true }),
    };
    expectTypeOf(knobArbitrary(fc, breakerOutage.knobs)).toEqualTypeOf<Arb>();
  });
});
