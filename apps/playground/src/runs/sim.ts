// Any scenario of the simulator's catalogue as the page's outcome, from its result alone: the
// charts are chosen from the runs' series (goodput, backend load against a capacity when the
// scenario states one, refusals, p99), the tables and the report are the scenario's own, and
// "copy as test" replays `scenario(name).run(params, { start })` and asserts what the page shows.
import { scenario as simScenario } from "@tideward/sim";
import type { RunResult, ScenarioResult } from "@tideward/sim";
import { numberSource, source } from "../code.ts";
import type { Chart, Figure, Outcome, Params, Series, Table } from "../model.ts";
import { simParams } from "../sim-scenarios.ts";

/** The clock reading the page's runs start at, ms. */
export const START = 0;

/** Each run's colour, the same on every chart: tideward's first. */
const palette = ["#0b6e99", "#c2410c", "#15803d", "#7c3aed", "#b91c1c", "#a16207", "#0f766e", "#be185d"];

/** Decimal places a figure is shown (and asserted) to: none for a whole number, fewer the bigger it is. */
export function digitsFor(v: number): number {
  if (!Number.isFinite(v) || Number.isInteger(v)) return 0;
  const a = Math.abs(v);
  return a >= 10 ? 1 : a >= 1 ? 2 : 3;
}

/** A series per run, as a rate per second for a count, with the run's colour and side. */
function perRun(result: ScenarioResult, pick: (r: RunResult) => readonly (number | null)[], rate: boolean): Series[] {
  const n = result.runs[0]?.series.t.length ?? 0;
  return result.runs.map((r, i) => {
    const k = rate ? 1_000 / r.step : 1;
    const xs = pick(r);
    return {
      label: r.label,
      values: Array.from({ length: n }, (_, j) => {
        const v = xs[j];
        return v === undefined || v === null ? null : v * k;
      }),
      side: i === 0 ? "tideward" : "baseline",
      color: palette[i % palette.length],
    };
  });
}

/** Whether any run has something other than zero or nothing to plot. */
const anything = (series: readonly Series[]): boolean =>
  series.some((s) => s.values.some((v) => v !== null && v !== 0));

/** The charts a result's series give, generically; a chart with nothing on it is left out. */
export function chartsOf(result: ScenarioResult): Chart[] {
  const first = result.runs[0];
  // A run of one bucket (a finite job, measured whole) has no course over time to draw.
  if (first === undefined || first.series.t.length < 2) return [];
  const x = { label: "time (s)", values: first.series.t.map((t) => t / 1_000) };
  const capacity = result.figures.capacity;
  const charts: Chart[] = [];
  const goodput = perRun(result, (r) => r.series.goodput, true);
  charts.push({
    id: "goodput",
    title: "Goodput: calls that succeeded within their caller's deadline, per second",
    x,
    y: { label: "calls/s", min: 0 },
    series: goodput,
  });
  const load = perRun(result, (r) => r.series.backendLoad, true);
  if (anything(load))
    charts.push({
      id: "backend",
      title:
        capacity === undefined
          ? "Load on the backend: attempts that reached it, per second"
          : `Load on the backend, per second, against its capacity (${numberSource(capacity)} calls/s)`,
      x,
      y: { label: "calls/s", min: 0 },
      series:
        capacity === undefined
          ? load
          : [...load, { label: "capacity", values: x.values.map(() => capacity), color: "#6b7280", dash: true }],
    });
  const refused = perRun(result, (r) => r.series.refused, true);
  if (anything(refused))
    charts.push({
      id: "refused",
      title: "Calls refused, per second",
      x,
      y: { label: "calls/s", min: 0 },
      series: refused,
    });
  const p99 = perRun(result, (r) => r.series.p99, false);
  if (anything(p99))
    charts.push({
      id: "p99",
      title: "Latency p99 of successful attempts",
      x,
      y: { label: "ms", log: true },
      series: p99,
    });
  return charts;
}

/** A figure of run `i`'s summary, with the expression that reads it from the replay's `result`. */
function summaryFigure(i: number, id: string, label: string, unit: string, value: number, expr: string): Figure {
  return { id: `run${i}.${id}`, label, unit, value, digits: digitsFor(value), expr };
}

/** Every run's totals, from its summary: what a user judges a policy by, first. */
function summaryTable(result: ScenarioResult): Table {
  type Row = [string, string, string, (r: RunResult) => number | null, (at: string) => string];
  const rows: Row[] = [
    [
      "goodput",
      "goodput: calls that succeeded within their deadline",
      "calls",
      (r) => r.summary.goodput,
      (at) => `${at}.summary.goodput`,
    ],
    [
      "goodputRate",
      "goodput, of the calls offered",
      "%",
      (r) => (r.summary.goodputRate ?? 0) * 100,
      (at) => `(${at}.summary.goodputRate ?? 0) * 100`,
    ],
    [
      "backendLoad",
      "attempts that reached the backend",
      "calls",
      (r) => r.summary.backendLoad,
      (at) => `${at}.summary.backendLoad`,
    ],
    [
      "peakBackendLoad",
      "peak load on the backend",
      "calls/s",
      (r) => r.summary.peakBackendLoad,
      (at) => `${at}.summary.peakBackendLoad`,
    ],
    ["refused", "attempts refused", "calls", (r) => r.summary.refused, (at) => `${at}.summary.refused`],
    [
      "wasted",
      "calls wasted: served after their caller gave up",
      "calls",
      (r) => r.summary.wasted,
      (at) => `${at}.summary.wasted`,
    ],
    [
      "dropped",
      "dropped unserved, their caller gone",
      "calls",
      (r) => r.summary.dropped,
      (at) => `${at}.summary.dropped`,
    ],
    [
      "p99",
      "latency p99 of successful attempts",
      "ms",
      (r) => r.summary.latency.p99,
      (at) => `${at}.summary.latency.p99 ?? 0`,
    ],
    [
      "completionTime",
      "every call done by",
      "s",
      (r) => (r.summary.completionTime === null ? null : r.summary.completionTime / 1_000),
      (at) => `(${at}.summary.completionTime ?? 0) / 1000`,
    ],
  ];
  return {
    caption: "Every run's totals, from its summary",
    columns: ["", ...result.runs.map((r) => r.label)],
    rows: rows
      // A row no run has a value for (no latency, no job that ends) is left out.
      .filter(([, , , get]) => result.runs.some((r) => get(r) !== null))
      .map(([id, label, unit, get, expr]) => ({
        label: `${label} (${unit})`,
        cells: result.runs.map((r, i) => summaryFigure(i, id, label, unit, get(r) ?? 0, expr(`result.runs[${i}]`))),
      })),
  };
}

/** The figures the scenario's report states, by name. */
function statedTable(result: ScenarioResult): Table {
  return {
    caption: "The figures the scenario states, by name",
    folded: true,
    columns: ["figure", "value"],
    rows: Object.entries(result.figures).map(([name, value]) => ({
      label: name,
      cells: [
        {
          id: `figure.${name}`,
          label: name,
          unit: "",
          value,
          digits: digitsFor(value),
          expr: `result.figures[${JSON.stringify(name)}]`,
        },
      ],
    })),
  };
}

/**
 * Which run has the most goodput and which the least load on the backend, in a sentence; and
 * when a baseline has more goodput than tideward's run (the first), a sentence saying so, so the
 * page never leaves a loss unsaid.
 */
export function verdict(result: ScenarioResult): string[] {
  const runs = result.runs;
  const first = runs[0];
  if (first === undefined || runs.length < 2) return [];
  const goodput = (r: RunResult): number => (r.summary.goodputRate ?? 0) * 100;
  const most = runs.reduce((a, b) => (goodput(b) > goodput(a) ? b : a));
  const least = runs.reduce((a, b) => (b.summary.backendLoad < a.summary.backendLoad ? b : a));
  const out = [
    `Most goodput: ${most.label} (${goodput(most).toFixed(1)} % of the calls offered). Least load on the backend: ${least.label} (${least.summary.backendLoad} attempts).`,
  ];
  if (most !== first && goodput(most) > goodput(first))
    out.push(
      `Here a baseline, ${most.label}, has more goodput than ${first.label} (${goodput(most).toFixed(1)} % against ${goodput(first).toFixed(1)} %); the report above says what each did.`,
    );
  return out;
}

/** The page's outcome of simulator scenario `name` with the page's `params`. */
export function simOutcome(name: string, params: Params): Outcome {
  const s = simScenario(name);
  if (s === undefined) throw new Error(`@tideward/sim has no scenario ${JSON.stringify(name)}`);
  const asked = simParams(s, params);
  const result = s.run(asked, { start: START });
  const texts = result.tables.map((t) => ({
    caption: t.title,
    columns: t.columns,
    rows: t.rows.map((r) => r.map(String)),
  }));
  const first = result.runs[0];
  return {
    charts: chartsOf(result),
    figures: [],
    tables: [summaryTable(result), statedTable(result)],
    texts,
    report: result.report,
    notes: verdict(result),
    replay: {
      body: [
        `const s = scenario(${JSON.stringify(name)});`,
        `if (s === undefined) throw new Error(${JSON.stringify(`@tideward/sim has no scenario ${name}`)});`,
        `const result = s.run(${source(asked)}, { start: ${START} });`,
      ],
      asserts: [
        `expect(result.report).toBe(${JSON.stringify(result.report)});`,
        `expect(result.tables.map((t) => t.rows.map((r) => r.map(String)))).toEqual(${JSON.stringify(texts.map((t) => t.rows))});`,
      ],
    },
    simulated: {
      runs: result.runs.length,
      ms: first?.duration ?? 0,
      calls: result.runs.reduce((sum, r) => sum + r.summary.calls, 0),
    },
  };
}
