import { check } from "@tideward/time/internal";
import type { RunResult } from "./result";
import type { Params, Scenario } from "./scenario";

/** The most values one sweep runs: each is a whole scenario run, kept in the result. */
const MAX_SWEEP_STEPS = 1_000;

/** One point of a {@link sweep}: the knob's value and each run's figures at it. */
export interface SweepResult {
  readonly scenario: string;
  /** The knob swept. */
  readonly knob: string;
  /** The parameters the sweep held fixed (the swept knob at its first value). */
  readonly params: Params;
  /** The knob's values, in order. */
  readonly values: readonly number[];
  /**
   * The runs' labels, in the scenario's order: each run is followed by its label from value to
   * value, and one a value lacks (a scenario whose runs change with the knob) reads `null` there.
   */
  readonly labels: readonly string[];
  /** `successRate[r][i]`: run `r`'s share of calls that succeeded at value `i` (`null` with no calls, or no such run there). */
  readonly successRate: readonly (readonly (number | null)[])[];
  /** Attempts that reached the backend per second (`null` where there is no such run). */
  readonly backendLoad: readonly (readonly (number | null)[])[];
  /** Attempts that reached the backend per call offered. */
  readonly amplification: readonly (readonly (number | null)[])[];
  /** Share of attempts refused. */
  readonly refusalRate: readonly (readonly (number | null)[])[];
}

/** Options of {@link sweep}. */
export interface SweepOptions {
  /** The first value. @defaultValue the knob's minimum */
  readonly from?: number;
  /** The last value. @defaultValue the knob's maximum */
  readonly to?: number;
  /** How many values, evenly spaced (rounded for an integer knob), from 2 to 1 000 (each is a whole scenario run). @defaultValue 11 */
  readonly steps?: number;
  /** The other parameters. @defaultValue the scenario's defaults */
  readonly params?: Readonly<Record<string, unknown>>;
  readonly start?: number;
}

/**
 * Runs `scenario` across a range of one numeric knob and gathers each run's success rate,
 * backend load and retry amplification at every value: how a policy behaves as a failure rate
 * or a client count grows.
 *
 * @throws TypeError when the scenario is not one, or the knob is unknown or not numeric; RangeError
 *   for a range outside the knob's
 */
export function sweep(scenario: Scenario, knob: string, options: SweepOptions = {}): SweepResult {
  if (scenario === null || typeof scenario !== "object" || !Array.isArray((scenario as { knobs?: unknown }).knobs))
    throw new TypeError(
      `sweep scenario must be a scenario (from the catalogue, or defineScenario), got ${check.describe(scenario)}`,
    );
  if (typeof knob !== "string") throw new TypeError(`sweep knob must be a knob's name, got ${check.describe(knob)}`);
  const k = scenario.knobs.find((x) => x.name === knob);
  if (k === undefined) {
    const near = check.closest(
      knob,
      scenario.knobs.map((x) => x.name),
    );
    throw new TypeError(
      `sweep: scenario ${scenario.name} has no knob ${JSON.stringify(knob)}${near === undefined ? "" : `; did you mean ${JSON.stringify(near)}?`}`,
    );
  }
  if (k.kind !== "number" && k.kind !== "integer")
    throw new TypeError(`sweep: knob ${knob} of ${scenario.name} is a ${k.kind}, not a number`);
  const o = check.options(options, ["from", "to", "steps", "params", "start"], "sweep");
  const from = check.between(check.or(o.from, k.min), k.min, k.max, `sweep from (${knob})`);
  const to = check.between(check.or(o.to, k.max), k.min, k.max, `sweep to (${knob})`);
  const steps = check.integer(check.or(o.steps, 11), "sweep steps", 2);
  if (steps > MAX_SWEEP_STEPS) throw new RangeError(`sweep steps must be at most ${MAX_SWEEP_STEPS}, got ${steps}`);
  const values = Array.from({ length: steps }, (_, i) => {
    // Rounded to twelve digits, so 0.8 · 3/4 reads 0.6 and not 0.6000000000000001.
    const v = Number((from + ((to - from) * i) / (steps - 1)).toPrecision(12));
    return k.kind === "integer" ? Math.round(v) : v;
  });
  const base = scenario.resolve(o.params);
  const results = values.map((v) =>
    scenario.run({ ...base, [knob]: v }, o.start === undefined ? {} : { start: o.start }),
  );
  // Each run by its label, in the order the labels first come.
  const byLabel = new Map<string, (RunResult | undefined)[]>();
  results.forEach((res, i) => {
    for (const run of res.runs) {
      let row = byLabel.get(run.label);
      if (row === undefined) byLabel.set(run.label, (row = new Array<RunResult | undefined>(steps).fill(undefined)));
      if (row[i] !== undefined)
        throw new TypeError(
          `sweep: scenario ${scenario.name} has two runs labelled ${JSON.stringify(run.label)} at ${knob} ${values[i]}: a sweep follows each run by its label`,
        );
      row[i] = run;
    }
  });
  const labels = [...byLabel.keys()];
  const per = <T>(f: (r: RunResult) => T): (T | null)[][] =>
    [...byLabel.values()].map((row) => row.map((r) => (r === undefined ? null : f(r))));
  return {
    scenario: scenario.name,
    knob,
    params: { ...base, [knob]: values[0] },
    values,
    labels,
    successRate: per((r) => r.summary.successRate),
    backendLoad: per((r) => (r.summary.backendLoad * 1_000) / r.duration),
    amplification: per((r) => r.summary.amplification),
    refusalRate: per((r) => r.summary.refusalRate),
  };
}
