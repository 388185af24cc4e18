// The tuner: a scenario of the simulator swept over one or two of its knobs, a whole run at each
// point in a worker of its own (ended and started afresh when a knob changes, which cancels the
// sweep at once), each point plotted as the goodput of one run against what it cost the backend,
// the front drawn through the points none beats on both. A point opens the scenario at it.
import type { SweepAnswer, SweepRequest } from "./protocol.ts";
import { pageScenario } from "./sim-scenarios.ts";
import type { SimMeta as SimScenario } from "./sim-scenarios.ts";
import { hashFor } from "./state.ts";
import { coerce } from "./state.ts";
import {
  MAX_POINTS,
  costOf,
  costs,
  front,
  grid,
  optionsText,
  readTuner,
  sweepable,
  tunerChanges,
  values,
  writeTuner,
} from "./tuner-model.ts";
import type { Point, TunerState } from "./tuner-model.ts";
import { el as h } from "./dom.ts";

const SVG = "http://www.w3.org/2000/svg";

function s<K extends keyof SVGElementTagNameMap>(
  tag: K,
  props: Record<string, string | number> = {},
): SVGElementTagNameMap[K] {
  const node = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(props)) node.setAttribute(k, String(v));
  return node;
}

let worker: Worker | undefined;
let catalogue: readonly SimScenario[] = [];
let state: TunerState | undefined;
let points: (Point | undefined)[] = [];
let selected: Point | undefined;
/** Whether the reader chose the selected point (hovered or focused it), or the page did. */
let picked = false;
let started = 0;

const host = (): HTMLElement => {
  const found = document.querySelector<HTMLElement>("#tuner");
  if (found === null) throw new Error("the page has no #tuner");
  return found;
};

/** Ends the sweep under way, if any: its worker stops mid-run. */
function stop(): void {
  worker?.terminate();
  worker = undefined;
}

/** Marks a sweep under way or not: the page's flag, and the Stop button only while there is one to stop. */
function sweeping(on: boolean): void {
  document.body.dataset.tuning = String(on);
  const button = document.querySelector<HTMLButtonElement>("#tune-stop");
  if (button !== null) button.disabled = !on;
}

/** Leaves the tuner: the sweep under way is cancelled. */
export function closeTuner(): void {
  stop();
}

/** Opens the tuner at the state `query` gives, and starts its sweep; says what of the query it did not use as written. */
export function openTuner(query: string, scenarios: readonly SimScenario[] = catalogue): string[] {
  catalogue = scenarios;
  state = readTuner(query, catalogue);
  const changes = tunerChanges(query, state);
  const hash = `#tuner?${writeTuner(state)}`;
  if (location.hash !== hash) history.replaceState(null, "", hash);
  render();
  run();
  return changes;
}

function change(next: Partial<TunerState>): void {
  if (state === undefined) return;
  // Another run or another cost reads the points already swept: no new sweep.
  if (Object.keys(next).every((k) => k === "run" || k === "cost")) {
    state = { ...state, ...next };
    history.replaceState(null, "", `#tuner?${writeTuner(state)}`);
    picked = false;
    plot();
    return;
  }
  // A new scenario starts from its own defaults; a new knob from its first range (around its default).
  const merged = { ...state, ...next };
  const q = new URLSearchParams(writeTuner(merged));
  if (next.of !== undefined) for (const k of ["x", "x0", "x1", "y", "y0", "y1", "run"]) q.delete(k);
  if (next.x !== undefined) for (const k of ["x0", "x1"]) q.delete(k);
  if (next.y !== undefined) for (const k of ["y0", "y1"]) q.delete(k);
  openTuner(q.toString());
}

function simOf(t: TunerState): SimScenario {
  const found = catalogue.find((c) => c.name === t.of);
  if (found === undefined) throw new Error(`no scenario ${t.of}`);
  return found;
}

function labelled(id: string, label: string, control: HTMLElement): HTMLElement {
  return h("div", { class: "knob" }, h("label", { for: id }, label), control);
}

function select(
  id: string,
  options: readonly { value: string; label: string }[],
  value: string,
  on: (v: string) => void,
): HTMLSelectElement {
  const el = h("select", { id }, ...options.map((o) => h("option", { value: o.value }, o.label)));
  el.value = value;
  el.addEventListener("change", () => {
    noted = "";
    on(el.value);
  });
  return el;
}

/** What of the last value typed the tuner changed, said under the knobs (and again after the redraw it starts); empty when it used it as typed. */
let noted = "";

/**
 * A number box. A value off the grid `hold` keeps it on (a knob's own steps) is moved onto it,
 * there in the box and said under the knobs, so the points swept are the values shown.
 */
function number(
  id: string,
  value: number,
  min: number,
  max: number,
  step: number,
  on: (v: number) => void,
  hold: (v: number) => number = (v) => v,
): HTMLInputElement {
  const el = h("input", {
    id,
    type: "number",
    min: String(min),
    max: String(max),
    step: String(step),
    value: String(value),
  });
  el.addEventListener("change", () => {
    const v = Number(el.value);
    if (el.value.trim() === "" || !Number.isFinite(v)) return;
    const held = hold(v);
    noted = held === v ? "" : `${el.value} is not on this knob's steps, so ${held} is used.`;
    el.value = String(held);
    on(held);
  });
  return el;
}

function render(): void {
  const t = state;
  if (t === undefined) return;
  const sim = simOf(t);
  const page = pageScenario(sim);
  const knobs = sweepable(sim);
  const knobOptions = knobs.map((k) => ({
    value: k.name,
    label: k.unit === undefined ? k.label : `${k.label} (${k.unit})`,
  }));
  const range = (axis: "x" | "y"): HTMLElement[] => {
    const k = knobs.find((x) => x.name === t[axis]);
    if (k === undefined) return [];
    const from = axis === "x" ? t.x0 : t.y0;
    const to = axis === "x" ? t.x1 : t.y1;
    const n = axis === "x" ? t.xn : t.yn;
    // The knob's control on the scenario's view: a point opens the scenario there, so the ends
    // keep to its steps.
    const control = page.knobs.find((c) => c.key === k.name);
    const onGrid = (v: number): number => {
      const held = control === undefined ? v : coerce(control, String(v));
      return typeof held === "number" ? held : v;
    };
    const step = control !== undefined && control.kind !== "select" ? control.step : k.step;
    const unit = k.unit === undefined ? "" : ` ${k.unit}`;
    return [
      labelled(
        `tune-${axis}0`,
        "from",
        number(`tune-${axis}0`, from, k.min, k.max, step, (v) => change({ [`${axis}0`]: v }), onGrid),
      ),
      labelled(
        `tune-${axis}1`,
        "to",
        number(`tune-${axis}1`, to, k.min, k.max, step, (v) => change({ [`${axis}1`]: v }), onGrid),
      ),
      labelled(
        `tune-${axis}n`,
        "points",
        number(`tune-${axis}n`, n, 2, 9, 1, (v) => change({ [`${axis}n`]: v }), Math.round),
      ),
      h("p", { class: "hint", id: `tune-${axis}-values` }, `At ${values(k, from, to, n).join(", ")}${unit}.`),
    ];
  };
  const controls = h(
    "form",
    { id: "tuner-controls", "aria-label": "What to sweep" },
    h(
      "fieldset",
      {},
      h("legend", {}, "scenario"),
      labelled(
        "tune-of",
        "Scenario",
        select(
          "tune-of",
          catalogue.map((c) => ({ value: c.name, label: c.title })),
          t.of,
          (v) => change({ of: v }),
        ),
      ),
      labelled(
        "tune-run",
        "Run (policy) plotted",
        select("tune-run", runOptions(), String(t.run), (v) => change({ run: Number(v) })),
      ),
      labelled(
        "tune-cost",
        "Against",
        select(
          "tune-cost",
          costs.map((c) => ({ value: c.value, label: `${c.label} (${c.unit})` })),
          t.cost,
          (v) => change({ cost: v as TunerState["cost"] }),
        ),
      ),
    ),
    h(
      "fieldset",
      {},
      h("legend", {}, "first knob"),
      labelled(
        "tune-x",
        "Knob",
        select("tune-x", knobOptions, t.x, (v) => change({ x: v })),
      ),
      ...range("x"),
    ),
    h(
      "fieldset",
      {},
      h("legend", {}, "second knob"),
      labelled(
        "tune-y",
        "Knob",
        select("tune-y", [{ value: "", label: "none" }, ...knobOptions.filter((o) => o.value !== t.x)], t.y, (v) =>
          change({ y: v }),
        ),
      ),
      ...range("y"),
    ),
    h("p", { class: "hint" }, `At most ${MAX_POINTS} points; every other knob at its default.`),
    h("p", { class: "hint", id: "tune-note", role: "status", "aria-live": "polite" }, noted),
  );
  controls.addEventListener("submit", (e) => e.preventDefault());
  const stopButton = h("button", { type: "button", id: "tune-stop" }, "Stop");
  stopButton.disabled = worker === undefined;
  stopButton.addEventListener("click", () => {
    stop();
    sweeping(false);
    progressText(`Stopped after ${points.filter((p) => p !== undefined).length} of ${points.length} points.`);
  });
  const copy = h("button", { type: "button", id: "tune-copy" }, "Copy as options");
  copy.addEventListener("click", () => {
    const text = host().querySelector<HTMLTextAreaElement>("#tune-options");
    if (text === null) return;
    const said = host().querySelector<HTMLElement>("#tune-copied");
    navigator.clipboard.writeText(text.value).then(
      () => said && (said.textContent = "Copied."),
      () => {
        text.select();
        if (said) said.textContent = "The clipboard is not available here: the options are selected below.";
      },
    );
  });
  host().replaceChildren(
    h(
      "div",
      { class: "layout" },
      controls,
      h(
        "div",
        {},
        h("p", { id: "tune-status", role: "status", "aria-live": "polite" }, ""),
        h("progress", { id: "tune-progress", max: "1", value: "0" }),
        stopButton,
        h(
          "figure",
          { class: "chart" },
          h("figcaption", { id: "tune-caption" }, ""),
          h("div", { id: "tune-plot" }),
          h(
            "p",
            { class: "tuner-key", id: "tune-key" },
            dotKey("on-front"),
            " on the front: no other point has as much goodput for less cost. ",
            dotKey(""),
            " another point beats it on both. ",
            dotKey("selected"),
            " the point selected below. Each point is labelled with the knobs' values there.",
          ),
        ),
        h("p", { id: "tune-selected" }, ""),
        h("div", { class: "actions" }, copy, h("span", { id: "tune-copied", role: "status", "aria-live": "polite" })),
        h("label", { for: "tune-options" }, "The options that reproduce the selected point:"),
        h("textarea", { id: "tune-options", readonly: "", rows: "6", spellcheck: "false" }),
      ),
    ),
  );
}

/** A dot as the plot draws it, for the key under the plot. */
function dotKey(kind: string): SVGSVGElement {
  const svg = s("svg", { width: 14, height: 14, viewBox: "0 0 14 14", "aria-hidden": "true" });
  svg.classList.add("key");
  const dot = s("circle", { cx: 7, cy: 7, r: 5 });
  dot.classList.add("key-dot");
  if (kind !== "") dot.classList.add(...kind.split(" "));
  svg.append(dot);
  return svg;
}

/** A run's name before the sweep has named them (the first point names every run). */
const unnamed = (i: number): string =>
  i === 0 ? "tideward's (the scenario's first run)" : `the scenario's run number ${i + 1}`;

function runOptions(): { value: string; label: string }[] {
  const labels = points.find((p) => p !== undefined)?.runs.map((r) => r.label);
  const n = Math.max(labels?.length ?? 0, (state?.run ?? 0) + 1);
  return Array.from({ length: n }, (_, i) => ({ value: String(i), label: labels?.[i] ?? unnamed(i) }));
}

function progressText(text: string): void {
  const el = host().querySelector("#tune-status");
  if (el) el.textContent = text;
}

function run(): void {
  stop();
  const t = state;
  if (t === undefined) return;
  const all = grid(t, catalogue).slice(0, MAX_POINTS);
  points = all.map(() => undefined);
  selected = undefined;
  picked = false;
  started = performance.now();
  sweeping(true);
  const sim = simOf(t);
  const knob = (name: string): string => {
    const k = sweepable(sim).find((x) => x.name === name);
    return k === undefined ? name : `${k.label.toLowerCase()} (${name})`;
  };
  const what = t.y === "" ? knob(t.x) : `${knob(t.x)} and ${knob(t.y)}`;
  progressText(`Sweeping ${what}: ${all.length} points, each a whole run; 0 done.`);
  const w = new Worker(new URL("./worker.ts", import.meta.url), { type: "module" });
  worker = w;
  w.onmessage = ({ data }: MessageEvent<SweepAnswer>) => {
    if (worker !== w) return;
    if (data.kind === "error") {
      progressText(`Point ${data.index + 1} failed: ${data.error}`);
      console.error(`tuner, point ${data.index + 1}: ${data.error}`);
      return;
    }
    const first = points.every((p) => p === undefined);
    points[data.index] = data.point;
    if (first) {
      const runSelect = host().querySelector<HTMLSelectElement>("#tune-run");
      runSelect?.replaceChildren(...runOptions().map((o) => h("option", { value: o.value }, o.label)));
      if (runSelect) runSelect.value = String(t.run);
    }
    const done = points.filter((p) => p !== undefined).length;
    const bar = host().querySelector<HTMLProgressElement>("#tune-progress");
    if (bar) bar.value = done / points.length;
    progressText(
      done === points.length
        ? `Swept ${done} points in ${((performance.now() - started) / 1_000).toFixed(1)} s, a whole run at each, in a worker.`
        : `Sweeping ${what}: ${points.length} points, each a whole run; ${done} done.`,
    );
    plot();
    if (done === points.length) {
      stop();
      sweeping(false);
    }
  };
  w.onerror = (e) => {
    sweeping(false);
    progressText(`The tuner's worker stopped: ${e.message}`);
    console.error(`tuner worker: ${e.message}`);
  };
  w.postMessage({ kind: "sweep", of: t.of, points: all } satisfies SweepRequest);
}

/** Ticks for `[lo, hi]`: about five round numbers. */
function ticks(lo: number, hi: number): number[] {
  const span = hi - lo || 1;
  const step = 10 ** Math.floor(Math.log10(span / 4));
  const unit = [1, 2, 5, 10].map((m) => m * step).find((u) => span / u <= 6) ?? step * 10;
  const out: number[] = [];
  for (let v = Math.ceil(lo / unit) * unit; v <= hi + 1e-9; v += unit) out.push(Number(v.toPrecision(12)));
  return out;
}

function describePoint(sim: SimScenario, p: Point, t: TunerState): string {
  const r = p.runs[t.run];
  const at = Object.entries(p.params)
    .map(([k, v]) => `${k} = ${v}`)
    .join(", ");
  const c = costOf(p, t.run, t.cost);
  const cost = costs.find((x) => x.value === t.cost);
  return `${at}: ${r?.label ?? "?"} goodput ${r?.goodput.toFixed(1) ?? "?"} %, ${cost?.label ?? ""} ${c === null ? "not stated" : `${c.toFixed(1)} ${cost?.unit ?? ""}`} (${sim.title})`;
}

function choose(p: Point): void {
  const t = state;
  if (t === undefined) return;
  const sim = simOf(t);
  selected = p;
  // The dot selected is marked, and only it: the text below names what it shows.
  const key = JSON.stringify(p.params);
  for (const dot of host().querySelectorAll<SVGCircleElement>("svg.tuner-plot circle.point[data-params]")) {
    const on = dot.dataset.params === key;
    dot.classList.toggle("selected", on);
    if (on) dot.setAttribute("aria-current", "true");
    else dot.removeAttribute("aria-current");
  }
  const said = host().querySelector("#tune-selected");
  if (said)
    said.textContent = `Selected: ${describePoint(sim, p, t)}. Click it, or press Enter, to open the scenario at it.`;
  const text = host().querySelector<HTMLTextAreaElement>("#tune-options");
  if (text) text.value = optionsText(sim, t.run, p);
}

function plot(): void {
  const t = state;
  const el = host().querySelector("#tune-plot");
  if (t === undefined || el === null) return;
  const sim = simOf(t);
  const done = points.filter((p): p is Point => p !== undefined);
  const cost = costs.find((c) => c.value === t.cost);
  const caption = host().querySelector("#tune-caption");
  const label = done[0]?.runs[t.run]?.label ?? unnamed(t.run);
  if (caption)
    caption.textContent = `${label}: goodput (% of calls offered) against ${cost?.label ?? ""} (${cost?.unit ?? ""}), each point a whole run at one point of the grid; the line is the front.`;
  const scored = done.flatMap((p) => {
    const c = costOf(p, t.run, t.cost);
    const g = p.runs[t.run]?.goodput;
    return c === null || g === undefined ? [] : [{ p, c, g }];
  });
  const W = 640;
  const H = 340;
  const m = { l: 56, r: 16, t: 12, b: 42 };
  const svg = s("svg", { viewBox: `0 0 ${W} ${H}`, role: "img", "aria-label": caption?.textContent ?? "" });
  svg.classList.add("tuner-plot");
  if (scored.length === 0) {
    el.replaceChildren(
      svg,
      h("p", {}, done.length === 0 ? "" : `This run states no ${cost?.label ?? "cost"}; pick another.`),
    );
    return;
  }
  const cs = scored.map((x) => x.c);
  const gs = scored.map((x) => x.g);
  const [c0, c1] = [Math.min(...cs), Math.max(...cs)];
  const [g0, g1] = [Math.min(...gs), Math.max(...gs)];
  const pad = (lo: number, hi: number): [number, number] =>
    hi - lo < 1e-9 ? [lo - 1, hi + 1] : [lo - (hi - lo) * 0.05, hi + (hi - lo) * 0.05];
  const [xa, xb] = pad(c0, c1);
  const [ya, yb] = pad(g0, g1);
  const X = (v: number): number => m.l + ((v - xa) / (xb - xa)) * (W - m.l - m.r);
  const Y = (v: number): number => H - m.b - ((v - ya) / (yb - ya)) * (H - m.t - m.b);
  for (const v of ticks(xa, xb)) {
    svg.append(s("line", { x1: X(v), x2: X(v), y1: m.t, y2: H - m.b, class: "grid" }));
    const tx = s("text", { x: X(v), y: H - m.b + 16, "text-anchor": "middle" });
    tx.textContent = String(v);
    svg.append(tx);
  }
  for (const v of ticks(ya, yb)) {
    svg.append(s("line", { x1: m.l, x2: W - m.r, y1: Y(v), y2: Y(v), class: "grid" }));
    const ty = s("text", { x: m.l - 6, y: Y(v) + 4, "text-anchor": "end" });
    ty.textContent = String(v);
    svg.append(ty);
  }
  const xl = s("text", { x: (m.l + W - m.r) / 2, y: H - 6, "text-anchor": "middle" });
  xl.textContent = `${cost?.label ?? ""} (${cost?.unit ?? ""})`;
  const yl = s("text", {
    x: 14,
    y: (m.t + H - m.b) / 2,
    "text-anchor": "middle",
    transform: `rotate(-90 14 ${(m.t + H - m.b) / 2})`,
  });
  yl.textContent = "goodput (%)";
  svg.append(xl, yl);
  const best = front(done, t.run, t.cost);
  svg.append(
    s("polyline", {
      class: "front",
      points: best.map((p) => `${X(costOf(p, t.run, t.cost) ?? 0)},${Y(p.runs[t.run]?.goodput ?? 0)}`).join(" "),
    }),
  );
  const page = pageScenario(sim);
  for (const { p, c, g } of scored) {
    const dot = s("circle", {
      cx: X(c),
      cy: Y(g),
      r: 6,
      tabindex: 0,
      role: "link",
      "data-params": JSON.stringify(p.params),
    });
    dot.classList.add("point");
    if (best.includes(p)) dot.classList.add("on-front");
    dot.setAttribute("aria-label", describePoint(sim, p, t));
    const tip = s("title");
    tip.textContent = describePoint(sim, p, t);
    dot.append(tip);
    const open = (): void => {
      location.hash = hashFor(page, { ...Object.fromEntries(page.knobs.map((k) => [k.key, k.value])), ...p.params });
    };
    const pick = (): void => {
      picked = true;
      choose(p);
    };
    // Its values beside it, so a reader sees where each point is without hovering.
    const label = s("text", { x: X(c) + 9, y: Y(g) - 8, "text-anchor": "start" });
    label.classList.add("point-label");
    label.textContent = Object.values(p.params).join(", ");
    svg.append(label);
    dot.addEventListener("mouseenter", pick);
    dot.addEventListener("focus", pick);
    dot.addEventListener("click", open);
    dot.addEventListener("keydown", (e) => {
      if (e.key === "Enter" || e.key === " ") {
        e.preventDefault();
        open();
      }
    });
    svg.append(dot);
  }
  el.replaceChildren(svg);
  // Until one is chosen, the front's best goodput is.
  const top = best.at(-1);
  if (!picked && top !== undefined) choose(top);
  else if (selected !== undefined) choose(selected);
}
