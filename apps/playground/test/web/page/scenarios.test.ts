// The built page in Chromium (through playwright-core), served by the global setup (setup.ts):
// every scenario of the catalogue and the page's own, one after another in one page, then each
// moved run's URL opened afresh and each copied test run. Figures are read as the page prints
// them, never from pixels; a screenshot of each scenario is left in .artefacts/screenshots.
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import type { Page } from "playwright-core";
import { describe, expect, it } from "vitest";
import { scenario as simScenario } from "@tideward/sim";
import type { ScenarioResult } from "@tideward/sim";
import { pageScenarios } from "../../../src/catalogue";
import { isSim, scenarios, simScenarios } from "../../../src/sim-catalogue";
import { lineStyle } from "../../../src/model";
import type { Outcome, Scenario } from "../../../src/model";
import { runs } from "../../../src/runs";
import { chartsOf, goodputDefined, isJob, proseOf } from "../../../src/runs/sim";
import { defaults } from "../../../src/state";
import { duration } from "../../../src/units";
import { alike, legendStyles } from "../inspect";
import { artefacts, haveChromium, runSnippets } from "../page";
import { WIDTHS, figures, inChromium, knobSelector, legends, pageUrl, settled, uncut } from "./browser";

/** The knob each of the page's own scenarios moves in its test, with the keys that move it. */
const pageMoves: Record<string, { key: string; press: string }> = {
  guard: { key: "limit.quota", press: "ArrowRight" },
};

/** The numbers in a text that carry a unit a table prints them with (`363/s`, `194 ms`, `5 s`, `12 calls`), as printed. */
function unitNumbers(text: string): string[] {
  return [...text.matchAll(/(?<![\w.])(\d[\d.]*\d|\d)(?=(\/s| ms\b| s\b| calls\b| attempts\b))/g)].map(
    (m) => m[1] ?? "",
  );
}

/** What the status line should say a run of `result` simulated: its traffic's length, or for a finite job when the slowest ended. */
function simulatedSpan(result: ScenarioResult): string {
  return isJob(result)
    ? `by ${duration(Math.max(...result.runs.map((r) => r.summary.completionTime ?? 0)))}`
    : `of ${duration(result.runs[0]?.duration ?? 0)} of traffic`;
}

/**
 * The knob a scenario's test moves: for one of the simulator's, whichever its catalogue lists,
 * its first slider after the seed (so a scenario added there is tested with no change here).
 */
function moveOf(s: Scenario): { key: string; press: string } {
  const own = pageMoves[s.id];
  if (own !== undefined) return own;
  const knob = s.knobs.find((k) => k.kind === "range" && k.key !== "seed");
  if (knob === undefined) throw new Error(`${s.id} has no slider to move`);
  return { key: knob.key, press: "ArrowRight" };
}

/** A count of one in the plural ("1 calls"). */
const onePlural =
  /(?<![\d.,])1 (calls|clients|workers|keys|tokens|requests|bursts|runs|attempts|failures|buckets|users|retries|points)\b/;

describe.runIf(haveChromium())("every scenario in Chromium", () => {
  const chromium = inChromium();

  /** Each scenario's moved run (its URL, figures and copied test): the first test writes it, the two after it read it. */
  const moved: Record<string, { hash: string; figures: Record<string, string>; snippet: string }> = {};

  /** Every chart's series drawn apart: no two alike in colour, each marker drawn as its line is. */
  async function legible(page: Page, what: string, charts: Outcome["charts"]): Promise<void> {
    const drawn = await legendStyles(page);
    expect(drawn.map((c) => c.chart).sort(), what).toEqual(charts.map((c) => c.id).sort());
    for (const chart of drawn) {
      expect(alike(chart.series), `${what}: ${chart.chart}`).toEqual([]);
      const model = charts.find((c) => c.id === chart.chart);
      for (const entry of chart.series) {
        const s = model?.series.find((x) => x.label === entry.label);
        if (s === undefined)
          throw new Error(`${what}: ${chart.chart} draws ${entry.label}, which the run does not have`);
        const style = lineStyle(s);
        expect(entry.dash, `${what}: ${chart.chart} / ${entry.label}`).toBe(style === "short" ? "dotted" : style);
      }
    }
  }

  /** Each chart's x axis as drawn spans `from` to `to` seconds at least. */
  async function spans(page: Page, what: string, from: number, to: number): Promise<void> {
    const axes = await page.$$eval(".plot", (hosts) =>
      hosts.map((h) => [h.getAttribute("data-chart") ?? "", Number(h.dataset.xMin), Number(h.dataset.xMax)] as const),
    );
    for (const [chart, lo, hi] of axes) {
      expect(lo, `${what}: ${chart} starts by ${from} s`).toBeLessThanOrEqual(from);
      expect(hi, `${what}: ${chart} covers the run to ${to} s`).toBeGreaterThanOrEqual(to);
    }
  }

  /**
   * A simulator scenario's own sentences and the page's sentence on its table: figures as the
   * tables print them, on the same seed; a tie within the printed precision called a tie; goodput
   * named only where it is defined; a peak never under the mean.
   */
  async function figuresAgree(page: Page, id: string, result: ScenarioResult): Promise<void> {
    const shown = await figures(page);
    // The scenario's prose, as paragraphs, with every figure that carries a unit one its tables print.
    const prose = await page.locator("#figures .reading p").allTextContents();
    expect(prose, id).toEqual(proseOf(result));
    const printed = result.tables.flatMap((t) => [t.title, ...t.columns, ...t.rows.flat().map(String)]).join(" | ");
    for (const n of prose.flatMap(unitNumbers))
      expect(printed, `${id}: ${n} in the scenario's sentences is in its tables`).toMatch(
        new RegExp(`(?<![\\d.])${n.replace(".", "\\.")}(?![\\d])`),
      );
    // The summary table says whose seed it is, and the page's sentence on it quotes its cells.
    const summary = page.locator("table", { has: page.locator('[data-figure="run0.backendLoad"]') });
    expect(await summary.locator("caption").textContent(), id).toContain(`on seed ${String(result.params["seed"])}`);
    const notes = (await page.locator("#notes > p").allTextContents()).join(" ");
    const defined = goodputDefined(result);
    const rate = defined ? "goodputRate" : "admittedRate";
    const cells = new Set(
      Object.entries(shown)
        .filter(([k]) => k.endsWith(`.${rate}`) || k.endsWith(".backendLoad") || k.endsWith(".admitted"))
        .map(([, v]) => v),
    );
    for (const [, n] of notes.matchAll(/(\d+(?:\.\d+)?) (?:%|attempts)/g))
      expect([...cells], `${id}: ${n} in "${notes}" is in the summary table`).toContain(n);
    // A tie at the printed precision is a tie, never a win by order.
    const printedRates = result.runs.map((r) => shown[`run${result.runs.indexOf(r)}.${rate}`]);
    const top = Math.max(...printedRates.map(Number));
    const atTop = printedRates.filter((v) => Number(v) === top).length;
    if (defined) {
      if (atTop > 1) expect(notes, id).toContain(`a tie at ${top.toFixed(1)} %`);
      else expect(notes, id).toMatch(/most goodput, /);
    } else {
      // A limiter's admissions against its bound are not goodput: not a word of it from the page.
      const pageText = [
        ...(await page.locator("figcaption").allTextContents()),
        ...(await summary.locator("th").allTextContents()),
        notes,
      ].join(" ");
      expect(pageText, id).not.toMatch(/goodput|most /i);
    }
    // A peak is never below the mean it is the peak of.
    result.runs.forEach((_, i) => {
      const mean = shown[`run${i}.meanBackendLoad`];
      const peak = shown[`run${i}.peakBackendLoad`];
      if (isJob(result)) expect([mean, peak], `${id}: a job has no rate over time`).toEqual([undefined, undefined]);
      else expect(Number(peak), `${id}: run ${i}'s peak against its mean`).toBeGreaterThanOrEqual(Number(mean));
    });
  }

  /** Opens `hash` in the page already open (a hash change, as a tab or the picker makes), and waits for its answer. */
  async function go(page: Page, hash: string, title: string): Promise<void> {
    await page.evaluate((h) => (location.hash = h), hash);
    await page.waitForFunction(
      (t) => document.querySelector("h2#title")?.textContent === t && document.body.dataset.busy === "false",
      title,
      { timeout: 60_000 },
    );
  }

  it(
    `every scenario, the simulator's catalogue (${simScenarios.length}) and the page's own (${pageScenarios.length}), one after another in one page at ${WIDTHS.join(" and ")} px: no console errors, nothing cut, labelled controls, legends that tell every series apart, figures that agree, a screenshot; moving a knob from the keyboard changes the figures, and the URL says so`,
    { timeout: 300_000 },
    async () => {
      const page = await chromium.open(`#${scenarios[0]?.id ?? ""}`, WIDTHS[0]);
      for (const scenario of scenarios) {
        const id = scenario.id;
        await go(page, `#${id}`, scenario.title);
        const result = isSim(id) ? simScenario(id)?.run({}, { start: 0 }) : undefined;
        const outcome = result === undefined ? runs[id]?.(defaults(scenario)) : undefined;
        // What the status line says was simulated is the run's length (or, for a job, when it ended).
        const span =
          result !== undefined
            ? simulatedSpan(result)
            : `of ${duration(["ramp", "hold", "after"].reduce((t, k) => t + Number(defaults(scenario)[k]) * 1_000, 0))} of traffic`;
        const status = (await page.locator("#status").textContent()) ?? "";
        expect(status, id).toMatch(/^Simulated .* in \d+ ms, in a worker\.$/);
        expect(status, id).toContain(span);
        // A scenario of the simulator is chosen in the picker, under the one tab they share.
        expect(await page.locator("nav a[aria-current=page]").textContent(), id).toBe(
          isSim(id) ? "Simulator scenarios" : scenario.tab,
        );
        if (isSim(id)) expect(await page.locator("#picker").inputValue()).toBe(id);
        // Every knob has a control with a label naming it, reachable from the keyboard.
        for (const knob of scenario.knobs) {
          const control = page.locator(knobSelector(knob.key));
          expect(await control.count(), `${id}: ${knob.key}`).toBe(1);
          expect(await page.locator(`label[for="knob-${knob.key}"]`).textContent()).toBe(knob.label);
          expect(await control.getAttribute("tabindex")).not.toBe("-1");
        }
        const shown = await figures(page);
        expect(Object.keys(shown).length, id).toBeGreaterThan(0);
        for (const [fid, text] of Object.entries(shown))
          expect(text, `${id}: ${fid}`).toMatch(/^-?\d+(\.\d+)?( \S.*)?$/);
        // Charts over time, unless the run is one bucket (a finite job measured whole).
        const overTime = result === undefined || !isJob(result);
        expect((await page.locator("canvas").count()) > 0, id).toBe(overTime);
        // Untouched, each chart's legend names its series, with no "--" for a value not yet hovered.
        for (const legend of await legends(page)) {
          expect(legend.text, `${id}: ${legend.chart}`).not.toContain("--");
          expect(legend.shown, `${id}: ${legend.chart}`).toEqual(legend.labels);
        }
        await legible(page, id, result === undefined ? (outcome?.charts ?? []) : chartsOf(result));
        if (result !== undefined) {
          // Rendered from the result alone: every one of the scenario's tables, as it printed them.
          const tables = await page.$$eval("table.text", (ts) =>
            ts.map((t) => [...t.querySelectorAll("tbody tr")].map((r) => [...r.children].map((c) => c.textContent))),
          );
          expect(tables, id).toEqual(result.tables.map((t) => t.rows.map((r) => r.map(String))));
          // Goodput (or, for a limiter, admissions) per second of every run, and backend load
          // against the capacity when the scenario states one.
          const charts = await legends(page);
          if (overTime)
            expect(
              charts.find((c) => c.chart === (goodputDefined(result) ? "goodput" : "admitted"))?.labels,
              id,
            ).toEqual(result.runs.map((r) => r.label));
          const backend = charts.find((c) => c.chart === "backend");
          if (result.figures.capacity !== undefined) expect(backend?.labels, id).toContain("capacity");
          if (overTime) await spans(page, id, 0, (result.runs[0]?.duration ?? 0) / 1_000);
          // Fine enough to show what happens: a chart over time has at least 20 points (three
          // quotas on bursty traffic drew 4, one a burst, each burst a flat line).
          if (overTime)
            for (const chart of chartsOf(result))
              expect(chart.x.values.length, `${id}: ${chart.id}`).toBeGreaterThanOrEqual(20);
          await figuresAgree(page, id, result);
        }
        // Counts of one read in the singular, everywhere on the page ("1 call", never "1 calls").
        expect(await page.locator("main").innerText(), id).not.toMatch(onePlural);
        await uncut(page, id);
        mkdirSync(join(artefacts, "screenshots"), { recursive: true });
        await page.screenshot({ path: join(artefacts, "screenshots", `${id}.png`), fullPage: true });
        // A knob moved from the keyboard: other figures, and a URL that says so.
        const move = moveOf(scenario);
        const control = page.locator(knobSelector(move.key));
        await control.focus();
        for (let i = 0; i < 3; i++) await control.press(move.press);
        await page.waitForFunction(() => document.body.dataset.busy === "false");
        const after = await figures(page);
        expect(after, `${id}: moving ${move.key} changes a figure`).not.toEqual(shown);
        const hash = await page.evaluate(() => location.hash);
        expect(hash).toMatch(new RegExp(`^#${id}\\?(.*&)?${move.key.replace(".", "\\.")}=`));
        moved[id] = { hash, figures: after, snippet: await page.locator("#snippet").inputValue() };
      }
      await page.close();
      expect(chromium.errors).toEqual([]);
    },
  );

  it(
    "every scenario: opening the URL of a moved run (a fresh load) shows the same figures and the moved control",
    { timeout: 180_000 },
    async () => {
      const page = await chromium.open("#guard");
      for (const scenario of scenarios) {
        const run = moved[scenario.id];
        if (run === undefined) throw new Error(`the knob test of ${scenario.id} did not run`);
        await page.goto("about:blank");
        await page.goto(`${pageUrl()}${run.hash}`);
        await settled(page);
        expect(await figures(page), scenario.id).toEqual(run.figures);
        const move = moveOf(scenario);
        expect(await page.locator(knobSelector(move.key)).inputValue()).toBe(
          new URLSearchParams(run.hash.split("?")[1]).get(move.key),
        );
      }
      await page.close();
      expect(chromium.errors).toEqual([]);
    },
  );

  it(
    "copy as test: each scenario's test, as the page wrote it, passes in a vitest of its own",
    { timeout: 120_000 },
    () => {
      const files = Object.entries(moved).map(([id, run]) => ({ name: `${id}.page.test.ts`, code: run.snippet }));
      expect(files).toHaveLength(scenarios.length);
      for (const f of files) expect(f.code).toContain('from "@tideward/sim"');
      const result = runSnippets("page-snippets", files);
      expect(result.failed, result.output).toBe(0);
      expect(result.passed, result.output).toBe(files.length);
    },
  );
});
