// The tuner's arithmetic, apart from the page so the tests run it under Node.js: its state in
// the URL, the grid of points a sweep runs, what each point's runs measured, the front of
// goodput against cost, and the options that reproduce a point.
import type { GuardOption, NumberKnob as SimNumberKnob, ScenarioResult } from "@tideward/sim";
import { source, sym } from "./code.ts";
import { knobOf } from "./sim-scenarios.ts";
import type { SimMeta as SimScenario } from "./sim-scenarios.ts";
import { coerce } from "./state.ts";

/** The most points one sweep runs: each is a whole scenario run, and the sweep should take seconds. */
export const MAX_POINTS = 30;

/** What a point costs the backend, on the plot's x axis. */
export type Cost = "load" | "peak" | "wasted" | "recover";

export const costs: readonly { readonly value: Cost; readonly label: string; readonly unit: string }[] = [
  { value: "load", label: "backend load (mean)", unit: "calls/s" },
  { value: "peak", label: "peak backend load", unit: "calls/s" },
  { value: "wasted", label: "calls wasted", unit: "calls" },
  { value: "recover", label: "time to recover", unit: "s" },
];

/** The tuner's state: a scenario, one or two of its knobs over a range each, a run and a cost. */
export interface TunerState {
  readonly of: string;
  readonly x: string;
  readonly x0: number;
  readonly x1: number;
  readonly xn: number;
  /** The second knob, or `""` for none. */
  readonly y: string;
  readonly y0: number;
  readonly y1: number;
  readonly yn: number;
  /** The run plotted, by its place in the scenario's runs (0: tideward's). */
  readonly run: number;
  readonly cost: Cost;
}

/** The numeric knobs a sweep may move: every number but the seed. */
export function sweepable(s: SimScenario): SimNumberKnob[] {
  return s.knobs.filter((k): k is SimNumberKnob => (k.kind === "number" || k.kind === "integer") && k.name !== "seed");
}

/** The page's grid for a knob: the range its control offers. */
function pageRange(k: SimNumberKnob): { min: number; max: number } {
  const p = knobOf(k);
  return p.kind === "select" ? { min: k.min, max: k.max } : { min: p.min, max: p.max };
}

/** Whether a knob is an option of @tideward/guard (see {@link guardOptions}). */
const isGuardOption = (k: SimNumberKnob): boolean => k.option !== undefined;

/**
 * The knob a scenario is tuned by first, where its first guard option is not the policy the
 * scenario is about: a retry budget's scenarios are swept over the budget's ratio.
 */
const preferred: Readonly<Record<string, string>> = {
  "retry-amplification": "ratio",
  "herd-recovery": "ratio",
};

/** The knob to sweep first: the scenario's preferred one, else one that is a guard option, else one whose label names tideward, else the first. */
function firstKnob(s: SimScenario): SimNumberKnob | undefined {
  const all = sweepable(s);
  return (
    all.find((k) => k.name === preferred[s.name]) ??
    all.find(isGuardOption) ??
    all.find((k) => /tideward/i.test(k.label)) ??
    all[0]
  );
}

/** Points a knob is swept over until the reader says otherwise: five on the first knob, three on the second. */
export const FIRST_POINTS = { x: 5, y: 3 } as const;

/**
 * The range a knob is swept over first: `n` points on the knob's own grid, evenly spaced around
 * its default (the default one of them), about a quarter of the default apart (at least a step),
 * moved to stay within the control's range.
 */
export function firstRange(k: SimNumberKnob, n: number): { from: number; to: number } {
  const page = knobOf(k);
  const { min, max, step } = page.kind === "select" ? { min: k.min, max: k.max, step: k.step } : page;
  const base = k.default > 0 ? k.default : (max - min) / 10;
  const wanted = Math.max(step, Math.round(base / 4 / step) * step);
  const roomDown = k.default - min;
  const roomUp = max - k.default;
  // The default as near the middle as the range allows, closer points where it must.
  const middle = Math.floor((n - 1) / 2);
  const places = Array.from({ length: n }, (_, i) => i).sort((a, b) => Math.abs(a - middle) - Math.abs(b - middle));
  let from = min;
  let to = max;
  for (const below of places) {
    const above = n - 1 - below;
    const fits = Math.min(below === 0 ? Infinity : roomDown / below, above === 0 ? Infinity : roomUp / above);
    const spacing = Math.min(wanted, Math.floor(fits / step + 1e-9) * step);
    if (spacing >= step) {
      from = k.default - below * spacing;
      to = k.default + above * spacing;
      break;
    }
  }
  const held = (v: number): number => {
    const c = coerce(page, String(v));
    return typeof c === "number" ? c : v;
  };
  return { from: held(from), to: held(to) };
}

/** The state a query string gives, every field checked and held to what the scenario has. */
export function readTuner(query: string, catalogue: readonly SimScenario[]): TunerState {
  const q = new URLSearchParams(query);
  // Without one named, the first scenario with a knob that is a guard option: the tuner is for tuning tideward.
  const s =
    catalogue.find((c) => c.name === q.get("of")) ??
    catalogue.find((c) => sweepable(c).some(isGuardOption)) ??
    catalogue[0];
  if (s === undefined) throw new Error("the simulator's catalogue is empty");
  const knobs = sweepable(s);
  const num = (key: string, fallback: number, lo: number, hi: number): number => {
    const t = q.get(key);
    const v = t === null || t.trim() === "" ? Number.NaN : Number(t);
    return Number.isFinite(v) ? Math.min(hi, Math.max(lo, v)) : fallback;
  };
  const x = knobs.find((k) => k.name === q.get("x")) ?? firstKnob(s);
  const xr = x === undefined ? { min: 0, max: 0 } : pageRange(x);
  const y = knobs.find((k) => k.name === q.get("y") && k.name !== x?.name);
  const yr = y === undefined ? { min: 0, max: 0 } : pageRange(y);
  const cost = costs.find((c) => c.value === q.get("cost"))?.value ?? "load";
  const xn = Math.round(num("xn", FIRST_POINTS.x, 2, 9));
  const yn = y === undefined ? 1 : Math.round(num("yn", FIRST_POINTS.y, 2, Math.max(2, Math.floor(MAX_POINTS / xn))));
  // A range's ends on the knob's own grid, so the points land on the values the tuner shows.
  const end = (k: SimNumberKnob | undefined, key: string, fallback: number, lo: number, hi: number): number => {
    const v = num(key, fallback, lo, hi);
    const held = k === undefined ? undefined : coerce(knobOf(k), String(v));
    return typeof held === "number" ? held : v;
  };
  const xf = x === undefined ? { from: 0, to: 0 } : firstRange(x, xn);
  const yf = y === undefined ? { from: 0, to: 0 } : firstRange(y, yn);
  return {
    of: s.name,
    x: x?.name ?? "",
    x0: end(x, "x0", xf.from, xr.min, xr.max),
    x1: end(x, "x1", xf.to, xr.min, xr.max),
    xn,
    y: y?.name ?? "",
    y0: end(y, "y0", yf.from, yr.min, yr.max),
    y1: end(y, "y1", yf.to, yr.min, yr.max),
    yn,
    run: Math.round(num("run", 0, 0, 63)),
    cost,
  };
}

/** What of a hand-edited link the tuner did not use as written: a sentence for each such field. */
export function tunerChanges(query: string, t: TunerState): string[] {
  const used = new URLSearchParams(writeTuner(t));
  const out: string[] = [];
  for (const [key, given] of new URLSearchParams(query)) {
    const value = used.get(key);
    if (value === null) out.push(`${key}=${given}: the tuner does not read it here, so it is ignored.`);
    else if (value !== given && Number(value) !== Number(given))
      out.push(`${key}=${given}: not one the tuner can use, so ${value} is used.`);
  }
  return out;
}

/** The query string of a state: every field, so a link is read the same by a later page. */
export function writeTuner(t: TunerState): string {
  const q = new URLSearchParams({ of: t.of, x: t.x, x0: String(t.x0), x1: String(t.x1), xn: String(t.xn) });
  if (t.y !== "")
    for (const [k, v] of [
      ["y", t.y],
      ["y0", String(t.y0)],
      ["y1", String(t.y1)],
      ["yn", String(t.yn)],
    ])
      q.set(k, v);
  q.set("run", String(t.run));
  q.set("cost", t.cost);
  return q.toString();
}

/** `n` values from `from` to `to`, each on the knob's grid (so the scenario's view shows it as swept), no value twice. */
export function values(k: SimNumberKnob, from: number, to: number, n: number): number[] {
  const page = knobOf(k);
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    const v = n === 1 ? from : from + ((to - from) * i) / (n - 1);
    const held = coerce(page, String(v));
    if (typeof held === "number" && !out.includes(held)) out.push(held);
  }
  return out;
}

/** The parameters of every point of a sweep, the first knob varying fastest. */
export function grid(t: TunerState, catalogue: readonly SimScenario[]): Record<string, number>[] {
  const s = catalogue.find((c) => c.name === t.of);
  const x = s === undefined ? undefined : sweepable(s).find((k) => k.name === t.x);
  if (s === undefined || x === undefined) return [];
  const y = sweepable(s).find((k) => k.name === t.y);
  const xs = values(x, t.x0, t.x1, t.xn);
  const ys = y === undefined ? [undefined] : values(y, t.y0, t.y1, t.yn);
  return ys.flatMap((yv) =>
    xs.map((xv) => (y === undefined || yv === undefined ? { [x.name]: xv } : { [x.name]: xv, [y.name]: yv })),
  );
}

/** What one run measured at one point. */
export interface RunFigures {
  readonly label: string;
  /** Goodput, of the calls offered, %. */
  readonly goodput: number;
  /** Attempts that reached the backend, per second of the run. */
  readonly load: number;
  /** The most in one bucket, per second. */
  readonly peak: number;
  readonly wasted: number;
  /** Seconds to recover, as the scenario's first table states it (a column naming recovery), or null. */
  readonly recover: number | null;
}

/** One point of a sweep: its parameters and every run's figures. */
export interface Point {
  readonly params: Readonly<Record<string, number>>;
  readonly runs: readonly RunFigures[];
}

/** The seconds to recover the first table states for the run labelled `label`, or null when it states none. */
function recoveryOf(result: ScenarioResult, label: string): number | null {
  const table = result.tables[0];
  if (table === undefined) return null;
  const col = table.columns.findIndex((c) => /recover|back to/i.test(c));
  const row = table.rows.find((r) => r[0] === label);
  if (col < 0 || row === undefined) return null;
  const v = Number.parseFloat(String(row[col]));
  return Number.isFinite(v) ? v : null;
}

/** A point from a scenario's result. */
export function pointOf(params: Readonly<Record<string, number>>, result: ScenarioResult): Point {
  return {
    params,
    runs: result.runs.map((r) => ({
      label: r.label,
      goodput: (r.summary.goodputRate ?? 0) * 100,
      load: (r.summary.backendLoad * 1_000) / r.duration,
      peak: r.summary.peakBackendLoad,
      wasted: r.summary.wasted,
      recover: recoveryOf(result, r.label),
    })),
  };
}

/** A point's cost on the plot's x axis, for run `run`. */
export function costOf(p: Point, run: number, cost: Cost): number | null {
  const r = p.runs[run];
  if (r === undefined) return null;
  return cost === "load" ? r.load : cost === "peak" ? r.peak : cost === "wasted" ? r.wasted : r.recover;
}

/**
 * The points no other beats on both counts (at least as much goodput for no more cost, and
 * better on one), by rising cost: the front a tuning chooses from.
 */
export function front(points: readonly Point[], run: number, cost: Cost): Point[] {
  const scored = points.flatMap((p) => {
    const c = costOf(p, run, cost);
    const g = p.runs[run]?.goodput;
    return c === null || g === undefined ? [] : [{ p, c, g }];
  });
  scored.sort((a, b) => a.c - b.c || b.g - a.g);
  const out: Point[] = [];
  let best = -Infinity;
  for (const s of scored) {
    if (s.g > best) {
      out.push(s.p);
      best = s.g;
    }
  }
  return out;
}

/** Which of @tideward/guard's functions an option goes to: `guard(fn, options)` or `admit(options)`. */
export type OptionsOf = "guard" | "admit";

/**
 * The options of @tideward/guard's `of` that a point's knobs give, each knob's value turned into
 * the option's by the knob's own `option` (its path, scale and offset), when the run is
 * tideward's (the first) and some of them are options there; `undefined` otherwise.
 */
export function guardOptions(
  s: SimScenario,
  run: number,
  params: Readonly<Record<string, number>>,
  of: OptionsOf = "guard",
): Record<string, unknown> | undefined {
  if (run !== 0) return undefined;
  const out: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(params)) {
    const o = optionOf(s, name);
    if (o === undefined || (o.of ?? "guard") !== of) continue;
    const path = o.path.split(".");
    const last = path.pop() ?? o.path;
    let at = out;
    // Every record on the way is this function's own, made here.
    for (const field of path) at = (at[field] ??= {}) as Record<string, unknown>;
    // Rounded to twelve digits, so 0.3 s reads 300 ms and not 300.00000000000006.
    at[last] = Number((value * (o.scale ?? 1) + (o.offset ?? 0)).toPrecision(12));
  }
  // The backoff scenarios raise a cap below the base to the base; the guard refuses such a cap, so
  // the copy says what the run did.
  const retry = out["retry"] as { base?: number; cap?: number } | undefined;
  if (retry?.base !== undefined && retry.cap !== undefined && retry.cap < retry.base) retry.cap = retry.base;
  return Object.keys(out).length === 0 ? undefined : out;
}

/** The guard option the knob `name` sets, as the scenario states it. */
function optionOf(s: SimScenario, name: string): GuardOption | undefined {
  const k = s.knobs.find((x) => x.name === name);
  return k?.kind === "number" || k?.kind === "integer" ? k.option : undefined;
}

/** "Copy as options": what reproduces a point, as @tideward/guard options where they apply and as the simulator's run. */
export function optionsText(s: SimScenario, run: number, p: Point): string {
  const r = p.runs[run];
  const at = Object.entries(p.params)
    .map(([name, v]) => {
      const k = s.knobs.find((x) => x.name === name);
      const unit = k?.kind === "number" || k?.kind === "integer" ? (k.unit ?? "") : "";
      return `${name} = ${v}${unit === "" ? "" : ` ${unit}`}`;
    })
    .join(", ");
  const lines = [
    `// ${s.title}: ${r?.label ?? `run ${run + 1}`} at ${at}; goodput ${r?.goodput.toFixed(1) ?? "?"} %, backend load ${r?.load.toFixed(1) ?? "?"} calls/s.`,
  ];
  const g = guardOptions(s, run, p.params, "guard");
  const a = guardOptions(s, run, p.params, "admit");
  if (g !== undefined || a !== undefined) {
    lines.push("// The @tideward/guard options these knobs are, laid over the run's own (its label names them):");
    if (g !== undefined) lines.push(`guard(fn, ${source(g)})`);
    if (a !== undefined)
      lines.push(
        "// On the server, its admission (a shedder weighs load: () => the CPU in thousandths):",
        `admit(${source({ load: sym("load"), ...a })})`,
      );
    lines.push("// The simulator's run of this point:");
  } else
    lines.push(
      run === 0
        ? "// None of these knobs is an option of @tideward/guard; the simulator's run reproduces the point:"
        : "// This run is a baseline, not tideward's: the simulator's run reproduces it:",
    );
  lines.push(`scenario(${JSON.stringify(s.name)}).run(${source(p.params)}, { start: 0 })`);
  return lines.join("\n") + "\n";
}
