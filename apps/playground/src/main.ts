// The page: a tab per scenario, a labelled control per knob, and the worker's outcome drawn as
// charts, figures and tables. Every knob change updates the URL and asks the worker for a new
// run; while one is running the latest request waits, so the plots follow the knob without a
// queue of stale runs piling up.
import "./style.css";
import { draw, refit, toPng } from "./chart.ts";
import { pageScenarios } from "./catalogue.ts";
import { toCsv } from "./csv.ts";
import { formatValue } from "./model.ts";
import type { Figure, Knob, Outcome, Scenario, Value } from "./model.ts";
import type { CatalogueAnswer, ProgressAnswer, RunAnswer, RunRequest } from "./protocol.ts";
import { snippetName, toSnippet } from "./snippet.ts";
import { pageScenario } from "./sim-scenarios.ts";
import type { SimMeta } from "./sim-scenarios.ts";
import { loadClaims, renderScoreboard } from "./scoreboard.ts";
import { coerce, hashFor, parseHash, resolve, shown } from "./state.ts";
import type { Change } from "./state.ts";
import { closeTuner, openTuner } from "./tuner.ts";
import { duration as describe, withUnit } from "./units.ts";
import { el } from "./dom.ts";

function must<T extends Element>(selector: string): T {
  const found = document.querySelector<T>(selector);
  if (found === null) throw new Error(`the page has no ${selector}`);
  return found;
}

const nav = must<HTMLElement>("#scenarios");
const controls = must<HTMLFormElement>("#controls");
const title = must<HTMLElement>("#title");
const blurb = must<HTMLElement>("#blurb");
const status = must<HTMLElement>("#status");
const results = must<HTMLElement>("#results");
const snippet = must<HTMLTextAreaElement>("#snippet");
const notice = must<HTMLElement>("#notice");
const picker = must<HTMLSelectElement>("#picker");
const layout = must<HTMLElement>("#scenario .layout");
const tuner = must<HTMLElement>("#tuner");

/** The tab of the tuner, and of the simulator's scenarios (one tab, a picker under it). */
const TUNER = "tuner";
const SIM = "sim";

/**
 * The scenario the page opens on, under the scoreboard: a situation tideward's defaults exist
 * for (retries holding an overload in place), where the guard's default recovers and retries
 * without a policy never do.
 */
const OPENING = "metastable-overload";

// The first screen is the scoreboard over the opening scenario; a link to a scenario opens
// with the scoreboard folded, one click away.
const why = must<HTMLDetailsElement>("#why-details");
why.open = location.hash === "" || location.hash === "#";
void loadClaims().then(
  (claims) => renderScoreboard(must<HTMLElement>("#scoreboard"), claims),
  (error: unknown) => {
    must<HTMLElement>("#scoreboard").textContent = `The scoreboard did not load: ${String(error)}`;
    console.error(error);
  },
);
/** Whether the reader came from a scoreboard's link: the scenario is then scrolled into view. */
let fromScoreboard = false;
must<HTMLElement>("#scoreboard").addEventListener("click", (e) => {
  if (e.target instanceof Element && e.target.closest("a") !== null) fromScoreboard = true;
});

/** The page's tabs of old, which the simulator's catalogue now shows: a link to one opens its successor, saying so. */
const successors: Readonly<Record<string, string>> = {
  breaker: "breaker-outage",
  shedder: "shedder-ramp",
  herd: "herd-backoff",
  sweep: TUNER,
  // The burst table and the quota engine had tabs of their own, repeating the catalogue's.
  burst: "quota-bursts",
  quota: "quota-atomic",
};

/** The simulator's scenarios, as the worker describes them, and every scenario the page has. */
let simMetas: readonly SimMeta[] = [];
let simScenarios: readonly Scenario[] = [];
let scenarios: readonly Scenario[] = pageScenarios;
const isSim = (id: string): boolean => simScenarios.some((s) => s.id === id);

let scenario: Scenario = pageScenarios[0];
let params: Record<string, Value> = {};
let outcome: Outcome | undefined;
let seq = 0;
let running: RunRequest | undefined;
let waiting: RunRequest | undefined;
const plots = new Map<string, { title: string; host: HTMLElement; plot: ReturnType<typeof draw> }>();

function setBusy(busy: boolean): void {
  document.body.dataset.busy = String(busy);
}

function request(): void {
  waiting = { seq: ++seq, scenario: scenario.id, params: { ...params } };
  setBusy(true);
  pump();
}

function pump(): void {
  if (running !== undefined || waiting === undefined) return;
  running = waiting;
  waiting = undefined;
  worker.postMessage(running);
  watchLong(running.seq);
}

/** How long a run goes before the page offers to cancel it, ms: a quick one never shows the button. */
const LONG = 700;
const long = must<HTMLElement>("#long-run");
let longTimer: ReturnType<typeof setTimeout> | undefined;
let runStarted = 0;

/** Shows the progress and the cancel button once run `seq` has taken longer than {@link LONG}. */
function watchLong(seq: number): void {
  clearTimeout(longTimer);
  runStarted = performance.now();
  long.hidden = true;
  bar.removeAttribute("value");
  delete bar.dataset.done;
  longTimer = setTimeout(() => {
    if (running?.seq === seq) long.hidden = false;
  }, LONG);
}

function settleLong(): void {
  clearTimeout(longTimer);
  long.hidden = true;
}

/** The run under way, stopped: the worker is ended mid-run (a run is synchronous, so nothing else reaches it) and a fresh one takes its place. */
function cancel(): void {
  const stopped = running;
  worker.terminate();
  worker = spawn();
  running = undefined;
  waiting = undefined;
  settleLong();
  setBusy(false);
  if (stopped !== undefined)
    status.textContent = `Cancelled after ${((performance.now() - runStarted) / 1_000).toFixed(1)} s: this run of ${scenario.title} did not finish, and the figures below are the last run's. Move a knob to run again.`;
}

const bar = must<HTMLProgressElement>("#run-progress");

function answer(data: RunAnswer | CatalogueAnswer | ProgressAnswer): void {
  if ("kind" in data) {
    if (data.kind === "catalogue") start(data.scenarios);
    else if (data.seq === running?.seq) {
      // Without an estimate the bar stays indeterminate; a run may pass its estimate a little.
      if (data.total === null || data.total <= 0) bar.removeAttribute("value");
      else bar.value = Math.min(1, data.done / data.total);
      bar.dataset.done = String(data.done);
    }
    return;
  }
  const answered = running;
  running = undefined;
  settleLong();
  // An answer for a scenario the reader has left is dropped; one for this scenario is drawn
  // even if a newer request waits, so the plots move with the knob.
  if (answered !== undefined && answered.scenario === scenario.id) {
    if (data.ok) show(data.outcome, data.elapsed);
    else {
      status.textContent = `The run failed: ${data.error}`;
      console.error(`scenario ${answered.scenario}: ${data.error}`);
    }
  }
  pump();
  if (running === undefined && waiting === undefined) setBusy(false);
}

/** The simulation worker: a fresh one after a cancel, its answers heard only while it is the page's. */
function spawn(): Worker {
  const w = new Worker(new URL("./worker.ts", import.meta.url), { type: "module" });
  w.onmessage = ({ data }: MessageEvent<RunAnswer | CatalogueAnswer | ProgressAnswer>) => {
    if (w === worker) answer(data);
  };
  w.onerror = (event) => {
    status.textContent = `The simulation worker stopped: ${event.message}`;
    console.error(`worker: ${event.message}`);
  };
  return w;
}

let worker = spawn();
must<HTMLButtonElement>("#cancel").addEventListener("click", cancel);

/** A figure's cell; in a table the unit is in the row's or the column's heading, so the cell shows the number alone. */
function figureCell(f: Figure, unit = true): HTMLElement {
  return el(
    "td",
    { "data-figure": f.id, "data-value": String(f.value), title: f.label },
    unit ? withUnit(formatValue(f), f.unit) : formatValue(f),
  );
}

/** The status line: what was simulated, and how long it took. */
function said(simulated: Outcome["simulated"], elapsed: number): string {
  const { runs, ms, calls, done } = simulated;
  const took = `in ${Math.max(1, Math.round(elapsed))} ms, in a worker.`;
  // The calls are those of every run together, which the figures (per run) are not: say so.
  const offered = withUnit(calls.toLocaleString("en-GB"), "calls");
  // A finite job (every call at once, run until done) has no length of traffic: when it ended.
  if (done !== undefined)
    return runs === 1
      ? `Simulated one job until its every call was done, by ${describe(done)} (${offered} offered) ${took}`
      : `Simulated ${runs} runs of one job each until every call was done, the slowest by ${describe(done)} (${offered} offered in all) ${took}`;
  return runs === 1
    ? `Simulated ${describe(ms)} of traffic (${offered} offered) ${took}`
    : `Simulated ${runs} runs of ${describe(ms)} of traffic each (${offered} offered in all) ${took}`;
}

/** A table of figures: a row a label, a cell a figure (the unit in the row's or the column's heading). */
function figureTable(t: Outcome["tables"][number]): HTMLElement {
  const head = el("tr", {}, ...t.columns.map((c) => el("th", { scope: "col" }, c)));
  const body = el(
    "tbody",
    {},
    ...t.rows.map((r) =>
      el("tr", {}, el("th", { scope: "row" }, r.label), ...r.cells.map((f) => figureCell(f, false))),
    ),
  );
  const table = el(
    "div",
    { class: "scroll" },
    el("table", { class: "figures" }, el("caption", {}, t.caption), el("thead", {}, head), body),
  );
  return t.folded === true
    ? el("details", { class: "folded" }, el("summary", {}, `${t.caption} (${t.rows.length})`), table)
    : table;
}

function show(next: Outcome, elapsed: number): void {
  outcome = next;
  status.textContent = said(next.simulated, elapsed);
  const seen = new Set<string>();
  for (const chart of next.charts) {
    seen.add(chart.id);
    let entry = plots.get(chart.id);
    if (entry === undefined) {
      const host = el("div", { class: "plot", "data-chart": chart.id });
      const caption = el("figcaption", {}, chart.title);
      results
        .querySelector("#charts")
        ?.append(el("figure", { class: "chart", "data-chart-figure": chart.id }, caption, host));
      entry = { title: chart.title, host, plot: draw(host, chart) };
      plots.set(chart.id, entry);
    } else {
      entry.plot = draw(entry.host, chart);
      entry.title = chart.title;
      const caption = entry.host.parentElement?.querySelector("figcaption");
      if (caption) caption.textContent = chart.title;
    }
  }
  for (const [id, entry] of plots) {
    if (seen.has(id)) continue;
    entry.plot.destroy();
    entry.host.parentElement?.remove();
    plots.delete(id);
  }

  // In reading order: the headline figures, the scenario's own tables and what it says of them,
  // then the page's tables and its sentences on them; tables a reader rarely needs last, folded.
  const figures = must<HTMLElement>("#figures");
  figures.replaceChildren();
  if (next.figures.length > 0) {
    const body = el("tbody");
    for (const f of next.figures) body.append(el("tr", {}, el("th", { scope: "row" }, f.label), figureCell(f, true)));
    figures.append(
      el("div", { class: "scroll" }, el("table", { class: "figures" }, el("caption", {}, "Figures of this run"), body)),
    );
  }
  for (const t of next.texts ?? []) {
    const head = el("tr", {}, ...t.columns.map((c) => el("th", { scope: "col" }, c)));
    const body = el(
      "tbody",
      {},
      ...t.rows.map(([label = "", ...cells]) =>
        el("tr", {}, el("th", { scope: "row" }, label), ...cells.map((c) => el("td", {}, c))),
      ),
    );
    figures.append(
      el(
        "div",
        { class: "scroll" },
        el("table", { class: "figures text" }, el("caption", {}, t.caption), el("thead", {}, head), body),
      ),
    );
  }
  if ((next.prose ?? []).length > 0)
    figures.append(el("div", { class: "reading" }, ...(next.prose ?? []).map((p) => el("p", {}, p))));
  for (const t of next.tables) if (t.folded !== true) figures.append(figureTable(t));
  must<HTMLElement>("#notes").replaceChildren(
    ...next.notes.map((n) => el("p", {}, n)),
    ...next.tables.filter((t) => t.folded === true).map(figureTable),
  );
  snippet.value = toSnippet(scenario, next, location.hash);
}

function knobControl(knob: Knob): HTMLElement {
  const id = `knob-${knob.key}`;
  const helpId = `${id}-help`;
  const value = params[knob.key] ?? knob.value;
  const described = knob.help === undefined ? {} : { "aria-describedby": helpId };
  let input: HTMLInputElement | HTMLSelectElement;
  const label = el("label", { for: id }, knob.label);
  const row = el("div", { class: `knob knob-${knob.kind}` }, label);
  if (knob.kind === "select") {
    input = el(
      "select",
      { id, name: knob.key, ...described },
      ...knob.options.map((o) => el("option", { value: o.value }, o.label)),
    );
    input.value = String(value);
    row.append(input);
  } else {
    input = el("input", {
      id,
      name: knob.key,
      type: knob.kind,
      min: String(knob.min),
      max: String(knob.max),
      step: String(knob.step),
      value: String(value),
      ...described,
    });
    row.append(input);
    if (knob.kind === "range") {
      const shown = el("output", { for: id, id: `${id}-value` }, withUnit(String(value), knob.unit));
      input.setAttribute("aria-valuetext", shown.textContent ?? "");
      row.append(shown);
    } else if (knob.unit !== "") {
      row.append(el("span", { class: "unit" }, withUnit(String(value), knob.unit).replace(/^\S+ /, "")));
    }
  }
  if (knob.help !== undefined) row.append(el("small", { id: helpId }, knob.help));
  if (knob.when !== undefined) {
    const by = scenario.knobs.find((k) => k.key === knob.when?.key);
    const is = by === undefined ? knob.when.is : shown(by, knob.when.is);
    row.append(el("small", { class: "when" }, `Used only when ${by?.label ?? knob.when.key} is ${is}.`));
  }
  const onChange = (): void => {
    const next = coerce(knob, input.value);
    if (next === undefined) return; // a half-typed number: wait for the rest
    params[knob.key] = next;
    if (knob.kind === "range") {
      const text = withUnit(String(next), knob.unit);
      const out = row.querySelector("output");
      if (out) out.textContent = text;
      input.setAttribute("aria-valuetext", text);
    } else if (knob.kind === "number") {
      const unit = row.querySelector(".unit");
      if (unit) unit.textContent = withUnit(String(next), knob.unit).replace(/^\S+ /, "");
    }
    history.replaceState(null, "", hashFor(scenario, params));
    relevance();
    request();
  };
  input.addEventListener("input", onChange);
  input.addEventListener("change", () => {
    onChange();
    // A number typed out of range shows what was used.
    if (knob.kind === "number") input.value = String(params[knob.key]);
  });
  return row;
}

/** Disables the controls of the knobs this run does not read (a `when` that does not hold), so moving one is not a silent no-op. */
function relevance(): void {
  for (const knob of scenario.knobs) {
    if (knob.when === undefined) continue;
    const unused = params[knob.when.key] !== knob.when.is;
    const input = controls.querySelector<HTMLInputElement>(`#knob-${CSS.escape(knob.key)}`);
    if (input !== null) input.disabled = unused;
    input?.closest(".knob")?.classList.toggle("unused", unused);
  }
}

function renderControls(): void {
  const groups = new Map<string, Knob[]>();
  for (const k of scenario.knobs) groups.set(k.group, [...(groups.get(k.group) ?? []), k]);
  controls.replaceChildren(
    ...[...groups].map(([group, knobs]) => el("fieldset", {}, el("legend", {}, group), ...knobs.map(knobControl))),
    el("button", { type: "reset", id: "reset" }, "Reset to defaults"),
  );
  relevance();
}

/** Says which of the link's values the page changed, and to what; hidden when it changed none. */
function tell(changes: readonly Change[]): void {
  must<HTMLElement>("#notice-list").replaceChildren(...changes.map((c) => el("li", {}, c.said)));
  notice.hidden = changes.length === 0;
}

/** Marks the tab of `id` current: the simulator's one for any of its scenarios. */
function markTab(id: string): void {
  const tab = isSim(id) ? SIM : id;
  for (const a of nav.querySelectorAll("a")) {
    if (a.dataset.scenario === tab) a.setAttribute("aria-current", "page");
    else a.removeAttribute("aria-current");
  }
  const sim = isSim(id);
  must<HTMLElement>("#picker-row").hidden = !sim;
  if (sim) picker.value = id;
  const simTab = nav.querySelector<HTMLAnchorElement>(`a[data-scenario="${SIM}"]`);
  if (simTab !== null && sim) simTab.href = `#${id}`;
}

function select(hash: string): void {
  const { id } = parseHash(hash);
  const successor = successors[id];
  if (successor !== undefined) {
    const said = `#${id}: that tab is now ${successor === TUNER ? "the tuner" : `the simulator's ${simScenarios.find((x) => x.id === successor)?.title ?? successor}`}, shown here at its defaults (its knobs are not the old tab's).`;
    history.replaceState(null, "", `#${successor}`);
    select(`#${successor}`);
    tell([{ key: "#", given: id, said }]);
    return;
  }
  if (id === TUNER) {
    markTab(TUNER);
    layout.hidden = true;
    tuner.hidden = false;
    title.textContent = "Tuner";
    blurb.textContent =
      "Pick a scenario of the simulator and one of its runs, sweep one or two of its knobs over a grid (a whole run at each point, in a worker), and read the goodput each point gives against what it costs the backend. The points no other beats on both are the front; click one to open the scenario at it, and copy the options that reproduce it.";
    document.title = "Tuner · tideward playground";
    setBusy(false);
    tell(openTuner(parseHash(hash).query, simMetas).map((said) => ({ key: "", given: "", said })));
    return;
  }
  closeTuner();
  layout.hidden = false;
  tuner.hidden = true;
  const found = resolve(hash, scenarios, OPENING);
  const changed = found.scenario.id !== scenario.id || plots.size === 0;
  scenario = found.scenario;
  params = { ...found.params };
  tell(found.changes);
  if (location.hash !== hashFor(scenario, params)) history.replaceState(null, "", hashFor(scenario, params));
  markTab(scenario.id);
  title.textContent = scenario.title;
  blurb.textContent = scenario.blurb;
  document.title = `${scenario.title} · tideward playground`;
  if (changed) {
    for (const entry of plots.values()) entry.plot.destroy();
    plots.clear();
    results.querySelector("#charts")?.replaceChildren();
    must<HTMLElement>("#figures").replaceChildren();
    must<HTMLElement>("#notes").replaceChildren();
    snippet.value = "";
    outcome = undefined;
  }
  renderControls();
  request();
  if (fromScoreboard) {
    fromScoreboard = false;
    title.scrollIntoView({ block: "start" });
  }
}

function download(name: string, blob: Blob): void {
  const a = el("a", { href: URL.createObjectURL(blob), download: name });
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(a.href), 10_000);
}

// The tab carries its name twice, once hidden in bold (see style.css), so it is as wide selected as not.
must<HTMLButtonElement>("#notice-close").addEventListener("click", () => tell([]));
controls.addEventListener("submit", (e) => e.preventDefault());
controls.addEventListener("reset", (e) => {
  e.preventDefault();
  history.replaceState(null, "", `#${scenario.id}`);
  select(`#${scenario.id}`);
});
window.addEventListener("resize", () => refit([...plots.values()].map((p) => p.host)));

must<HTMLButtonElement>("#export-csv").addEventListener("click", () => {
  if (outcome !== undefined) download(`tideward-${scenario.id}.csv`, new Blob([toCsv(outcome)], { type: "text/csv" }));
});
must<HTMLButtonElement>("#export-png").addEventListener("click", () => {
  const items = [...plots.values()].map((p) => ({ title: p.title, host: p.host }));
  void toPng(items, `${scenario.title} — tideward playground`).then((blob) => {
    if (blob !== null) download(`tideward-${scenario.id}.png`, blob);
  });
});
must<HTMLButtonElement>("#copy-test").addEventListener("click", () => {
  const details = must<HTMLDetailsElement>("#test-details");
  details.open = true;
  const said = must<HTMLElement>("#copy-status");
  navigator.clipboard.writeText(snippet.value).then(
    () => (said.textContent = `Copied: save it as ${snippetName(scenario)} next to your tests.`),
    () => {
      snippet.select();
      said.textContent = "The clipboard is not available here: the test is selected below, copy it from there.";
    },
  );
});

/** Draws the tabs and opens the scenario the URL names, once the worker has described the simulator's catalogue. */
function start(metas: readonly SimMeta[]): void {
  simMetas = metas;
  simScenarios = metas.map(pageScenario);
  scenarios = [...simScenarios, ...pageScenarios];
  scenario = scenarios.find((s) => s.id === OPENING) ?? scenarios[0] ?? scenario;
  // The simulator's scenarios share one tab and a picker, so the row stays one line however many
  // the catalogue grows to.
  const simTabName = "Simulator scenarios";
  nav.append(
    el(
      "a",
      {
        href: `#${(simScenarios.find((s) => s.id === OPENING) ?? simScenarios[0])?.id ?? ""}`,
        "data-scenario": SIM,
        "data-tab": simTabName,
        title: "The simulator's catalogue",
      },
      simTabName,
    ),
    ...scenarios
      .filter((s) => !isSim(s.id))
      .map((s) => el("a", { href: `#${s.id}`, "data-scenario": s.id, "data-tab": s.tab, title: s.title }, s.tab)),
    el(
      "a",
      { href: `#${TUNER}`, "data-scenario": TUNER, "data-tab": "Tuner", title: "Sweep a scenario's knobs" },
      "Tuner",
    ),
  );
  picker.append(...simScenarios.map((s) => el("option", { value: s.id }, s.title)));
  picker.addEventListener("change", () => {
    location.hash = `#${picker.value}`;
  });
  window.addEventListener("hashchange", () => select(location.hash));
  select(location.hash);
}

worker.postMessage({ kind: "catalogue" });
