// Any scenario of the simulator's catalogue as the page's outcome, from its result alone: the
// charts are the scenario's own plots first (what it is about, in its units), then chosen from the
// runs' series (goodput, backend load against a capacity when the scenario states one, refusals,
// p99), the tables and the report are the scenario's own, and
// "copy as test" replays `scenario(name).run(params, { start })` and asserts what the page shows.
import { scenario as simScenario } from "@tideward/sim";
import type { RunResult, ScenarioResult } from "@tideward/sim";
import { numberSource, source } from "../code.ts";
import { reference, runColour } from "../colours.ts";
import type { Chart, Figure, Outcome, Params, RunProgress, Series, Table } from "../model.ts";
import { simParams } from "../sim-scenarios.ts";

/** The clock reading the page's runs start at, ms. */
export const START = 0;

/** Decimal places a figure is shown (and asserted) to: none for a whole number, fewer the bigger it is. */
export function digitsFor(v: number): number {
  if (!Number.isFinite(v) || Number.isInteger(v)) return 0;
  const a = Math.abs(v);
  return a >= 10 ? 1 : a >= 1 ? 2 : 3;
}

/** Whether the scenario's runs are finite jobs measured whole (every call at once, run until done): one bucket, no course over time. */
export function isJob(result: ScenarioResult): boolean {
  return (result.runs[0]?.series.t.length ?? 0) < 2;
}

/**
 * Whether goodput says anything here that the admissions do not: some run let a call in that did
 * not end as goodput (it failed, timed out or came too late). Where every admitted call is
 * goodput, the scenario is about a limiter, whose admissions are set by its bound: more of them
 * is not better, and the page speaks of admissions, not goodput.
 */
export function goodputDefined(result: ScenarioResult): boolean {
  return result.runs.some((r) => r.summary.goodput !== r.summary.admitted);
}

/** A run's goodput (or, where goodput is not defined, its admissions) as a share of the calls offered, %. */
const goodputPercent = (r: RunResult): number => (r.summary.goodputRate ?? 0) * 100;
const admittedPercent = (r: RunResult): number =>
  r.summary.calls === 0 ? 0 : (r.summary.admitted / r.summary.calls) * 100;

/** A series per run, as a rate per second for a count, with the run's colour and side. */
function perRun(
  result: ScenarioResult,
  pick: (r: RunResult, i: number) => readonly (number | null)[],
  rate: boolean,
): Series[] {
  const n = result.runs[0]?.series.t.length ?? 0;
  return result.runs.map((r, i) => {
    const k = rate ? 1_000 / r.step : 1;
    const xs = pick(r, i);
    return {
      label: r.label,
      values: Array.from({ length: n }, (_, j) => {
        const v = xs[j];
        return v === undefined || v === null ? null : v * k;
      }),
      side: i === 0 ? "tideward" : "baseline",
      color: runColour(i),
    };
  });
}

/** Whether any run has something other than zero or nothing to plot. */
const anything = (series: readonly Series[]): boolean =>
  series.some((s) => s.values.some((v) => v !== null && v !== 0));

/** A bucket's width in words: "second", "100 ms", "2 s". */
function bucket(step: number): string {
  if (step === 1_000) return "second";
  return step < 1_000 ? `${numberSource(step)} ms` : `${numberSource(step / 1_000)} s`;
}

/**
 * The charts of the plots the scenario gives: a line a run, in the run's colour and side as the
 * runs' own series are drawn, and each level it is read against as a reference line. The y axis
 * starts at 0 unless something on it is below 0 (a budget overrun), which is then in view.
 */
function plotCharts(result: ScenarioResult, x: Chart["x"]): Chart[] {
  return (result.plots ?? []).map((p) => {
    const lines = perRun(result, (_, i) => p.runs[i] ?? [], false);
    const marks = (p.marks ?? []).map((m, j) => ({
      label: m.label,
      values: x.values.map(() => m.value),
      color: j === 0 ? reference : runColour(result.runs.length + j - 1),
      dash: true,
    }));
    const below = [...lines, ...marks].some((s) => s.values.some((v) => v !== null && v < 0));
    return {
      id: `plot-${p.id}`,
      title: p.title,
      x,
      y: { label: p.unit, ...(below ? {} : { min: 0 }) },
      series: [...lines, ...marks],
    };
  });
}

/** The charts a result's series give, generically; a chart with nothing on it is left out. */
export function chartsOf(result: ScenarioResult): Chart[] {
  const first = result.runs[0];
  // A run of one bucket (a finite job, measured whole) has no course over time to draw.
  if (first === undefined || isJob(result)) return [];
  // The axis spans the whole run: its last bucket's start is a step before the end.
  const x = { label: "time (s)", values: first.series.t.map((t) => t / 1_000), min: 0, max: first.duration / 1_000 };
  const per = first.step === 1_000 ? "per second" : `per second (each ${bucket(first.step)} as a rate)`;
  const capacity = result.figures.capacity;
  const charts: Chart[] = plotCharts(result, x);
  if (goodputDefined(result))
    charts.push({
      id: "goodput",
      title: `Goodput: calls that succeeded within their caller's deadline, ${per}`,
      x,
      y: { label: "calls/s", min: 0 },
      series: perRun(result, (r) => r.series.goodput, true),
    });
  else
    charts.push({
      id: "admitted",
      title: `Calls admitted, ${per}`,
      x,
      y: { label: "calls/s", min: 0 },
      series: perRun(result, (r) => r.series.admitted, true),
    });
  const load = perRun(result, (r) => r.series.backendLoad, true);
  if (anything(load))
    charts.push({
      id: "backend",
      title:
        capacity === undefined
          ? `Load on the backend: attempts that reached it, ${per}`
          : `Load on the backend, ${per}, against its capacity (${numberSource(capacity)} calls/s)`,
      x,
      y: { label: "calls/s", min: 0 },
      series:
        capacity === undefined
          ? load
          : [...load, { label: "capacity", values: x.values.map(() => capacity), color: reference, dash: true }],
    });
  const retries = perRun(result, (r) => r.series.retries, true);
  if (anything(retries))
    charts.push({
      id: "retries",
      title: `Retries sent, ${per}: when the retries come`,
      x,
      y: { label: "calls/s", min: 0 },
      series: retries,
    });
  const refused = perRun(result, (r) => r.series.refused, true);
  if (anything(refused))
    charts.push({
      id: "refused",
      title: `Calls refused, ${per}`,
      x,
      y: { label: "calls/s", min: 0 },
      series: refused,
    });
  const p99 = perRun(result, (r) => r.series.p99, false);
  if (anything(p99))
    charts.push({
      id: "p99",
      title: `Latency p99 of successful attempts, each ${bucket(first.step)}`,
      x,
      y: { label: "ms", log: true },
      series: p99,
    });
  return charts;
}

/** A figure of run `i`'s summary, with the expression that reads it from the replay's `result`. */
function summaryFigure(
  i: number,
  id: string,
  label: string,
  unit: string,
  value: number,
  expr: string,
  digits = digitsFor(value),
): Figure {
  return { id: `run${i}.${id}`, label, unit, value, digits, expr };
}

/** The seeds a scenario's own tables take beyond the run shown, when it has a knob for that (`seeds`, `spreadSeeds`). */
function otherSeeds(result: ScenarioResult): number | undefined {
  const n = result.params["seeds"] ?? result.params["spreadSeeds"];
  return typeof n === "number" && n > 1 ? n : undefined;
}

/** The summary table's caption: whose totals, on which seed. */
export function summaryCaption(result: ScenarioResult): string {
  const seed = result.params["seed"];
  const seeds = otherSeeds(result);
  return `Each run's totals on seed ${String(seed)}, from its summary${
    seeds === undefined
      ? ""
      : ` (a table of the scenario's that says so is over ${seeds} seeds, so its figures are not these)`
  }`;
}

/** Every run's totals, from its summary: what a user judges a policy by, first. */
function summaryTable(result: ScenarioResult): Table {
  type Row = [
    id: string,
    label: string,
    unit: string,
    get: (r: RunResult) => number | null,
    expr: (at: string) => string,
    digits?: number,
  ];
  const first = result.runs[0];
  const step = first?.step ?? 1_000;
  const lead: Row[] = goodputDefined(result)
    ? [
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
          goodputPercent,
          (at) => `(${at}.summary.goodputRate ?? 0) * 100`,
          1,
        ],
      ]
    : [
        ["admitted", "calls admitted", "calls", (r) => r.summary.admitted, (at) => `${at}.summary.admitted`],
        [
          "admittedRate",
          "admitted, of the calls offered",
          "%",
          admittedPercent,
          (at) => `${at}.summary.calls === 0 ? 0 : (${at}.summary.admitted / ${at}.summary.calls) * 100`,
          1,
        ],
      ];
  // A finite job measured whole has no course over time: no mean rate, no busiest bucket.
  const overTime: Row[] = isJob(result)
    ? []
    : [
        [
          "meanBackendLoad",
          "mean load on the backend, over the run",
          "calls/s",
          (r) => (r.summary.backendLoad * 1_000) / r.duration,
          (at) => `(${at}.summary.backendLoad * 1000) / ${at}.duration`,
          1,
        ],
        [
          "peakBackendLoad",
          `peak load on the backend, its busiest ${bucket(step)} over the whole run`,
          "calls/s",
          (r) => r.summary.peakBackendLoad,
          (at) => `${at}.summary.peakBackendLoad`,
          1,
        ],
      ];
  const rows: Row[] = [
    ...lead,
    [
      "backendLoad",
      "attempts that reached the backend",
      "calls",
      (r) => r.summary.backendLoad,
      (at) => `${at}.summary.backendLoad`,
    ],
    ...overTime,
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
    caption: summaryCaption(result),
    columns: ["", ...result.runs.map((r) => r.label)],
    rows: rows
      // A row no run has a value for (no latency, no job that ends) is left out.
      .filter(([, , , get]) => result.runs.some((r) => get(r) !== null))
      .map(([id, label, unit, get, expr, digits]) => ({
        label: `${label} (${unit})`,
        cells: result.runs.map((r, i) =>
          summaryFigure(i, id, `${r.label}: ${label}`, unit, get(r) ?? 0, expr(`result.runs[${i}]`), digits),
        ),
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

/** Names in a sentence: "a", "a and b", "a, b and c". */
function listed(names: readonly string[]): string {
  return names.length <= 1 ? (names[0] ?? "") : `${names.slice(0, -1).join(", ")} and ${names.at(-1) ?? ""}`;
}

/**
 * What the summary table shows, in a sentence or two, each figure as the table prints it: which
 * run has the most goodput and which the least load on the backend, a tie named a tie when the
 * printed figures are equal; and when another run has more goodput than tideward's (the first),
 * a sentence saying so, so the page never leaves a loss unsaid. Where goodput is not defined (a
 * limiter's scenario), the admissions, with no winner.
 */
export function verdict(result: ScenarioResult): string[] {
  const runs = result.runs;
  const first = runs[0];
  if (first === undefined || runs.length < 2) return [];
  const seed = `On seed ${String(result.params["seed"])}`;
  if (!goodputDefined(result))
    return [
      `${seed}, calls admitted: ${runs.map((r) => `${r.label} ${r.summary.admitted} (${admittedPercent(r).toFixed(1)} %)`).join(", ")}. Each is what that limiter's bound lets through: here more is not better, and none wins.`,
    ];
  const shown = (r: RunResult): string => goodputPercent(r).toFixed(1);
  const top = runs.reduce((a, b) => (Number(shown(b)) > Number(shown(a)) ? b : a));
  const most = runs.filter((r) => shown(r) === shown(top));
  const low = runs.reduce((a, b) => (b.summary.backendLoad < a.summary.backendLoad ? b : a));
  const least = runs.filter((r) => r.summary.backendLoad === low.summary.backendLoad);
  const out = [
    `${seed}: ${
      most.length === 1
        ? `most goodput, ${top.label} (${shown(top)} % of the calls offered)`
        : `the most goodput is a tie at ${shown(top)} % of the calls offered, between ${listed(most.map((r) => r.label))}`
    }. ${
      least.length === 1
        ? `Least load on the backend: ${low.label} (${low.summary.backendLoad} attempts).`
        : `Least load on the backend: a tie at ${low.summary.backendLoad} attempts, between ${listed(least.map((r) => r.label))}.`
    }`,
  ];
  if (!most.includes(first))
    out.push(
      `Here ${listed(most.map((r) => r.label))} ${most.length === 1 ? "has" : "have"} more goodput than ${first.label} (${shown(top)} % against ${shown(first)} %); the scenario's own reading above says what each did.`,
    );
  return out;
}

/** The report's prose: its paragraphs that are not one of the scenario's tables printed as text (those are shown as tables). */
export function proseOf(result: ScenarioResult): string[] {
  const titles = new Set(result.tables.map((t) => t.title));
  return result.report
    .split(/\n\s*\n/)
    .filter((block) => !titles.has(block.split("\n")[0] ?? ""))
    .map((block) => block.replace(/\s*\n\s*/g, " ").trim())
    .filter((block) => block !== "");
}

/** The page's outcome of simulator scenario `name` with the page's `params`. */
export function simOutcome(name: string, params: Params, onProgress?: (progress: RunProgress) => void): Outcome {
  const s = simScenario(name);
  if (s === undefined) throw new Error(`@tideward/sim has no scenario ${JSON.stringify(name)}`);
  const asked = simParams(s, params);
  const result = s.run(asked, onProgress === undefined ? { start: START } : { start: START, onProgress });
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
    prose: proseOf(result),
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
      ms: isJob(result) ? 0 : (first?.duration ?? 0),
      calls: result.runs.reduce((sum, r) => sum + r.summary.calls, 0),
      ...(isJob(result) ? { done: Math.max(0, ...result.runs.map((r) => r.summary.completionTime ?? 0)) } : {}),
    },
  };
}
