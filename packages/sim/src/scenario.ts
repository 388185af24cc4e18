import { check } from "@tideward/time/internal";
import { CLOCK_LIMIT } from "./clock-range";
import { checkOptionSets, guardOptionsOf } from "./guard-options";
import type { GuardOption, GuardOptionSets } from "./guard-options";
import type { RunResult } from "./result";

export type { GuardOption } from "./guard-options";

/** A value a knob takes: plain JSON, so parameters fit in a URL and cross `postMessage`. */
export type KnobValue = number | string | boolean;

/** A scenario's parameters: one value per knob, by the knob's name. */
export type Params = Readonly<Record<string, KnobValue>>;

interface KnobBase {
  /** The parameter's name, a JavaScript identifier: `"rate"`. */
  readonly name: string;
  /** A short label for a control: `"Offered load"`. */
  readonly label: string;
  /** One sentence on what it does. */
  readonly doc: string;
}

/** A number in `[min, max]`; `integer` ones are whole. */
export interface NumberKnob extends KnobBase {
  readonly kind: "number" | "integer";
  readonly default: number;
  readonly min: number;
  readonly max: number;
  /** A sensible increment for a slider. */
  readonly step: number;
  /** The unit, for the label: `"calls/s"`, `"ms"`, `"s"`, `"share"`. */
  readonly unit?: string;
  /** How a slider should move across the range. @defaultValue "linear" */
  readonly scale?: "linear" | "log";
  /** The guard option it sets, if it is one (an attempt's timeout, a retry budget's ratio); a backend's or the traffic's knob has none. @defaultValue none */
  readonly option?: GuardOption;
}

/** One of a few named choices. */
export interface SelectKnob extends KnobBase {
  readonly kind: "select";
  readonly default: string;
  readonly options: readonly { readonly value: string; readonly label: string }[];
}

/** On or off. */
export interface BooleanKnob extends KnobBase {
  readonly kind: "boolean";
  readonly default: boolean;
}

/** One parameter of a scenario, with its default and its range: enough to draw a control. */
export type Knob = NumberKnob | SelectKnob | BooleanKnob;

/** A labelled table a scenario shows under its plot (the burst table's 21 / 20 / 40, say). */
export interface Table {
  readonly title: string;
  readonly columns: readonly string[];
  readonly rows: readonly (readonly (string | number)[])[];
}

/** What a scenario produced: plain JSON. */
export interface ScenarioResult {
  /** The scenario's name. */
  readonly scenario: string;
  readonly title: string;
  /** Every parameter, defaults filled in. */
  readonly params: Params;
  /** The clock reading the runs started at, ms. */
  readonly start: number;
  /** Its runs on the same seed and traffic: tideward first, then the baselines. */
  readonly runs: readonly RunResult[];
  readonly tables: readonly Table[];
  /** The figures the report states, by name, so a test (or a page) can assert on them. */
  readonly figures: Readonly<Record<string, number>>;
  /** A short text report: what happened, in numbers. */
  readonly report: string;
}

/** Options of {@link Scenario.run} that are not knobs. */
export interface RunOptions {
  /** The clock reading the runs start at, ms: 0, or a `Date.now()`-scale instant. @defaultValue 0 */
  readonly start?: number;
}

/**
 * A named, documented experiment: a function of a plain parameter record (every knob with a
 * default and a range) to a plain result (time series, a summary, a short report). Everything in
 * and out is JSON, so a page can keep a run's parameters in its URL and run it in a worker.
 */
export interface Scenario {
  /** Its name, for URLs: `"breaker-outage"`. */
  readonly name: string;
  /** Its title: `"Breaker under an outage"`. */
  readonly title: string;
  /** A paragraph on what it shows and how to read it. */
  readonly summary: string;
  readonly knobs: readonly Knob[];
  /** Every knob at its default. */
  readonly defaults: Params;
  /** Lays `params` over the defaults and checks each against its knob. */
  resolve(params?: Readonly<Record<string, unknown>>): Params;
  /**
   * Runs it.
   * @throws TypeError naming an unknown parameter (and the closest knob) or a value of the wrong type; RangeError for a value outside its knob's range
   */
  run(params?: Readonly<Record<string, unknown>>, options?: RunOptions): ScenarioResult;
  /**
   * The `@tideward/guard` options its first run (tideward's) stands for at `params`: every knob
   * that is an option (see {@link NumberKnob.option}) at its path, in the guard's units, with what
   * the run fixes or raises beyond them (a backoff's cap raised to its base, say), so `guard()`
   * and `admit()` take them as they are. Fresh records a call; no run is made.
   * @throws as {@link Scenario.resolve} does
   */
  options(params?: Readonly<Record<string, unknown>>): GuardOptionSets;
}

/** What a scenario's body returns; {@link defineScenario} adds the rest. */
export interface Outcome {
  readonly runs: readonly RunResult[];
  readonly tables?: readonly Table[];
  readonly figures: Readonly<Record<string, number>>;
  readonly report: string;
}

/** What {@link defineScenario} takes. */
export interface ScenarioDefinition<P extends Params> {
  readonly name: string;
  readonly title: string;
  readonly summary: string;
  readonly knobs: readonly Knob[];
  run(params: P, start: number): Outcome;
  /**
   * The guard options of the first run that its knobs alone do not give (see
   * {@link Scenario.options}), laid over theirs: a setting it fixes, or a value it raises.
   * @defaultValue none beyond the knobs'
   */
  options?(params: P): GuardOptionSets;
}

/** The seed knob every scenario has: the same seed, the same traffic and the same draws. */
export const seedKnob: NumberKnob = Object.freeze({
  kind: "integer",
  name: "seed",
  label: "Seed",
  doc: "The seed every random draw comes from: the same seed gives the same run, bit for bit.",
  default: 1,
  min: 1,
  max: 2_147_483_647,
  step: 1,
});

/**
 * A {@link Scenario} from its knobs and its body: checks the definition once (its name, title and
 * summary text, its run a function, its knobs each a knob with a default in its range and a name
 * of its own), and every parameter record against the knobs on each run.
 *
 * @throws TypeError or RangeError naming the field of the definition or the knob that is wrong
 */
export function defineScenario<P extends Params>(definition: ScenarioDefinition<P>): Scenario {
  if (definition === null || typeof definition !== "object")
    throw new TypeError(
      `defineScenario definition must be an object with name, title, summary, knobs and run, got ${check.describe(definition)}`,
    );
  const { name, title, summary, knobs: given } = definition;
  // Read once, and called on the definition as `definition.run(…)` would be.
  const run: unknown = (definition as unknown as Record<string, unknown>).run;
  if (typeof name !== "string" || name.length === 0)
    throw new TypeError(`defineScenario name must be non-empty text, got ${check.describe(name)}`);
  for (const [field, value] of [
    ["title", title],
    ["summary", summary],
  ] as const)
    if (typeof value !== "string")
      throw new TypeError(`scenario ${name} ${field} must be text, got ${check.describe(value)}`);
  const body = check.fn<ScenarioDefinition<P>["run"]>(run, `scenario ${name} run`);
  const optionsFn: unknown = (definition as unknown as Record<string, unknown>).options;
  const extra =
    optionsFn === undefined
      ? undefined
      : check.fn<NonNullable<ScenarioDefinition<P>["options"]>>(optionsFn, `scenario ${name} options`);
  const knobs = checkKnobs(given, `scenario ${name}`);
  const names = knobs.map((k) => k.name);
  for (const k of knobs) {
    if (k.kind === "number" || k.kind === "integer") {
      if (!(k.min <= k.default && k.default <= k.max))
        throw new RangeError(`scenario ${name} knob ${k.name}: default ${k.default} is outside [${k.min}, ${k.max}]`);
      if (k.option !== undefined) checkOption(`scenario ${name} knob ${k.name} option`, k.option);
    } else if (k.kind === "select" && !k.options.some((x) => x.value === k.default)) {
      throw new RangeError(
        `scenario ${name} knob ${k.name}: default ${JSON.stringify(k.default)} is not one of its options`,
      );
    }
  }
  const defaults: Params = Object.freeze(Object.fromEntries(knobs.map((k) => [k.name, k.default])));
  const resolve = (params: Readonly<Record<string, unknown>> = {}): Params => {
    if (params === null || typeof params !== "object" || Array.isArray(params))
      throw new TypeError(`scenario ${name} params must be an object, got ${check.describe(params)}`);
    const out: Record<string, KnobValue> = { ...defaults };
    for (const [field, value] of Object.entries(params)) {
      const knob = knobs.find((k) => k.name === field);
      if (knob === undefined) {
        const near = check.closest(field, names);
        throw new TypeError(
          `scenario ${name} has no knob ${JSON.stringify(field)}${near === undefined ? `; its knobs are ${names.join(", ")}` : `; did you mean ${JSON.stringify(near)}?`}`,
        );
      }
      if (value === undefined) continue;
      out[field] = checkKnob(name, knob, value);
    }
    return Object.freeze(out);
  };
  return Object.freeze({
    name,
    title,
    summary,
    knobs: Object.freeze(knobs),
    defaults,
    resolve,
    options(params?: Readonly<Record<string, unknown>>): GuardOptionSets {
      const p = resolve(params);
      const more =
        extra === undefined ? undefined : checkOptionSets(extra.call(definition, p as P), `scenario ${name} options`);
      return guardOptionsOf(knobs, p, more);
    },
    run(params?: Readonly<Record<string, unknown>>, options: RunOptions = {}): ScenarioResult {
      const p = resolve(params);
      const o = check.options(options, ["start"], `scenario ${name} run`);
      const start = check.finite(check.or(o.start, 0), `scenario ${name} start (ms)`);
      // Checked here too, so that the message names the option the user gave, not simulate's.
      if (Math.abs(start) > CLOCK_LIMIT)
        throw new RangeError(
          `scenario ${name} start (ms) must be within ±${CLOCK_LIMIT} (2^43 ms, about 278 years either side of the epoch), got ${start}`,
        );
      const outcome = outcomeOf(body.call(definition, p as P, start), name);
      return {
        scenario: name,
        title,
        params: p,
        start,
        runs: outcome.runs,
        tables: outcome.tables ?? [],
        figures: outcome.figures,
        report: outcome.report,
      };
    },
  });
}

const KINDS = ["number", "integer", "select", "boolean"];
// A select knob is a list a person picks from; far past this, fast-check's constantFrom (one
// argument an option) overflows the stack.
const MAX_OPTIONS = 1_024;

/**
 * `value` checked as a list of knobs for `what` (`"scenario quota-bursts"`, `"knobArbitrary"`):
 * an array of objects, each of a known kind, with a name of its own, text for its label and doc,
 * and what its kind needs (finite bounds, the least first, a default and a step; options of text;
 * a boolean). Each knob's default against its range is the scenario's to check.
 *
 * Returns frozen copies (their options and guard option too): a knob changed afterwards, in the
 * definition or through the scenario, cannot widen the range its values are checked against.
 */
export function checkKnobs(value: unknown, what: string): Knob[] {
  if (!Array.isArray(value))
    throw new TypeError(`${what} knobs must be an array of knobs, got ${check.describe(value)}`);
  const seen = new Set<string>();
  // Holes read as undefined, and are refused as such.
  return Array.from(value as readonly unknown[], (k, i) => {
    const at = `${what} knobs[${i}]`;
    if (k === null || typeof k !== "object")
      throw new TypeError(
        `${at} must be a knob (an object with kind, name, label, doc, default…), got ${check.describe(k)}`,
      );
    const knob = k as Knob;
    if (!KINDS.includes(knob.kind))
      throw new TypeError(
        `${at} kind must be "number", "integer", "select" or "boolean", got ${check.describe(knob.kind)}`,
      );
    if (typeof knob.name !== "string" || knob.name.length === 0)
      throw new TypeError(`${at} name must be non-empty text, got ${check.describe(knob.name)}`);
    if (seen.has(knob.name)) throw new TypeError(`${what} has two knobs named ${JSON.stringify(knob.name)}`);
    seen.add(knob.name);
    const named = `${what} knob ${knob.name}`;
    for (const field of ["label", "doc"] as const)
      if (typeof knob[field] !== "string")
        throw new TypeError(`${named} ${field} must be text, got ${check.describe(knob[field])}`);
    if (knob.kind === "number" || knob.kind === "integer") {
      const whole = knob.kind === "integer";
      for (const field of ["min", "max", "default"] as const)
        if (whole) check.integer(knob[field], `${named} ${field}`);
        else check.finite(knob[field], `${named} ${field}`);
      if (knob.min > knob.max) throw new RangeError(`${named} min (${knob.min}) must be at most its max (${knob.max})`);
      check.positive(knob.step, `${named} step`);
      const option = knob.option;
      return Object.freeze({
        ...knob,
        ...(option === null || typeof option !== "object" ? {} : { option: Object.freeze({ ...option }) }),
      });
    } else if (knob.kind === "select") {
      const options: unknown = knob.options;
      if (!Array.isArray(options) || options.length === 0)
        throw new TypeError(
          `${named} options must be a non-empty array of { value, label }, got ${check.describe(options)}`,
        );
      if (options.length > MAX_OPTIONS)
        throw new RangeError(
          `${named} options must be at most ${MAX_OPTIONS} (a list to pick from), got ${options.length}`,
        );
      const copies = Array.from(options as readonly unknown[], (o, j) => {
        const x = o as { value?: unknown; label?: unknown } | null;
        if (x === null || typeof x !== "object" || typeof x.value !== "string" || typeof x.label !== "string")
          throw new TypeError(`${named} options[${j}] must be { value, label }, both text, got ${check.describe(o)}`);
        return Object.freeze({ value: x.value, label: x.label });
      });
      const d: unknown = knob.default;
      if (typeof d !== "string")
        throw new TypeError(`${named} default must be one of its options' values, got ${check.describe(d)}`);
      return Object.freeze({ ...knob, options: Object.freeze(copies) });
    }
    const d: unknown = knob.default;
    if (typeof d !== "boolean") throw new TypeError(`${named} default must be true or false, got ${check.describe(d)}`);
    return Object.freeze({ ...knob });
  });
}

/** What a scenario's body returned, checked to be an outcome, or a TypeError naming the scenario. */
function outcomeOf(value: unknown, name: string): Outcome {
  const what = `scenario ${name} run`;
  if (value === null || typeof value !== "object")
    throw new TypeError(`${what} must return an outcome ({ runs, figures, report }), got ${check.describe(value)}`);
  const o = value as Partial<Outcome>;
  if (!Array.isArray(o.runs))
    throw new TypeError(`${what} outcome runs must be an array of runs, got ${check.describe(o.runs)}`);
  // Holes read as undefined, and are refused as such.
  Array.from(o.runs as readonly unknown[], (r, i) => {
    const run = r as Partial<RunResult> | null;
    if (
      run === null ||
      typeof run !== "object" ||
      typeof run.label !== "string" ||
      typeof run.duration !== "number" ||
      run.summary === null ||
      typeof run.summary !== "object" ||
      run.series === null ||
      typeof run.series !== "object"
    )
      throw new TypeError(
        `${what} outcome runs[${i}] must be a run (what simulate returns: label, duration, series, summary), got ${check.describe(r)}`,
      );
  });
  if (o.tables !== undefined && !Array.isArray(o.tables))
    throw new TypeError(`${what} outcome tables must be an array of tables, got ${check.describe(o.tables)}`);
  if (o.figures === null || typeof o.figures !== "object")
    throw new TypeError(`${what} outcome figures must be a record of numbers, got ${check.describe(o.figures)}`);
  if (typeof o.report !== "string")
    throw new TypeError(`${what} outcome report must be text, got ${check.describe(o.report)}`);
  return o as Outcome;
}

/** Option paths: JavaScript identifiers joined by dots. */
const PATH = /^[A-Za-z_$][\w$]*(\.[A-Za-z_$][\w$]*)*$/;

function checkOption(what: string, o: GuardOption): void {
  const c = check.options(o, ["of", "path", "scale", "offset"], what);
  if (c.of !== undefined && c.of !== "guard" && c.of !== "admit")
    throw new TypeError(`${what}.of must be "guard" or "admit", got ${check.describe(c.of)}`);
  if (typeof c.path !== "string" || !PATH.test(c.path))
    throw new TypeError(
      `${what}.path must be field names joined by dots, like "retry.attempts", got ${check.describe(c.path)}`,
    );
  if (c.scale !== undefined && check.finite(c.scale, `${what}.scale`) === 0)
    throw new RangeError(`${what}.scale must not be 0`);
  if (c.offset !== undefined) check.finite(c.offset, `${what}.offset`);
}

function checkKnob(scenario: string, knob: Knob, value: unknown): KnobValue {
  const what = `scenario ${scenario} ${knob.name}`;
  switch (knob.kind) {
    case "number":
    case "integer": {
      const n = knob.kind === "integer" ? check.integer(value, what) : check.finite(value, what);
      return check.between(n, knob.min, knob.max, what);
    }
    case "select":
      if (typeof value !== "string" || !knob.options.some((x) => x.value === value)) {
        throw new TypeError(
          `${what} must be one of ${knob.options.map((x) => JSON.stringify(x.value)).join(", ")}, got ${check.describe(value)}`,
        );
      }
      return value;
    case "boolean":
      if (typeof value !== "boolean")
        throw new TypeError(`${what} must be true or false, got ${check.describe(value)}`);
      return value;
  }
}

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
