import { check } from "@tideward/time/internal";
import { CLOCK_LIMIT } from "./clock-range";
import { checkOptionSets, guardOptionsOf } from "./guard-options";
import type { GuardOption, GuardOptionSets } from "./guard-options";
import { formatCount } from "./memory";
import { checkPlots } from "./plot";
import type { Plot } from "./plot";
import type { RunResult } from "./result";
import { Watch, watching } from "./watch";
import type { Progress } from "./watch";

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
  /** What the scenario measures over its runs beyond their own series, to plot (absent when it measures nothing more). */
  readonly plots?: readonly Plot[];
}

/** Options of {@link Scenario.run} that are not knobs. */
export interface RunOptions {
  /** The clock reading the runs start at, ms: 0, or a `Date.now()`-scale instant. @defaultValue 0 */
  readonly start?: number;
  /**
   * The most calls its runs may be estimated to offer (see {@link Scenario.work}): a run past it
   * is refused before it starts, naming the knobs that make it large. `Infinity` lifts the bound.
   * @defaultValue 20 000 000 (seconds to a minute or so of work on one core)
   */
  readonly maxCalls?: number;
  /**
   * Hears how far the run has come, every 16 384 calls offered and as each of its runs ends. It
   * may throw (or abort `signal`) to stop the run there; what it throws comes out of `run`.
   * @defaultValue none
   */
  readonly onProgress?: (progress: Progress) => void;
  /**
   * Stops the run, with the signal's reason, at the next look at it (where `onProgress` is
   * told). The run is synchronous: a signal aborted by another task is seen only once it returns,
   * so abort it from `onProgress`, or end the worker the run is in. @defaultValue none
   */
  readonly signal?: AbortSignal;
}

/** What a scenario's runs are estimated to cost, from its knobs alone, before any is made. */
export interface Work {
  /** The calls its runs will offer, over all of them (retries, hedges and events come on top). */
  readonly calls: number;
  /** The knobs that set it, named when it is refused. */
  readonly knobs: readonly string[];
}

/** The calls a scenario's runs may be estimated to offer unless {@link RunOptions.maxCalls} says otherwise. */
export const MAX_CALLS = 20_000_000;

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
  /**
   * What its runs at `params` are estimated to cost, from the knobs alone, before any is made:
   * what {@link RunOptions.maxCalls} is checked against, and what a page can show before it
   * starts. `undefined` for a scenario whose definition gives no estimate.
   * @throws as {@link Scenario.resolve} does
   */
  work(params?: Readonly<Record<string, unknown>>): Work | undefined;
}

/** What a scenario's body returns; {@link defineScenario} adds the rest. */
export interface Outcome {
  readonly runs: readonly RunResult[];
  readonly tables?: readonly Table[];
  readonly figures: Readonly<Record<string, number>>;
  readonly report: string;
  /** What it measures over its runs beyond their own series. @defaultValue none */
  readonly plots?: readonly Plot[];
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
  /**
   * What its runs at `params` will cost (see {@link Scenario.work}): the calls they offer, and the
   * knobs that set it. @defaultValue no estimate, and no bound
   */
  work?(params: P): Work;
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
  const workFn: unknown = (definition as unknown as Record<string, unknown>).work;
  const estimate =
    workFn === undefined
      ? undefined
      : check.fn<NonNullable<ScenarioDefinition<P>["work"]>>(workFn, `scenario ${name} work`);
  const workOf = (p: Params): Work | undefined =>
    estimate === undefined ? undefined : checkWork(estimate.call(definition, p as P), `scenario ${name} work`, names);
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
    work(params?: Readonly<Record<string, unknown>>): Work | undefined {
      return workOf(resolve(params));
    },
    run(params?: Readonly<Record<string, unknown>>, options: RunOptions = {}): ScenarioResult {
      const p = resolve(params);
      const o = check.options(options, ["start", "maxCalls", "onProgress", "signal"], `scenario ${name} run`);
      const start = check.finite(check.or(o.start, 0), `scenario ${name} start (ms)`);
      // Checked here too, so that the message names the option the user gave, not simulate's.
      if (Math.abs(start) > CLOCK_LIMIT)
        throw new RangeError(
          `scenario ${name} start (ms) must be within ±${CLOCK_LIMIT} (2^43 ms, about 278 years either side of the epoch), got ${start}`,
        );
      const max =
        o.maxCalls === undefined || o.maxCalls === Infinity
          ? (o.maxCalls ?? MAX_CALLS)
          : check.positive(o.maxCalls, `scenario ${name} maxCalls`);
      const work = workOf(p);
      if (work !== undefined && work.calls > max)
        throw new RangeError(
          `scenario ${name} would offer about ${formatCount(Math.round(work.calls))} calls over its runs (${work.knobs.map((k) => `${k} ${String(p[k])}`).join(", ")}), past maxCalls ${formatCount(max)}${o.maxCalls === undefined ? " (the default)" : ""}: lower ${work.knobs.join(" or ")}, or raise maxCalls (Infinity lifts the bound)`,
        );
      const watch = new Watch(work?.calls ?? null, o.onProgress, o.signal, `scenario ${name} run`);
      // Looked at once before the first run: an abort already given stops it before any work.
      watch.add(0);
      const outcome = outcomeOf(
        watching(watch, () => body.call(definition, p as P, start)),
        name,
      );
      return {
        scenario: name,
        title,
        params: p,
        start,
        runs: outcome.runs,
        tables: outcome.tables ?? [],
        figures: outcome.figures,
        report: outcome.report,
        // Only where there are some, so a result without keeps its shape (and its fingerprint).
        ...(outcome.plots === undefined ? {} : { plots: outcome.plots }),
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
  if (o.plots !== undefined)
    checkPlots(
      o.plots,
      (o.runs as readonly RunResult[]).map((r) => (Array.isArray(r.series.t) ? r.series.t.length : 0)),
      `${what} outcome`,
    );
  return o as Outcome;
}

/** What a definition's `work` answered, checked to be a {@link Work} naming its own knobs. */
function checkWork(value: unknown, what: string, names: readonly string[]): Work {
  const w = value as Partial<Work> | null;
  if (w === null || typeof w !== "object" || typeof w.calls !== "number" || !(w.calls >= 0))
    throw new TypeError(`${what} must return { calls, knobs }, calls a number 0 or more, got ${check.describe(value)}`);
  if (!Array.isArray(w.knobs) || !w.knobs.every((k) => typeof k === "string" && names.includes(k)))
    throw new TypeError(`${what} knobs must be names of its knobs, got ${check.describe(w.knobs)}`);
  return { calls: w.calls, knobs: [...(w.knobs as string[])] };
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
