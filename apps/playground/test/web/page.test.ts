// The built page in a real browser (Debian's Chromium through playwright-core), served on a free
// loopback port by this test and stopped after it. Figures are read as the page prints them,
// never from pixels; a screenshot of each scenario is left in .artefacts/screenshots.
import { mkdirSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { runInNewContext } from "node:vm";
import { gzipSync } from "node:zlib";
import { chromium } from "playwright-core";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { scenario as simScenario } from "@tideward/sim";
import type { ScenarioResult } from "@tideward/sim";
import { pageScenarios } from "../../src/catalogue";
import { scenarios } from "../../src/sim-catalogue";
import { lineStyle } from "../../src/model";
import type { Knob, Outcome, Scenario } from "../../src/model";
import { runs } from "../../src/runs";
import { chartsOf, goodputDefined, isJob, proseOf, simOutcome } from "../../src/runs/sim";
import { defaults, shown } from "../../src/state";
import { isSim, simScenarios } from "../../src/sim-catalogue";
import { duration } from "../../src/units";
import { serve } from "../../scripts/serve";
import type { Served } from "../../scripts/serve";
import type { ClaimsData } from "../../src/claims/data";
import { all, best, range, tally, tallyText, verdictOf } from "../../src/claims/stats";
import { linkOf, rowsOf } from "../../src/scoreboard";
import { alike, legendStyles, overflowing } from "./inspect";
import { artefacts, buildPage, chromiumArgs, chromiumPath, haveChromium, runSnippets } from "./page";

/** The gzipped JavaScript the page may load, in bytes: main script and worker together. */
const BUDGET = 150 * 1024;

/** The knob each of the page's own scenarios moves in its test, with the keys that move it. */
const pageMoves: Record<string, { key: string; press: string }> = {
  guard: { key: "limit.quota", press: "ArrowRight" },
};

/** The widths every scenario and tab is read at: a wide screen and a narrow laptop's. */
const WIDTHS = [1400, 1000] as const;

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

/** The fields of one CSV line, unquoted. */
function csvFields(line: string): string[] {
  return [...line.matchAll(/(?:^|,)(?:"((?:[^"]|"")*)"|([^,]*))/g)].map(
    (m) => m[1]?.replaceAll('""', '"') ?? m[2] ?? "",
  );
}

/** A count of one in the plural ("1 calls"). */
const onePlural =
  /(?<![\d.,])1 (calls|clients|workers|keys|tokens|requests|bursts|runs|attempts|failures|buckets|users|retries|points)\b/;

/** The CSS selector of a knob's control: its id, with the dots of a grouped key (`shed.cpu`) escaped. */
const knobSelector = (key: string): string => `#knob-${key.replaceAll(".", "\\.")}`;

let dist: string;
let served: Served | undefined;
let browser: Browser | undefined;

beforeAll(async () => {
  dist = await buildPage();
  served = await serve(dist, 0);
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await served?.close();
});

describe("the built page", () => {
  it(`loads at most ${BUDGET / 1024} KB of gzipped JavaScript, from its own origin only`, () => {
    const assets = join(dist, "assets");
    const js = readdirSync(assets).filter((f) => f.endsWith(".js"));
    expect(js.length).toBeGreaterThanOrEqual(2); // the page and its worker
    const gzipped = js.reduce((sum, f) => sum + gzipSync(readFileSync(join(assets, f)), { level: 9 }).length, 0);
    expect(gzipped).toBeLessThan(BUDGET);
    // Works offline: nothing in the page or its scripts is fetched from elsewhere.
    const html = readFileSync(join(dist, "index.html"), "utf8");
    expect(html).not.toMatch(/(src|href)="(https?:)?\/\//);
  });

  it("serves the page on loopback", async () => {
    const res = await fetch(served?.url ?? "");
    expect(res.status).toBe(200);
    expect(await res.text()).toContain("<title>tideward playground</title>");
  });
});

describe.runIf(haveChromium())("the page in Chromium", () => {
  /** Console errors and uncaught exceptions of the page open in the current test. */
  let errors: string[] = [];

  beforeAll(async () => {
    browser = await chromium.launch({ executablePath: chromiumPath, args: chromiumArgs, headless: true });
  }, 60_000);

  async function open(hash: string, width = 1280): Promise<Page> {
    if (browser === undefined || served === undefined) throw new Error("no browser or server");
    errors = [];
    const page = await browser.newPage({ viewport: { width, height: 900 } });
    page.on("console", (m) => {
      if (m.type() === "error") errors.push(`${hash}: ${m.text()}`);
    });
    page.on("pageerror", (e) => errors.push(`${hash}: ${e.message}`));
    await page.goto(`${served.url}${hash}`);
    await settled(page);
    return page;
  }

  /** Waits until the page has drawn the answer to its latest request. */
  async function settled(page: Page): Promise<void> {
    await page.waitForSelector("body[data-busy=false]", { timeout: 30_000 });
  }

  /** Each chart's legend: its text, the series names it shows, and the names it should (every series but the x axis). */
  async function legends(page: Page): Promise<{ chart: string; text: string; shown: string[]; labels: string[] }[]> {
    return page.$$eval(".chart", (charts) =>
      charts.map((c) => {
        const rows = [...c.querySelectorAll<HTMLElement>(".u-legend .u-series")];
        const visible = (e: HTMLElement): boolean => e.offsetParent !== null && e.offsetWidth > 0;
        return {
          chart: c.getAttribute("data-chart-figure") ?? "",
          text: rows
            .filter(visible)
            .map((r) => r.innerText)
            .join(" | "),
          shown: rows.filter(visible).map((r) => r.querySelector(".u-label")?.textContent ?? ""),
          labels: rows.slice(1).map((r) => r.querySelector(".u-label")?.textContent ?? ""),
        };
      }),
    );
  }

  /** The figures the page shows, by id, as printed. */
  async function figures(page: Page): Promise<Record<string, string>> {
    const pairs = await page.$$eval("[data-figure]", (cells) =>
      cells.map((c) => [(c as HTMLElement).dataset.figure ?? "", c.textContent ?? ""] as const),
    );
    return Object.fromEntries(pairs);
  }

  const moved: Record<string, { hash: string; figures: Record<string, string>; snippet: string }> = {};

  /** Nothing cut at the right edge, at each of {@link WIDTHS}; the page is left at the first. */
  async function uncut(page: Page, what: string): Promise<void> {
    for (const width of [...WIDTHS.slice(1), WIDTHS[0]]) {
      await page.setViewportSize({ width, height: 900 });
      // The charts refit on the resize event; a frame later the layout is settled.
      await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
      expect(await overflowing(page), `${what} at ${width} px`).toEqual([]);
    }
  }

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
      const page = await open(`#${scenarios[0]?.id ?? ""}`, WIDTHS[0]);
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
      expect(errors).toEqual([]);
    },
  );

  it("legends name the series until the cursor is on a plot, then show the values under it, then the names again", async () => {
    const page = await open("#breaker-outage");
    const legend = page.locator('[data-chart-figure="goodput"] .u-legend');
    const over = page.locator('[data-chart-figure="goodput"] .u-over');
    const box = await over.boundingBox();
    if (box === null) throw new Error("no plot area");
    // Halfway along the run: the x value is a time near its middle, each series a number of calls/s.
    await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
    const hovered = await legend
      .locator(".u-series")
      .evaluateAll((rows) =>
        rows.map((r) => [
          r.querySelector(".u-label")?.textContent ?? "",
          r.querySelector(".u-value")?.textContent ?? "",
        ]),
      );
    const result = simScenario("breaker-outage")?.run({}, { start: 0 });
    const labels = result?.runs.map((r) => r.label) ?? [];
    expect(labels.length).toBeGreaterThan(1);
    expect(hovered.map(([label]) => label)).toEqual(["time (s)", ...labels]);
    const half = (result?.runs[0]?.duration ?? 0) / 2_000;
    expect(Math.abs(Number(hovered[0]?.[1]) - half)).toBeLessThan(3);
    for (const [label, value] of hovered.slice(1)) expect(value, label).toMatch(/^\d+(\.\d+)?$/);
    await page.mouse.move(box.x + box.width / 2, box.y + box.height + 200);
    expect((await legends(page)).find((l) => l.chart === "goodput")).toMatchObject({ shown: labels });
    expect(await legend.innerText()).not.toContain("--");
    expect(await legend.locator(".u-value:visible").count()).toBe(0);
    // A count of one, singular; of two, plural (the classic breaker's threshold, 5 calls, down to 1).
    const threshold = page.locator(knobSelector("threshold"));
    expect(await page.locator("#knob-threshold-value").textContent()).toBe("5 calls");
    await threshold.focus();
    for (let i = 0; i < 4; i++) await threshold.press("ArrowLeft");
    expect(await page.locator("#knob-threshold-value").textContent()).toBe("1 call");
    await threshold.press("ArrowRight");
    expect(await page.locator("#knob-threshold-value").textContent()).toBe("2 calls");
    await page.close();
    expect(errors).toEqual([]);
  });

  it("says which of a link's values it changed and to what, which scenario it showed for one it does not have, and where an old tab went", async () => {
    const outage = scenarios.find((x) => x.id === "breaker-outage");
    const knob = (key: string): Knob => {
      const k = outage?.knobs.find((x) => x.key === key);
      if (k === undefined || k.kind === "select") throw new Error(`breaker-outage has no numeric knob ${key}`);
      return k;
    };
    const [rate, duration, latency, baseRate] = [knob("rate"), knob("duration"), knob("latency"), knob("baseRate")];
    if (rate.kind === "select" || duration.kind === "select" || baseRate.kind === "select")
      throw new Error("not numbers");
    // Values that make a light run (the fewest calls for the shortest time), so the test waits for little.
    const page = await open("#breaker-outage?rate=1&duration=1&latency=abc&baseRate=0.9&nonsense=1");
    const notice = page.locator("#notice");
    expect(await notice.isVisible()).toBe(true);
    expect(await notice.locator("li").allTextContents()).toEqual([
      `${rate.label} (rate=1): below the least it goes to, so ${shown(rate, rate.min)} is used.`,
      `${duration.label} (duration=1): below the least it goes to, so ${shown(duration, duration.min)} is used.`,
      `${baseRate.label} (baseRate=0.9): above the most it goes to, so ${shown(baseRate, baseRate.max)} is used.`,
      `${latency.label} (latency=abc): not a number, so the default, ${shown(latency, latency.value)}, is used.`,
      `nonsense=1: ${outage?.title ?? ""} has no such knob, so it is ignored.`,
    ]);
    // The controls and the URL hold what is used; a value used as written stays.
    expect(await page.locator("#knob-rate-value").textContent()).toBe(shown(rate, rate.min));
    expect(await page.locator("#knob-latency-value").textContent()).toBe(shown(latency, latency.value));
    expect(await page.evaluate(() => location.hash)).toBe(
      `#breaker-outage?rate=${rate.min}&duration=${duration.min}&baseRate=${baseRate.max}`,
    );
    await page.click("#notice-close");
    expect(await notice.isVisible()).toBe(false);
    // A scenario the page does not have: the one it opens on, and a notice saying so.
    const opening = scenarios.find((x) => x.id === "metastable-overload");
    await page.evaluate(() => (location.hash = "#nope"));
    await page.waitForFunction((id) => location.hash === `#${id}`, opening?.id);
    expect(await notice.locator("li").allTextContents()).toEqual([
      `#nope: there is no such scenario, so ${opening?.title ?? ""} is shown.`,
    ]);
    expect(await page.locator("nav a[aria-current=page]").textContent()).toBe("Simulator scenarios");
    // A tab the page had before the catalogue replaced it: its successor, saying so.
    await page.evaluate(() => (location.hash = "#shedder?peak=700"));
    await page.waitForFunction(() => location.hash === "#shedder-ramp");
    expect(await notice.locator("li").allTextContents()).toEqual([
      `#shedder: that tab is now the simulator's ${scenarios.find((x) => x.id === "shedder-ramp")?.title ?? ""}, shown here at its defaults (its knobs are not the old tab's).`,
    ]);
    // The tabs that repeated the catalogue's scenarios are those scenarios now: one place for each.
    for (const [old, now] of [
      ["burst", "quota-bursts"],
      ["quota", "quota-atomic"],
    ] as const) {
      await page.evaluate((h) => (location.hash = h), `#${old}?calls=45`);
      await page.waitForFunction((h) => location.hash === h, `#${now}`);
      expect(await notice.locator("li").allTextContents()).toEqual([
        `#${old}: that tab is now the simulator's ${scenarios.find((x) => x.id === now)?.title ?? ""}, shown here at its defaults (its knobs are not the old tab's).`,
      ]);
    }
    // Choosing a tab is a link the page can read whole: the notice goes.
    await page.click('nav a[data-scenario="guard"]');
    await page.waitForFunction(() => location.hash === "#guard");
    expect(await notice.isVisible()).toBe(false);
    await page.close();
    expect(errors).toEqual([]);
  });

  it(
    "keeps the tab row where it is whichever tab or scenario is selected, wide or narrow",
    { timeout: 60_000 },
    async () => {
      // The runs each click starts are not waited for: the tab row is laid out as the hash changes.
      const page = await open("#guard");
      const tabs = await page.$$eval("nav a", (as) => as.map((a) => a.getAttribute("data-scenario") ?? ""));
      expect(tabs).toEqual(["sim", ...pageScenarios.map((s) => s.id), "tuner"]);
      for (const width of [1280, 700, 380]) {
        await page.setViewportSize({ width, height: 900 });
        const boxes: string[] = [];
        const row = async (): Promise<string> =>
          (
            await page.$$eval("nav a", (as) =>
              as.map((a) => {
                const r = a.getBoundingClientRect();
                return [r.x, r.y, r.width, r.height].map((v) => v.toFixed(1)).join(",");
              }),
            )
          ).join(" ");
        for (const tab of tabs) {
          await page.click(`nav a[data-scenario="${tab}"]`);
          await page.waitForSelector(`nav a[data-scenario="${tab}"][aria-current=page]`);
          boxes.push(await row());
        }
        // The simulator's scenarios, chosen in the picker, leave the row as it is too.
        for (const s of simScenarios.slice(0, 3)) {
          await page.click('nav a[data-scenario="sim"]');
          await page.locator("#picker").selectOption(s.id);
          await page.waitForFunction((id) => location.hash.startsWith(`#${id}`), s.id);
          boxes.push(await row());
        }
        expect(new Set(boxes).size, `at ${width} px: ${boxes.join("\n")}`).toBe(1);
        // Wide, and at a tablet's width, the tabs fit on one row; the picker is on screen at every width.
        if (width >= 700) expect(new Set(boxes[0]?.split(" ").map((b) => b.split(",")[1])).size).toBe(1);
        const picker = await page.locator("#picker").boundingBox();
        expect(picker, `at ${width} px`).not.toBeNull();
        expect((picker?.x ?? 0) + (picker?.width ?? 0), `at ${width} px`).toBeLessThanOrEqual(width);
      }
      await page.close();
      expect(errors).toEqual([]);
    },
  );

  it(
    "guard: the table under the plot compares the three runs; a tighter per-key limit and another limiter kind change what it shows, and their URL reproduces it",
    { timeout: 60_000 },
    async () => {
      const page = await open("#guard");
      const before = await figures(page);
      const table = page.locator("table", { has: page.locator('[data-figure="guarded.topShare"]') });
      expect(await table.locator("thead th").allTextContents()).toEqual([
        "",
        "guard",
        "guard without the per-key limit",
        "no policy",
      ]);
      const rows = await table.locator("tbody th").allTextContents();
      expect(rows).toContain("the heaviest key's share of admissions (%)");
      expect(rows).toContain("latency p99 (ms)");
      expect(await table.locator("caption").textContent()).toMatch(/4 workers, 16 ms a call: 250 calls\/s/);
      // At the defaults the guard refuses by each reason, and the limit holds the heaviest key below its share.
      for (const reason of ["shed", "gate", "rate"])
        expect(Number(before[`guarded.${reason}`]), reason).toBeGreaterThan(0);
      expect(Number(before["guarded.topShare"])).toBeLessThan(Number(before["unlimited.topShare"]));
      expect(Number(before["guarded.p99"])).toBeLessThan(Number(before["unprotected.p99"]));
      // Per-key quota 20 → 10, from the keyboard.
      const quota = page.locator(knobSelector("limit.quota"));
      await quota.focus();
      for (let i = 0; i < 10; i++) await quota.press("ArrowLeft");
      await settled(page);
      const tighter = await figures(page);
      expect(Number(tighter["guarded.rate"])).toBeGreaterThan(Number(before["guarded.rate"]));
      expect(Number(tighter["guarded.topShare"])).toBeLessThan(Number(before["guarded.topShare"]));
      // The runs without the limit are untouched by it.
      expect(tighter["unlimited.admitted"]).toBe(before["unlimited.admitted"]);
      expect(tighter["unprotected.p99"]).toBe(before["unprotected.p99"]);
      await page.locator(knobSelector("limit.kind")).selectOption("sliding");
      await settled(page);
      const sliding = await figures(page);
      expect(sliding["guarded.rate"]).not.toBe(tighter["guarded.rate"]);
      const hash = await page.evaluate(() => location.hash);
      expect(hash.split("?")[0]).toBe("#guard");
      expect(Object.fromEntries(new URLSearchParams(hash.split("?")[1]))).toEqual({
        "limit.quota": "10",
        "limit.kind": "sliding",
      });
      await page.close();
      const again = await open(hash);
      expect(await figures(again)).toEqual(sliding);
      expect(await again.locator(knobSelector("limit.kind")).inputValue()).toBe("sliding");
      await again.close();
      expect(errors).toEqual([]);
    },
  );

  it(
    "exports the run as CSV (every plotted point and figure) and the charts as one PNG",
    { timeout: 60_000 },
    async () => {
      const page = await open("#quota-bursts");
      const save = async (button: string): Promise<Buffer> => {
        const [download] = await Promise.all([page.waitForEvent("download"), page.click(button)]);
        const path = join(artefacts, "downloads", download.suggestedFilename());
        await download.saveAs(path);
        return readFileSync(path);
      };
      const csv = (await save("#export-csv")).toString("utf8").trimEnd().split("\n");
      expect(csv[0]).toBe("chart,series,x,value");
      // The figure rows carry the values the page shows, in its order.
      const shown = await page.$$eval("[data-figure]", (cells) =>
        cells.map((c) => Number((c as HTMLElement).dataset.value)),
      );
      const figureRows = csv.filter((r) => r.startsWith("figure,"));
      expect(figureRows.map((r) => Number(r.split(",").at(-1)))).toEqual(shown);
      // Each names its run: the period let through all 160 of the calls offered.
      expect(figureRows.filter((r) => r.startsWith("figure,period: calls admitted"))).toEqual([
        "figure,period: calls admitted (calls),,160",
      ]);
      // Every plotted point: each series of each chart over the chart's x values.
      const outcome = simOutcome("quota-bursts", {});
      const points = csv.length - 1 - figureRows.length;
      expect(points).toBe(outcome.charts.reduce((n, c) => n + c.series.length * c.x.values.length, 0));
      // Each burst drawn as the spike it is, to the run's last call (7.03 s): for every limiter the
      // busiest point of admissions is many times its mean, and the points run past that call.
      const admitted = new Map<string, { x: number; v: number }[]>();
      for (const [chart, series, x, v] of csv.slice(1).map(csvFields))
        if (chart?.startsWith("Calls admitted") === true)
          admitted.set(series ?? "", [...(admitted.get(series ?? "") ?? []), { x: Number(x), v: Number(v) }]);
      expect([...admitted.keys()]).toEqual(["bucket", "sliding window", "period"]);
      for (const [series, pts] of admitted) {
        const mean = pts.reduce((a, p) => a + p.v, 0) / pts.length;
        expect(Math.max(...pts.map((p) => p.v)), series).toBeGreaterThan(5 * mean);
        expect(Math.max(...pts.map((p) => p.x)), series).toBeGreaterThan(7.03);
      }

      const png = await save("#export-png");
      expect(png.subarray(0, 8).toString("hex")).toBe("89504e470d0a1a0a");
      const width = png.readUInt32BE(16);
      const height = png.readUInt32BE(20);
      const canvas = await page.$eval(".plot canvas", (c) => ({
        width: (c as HTMLCanvasElement).width,
        height: (c as HTMLCanvasElement).height,
      }));
      expect(width).toBe(canvas.width);
      expect(height).toBeGreaterThan(canvas.height);
      await page.close();
      expect(errors).toEqual([]);
    },
  );

  it(
    "token budgets: the scenario's plots in tokens lead the charts, each way named in their legends against the model's budget line, the axes in their units and an overrun below 0 in view, every point the simulator's, the deepest the table's worst overrun, and the scenario's table first",
    { timeout: 90_000 },
    async () => {
      const result = simScenario("token-budget")?.run({}, { start: 0 });
      const plots = result?.plots ?? [];
      if (result === undefined || plots.length === 0) throw new Error("token-budget plots nothing");
      const page = await open("#token-budget", WIDTHS[0]);
      const ways = result.runs.map((r) => r.label);
      const byId = (id: string) => {
        const p = plots.find((x) => x.id === id);
        if (p === undefined) throw new Error(`token-budget has no plot ${id}`);
        return p;
      };
      // Tokens served against the model's budget, then the budgets' levels, before the calls.
      const order = await page.$$eval(".chart", (cs) => cs.map((c) => c.getAttribute("data-chart-figure") ?? ""));
      expect(order.slice(0, 4)).toEqual(["plot-tokens", "plot-model-budget", "plot-tenant-budgets", "plot-overrun"]);
      expect(order.slice(4)).toEqual(
        chartsOf(result)
          .slice(4)
          .map((c) => c.id),
      );
      const drawn = await legends(page);
      for (const p of plots) {
        const id = `plot-${p.id}`;
        // The legend names each way, then the level it is read against.
        expect(drawn.find((l) => l.chart === id)?.shown, id).toEqual([...ways, ...(p.marks ?? []).map((m) => m.label)]);
        expect(await page.locator(`[data-chart-figure="${id}"] figcaption`).textContent(), id).toBe(p.title);
        const host = page.locator(`[data-chart="${id}"]`);
        expect(await host.getAttribute("data-x-label"), id).toBe("time (s)");
        expect(await host.getAttribute("data-y-label"), id).toBe(p.unit);
        // The y axis holds every point and level: from 0, or from below it where a budget was overrun.
        const values = [...p.runs.flat(), ...(p.marks ?? []).map((m) => m.value)].filter((v) => v !== null);
        expect(Number(await host.getAttribute("data-y-min")), id).toBeLessThanOrEqual(Math.min(0, ...values));
        expect(Number(await host.getAttribute("data-y-max")), id).toBeGreaterThanOrEqual(Math.max(...values));
      }
      // The axis makes room for its widest tick label (420,000 tokens), so its label covers none:
      // the budget's plot area starts further right than the calls'.
      const left = (id: string) =>
        page.locator(`[data-chart-figure="${id}"] .u-over`).evaluate((e) => e.getBoundingClientRect().left);
      expect(await left("plot-model-budget")).toBeGreaterThan(await left("admitted"));
      expect(byId("tokens").unit).toBe("tokens/s");
      expect(byId("model-budget").unit).toBe("tokens");
      // Charging after the response overran a tenant's budget: its axis goes below 0.
      const tenants = page.locator('[data-chart="plot-tenant-budgets"]');
      expect(Number(await tenants.getAttribute("data-y-min"))).toBeLessThan(0);

      // Every point the page plots, as its CSV gives it, is the simulator's; the budget line is the
      // model's rate at every second.
      const [download] = await Promise.all([page.waitForEvent("download"), page.click("#export-csv")]);
      const path = join(artefacts, "downloads", "token-budget.csv");
      await download.saveAs(path);
      const lines = new Map<string, number[]>();
      for (const [chart, series, , v] of readFileSync(path, "utf8").trimEnd().split("\n").slice(1).map(csvFields))
        if (chart !== "figure")
          lines.set(`${chart} / ${series}`, [...(lines.get(`${chart} / ${series}`) ?? []), Number(v)]);
      const line = (id: string, label: string) => lines.get(`${byId(id).title} / ${label}`) ?? [];
      for (const p of plots) {
        // The same run in Chromium's engine: a level reached by another path of floating-point
        // arithmetic (a response's time drawn through Math.exp) may differ in its last digit.
        result.runs.forEach((r, i) => {
          const drawnLine = line(p.id, r.label);
          expect(drawnLine, `${p.id} / ${r.label}`).toHaveLength(p.runs[i]?.length ?? -1);
          p.runs[i]?.forEach((v, j) =>
            expect(Math.abs((drawnLine[j] ?? NaN) - (v ?? NaN)), `${p.id} / ${r.label} at ${j} s`).toBeLessThanOrEqual(
              1e-9 * Math.max(1, Math.abs(v ?? 0)),
            ),
          );
        });
        for (const m of p.marks ?? [])
          expect(new Set(line(p.id, m.label)), `${p.id} / ${m.label}`).toEqual(new Set([m.value]));
      }
      const budget = byId("tokens").marks?.[0];
      expect(budget?.value).toBe(result.params.modelTokens);
      expect(line("tokens", budget?.label ?? "")).toHaveLength(result.runs[0]?.series.t.length ?? -1);

      // What the charts show is what the scenario's table prints: each way's worst overrun of any
      // budget (in max_tokens) is the highest point of its overrun, the deepest level drawn below 0.
      const table = (
        await page.$$eval("#figures table", (ts) =>
          ts.map((t) => ({
            caption: t.querySelector("caption")?.textContent ?? "",
            columns: [...t.querySelectorAll("thead th")].map((c) => c.textContent ?? ""),
            rows: [...t.querySelectorAll("tbody tr")].map((r) => [...r.children].map((c) => c.textContent ?? "")),
          })),
        )
      )[0];
      // The scenario's own table leads the page's tables, with what a user judges a way by first.
      expect(table?.caption).toBe(result.tables[0]?.title);
      expect(table?.columns.slice(1, 5)).toEqual([
        "tokens served",
        "of the oracle's",
        "tenants under quota refused",
        "worst overrun (in max_tokens)",
      ]);
      const bound = Number(result.params.maxTokens);
      result.runs.forEach((r, i) => {
        const row = table?.rows[i] ?? [];
        expect(row[0]).toBe(r.label);
        const deepest = Math.max(...line("overrun", r.label));
        expect(deepest, r.label).toBe(
          Math.max(0, ...[...line("model-budget", r.label), ...line("tenant-budgets", r.label)].map((v) => -v)),
        );
        expect(row[4], r.label).toBe((deepest / bound).toFixed(1));
      });

      // Under the cursor, the legend reads each way's tokens that second, as the simulator counted them.
      const over = page.locator('[data-chart-figure="plot-tokens"] .u-over');
      await over.scrollIntoViewIfNeeded();
      const box = await over.boundingBox();
      if (box === null) throw new Error("no plot area");
      await page.mouse.move(box.x + box.width * 0.4, box.y + box.height / 2);
      const hovered = await page
        .locator('[data-chart-figure="plot-tokens"] .u-legend .u-series')
        .evaluateAll((rows) => rows.map((r) => r.querySelector(".u-value")?.textContent ?? ""));
      const at = Number(hovered[0]);
      expect(Number.isInteger(at), hovered.join(" | ")).toBe(true);
      const shown = (v: number | null | undefined) =>
        (v ?? 0).toLocaleString("en-GB", {
          maximumFractionDigits: Math.abs(v ?? 0) >= 100 ? 0 : Math.abs(v ?? 0) >= 10 ? 1 : 2,
        });
      expect(hovered.slice(1)).toEqual([...byId("tokens").runs.map((l) => shown(l[at])), shown(budget?.value)]);
      await page.mouse.move(box.x + box.width / 2, box.y + box.height + 200);
      mkdirSync(join(artefacts, "screenshots"), { recursive: true });
      for (const p of plots)
        await page
          .locator(`[data-chart-figure="plot-${p.id}"]`)
          .screenshot({ path: join(artefacts, "screenshots", `token-budget-${p.id}.png`) });
      await page.close();
      expect(errors).toEqual([]);
    },
  );

  it(
    "every scenario: opening the URL of a moved run (a fresh load) shows the same figures and the moved control",
    { timeout: 180_000 },
    async () => {
      const page = await open("#guard");
      for (const scenario of scenarios) {
        const run = moved[scenario.id];
        if (run === undefined) throw new Error(`the knob test of ${scenario.id} did not run`);
        await page.goto("about:blank");
        await page.goto(`${served?.url ?? ""}${run.hash}`);
        await settled(page);
        expect(await figures(page), scenario.id).toEqual(run.figures);
        const move = moveOf(scenario);
        expect(await page.locator(knobSelector(move.key)).inputValue()).toBe(
          new URLSearchParams(run.hash.split("?")[1]).get(move.key),
        );
      }
      await page.close();
      expect(errors).toEqual([]);
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

  it(
    "the tuner: a sweep runs with its progress shown, the front is drawn, copy as options gives options that parse and reproduce the point, and a point opens the scenario at it",
    { timeout: 120_000 },
    async () => {
      // A sweep asked for and changed before it ends: the first is cancelled, the second runs whole.
      const page = await open("#tuner?of=retry-amplification&x=attempts&x0=1&x1=9&xn=90");
      expect(await page.locator("#notice li").allTextContents()).toEqual([
        "xn=90: not one the tuner can use, so 9 is used.",
      ]);
      await page.locator("#tune-xn").fill("3");
      await page.locator("#tune-xn").dispatchEvent("change");
      await page.waitForFunction(
        () => document.querySelector("#tune-status")?.textContent?.startsWith("Swept 3 points"),
        undefined,
        {
          timeout: 60_000,
        },
      );
      expect(await page.evaluate(() => location.hash)).toContain("xn=3");
      // Now over the retry budget's ratio: three points, the front through those none beats.
      await page.evaluate(
        () => (location.hash = "#tuner?of=retry-amplification&x=ratio&x0=0&x1=1&xn=3&run=0&cost=load"),
      );
      await page.waitForFunction(
        () => document.querySelector("#tune-status")?.textContent?.startsWith("Swept 3 points"),
        undefined,
        {
          timeout: 60_000,
        },
      );
      expect(await page.locator("#tune-progress").evaluate((p) => (p as HTMLProgressElement).value)).toBe(1);
      const dots = page.locator("svg.tuner-plot circle.point");
      expect(await dots.count()).toBe(3);
      expect(await page.locator("svg.tuner-plot polyline.front").count()).toBe(1);
      const sim = simScenario("retry-amplification");
      if (sim === undefined) throw new Error("no retry-amplification scenario");
      expect(await page.locator("#tune-run option").allTextContents()).toEqual(
        sim.run({}, { start: 0 }).runs.map((r) => r.label),
      );
      // Each point as the simulator gives it: its goodput in its label.
      const points = await dots.evaluateAll((cs) =>
        cs.map((c) => ({
          params: JSON.parse(c.getAttribute("data-params") ?? "{}") as Record<string, number>,
          label: c.getAttribute("aria-label") ?? "",
          front: c.classList.contains("on-front"),
        })),
      );
      for (const p of points) {
        const r = sim.run(p.params, { start: 0 }).runs[0];
        expect(p.label).toContain(`goodput ${((r?.summary.goodputRate ?? 0) * 100).toFixed(1)} %`);
      }
      expect(points.some((p) => p.front)).toBe(true);
      // Another run plotted reads the same sweep: no new one, the points moved to that run's figures.
      await page.locator("#tune-run").selectOption("1");
      expect(await page.locator("#tune-status").textContent()).toMatch(/^Swept 3 points/);
      expect(await page.locator("#tune-caption").textContent()).toContain(
        sim.run({}, { start: 0 }).runs[1]?.label ?? "?",
      );
      expect(await page.evaluate(() => location.hash)).toContain("run=1");
      await page.locator("#tune-run").selectOption("0");
      // Focus a point: copy as options gives guard options and a simulator run that parse, and reproduce it.
      await dots.nth(1).focus();
      const text = await page.locator("#tune-options").inputValue();
      const guardLine = text.split("\n").find((l) => l.startsWith("guard(fn, "));
      const runLine = text.split("\n").find((l) => l.startsWith("scenario("));
      if (guardLine === undefined || runLine === undefined) throw new Error(`no options in ${text}`);
      const options = JSON.parse(
        JSON.stringify(runInNewContext(`(${guardLine.slice("guard(fn, ".length, -1)})`)),
      ) as unknown;
      expect(points.map((p) => p.params.ratio)).toEqual([0, 0.5, 1]);
      expect(options).toEqual({ budget: { ratio: 0.5 } });
      const replayed = runInNewContext(runLine, { scenario: simScenario }) as ReturnType<typeof sim.run>;
      expect(((replayed.runs[0]?.summary.goodputRate ?? 0) * 100).toFixed(1)).toBe(
        /goodput (\d+\.\d) %/.exec(points[1]?.label ?? "")?.[1],
      );
      // Click it: the scenario's view at those knobs, its control showing them.
      await dots.nth(1).click();
      await page.waitForFunction(() => location.hash.startsWith("#retry-amplification"));
      await settled(page);
      expect(await page.evaluate(() => location.hash)).toBe("#retry-amplification?ratio=0.5");
      expect(await page.locator(knobSelector("ratio")).inputValue()).toBe("0.5");
      await page.close();
      expect(errors).toEqual([]);
    },
  );

  it(
    "the tuner: on first open it names what it sweeps and every run (no placeholder), lands its points on the values it lists and labels each, holds a typed end to the knob's steps and says so, and the selection text follows the highlighted point; nothing cut at either width",
    { timeout: 120_000 },
    async () => {
      const page = await open("#tuner", WIDTHS[0]);
      // Before any point is back: what is swept, in words, and the runs by name or role, never "run 1".
      const early = (await page.locator("#tune-status").textContent()) ?? "";
      expect(early).toMatch(/^Sweeping .+: \d+ points, each a whole run; \d+ done\.$/);
      expect(early).not.toMatch(/Running/);
      expect(await page.locator("#tune-run option").allTextContents()).not.toContain("run 1");
      // Stop is offered while a sweep runs, and only then.
      expect(await page.locator("#tune-stop").isEnabled()).toBe(true);
      await page.waitForFunction(
        () => document.querySelector("#tune-status")?.textContent?.startsWith("Swept"),
        undefined,
        {
          timeout: 90_000,
        },
      );
      expect(await page.locator("#tune-stop").isDisabled()).toBe(true);
      await page.locator("#tune-run").selectOption("1");
      expect(await page.locator("#tune-stop").isDisabled()).toBe(true);
      await page.locator("#tune-run").selectOption("0");
      await uncut(page, "the tuner");
      const listed = async (): Promise<number[]> =>
        ((await page.locator("#tune-x-values").textContent()) ?? "")
          .replace(/^At /, "")
          .split(", ")
          .map((v) => Number.parseFloat(v));
      const dots = page.locator("svg.tuner-plot circle.point[data-params]");
      const swept = async (): Promise<{ value: number; label: string }[]> =>
        dots.evaluateAll((cs) =>
          cs.map((c) => ({
            value: Object.values(JSON.parse(c.getAttribute("data-params") ?? "{}") as Record<string, number>)[0] ?? NaN,
            label: c.previousElementSibling?.textContent ?? "",
          })),
        );
      // The default sweep: five points on the knob's grid around its default, each labelled with its value.
      const first = await listed();
      expect(first).toHaveLength(5);
      expect((await swept()).map((d) => d.value).sort((a, b) => a - b)).toEqual(first);
      for (const d of await swept()) expect(d.label).toBe(String(d.value));
      // A typed end off the knob's steps: moved onto them, in the box and in words, and swept there.
      await page.evaluate(() => (location.hash = "#tuner?of=retry-amplification&x=ratio&xn=3"));
      await page.waitForFunction(() => document.querySelector("#tune-status")?.textContent?.startsWith("Swept"));
      await page.locator("#tune-x0").fill("0.12");
      await page.locator("#tune-x0").dispatchEvent("change");
      expect(await page.locator("#tune-note").textContent()).toBe("0.12 is not on this knob's steps, so 0.1 is used.");
      expect(await page.locator("#tune-x0").inputValue()).toBe("0.1");
      await page.waitForFunction(() => document.querySelector("#tune-status")?.textContent?.startsWith("Swept 3"));
      const asked = await listed();
      expect(asked[0]).toBe(0.1);
      expect((await swept()).map((d) => d.value).sort((a, b) => a - b)).toEqual(asked);
      // The selection text follows the point highlighted: hover one, then another.
      for (const i of [0, 2]) {
        await dots.nth(i).hover();
        const highlighted = await page
          .locator("svg.tuner-plot circle.point.selected")
          .evaluateAll((cs) =>
            cs.map((c) => JSON.parse(c.getAttribute("data-params") ?? "{}") as Record<string, number>),
          );
        expect(highlighted).toHaveLength(1);
        expect(await page.locator("#tune-selected").textContent()).toContain(`ratio = ${highlighted[0]?.ratio}:`);
      }
      await page.close();
      expect(errors).toEqual([]);
    },
  );

  it(
    "the first screen: the scoreboard, every situation's tideward best against the best baseline with its range and its run-for-run count, losses as plainly as wins, each linking to its scenario, over the scenario the page opens on; folded when a link names a scenario",
    { timeout: 90_000 },
    async () => {
      const claims = JSON.parse(
        readFileSync(join(import.meta.dirname, "../../src/claims/claims.json"), "utf8"),
      ) as ClaimsData;
      const page = await open("", WIDTHS[0]);
      await page.waitForSelector("table.scoreboard tbody tr");
      expect(await page.locator("#why-details").evaluate((d) => (d as HTMLDetailsElement).open)).toBe(true);
      // Opens on a situation tideward's defaults exist for.
      expect(await page.locator("h2#title").textContent()).toBe(simScenario("metastable-overload")?.title);
      // On the first screen: the scoreboard's table starts within the window.
      const box = await page.locator("table.scoreboard").boundingBox();
      expect(box?.y ?? Infinity).toBeLessThan(900);
      const rows = await page.$$eval("table.scoreboard tbody tr", (trs) =>
        trs.map((tr) => ({
          id: tr.getAttribute("data-situation") ?? "",
          href: tr.querySelector("th a")?.getAttribute("href") ?? "",
          cells: [...tr.querySelectorAll("td")].map((td) => td.textContent ?? ""),
          badge: tr.querySelector(".badge")?.textContent ?? "",
        })),
      );
      const expected = rowsOf(claims);
      expect(rows.map((r) => r.id)).toEqual(expected.map((s) => s.id));
      for (const s of expected) {
        const row = rows.find((r) => r.id === s.id);
        const ours = best(s, "tideward");
        const theirs = best(s, "baseline");
        if (row === undefined || ours === undefined || theirs === undefined) throw new Error(`no row for ${s.id}`);
        expect(row.href, s.id).toBe(linkOf(s));
        expect(row.cells[0], s.id).toContain(`${ours.label} ${range(s, all(ours))}`);
        expect(row.cells[1], s.id).toContain(`${theirs.label} ${range(s, all(theirs))}`);
        const t = tally(s, ours, theirs);
        const verdict = verdictOf(t);
        expect(row.badge, s.id).toBe(verdict === "tie" ? "tied" : verdict);
        expect(row.cells[2], s.id).toContain(tallyText(t));
      }
      await uncut(page, "the first screen");
      mkdirSync(join(artefacts, "screenshots"), { recursive: true });
      await page.screenshot({ path: join(artefacts, "screenshots", "first-screen.png") });
      // A row's link opens its scenario, brought into view.
      const target = expected.find((s) => s.scenario !== "metastable-overload");
      if (target === undefined) throw new Error("every situation is the opening scenario's");
      await page.click(`tr[data-situation="${target.id}"] th a`);
      await page.waitForFunction(
        (t) => document.querySelector("h2#title")?.textContent === t,
        simScenario(target.scenario)?.title,
      );
      const title = await page.locator("h2#title").boundingBox();
      expect(title?.y ?? Infinity).toBeLessThan(900);
      await page.close();
      // A link to a scenario opens it with the scoreboard folded.
      const linked = await open("#guard");
      expect(await linked.locator("#why-details").evaluate((d) => (d as HTMLDetailsElement).open)).toBe(false);
      await linked.close();
      expect(errors).toEqual([]);
    },
  );

  it(
    "a long run shows how far it has got and offers a cancel after a moment; cancelling stops it mid-run, says so, keeps the last figures, and the next run runs",
    { timeout: 90_000 },
    async () => {
      const page = await open("#breaker-outage?rate=10&duration=30&spreadSeeds=0");
      const before = await figures(page);
      expect(await page.locator("#long-run").isVisible()).toBe(false);
      // Five thousand calls a second for three minutes through six breakers: seconds of work.
      await page.evaluate(() => (location.hash = "#breaker-outage?rate=5000&spreadSeeds=0"));
      await page.waitForSelector("#cancel", { state: "visible", timeout: 10_000 });
      expect(await page.evaluate(() => document.body.dataset.busy)).toBe("true");
      // How far it has got, as the simulator tells the worker: a share of the calls it will offer.
      await page.waitForFunction(() => Number(document.querySelector<HTMLElement>("#run-progress")?.dataset.done) > 0);
      const progress = await page.locator("#run-progress").evaluate((p) => (p as HTMLProgressElement).value);
      expect(progress).toBeGreaterThan(0);
      expect(progress).toBeLessThan(1);
      await page.click("#cancel");
      expect(await page.locator("#status").textContent()).toMatch(
        /^Cancelled after \d+\.\d s: this run of Breaker under an outage did not finish, and the figures below are the last run's\./,
      );
      expect(await page.evaluate(() => document.body.dataset.busy)).toBe("false");
      expect(await page.locator("#long-run").isVisible()).toBe(false);
      expect(await figures(page)).toEqual(before);
      // The page's next run is answered: a fresh worker took the cancelled one's place.
      await page.evaluate(() => (location.hash = "#breaker-outage?rate=20&duration=30&spreadSeeds=0"));
      await settled(page);
      expect(await page.locator("#status").textContent()).toMatch(/^Simulated 6 runs of 30 s of traffic each/);
      expect(await figures(page)).not.toEqual(before);
      await page.close();
      expect(errors).toEqual([]);
    },
  );
});
