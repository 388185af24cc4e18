// What every scenario's run shares: reading knobs, naming figures with the expression that
// replays them, and turning a run's series into chart lines.
import { traffic } from "@tideward/sim";
import type { RunResult, Traffic } from "@tideward/sim";
import { call } from "../code.ts";
import type { Code } from "../code.ts";
import type { Figure, Params, Series } from "../model.ts";

/** A knob's value as a number. */
export function n(p: Params, key: string): number {
  const v = p[key];
  if (typeof v !== "number") throw new TypeError(`knob ${key} must be a number, got ${JSON.stringify(v)}`);
  return v;
}

/** A knob's value as text. */
export function s(p: Params, key: string): string {
  const v = p[key];
  if (typeof v !== "string") throw new TypeError(`knob ${key} must be a choice, got ${JSON.stringify(v)}`);
  return v;
}

/** A run and the name of the variable the replay keeps it in. */
export interface Named {
  readonly name: string;
  readonly run: RunResult;
}

/** A number and the expression (over the replay's variables) that gives it. */
export interface Measure {
  readonly value: number;
  readonly expr: string;
}

/** A figure from a measure. */
export function figure(id: string, label: string, unit: string, digits: number, m: Measure): Figure {
  return { id, label, unit, digits, value: m.value, expr: m.expr };
}

/** A table row's maker over `runs`: a row is one figure a run, its label carrying the unit. */
export function rowsOf(runs: readonly Named[]) {
  return (
    label: string,
    unit: string,
    digits: number,
    m: (r: Named) => Measure,
    key: string,
  ): { label: string; cells: Figure[] } => ({
    label: unit === "" ? label : `${label} (${unit})`,
    cells: runs.map((r) => figure(`${r.name}.${key}`, `${r.run.label}: ${label}`, unit, digits, m(r))),
  });
}

/**
 * A rising load: `start` calls a second rising to `peak` over `ramp` ms, held `hold` ms, then
 * `start` again for `after` ms (all three 0: `start` throughout), its keys from `who` if given.
 */
export function load(
  start: number,
  peak: number,
  ramp: number,
  hold: number,
  after: number,
  who?: Code,
): Code<Traffic> {
  const keys = who === undefined ? {} : { keys: who };
  const parts: Code<Traffic>[] = [];
  if (ramp > 0)
    parts.push(call("traffic.ramp", traffic.ramp, { from: start, to: peak, over: ramp, until: ramp + hold, ...keys }));
  else if (hold > 0) parts.push(call("traffic.poisson", traffic.poisson, { rate: peak, until: hold, ...keys }));
  if (after > 0) parts.push(call("traffic.poisson", traffic.poisson, { rate: start, at: ramp + hold, ...keys }));
  if (parts.length === 0) return call("traffic.poisson", traffic.poisson, { rate: start, ...keys });
  if (parts.length === 1) return parts[0];
  return call("traffic.merge", traffic.merge, ...parts);
}

/** The highest mean number in flight over any bucket. */
export function peakInFlight(r: Named): Measure {
  return { value: Math.max(0, ...r.run.series.inFlight), expr: `Math.max(0, ...${r.name}.series.inFlight)` };
}

/** The replay helper `sum(xs, from, to)` the measures below use; put it in a replay's body. */
export const sumHelper =
  "const sum = (xs: readonly number[], from = 0, to = xs.length): number => xs.slice(from, to).reduce((a, b) => a + b, 0);";

function sum(xs: readonly number[], from = 0, to = xs.length): number {
  return xs.slice(from, to).reduce((a, b) => a + b, 0);
}

type CountSeries =
  | "offered"
  | "attempts"
  | "retries"
  | "admitted"
  | "refused"
  | "succeeded"
  | "failed"
  | "completed"
  | "gaveUp"
  | "backendLoad";

/** The total of a count series over buckets `[from, to)` (all of them by default). */
export function total(r: Named, series: CountSeries, from = 0, to?: number): Measure {
  const xs = r.run.series[series];
  const end = to ?? xs.length;
  const args = from === 0 && to === undefined ? "" : `, ${from}, ${end}`;
  return { value: sum(xs, from, end), expr: `sum(${r.name}.series.${series}${args})` };
}

type SummaryNumber =
  | "calls"
  | "attempts"
  | "retries"
  | "admitted"
  | "refused"
  | "succeeded"
  | "failed"
  | "completed"
  | "gaveUp"
  | "backendLoad"
  | "peakBackendLoad";

/** A number from a run's summary. */
export function summary(r: Named, field: SummaryNumber): Measure {
  return { value: r.run.summary[field], expr: `${r.name}.summary.${field}` };
}

/** A run's share of calls that ended in a success, as a percentage. */
export function successPercent(r: Named): Measure {
  return { value: (r.run.summary.successRate ?? 0) * 100, expr: `(${r.name}.summary.successRate ?? 0) * 100` };
}

/** Refusals for `reason` (`"breaker"`, `"quota/tenant"`), over the whole run. */
export function refusedBy(r: Named, reason: string): Measure {
  return {
    value: r.run.summary.refusedBy[reason] ?? 0,
    expr: `${r.name}.summary.refusedBy[${JSON.stringify(reason)}] ?? 0`,
  };
}

/** A latency percentile of the successful attempts, ms. */
export function latency(r: Named, which: "p50" | "p95" | "p99" | "mean" | "max"): Measure {
  return { value: r.run.summary.latency[which] ?? 0, expr: `${r.name}.summary.latency.${which} ?? 0` };
}

/** A statistic a policy reported (`wasted`, `ratio`, …). */
export function stat(r: Named, policy: number, key: string): Measure {
  return {
    value: r.run.policies[policy]?.stats[key] ?? 0,
    expr: `${r.name}.policies[${policy}]?.stats[${JSON.stringify(key)}] ?? 0`,
  };
}

/** `a` as a percentage of `b` (0 when `b` is 0). */
export function percentOf(a: Measure, b: Measure): Measure {
  return {
    value: b.value === 0 ? 0 : (a.value / b.value) * 100,
    expr: `(${b.expr}) === 0 ? 0 : ((${a.expr}) / (${b.expr})) * 100`,
  };
}

/** `a + b`. */
export function plus(a: Measure, b: Measure): Measure {
  return { value: a.value + b.value, expr: `(${a.expr}) + (${b.expr})` };
}

/** `a − b`. */
export function minus(a: Measure, b: Measure): Measure {
  return { value: a.value - b.value, expr: `(${a.expr}) - (${b.expr})` };
}

/** The buckets' starts, in seconds. */
export function seconds(run: RunResult, offset = 0): number[] {
  return run.series.t.map((t) => (t + offset) / 1_000);
}

/** A count series as a rate per second. */
export function perSecond(run: RunResult, xs: readonly number[]): number[] {
  const k = 1_000 / run.step;
  return xs.map((x) => x * k);
}

/** A count series as a share of another, in percent, `null` where the other is 0. */
export function share(xs: readonly number[], of: readonly number[]): (number | null)[] {
  return xs.map((x, i) => {
    const d = of[i] ?? 0;
    return d === 0 ? null : (x / d) * 100;
  });
}

/** A chart line. */
export function line(label: string, values: readonly (number | null)[], extra: Partial<Series> = {}): Series {
  return { label, values, ...extra };
}
