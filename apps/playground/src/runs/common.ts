// What every scenario's run shares: reading knobs, naming figures with the expression that
// replays them, and turning a run's series into chart lines.
import { latency as latencies, traffic } from "@tideward/sim";
import type { RunResult, Traffic } from "@tideward/sim";
import { call, lit } from "../code.ts";
import { palette, reference } from "../colours.ts";
import type { Code } from "../code.ts";
import type { Chart, Figure, Params, Series } from "../model.ts";

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

/**
 * The options the runs of a server under a rising load share (the shedder's and the guard's),
 * from the knobs: the load's `start` and `peak` (calls/s) over `ramp`, `hold` and `after` (s),
 * a server of `workers` taking `service` ms a call, and the `seed`. With `who`, the calls come
 * from its keys and the runs keep per-key totals.
 */
export function risingLoad(p: Params, who?: Code) {
  const ramp = n(p, "ramp") * 1_000;
  const hold = n(p, "hold") * 1_000;
  const after = n(p, "after") * 1_000;
  // A run needs some traffic: with every stretch at zero, hold the start load for a second.
  const duration = Math.max(ramp + hold + after, 1_000);
  return lit({
    seed: n(p, "seed"),
    duration,
    step: duration >= 60_000 ? 1_000 : 500,
    traffic: load(n(p, "start"), n(p, "peak"), ramp, hold, after, who),
    backend: { latency: call("latency.exponential", latencies.exponential, n(p, "service")), workers: n(p, "workers") },
    perKey: who === undefined ? undefined : true,
  });
}

/** What the server of {@link risingLoad} can do, calls/s: its workers over the service time. */
export function capacityOf(p: Params): number {
  return (n(p, "workers") * 1_000) / n(p, "service");
}

/** The shedder's policy (`Shed`) from the knobs `shed.cpu` … `shed.floor`. */
export function shedOf(p: Params) {
  return {
    cpu: n(p, "shed.cpu"),
    size: n(p, "shed.size"),
    window: n(p, "shed.window"),
    latency: n(p, "shed.latency"),
    beta: n(p, "shed.beta"),
    cool: n(p, "shed.cool"),
    floor: n(p, "shed.floor"),
  };
}

/** How a line on tideward's side of a comparison is drawn, and one on the baseline's. */
export const solid = { side: "tideward" } as const;
export const dashed = { side: "baseline" } as const;

/** The rows of the admitted calls' latency percentiles, from a {@link rowsOf} maker. */
export function latencyRows(row: ReturnType<typeof rowsOf>) {
  return [
    row("latency p50 of admitted calls", "ms", 1, (r) => latency(r, "p50"), "p50"),
    row("latency p95", "ms", 1, (r) => latency(r, "p95"), "p95"),
    row("latency p99", "ms", 1, (r) => latency(r, "p99"), "p99"),
  ];
}

/** The calls offered, and the server's capacity, per second: the first lines of a chart of admissions. */
export function offeredLines(r: Named, x: readonly number[], capacity: number): Series[] {
  return [
    line("offered", perSecond(r.run, r.run.series.offered), { color: reference, dash: true }),
    line(
      "server capacity",
      x.map(() => capacity),
      { color: palette[6], dash: true },
    ),
  ];
}

/** The chart of the latency percentiles p50, p95 and p99 of `ours` (solid) against `theirs` (dashed). */
export function latencyChart(title: string, x: readonly number[], ours: Named, theirs: Named): Chart {
  const pct = (r: Named, which: "p50" | "p95" | "p99", color: string, extra: Partial<Series>): Series =>
    line(`${which}, ${r.run.label}`, r.run.series[which], { color, ...extra });
  return {
    id: "latency",
    title,
    x: { label: "time (s)", values: x },
    y: { label: "ms", log: true },
    series: [
      // Six colours, none shared: a percentile of one run is never read as the other's.
      pct(ours, "p50", palette[2], solid),
      pct(ours, "p95", palette[0], solid),
      pct(ours, "p99", palette[7], solid),
      pct(theirs, "p50", palette[4], dashed),
      pct(theirs, "p95", palette[1], dashed),
      pct(theirs, "p99", palette[8], dashed),
    ],
  };
}

/** The chart of the server's CPU reading (‰) in the run `ours` (solid) and `theirs` (dashed), with the shedder's `hot` level. */
export function cpuChart(
  title: string,
  x: readonly number[],
  hot: number,
  ours: readonly [string, Named],
  theirs: readonly [string, Named],
): Chart {
  return {
    id: "cpu",
    title,
    x: { label: "time (s)", values: x },
    y: { label: "‰", min: 0, max: 1_000 },
    series: [
      line(
        "hot at",
        x.map(() => hot),
        { color: reference, dash: true },
      ),
      line(ours[0], ours[1].run.series.backendCpu, { color: palette[0], ...solid }),
      line(theirs[0], theirs[1].run.series.backendCpu, { color: palette[1], ...dashed }),
    ],
  };
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
